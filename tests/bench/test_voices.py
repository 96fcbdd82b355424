"""``hearth bench voices`` end to end on the real recordings: a report with every figure."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from bench.voice_recordings import Speaker
from bench.voices import main
from server.voices.embedder import VoiceEmbedder
from server.voices.store import HOUSEHOLD_BYTES_LIMIT
from tests.server.voices.conftest import real_speakers, voice_embedder

__all__ = ["real_speakers", "voice_embedder"]  # the shared fixtures, used here by name


def test_the_bench_reports_identification_false_accepts_latency_and_bytes(
    voice_embedder: VoiceEmbedder, real_speakers: list[Speaker], tmp_path: Path
) -> None:
    five = [Speaker(s.name, s.enrol, s.tests[:4]) for s in real_speakers[:5]]
    out = tmp_path / "voices.json"
    console = Console(record=True, width=120)
    (real,) = main(voice_embedder, five, None, 0.80, console, out)
    assert real["households"] == 5  # every four of five speakers
    assert real["member_tests"] == 5 * 4 * 4 and real["unknown_tests"] == 5 * 4
    assert 0.3 <= float(real["identification"]) <= 1.0  # type: ignore[arg-type]
    assert float(real["wrong_member"]) <= 0.1  # type: ignore[arg-type]
    assert 0 < float(real["added_ms_p50"]) < 150  # type: ignore[arg-type]
    assert 0 < int(real["household_bytes_max"]) < HOUSEHOLD_BYTES_LIMIT  # type: ignore[call-overload]
    written = json.loads(out.read_text())
    assert written["threshold"] == 0.80 and written["sets"][0]["set"] == "real"
    assert "unknown voices accepted as a member" in console.export_text()
