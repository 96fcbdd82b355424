"""A speech recogniser that hears whatever the test says is being said: for device tests whose
recordings do not say what the turn needs (every call for the same utterance alike)."""

from __future__ import annotations

from collections.abc import Sequence


class ScriptedASR:
    name = "scripted"

    def __init__(self) -> None:
        self.saying = ""

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        return self.saying
