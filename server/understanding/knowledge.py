"""One step of world knowledge about household safety constraints, without an LLM: for each
family of constraints (an allergen, a condition, a medicine, a fear, a pet's hazard, an infant's
or a pregnancy's rule), the words of a stored constraint that place it in the family (*marks*)
and the words of a request for something the family covers (*covers*) — a dish that usually
holds the allergen (宫保鸡丁 → 花生), a medicine of the family or its brand (阿莫仙 → 青霉素), a
product holding a pet's toxin (益达 → 木糖醇), a place or activity a condition forbids.

The tables are data (``knowledge_*.json`` beside this module): ``knowledge_core.json`` written by
hand family by family, whose words are also the recogniser's safety vocabulary; the others
generated from general knowledge by writers who had not seen the project's tests, then reviewed
family by family (a word that fires on ordinary requests, or names what a constraint allows, was
taken out).

Used three times: the lookup runs for a request naming something a family covers (「我们去坐
摩天轮吧」 names no topic word of ``lookup``); a constraint whose family covers what the request
names is said first (``server.memory.applies``); and a reply sentence recommending what a said
constraint's families cover is not spoken (``server.device.heeding``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORE = "core"


@dataclass(frozen=True)
class Family:
    """One family of constraints: what places a constraint in it, what requests it covers."""

    name: str
    table: str
    marks: tuple[str, ...]
    covers: tuple[str, ...]
    why: str = ""


def _pattern(words: Iterable[str]) -> re.Pattern[str]:
    """Any of ``words``, longest first, case-insensitive; a Latin word starts a word (「nut」
    is not in 「peanut」 nor 「donut」)."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        escaped = re.escape(word)
        parts.append(
            rf"(?<![a-z]){escaped}" if word[:1].isascii() and word[:1].isalpha() else escaped
        )
    return re.compile("|".join(parts) or r"(?!)", re.IGNORECASE)


_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _cached(words: tuple[str, ...]) -> re.Pattern[str]:
    found = _PATTERNS.get(words)
    if found is None:
        found = _PATTERNS[words] = _pattern(words)
    return found


@cache
def families() -> tuple[Family, ...]:
    """Every family of every table (``knowledge_*.json``), the core table first."""
    paths = sorted(HERE.glob("knowledge_*.json"), key=lambda p: (p.stem != f"knowledge_{CORE}", p))
    found = []
    for path in paths:
        table = path.stem.removeprefix("knowledge_")
        for row in json.loads(path.read_text(encoding="utf-8"))["families"]:
            found.append(Family(
                str(row["family"]), table, tuple(row["marks"]), tuple(row["covers"]),
                str(row.get("why", "")),
            ))  # fmt: skip
    return tuple(found)


@cache
def _compiled() -> tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]:
    return tuple((_cached(f.marks), _cached(f.covers)) for f in families())


@cache
def _covered() -> re.Pattern[str]:
    # every request word of two or more characters (咸 or 贝 alone would start a lookup for 宝贝)
    return _pattern(w for f in families() for w in f.covers if len(w) > 1)


def vocabulary() -> set[str]:
    """The words a recogniser must get right: the core table's, constraint side and request
    side (the generated tables' brands and dishes would turn ordinary speech into them)."""
    return {w for f in families() if f.table == CORE for w in (*f.marks, *f.covers)}


def names_covered(request: str) -> bool:
    """Does the request name something a constraint family covers?"""
    return _covered().search(request) is not None


@lru_cache(maxsize=4096)
def _families_of(constraint: str) -> tuple[int, ...]:
    """The families ``constraint`` is of: those its words mark — and when it names what it
    forbids (「孕期不能喝酒」 names 喝酒), only those of them that cover what it names, so a
    pregnancy's alcohol rule is not said for sashimi; a constraint naming only its condition
    (「老婆怀孕二十二周」) is of every family the condition marks."""
    compiled = _compiled()
    marked = [i for i, (marks, _) in enumerate(compiled) if marks.search(constraint) is not None]
    named = [i for i in marked if compiled[i][1].search(constraint) is not None]
    return tuple(named or marked)


def covers(constraint: str, request: str) -> bool:
    """Is ``constraint`` of a family that covers something ``request`` names?"""
    compiled = _compiled()
    return any(compiled[i][1].search(request) is not None for i in _families_of(constraint))


def covering(constraint: str, request: str) -> list[Family]:
    """The families of ``constraint`` that cover something ``request`` names (for the log)."""
    compiled, every = _compiled(), families()
    return [every[i] for i in _families_of(constraint) if compiled[i][1].search(request)]


def covered_by(constraint: str) -> set[str]:
    """Everything the families of ``constraint`` cover (an egg allergy: 蛋, 蛋糕, 蛋挞…)."""
    every = families()
    return {word for i in _families_of(constraint) for word in every[i].covers}
