"""``hearth voices``: enrol from WAV files, list, refuse bad input, remove (real Redis, model
and recordings)."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bench.voice_recordings import Speaker
from server.cli import app
from tests.conftest import TEST_SECRET
from tests.server.voices.conftest import pcm, real_speakers, voice_embedder, weights_path

__all__ = ["real_speakers", "voice_embedder"]  # the shared fixtures, used here by name


def _wav(path: Path, wav: np.ndarray, rate: int = 16000, channels: int = 1) -> Path:
    data = pcm(wav)
    if channels == 2:
        mono = np.frombuffer(data, "<i2")
        data = np.repeat(mono, 2).astype("<i2").tobytes()
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data)
    path.write_bytes(buffer.getvalue())
    return path


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, redis_url: str) -> CliRunner:
    weights = str(weights_path().resolve())  # before the data folder moves to tmp_path
    monkeypatch.setenv("HEARTH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HEARTH_AUTH__SECRET", TEST_SECRET)
    monkeypatch.setenv("HEARTH_REDIS__URL", redis_url)
    monkeypatch.setenv("HEARTH_VOICES__WEIGHTS_FILE", weights)
    return CliRunner()


def test_enrol_list_and_remove_a_member(
    cli_env: CliRunner, real_speakers: list[Speaker], tmp_path: Path
) -> None:
    s = real_speakers[3]
    files = [
        str(_wav(tmp_path / f"s{n}.wav", w, channels=1 + n % 2)) for n, w in enumerate(s.enrol)
    ]
    enrolled = cli_env.invoke(
        app, ["voices", "enrol", "home", "grandma", *files, "--speaker", "奶奶"]
    )
    assert enrolled.exit_code == 0, enrolled.output
    assert "grandma enrolled as 奶奶" in enrolled.output
    listed = cli_env.invoke(app, ["voices", "list", "home"])
    assert "grandma" in listed.output and "1 voices" in listed.output
    removed = cli_env.invoke(app, ["voices", "remove", "home", "grandma"])
    assert "grandma removed" in removed.output
    assert "0 voices, 0 bytes" in cli_env.invoke(app, ["voices", "list", "home"]).output


def test_silence_and_non_wav_files_are_refused(cli_env: CliRunner, tmp_path: Path) -> None:
    quiet = [str(_wav(tmp_path / f"q{n}.wav", np.zeros(64000, np.float32))) for n in range(3)]
    refused = cli_env.invoke(app, ["voices", "enrol", "home", "kid", *quiet])
    assert refused.exit_code == 1 and "refused (silence)" in refused.output
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"not audio")
    bad = cli_env.invoke(app, ["voices", "enrol", "home", "kid", str(junk), *quiet[:2]])
    assert bad.exit_code == 2 and "not a WAV file" in bad.output
