"""Issue 20, low: model parts are hashed, not only size-checked — a part of the right size but
other content never becomes the model."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from providers.model_files import QWEN_SHA256, WHISPER_SHA256, _assemble

GOOD = [b"first part ", b"second part"]
SHA = hashlib.sha256(b"".join(GOOD)).hexdigest()


def test_the_published_bytes_are_installed(tmp_path: Path) -> None:
    target = _assemble(tmp_path / "m.bin", (io.BytesIO(p) for p in GOOD), 22, SHA)
    assert target.read_bytes() == b"first part second part"


def test_a_same_size_part_with_other_bytes_installs_nothing(tmp_path: Path) -> None:
    tampered = [b"first part ", b"SECOND PART"]  # same length, other content
    with pytest.raises(RuntimeError, match="not the published model"):
        _assemble(tmp_path / "m.bin", (io.BytesIO(p) for p in tampered), 22, SHA)
    assert list(tmp_path.iterdir()) == []  # no model, no partial file


def test_the_real_models_have_their_hashes_pinned() -> None:
    assert len(QWEN_SHA256) == 64 and len(WHISPER_SHA256) == 64
