"""Content terms of a text, for judging a lexical match without an LLM: Latin words of three or
more letters (stop words out, cut to five letters so 「paint」 meets 「painted」) and every pair of
adjacent Chinese characters (「北京」, 「下雨」). The engine's BM25 says which memories share
words with a question; these terms say how many — one shared word can be chance (「北京到上海多远」
against 「住在北京朝阳区」), two rarely are."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u4e00-\u9fff]+")
STOP_WORDS = frozenset(
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


def any_of(words: Iterable[str]) -> re.Pattern[str]:
    """One pattern for any of ``words``, longest first (a longer word wins over its part)."""
    return re.compile("|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)))


def terms(text: str) -> set[str]:
    lowered = text.lower()
    found = {w[:5] for w in _WORD.findall(lowered) if len(w) >= 3 and w not in STOP_WORDS}
    for run in _HAN.findall(lowered):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


# Weather talk: about the world, never about what the household told us.
WEATHER = re.compile(r"天气|下雨|下雪|好热|好冷|太热|太冷|气温|刮风|出太阳")
# When-words: a shared 「晚上」 or 「明天」 says nothing about what a memory is about.
_WHEN = frozenset(
    {
        "晚上", "早上", "上午", "下午", "中午", "今天", "明天", "昨天", "后天", "前天", "周末",
        "这周", "下周", "上周", "今年", "明年", "去年", "每天", "每周", "几点", "时候", "天晚",
        "天早", "天上", "天下",
    }
)  # fmt: skip


def shared(question: str, text: str) -> int:
    """How many content terms of ``question`` appear in ``text``."""
    return len(terms(question) & terms(text))


# ...and clock times, weekdays, months and days of the month (六点, 点半, 周四, 星期天, 12月, 5号)
_WHEN_TERM = re.compile(
    r"[零一二两三四五六七八九十\d][点月号日时]|点半|周[一二三四五六日末]|[期拜][一二三四五六日天]"
)


def shared_topic(question: str, text: str, names: Iterable[str] = ()) -> int:
    """Shared content terms that say what both are about: not a when-word, not a name (a name
    in common is the entity rules' evidence, and in a transcript every line has one)."""
    named: set[str] = set()
    for name in names:
        named |= terms(name)
    common = (terms(question) & terms(text)) - _WHEN - named
    return sum(1 for term in common if not _WHEN_TERM.fullmatch(term))
