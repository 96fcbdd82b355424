"""Chinese kinship terms (称谓): which words name a relative, of which gender and generation, and
which words name the same relation. The table is ``kinship.json`` next to this module, generated
by ``scripts/kinship_table.py`` from the npm package relationship.js (MIT; its notice is in the
file's ``source`` header). Loaded once, on first use.

Generation counts up towards elders: 爸爸 +1, 爷爷 +2, 孙女 -2; None when a term has readings of
different generations (大爷: father's elder brother or grandfather's). Gender is "m", "f" or None
(爱人, 孩子). Single-character terms (娘, 妈, 哥, 姐 …) are included but flagged, since in running
text they are often parts of other words; ``longest_at`` can leave them out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("kinship.json")


@dataclass(frozen=True, slots=True)
class Kin:
    term: str
    canonical: str
    gender: str | None
    generation: int | None
    chains: tuple[str, ...]  # the library's relation chain keys, e.g. "m,f" (mother's father)
    single_char: bool
    child_calls: dict[str, tuple[str, ...]]  # speaker gender -> what the speaker's child says


@dataclass(frozen=True, slots=True)
class _Table:
    kin: dict[str, Kin]
    longest: int
    source: dict[str, Any]


@cache
def _table() -> _Table:
    raw = json.loads(TABLE.read_text(encoding="utf-8"))
    kin = {
        term: Kin(
            term=term,
            canonical=row["canonical"],
            gender=row["gender"],
            generation=row["generation"],
            chains=tuple(row["chains"]),
            single_char=row["single_char"],
            child_calls={sex: tuple(said) for sex, said in row["child_calls"].items()},
        )
        for term, row in raw["terms"].items()
    }
    return _Table(kin=kin, longest=max(map(len, kin)), source=raw["source"])


def entry(term: str) -> Kin | None:
    return _table().kin.get(term)


def is_kin(term: str) -> bool:
    return term in _table().kin


def canonical(term: str) -> str | None:
    """The one term shared by all words for the same relation (姥爷, 外祖父 -> 外公)."""
    found = entry(term)
    return found.canonical if found else None


def gender(term: str) -> str | None:
    found = entry(term)
    return found.gender if found else None


def generation(term: str) -> int | None:
    found = entry(term)
    return found.generation if found else None


def terms() -> frozenset[str]:
    return frozenset(_table().kin)


def source() -> dict[str, Any]:
    """Library name, version, licence and notice the table was built from."""
    return dict(_table().source)


# the first hop of a relation seen from the speaker's child, and what the speaker calls that
# parent when the speaker is a man ("m") or a woman ("f"): the child's father is a man
# speaking's self and a woman speaking's husband ("h"); the child's mother the reverse ("w")
_CHILD_PARENT = {"f": {"m": "", "f": "h"}, "m": {"m": "w", "f": ""}}


@cache
def from_childs_side(term: str) -> tuple[str, ...]:
    """What the speaker calls the relative their child calls ``term`` — both readings, for a
    father and for a mother speaking (孩子奶奶 → 妈妈 … for him, 婆婆 … for her; 孩子姥爷 →
    岳父 … for him, 爸爸 … for her), every term of the table for each; () when ``term`` is not a
    relative of the child's through a parent, or names the speaker or their spouse."""
    found = entry(term)
    if found is None:
        return ()
    wanted: set[str] = set()
    for chain in found.chains:
        first, _, rest = chain.partition(",")
        if first not in _CHILD_PARENT or not rest or "[" in rest:
            continue
        for via in _CHILD_PARENT[first].values():
            wanted.add(f"{via},{rest}" if via else rest)
    return tuple(sorted(t for t, kin in _table().kin.items() if wanted & set(kin.chains)))


def of(owner: str, term: str) -> str | None:
    """What the speaker calls ``owner``'s ``term`` (老婆的妈妈 → 岳母, 儿子的女儿 → 孙女); None
    when either is not a kinship term or the table has no word for the chain."""
    first, second = entry(owner), entry(term)
    if first is None or second is None:
        return None
    chains = {f"{a},{b}" for a in first.chains for b in second.chains}
    found = sorted(
        (kin for kin in _table().kin.values() if chains & set(kin.chains)),
        key=lambda kin: (kin.term != kin.canonical, len(kin.term), kin.term),
    )
    return found[0].canonical if found else None


def longest_at(text: str, start: int, *, single_char: bool = True) -> str | None:
    """The longest kinship term in ``text`` starting at ``start``; with ``single_char=False``
    a lone 妈/哥/娘 … does not count."""
    table = _table()
    if not 0 <= start < len(text):
        return None
    for size in range(min(table.longest, len(text) - start), 0 if single_char else 1, -1):
        if text[start : start + size] in table.kin:
            return text[start : start + size]
    return None


def without_terms(text: str) -> str:
    """``text`` with every kinship term of two characters or more (那口子, 老汉儿, 婆婆) cut
    out: what is left names things, not people."""
    out, start = [], 0
    while start < len(text):
        term = longest_at(text, start, single_char=False)
        out.append(text[start] if term is None else "，")
        start += 1 if term is None else len(term)
    return "".join(out)
