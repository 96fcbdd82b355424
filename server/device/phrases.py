"""Matching what a person said against configured phrases (wake words, exit phrases).

Speech recognition adds punctuation and case the configuration does not have: 「再见。」,
「拜拜!」 and 「Hi ESP」 must all match, and a short courtesy around an exit phrase (「好的，拜拜」)
still ends the session while a real request that merely contains it (「帮我跟奶奶说再见的话怎么写」)
does not.
"""

from __future__ import annotations

import unicodedata

# Words that may surround an exit phrase without turning it into a request.
_COURTESY = (
    "好的", "好", "那", "嗯", "那就", "先", "这样", "今天", "就", "啦", "了", "吧", "啊",
    "呀", "哦", "小智", "谢谢", "晚安",
)  # fmt: skip


def normalize(text: str) -> str:
    """Lower case, NFKC, without punctuation, symbols or spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


def is_one_of(text: str, phrases: list[str]) -> bool:
    said = normalize(text)
    return bool(said) and any(said == normalize(p) for p in phrases)


def is_exit_phrase(text: str, phrases: list[str]) -> bool:
    said = normalize(text)
    if not said:
        return False
    for phrase in phrases:
        target = normalize(phrase)
        if not target or target not in said:
            continue
        rest = said.replace(target, " ")
        for word in sorted(_COURTESY, key=len, reverse=True):
            rest = rest.replace(word, " ")
        if not rest.strip():
            return True
    return False
