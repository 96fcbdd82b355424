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


CODE_NOTE = {"zh": "代码我就不念了。", "en": "I won't read the code aloud."}


class CodeBlocks:
    """A fenced code block is not read aloud: where it opens, one short note is spoken instead
    (once per reply), and its lines are skipped. 「用Python写个冒泡排序」 used to be answered by
    a voice reading ``for i in range(n)`` symbol by symbol."""

    def __init__(self, language: str) -> None:
        self._note = CODE_NOTE.get(language.split("-")[0], CODE_NOTE["en"])
        self._inside = False
        self._noted = False

    def filter(self, segment: str) -> str | None:
        """What of ``segment`` (one line or sentence of the reply) is spoken: itself, the note,
        or nothing."""
        if segment.lstrip().startswith("```"):
            opening = not self._inside
            self._inside = opening
            if opening and not self._noted:
                self._noted = True
                return self._note
            return None
        return None if self._inside else segment


def ends_sentence(segment: str) -> bool:
    """Does ``segment`` end a sentence (not cut at a comma or for length)?"""
    stripped = segment.rstrip()
    return not stripped or stripped[-1] in SENTENCE_BREAKS
