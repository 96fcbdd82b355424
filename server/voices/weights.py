"""The voice encoder's weights: Resemblyzer's ``pretrained.pt``, read without PyTorch.

The weights ship inside the ``Resemblyzer`` wheel on PyPI (17 MB, the only speaker-embedding
package there that carries its model rather than fetching it from a hub at run time). Installing
the package would pull PyTorch and librosa; we only need the file. ``install_weights`` downloads
the wheel with ``pip download --no-deps``, checks the file's SHA-256, and converts the legacy
PyTorch pickle into a plain ``.npz`` so that the server never unpickles anything at run time.

The legacy format (PyTorch < 1.6) is: magic number, protocol version, system info, the pickled
object whose tensors refer to storages by persistent id, the list of storage keys, then each
storage as a little-endian int64 element count followed by its raw bytes.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import subprocess
import sys
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

PACKAGE = "Resemblyzer==0.1.4"
WHEEL_GLOB = "Resemblyzer-0.1.4-*.whl"
MEMBER = "resemblyzer/pretrained.pt"
PT_SHA256 = "39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e"
PT_SIZE = 17_090_379
WEIGHTS_FILE = "voice-encoder-resemblyzer-0.1.4.npz"
_MAGIC = 0x1950A86A20F9469CFC6C
_DTYPES: dict[str, type[np.generic]] = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "LongStorage": np.int64,
}


class WeightsError(Exception):
    """The weights file is missing, damaged or not the published one (``path``, ``why``)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"voice encoder weights {path}: {why}; run `hearth models install`")
        self.path = path
        self.why = why


@dataclass(frozen=True, slots=True)
class _StorageType:
    dtype: type[np.generic]


@dataclass(slots=True)
class _Tensor:
    key: str
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]


def _rebuild_tensor_v2(
    storage: tuple[str, _StorageType], offset: int, size: Any, stride: Any, *_: Any
) -> _Tensor:
    return _Tensor(storage[0], int(offset), tuple(size), tuple(stride))


class _Unpickler(pickle.Unpickler):
    """Resolves only what a state dict needs; anything else is refused (no code runs)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if module == "torch" and name in _DTYPES:
            return _StorageType(_DTYPES[name])
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        _, storage_type, key, _location, _numel = pid[:5]
        self.storages[str(key)] = storage_type
        return (str(key), storage_type)

    storages: dict[str, _StorageType]


def read_legacy_state(f: IO[bytes]) -> dict[str, np.ndarray]:
    """Every tensor of a legacy-format PyTorch checkpoint's ``model_state`` as numpy arrays."""
    if pickle.load(f) != _MAGIC:
        raise ValueError("not a legacy PyTorch checkpoint (magic number)")
    pickle.load(f)  # protocol version
    pickle.load(f)  # system info
    unpickler = _Unpickler(f)
    unpickler.storages = {}
    checkpoint = unpickler.load()
    keys = pickle.load(f)
    raw: dict[str, np.ndarray] = {}
    for key in keys:
        dtype = np.dtype(unpickler.storages[str(key)].dtype)
        count = int(np.frombuffer(f.read(8), "<i8")[0])
        raw[str(key)] = np.frombuffer(f.read(count * dtype.itemsize), dtype.newbyteorder("<"))
    state = checkpoint.get("model_state", checkpoint)
    out: dict[str, np.ndarray] = {}
    for name, t in state.items():
        flat = raw[t.key]
        n = int(np.prod(t.size)) if t.size else 1
        arr = flat[t.offset : t.offset + n].reshape(t.size)
        if t.size and _contiguous(t.size) != t.stride:
            raise ValueError(f"tensor {name} is not contiguous")
        out[str(name)] = np.ascontiguousarray(arr, dtype=np.float32)
    return out


def _contiguous(size: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for dim in reversed(size):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))


def install_weights(models_dir: Path, cache: Path, name: str = WEIGHTS_FILE) -> Path:
    """Download the wheel (or reuse it), check ``pretrained.pt`` and write the ``.npz``.
    Idempotent; nothing is written when a check fails."""
    target = models_dir / name
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob(WHEEL_GLOB))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), PACKAGE],
            check=True,
        )
        wheels = sorted(cache.glob(WHEEL_GLOB))
    with zipfile.ZipFile(wheels[0]) as archive:
        data = archive.read(MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != PT_SIZE or digest != PT_SHA256:
        raise WeightsError(target, f"{MEMBER} is not the published file (sha256 {digest[:16]}…)")
    state = read_legacy_state(io.BytesIO(data))
    models_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial.npz")
    np.savez(partial, **state)  # type: ignore[arg-type]
    partial.replace(target)
    return target


def load_weights(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise WeightsError(path, "missing")
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}
