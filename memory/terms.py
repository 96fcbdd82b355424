"""Content terms of a text, for judging a lexical match without an LLM: Latin words of three or
more letters (stop words out, cut to five letters so 「paint」 meets 「painted」) and every pair of
adjacent Chinese characters (「北京」, 「下雨」). The engine's BM25 says which memories share
words with a question; these terms say how many — one shared word can be chance (「北京到上海多远」
against 「住在北京朝阳区」), two rarely are."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u4e00-\u9fff]+")
_STOP = frozenset(
    (
        "the", "and", "for", "with", "that", "this", "what", "when", "where", "who", "whom",
        "which", "why", "how", "would", "could", "should", "will", "can", "may", "might", "not",
        "yes", "about", "into", "over", "after", "before", "than", "then", "there", "here", "just",
        "also", "very", "too", "more", "most", "some", "any", "all", "each", "other", "such",
        "only", "own", "same", "did", "does", "was", "were", "are", "has", "have", "had", "been",
        "being", "from", "they", "them", "their", "his", "her", "its", "our", "your", "you", "she",
        "him",
    )
)  # fmt: skip


def terms(text: str) -> set[str]:
    lowered = text.lower()
    found = {w[:5] for w in _WORD.findall(lowered) if len(w) >= 3 and w not in _STOP}
    for run in _HAN.findall(lowered):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


def shared(question: str, text: str) -> int:
    """How many content terms of ``question`` appear in ``text``."""
    return len(terms(question) & terms(text))
