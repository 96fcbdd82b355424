"""Cutting a streamed LLM reply into speakable segments.

The first segment is cut at the first comma so the device hears something as early as possible;
later segments end at sentence punctuation (or a comma once they grow long).
"""

from __future__ import annotations

FIRST_BREAKS = frozenset("，,、；;：:。！？!?\n")
SENTENCE_BREAKS = frozenset("。！？!?；;\n")
SOFT_BREAKS = frozenset("，,、")
MIN_FIRST_CHARS = 2
SOFT_LIMIT_CHARS = 40


class SentenceSplitter:
    def __init__(self) -> None:
        self._buffer = ""
        self._emitted = 0

    def feed(self, text: str) -> list[str]:
        self._buffer += text
        out: list[str] = []
        while True:
            cut = self._find_cut()
            if cut < 0:
                return out
            segment, self._buffer = self._buffer[: cut + 1], self._buffer[cut + 1 :]
            if segment.strip():
                out.append(segment.strip())
                self._emitted += 1

    def flush(self) -> str | None:
        rest, self._buffer = self._buffer.strip(), ""
        return rest or None

    def _find_cut(self) -> int:
        first = self._emitted == 0
        for i, ch in enumerate(self._buffer):
            if first and ch in FIRST_BREAKS and len(self._buffer[:i].strip()) >= MIN_FIRST_CHARS:
                return i
            if ch in SENTENCE_BREAKS and self._buffer[:i].strip():
                return i
            if ch in SOFT_BREAKS and i >= SOFT_LIMIT_CHARS:
                return i
        return -1
