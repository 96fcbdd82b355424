"""Emoji → firmware emotion names for the ``llm`` message (device-protocol.md §1.4)."""

from __future__ import annotations

EMOTIONS: dict[str, str] = {
    "😂": "funny", "😭": "crying", "😠": "angry", "😔": "sad", "😍": "loving",
    "😲": "surprised", "😱": "shocked", "🤔": "thinking", "😌": "relaxed", "😴": "sleepy",
    "😜": "silly", "🙄": "confused", "😶": "neutral", "🙂": "happy", "😆": "laughing",
    "😳": "embarrassed", "😉": "winking", "😎": "cool", "🤤": "delicious", "😘": "kissy",
    "😏": "confident",
}  # fmt: skip
DEFAULT = ("🙂", "happy")


def emotion_of(text: str) -> tuple[str, str]:
    """The first known emoji in ``text`` and its emotion, else the default."""
    for ch in text:
        if ch in EMOTIONS:
            return ch, EMOTIONS[ch]
    return DEFAULT
