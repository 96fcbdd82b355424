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
    return tuple((_pattern(f.marks), _pattern(f.covers)) for f in families())


@cache
def _covered() -> re.Pattern[str]:
    # every request word of two or more characters (咸 or 贝 alone would start a lookup for 宝贝)
    return _pattern(w for f in families() for w in f.covers if len(w) > 1)


def vocabulary() -> set[str]:
    """The words a recogniser must get right: the core table's, constraint side and request
    side (the generated tables' brands and dishes would turn ordinary speech into them)."""
    return {w for f in families() if f.table == CORE for w in (*f.marks, *f.covers)}


# a doubled character names a person far more often than an item: 奶奶 is no milk, 蕾蕾 no bud
_DOUBLED = re.compile(r"([\u4e00-\u9fff])\1")


@lru_cache(maxsize=1024)
def _items(request: str) -> str:
    """What ``request`` can name as items: doubled characters and the names of conditions
    taken out (the 糖 of 糖耐 or 糖尿病 is no sweet). Cached: a turn asks it once per
    constraint."""
    text = _DOUBLED.sub("，", request)
    # a condition's name inside a longer covered word stays (晕船 of 晕船贴)
    spans = [(m.start(), m.end()) for m in _every_item().finditer(text)]

    def unless_inside(m: re.Match[str]) -> str:
        inside = any(a <= m.start() and m.end() <= b and b - a > len(m.group(0)) for a, b in spans)
        return m.group(0) if inside else "，"

    return _conditions().sub(unless_inside, text)


@cache
def _every_item() -> re.Pattern[str]:
    return _pattern(w for f in families() for w in f.covers)


@cache
def _conditions() -> re.Pattern[str]:
    """Every family's marks that name a condition, not an item: none of the family's covered
    words in them (糖耐, 孕期 — not 花生, not 甜的, nor 酒精, which some family covers)."""
    every = families()
    covered = {w.lower() for f in every for w in f.covers}
    return _pattern(
        w
        for f in every
        for w in f.marks
        if w.lower() not in covered and not any(c.lower() in w.lower() for c in f.covers)
    )


def names_covered(request: str) -> bool:
    """Does the request name something a constraint family covers?"""
    return _covered().search(_items(request)) is not None


@lru_cache(maxsize=4096)
def _families_of(constraint: str) -> tuple[int, ...]:
    """The families ``constraint`` is of: those its words mark — and when it names a hazard
    (「孕期不能喝酒」 names 喝酒, 「豆豆…牛油果和巧克力都不能给它吃」 names 牛油果 and 巧克力),
    only those of them that cover what it names, so a pregnancy's alcohol rule is not said for
    sashimi nor a bird's food rule for a hot pan; a constraint naming only its condition
    (「老婆怀孕二十二周」「我妈有糖尿病，早晚各打一针胰岛素」) is of every family it marks."""
    marked = [i for i in range(len(families())) if _marks(i).search(constraint)]
    named = [i for i in marked if _names_a_hazard(i, constraint)]
    return tuple(named or marked)


def _marks(index: int) -> re.Pattern[str]:
    return _compiled()[index][0]


def _names_a_hazard(index: int, constraint: str) -> bool:
    """Does ``constraint`` name something the family covers: a mark that is itself a covered
    item (花生, 巧克力), or a covered word once the family's marks are taken out (the 糖 of
    糖尿病 is no sweet)?"""
    hazards, items = _hazards(index)
    if hazards.search(constraint):
        return True
    return items.search(_marks(index).sub("，", constraint)) is not None


@cache
def _hazards(index: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The family's marks that name a covered item (花生, 花生过敏, 不坐电梯, 牛奶 whose head 奶
    is covered — not 怀孕, nor 糖尿病 whose head is 病), and its covered items of two characters
    or more (the 糖 of 糖尿病 is no sweet)."""
    family = families()[index]
    items = [w.lower() for w in family.covers if len(w) > 1]
    heads = {w for w in family.covers if len(w) == 1}  # a compound's last character is its head
    hazards = [
        w for w in family.marks if any(item in w.lower() for item in items) or w[-1] in heads
    ]
    return _pattern(hazards), _pattern(items)


def covers(constraint: str, request: str) -> bool:
    """Is ``constraint`` of a family that covers something ``request`` names?"""
    compiled, asked = _compiled(), _items(request)
    return any(compiled[i][1].search(asked) is not None for i in _families_of(constraint))


def rules_out(constraint: str, request: str) -> bool:
    """Has the table judged that ``constraint`` is no concern of ``request``: the request names
    something a family covers, the constraint is of known families, and none of them covers it
    (布洛芬 and a penicillin allergy)? A constraint of no known family is not judged."""
    return (
        names_covered(request)
        and bool(_families_of(constraint))
        and not covers(constraint, request)
    )


def covering(constraint: str, request: str) -> list[Family]:
    """The families of ``constraint`` that cover something ``request`` names (for the log)."""
    compiled, every, asked = _compiled(), families(), _items(request)
    return [every[i] for i in _families_of(constraint) if compiled[i][1].search(asked)]


def covered_by(constraint: str) -> set[str]:
    """Everything the families of ``constraint`` cover (an egg allergy: 蛋, 蛋糕, 蛋挞…)."""
    every = families()
    return {word for i in _families_of(constraint) for word in every[i].covers}


# families of an animal's constraint, by the words of their names (bird_air, cat_lily, pet_xylitol)
_ANIMAL_FAMILY = frozenset(("bird", "cat", "dog", "pet", "fish", "brachycephalic"))


def _an_animals(family: Family) -> bool:
    return bool(_ANIMAL_FAMILY & set(family.name.split("_")))


def of_an_animal(constraint: str) -> bool:
    """Is ``constraint`` an animal's by what it is about — every family it is of is a pet's
    (「不粘锅干烧冒的烟会毒死豆豆」 is of ``bird_air``, whatever 豆豆 is called)?"""
    every = families()
    found = [every[i] for i in _families_of(constraint)]
    return bool(found) and all(_an_animals(f) for f in found)
