"""Instant scripted providers for the device benchmark: they cost (almost) nothing, so what is
measured is the server's own work. Never used outside ``hearth bench``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np

from providers.llm import Message, StreamItem, TextDelta, ToolSpec
from providers.tts import SpeechAudio

EIGHT_SENTENCES = (
    "好的，我来回答。今天天气晴朗。气温二十三度。适合出门散步。记得多喝水。"
    "晚上可能有点凉。出门带件外套。祝你今天愉快！"
)


class InstantLLM:
    """Streams an eight-sentence reply in small deltas, like a fast hosted model."""

    name = "instant"

    def __init__(self, reply: str = EIGHT_SENTENCES, delta_chars: int = 4) -> None:
        self.reply = reply
        self.delta_chars = delta_chars

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamItem]:
        for i in range(0, len(self.reply), self.delta_chars):
            yield TextDelta(self.reply[i : i + self.delta_chars])


class InstantTTS:
    """Returns a fixed clip (quiet noise) per sentence at the downlink rate."""

    name = "instant"

    def __init__(self, sample_rate: int = 24000, seconds: float = 0.3) -> None:
        rng = np.random.default_rng(7)
        samples = (rng.standard_normal(int(sample_rate * seconds)) * 800).astype("<i2")
        self._clip = SpeechAudio(samples.tobytes(), sample_rate)

    async def synthesize(self, text: str) -> SpeechAudio:
        return self._clip
