"""Chinese text cut into words with their parts of speech (jieba), once per text.

The read path and the reply checks read the same question several times a turn (is it a fact
question, does it name a held topic, does memory lack the answer) and the same memory lines turn
after turn; jieba's part-of-speech cut is the slow step of each (~0.1–0.5 ms a sentence).
"""

from __future__ import annotations

from functools import lru_cache

import jieba.posseg

jieba.setLogLevel(60)  # its dictionary-loading chatter is not ours to print


@lru_cache(maxsize=8192)
def tagged(text: str) -> tuple[jieba.posseg.pair, ...]:
    """``text``'s words with jieba's part-of-speech flags (``pair.word``, ``pair.flag``)."""
    return tuple(jieba.posseg.lcut(text))


# jieba's dictionary tags 东西 ("thing"; literally east-west) a place name: 「那个东西放哪了」
NOT_PLACES = frozenset(("东西",))


def places_in(text: str) -> list[str]:
    """The place names a text says (jieba's ``ns``: 杭州, 西湖区)."""
    return [pair.word for pair in tagged(text) if pair.flag == "ns" and pair.word not in NOT_PLACES]


def warm() -> None:
    """Load jieba's dictionary (~1 s) now, not in the first checked turn."""
    jieba.posseg.lcut("预热")  # jieba guards its own initialisation
