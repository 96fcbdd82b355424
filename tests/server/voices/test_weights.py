"""The encoder's weights: read from the published checkpoint without PyTorch, nothing else."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from config.settings import load_settings
from server.voices.weights import (
    MEMBER,
    WEIGHTS_FILE,
    WeightsError,
    install_weights,
    load_weights,
    read_legacy_state,
)
from tests.server.voices.conftest import weights_path


def _wheel() -> Path:
    parts = load_settings().data_dir / "models" / "parts"
    return sorted(parts.glob("Resemblyzer-0.1.4-*.whl"))[0]


def test_the_published_checkpoint_reads_into_the_installed_weights() -> None:
    with zipfile.ZipFile(_wheel()) as archive:
        state = read_legacy_state(io.BytesIO(archive.read(MEMBER)))
    installed = load_weights(weights_path())
    assert state["lstm.weight_ih_l0"].shape == (1024, 40)
    assert state["linear.weight"].shape == (256, 256)
    assert set(installed) == set(state)
    for name, array in state.items():
        np.testing.assert_array_equal(installed[name], array)


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("true",))


def test_a_checkpoint_that_names_other_code_is_refused() -> None:
    data = io.BytesIO()
    header: tuple[object, ...] = (0x1950A86A20F9469CFC6C, 1001, {})
    for part in header:
        pickle.dump(part, data, protocol=2)
    pickle.dump({"model_state": _Evil()}, data, protocol=2)
    data.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="refused global"):
        read_legacy_state(data)


def test_a_wheel_carrying_another_file_installs_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    with zipfile.ZipFile(cache / "Resemblyzer-0.1.4-py3-none-any.whl", "w") as fake:
        fake.writestr(MEMBER, b"not the published weights")
    with pytest.raises(WeightsError, match="not the published file"):
        install_weights(tmp_path / "models", cache)
    assert not (tmp_path / "models" / WEIGHTS_FILE).exists()


def test_missing_weights_say_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="hearth models install"):
        load_weights(tmp_path / "absent.npz")
