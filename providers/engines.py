"""Which llama.cpp build a local LLM server loads, decided each time it starts, by the CPU it runs
on — never by the machine that built or installed it.

The installed package carries the portable baseline (x86-64-v3: AVX2). On a CPU with AVX-512,
``python -m providers.llama_build ensure`` also installs the x86-64-v4 build's libraries (scanned
against that ceiling) beside the package; a server started on a CPU with every flag that build
needs loads it through llama-cpp-python's ``LLAMA_CPP_LIB_PATH``. A copied venv on an AVX2-only
machine, an engine installed for another llama-cpp-python version, or a missing check file all
mean the baseline, with the reason logged.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from providers.llama_build import (
    BASELINE,
    ENGINE_FILE,
    ENGINES,
    LLAMA_CPP_PYTHON,
    engines_dir,
    has_cpu_flags,
    missing_cpu_flags,
)

AUTO = "auto"
ENGINE_NAMES = tuple(engine.name for engine in ENGINES)


class EngineNotUsable(Exception):
    """An engine named in the settings cannot run here; the message says why and what to do."""


@dataclass(frozen=True)
class EngineChoice:
    name: str
    lib_dir: Path | None  # None: the installed package's own libraries (the baseline)
    reason: str

    @property
    def is_baseline(self) -> bool:
        return self.lib_dir is None

    def env(self) -> dict[str, str]:
        """What a server process needs in its environment to load this engine."""
        if self.lib_dir is None:
            return {}
        return {"LLAMA_CPP_LIB_PATH": str(self.lib_dir), "MTMD_CPP_LIB": str(self.lib_dir)}


def baseline(reason: str) -> EngineChoice:
    return EngineChoice(BASELINE.name, None, reason)


def read_cpuinfo(path: Path = Path("/proc/cpuinfo")) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def installed_version() -> str | None:
    try:
        return metadata.version(LLAMA_CPP_PYTHON)
    except metadata.PackageNotFoundError:
        return None


def _unusable(folder: Path, version: str | None) -> str | None:
    """Why the engine libraries in ``folder`` cannot be loaded, or None when they can."""
    try:
        record = json.loads((folder / ENGINE_FILE).read_text())
    except (OSError, ValueError):
        return f"not installed ({folder / ENGINE_FILE} missing)"
    if not isinstance(record, dict) or record.get("version") != version:
        found = record.get("version") if isinstance(record, dict) else None
        return f"built for llama-cpp-python {found}, installed is {version}"
    if not (folder / "libllama.so").is_file():
        return f"{folder / 'libllama.so'} missing"
    return None


def choose_engine(
    setting: str, cpuinfo: str, prefix: str = sys.prefix, version: str | None = None
) -> EngineChoice:
    """``auto``: the most capable installed engine this CPU runs, else the baseline. A named
    engine: that one, or EngineNotUsable saying why not."""
    version = version if version is not None else installed_version()
    if setting == BASELINE.name:
        return baseline("chosen in the settings")
    wanted = [e for e in ENGINES if e is not BASELINE and (setting == AUTO or e.name == setting)]
    if not wanted:
        raise EngineNotUsable(f"unknown engine {setting!r}; one of {AUTO}, {ENGINE_NAMES}")
    reasons = []
    for engine in reversed(wanted):
        x86 = has_cpu_flags(cpuinfo)
        missing = missing_cpu_flags(cpuinfo, engine.cpu_flags) if x86 else ["an x86 flags line"]
        folder = engines_dir(prefix) / engine.name
        why = f"this CPU lacks {', '.join(missing)}" if missing else _unusable(folder, version)
        if why is None:
            extra = engine.cpu_flags[len(BASELINE.cpu_flags) :]
            return EngineChoice(engine.name, folder, "this CPU has " + " ".join(extra))
        if setting != AUTO:
            raise EngineNotUsable(
                f"local_llm.engine is {setting}, but {why}; install it with "
                "`.venv/bin/python -m providers.llama_build ensure --engines all` "
                f"or set local_llm.engine to {AUTO}"
            )
        reasons.append(f"{engine.name}: {why}")
    return baseline("; ".join(reasons))
