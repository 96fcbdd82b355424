"""「不是那个，是另一个」: a correction that names neither member, moved to the other one.

「前两天说的芒果过敏那个，我搞混了，不是那个娃儿，是另外一个」 names neither child: it says the
fact it corrects (the mango allergy) and that it belongs to *the other* member of the same kind.
The household's own words say who that is: the names tied to relations (``entities.name_links``:
涵涵 ↔ 儿子, 幺妹 ↔ 女儿). When exactly one other member of the same kind is known (the other
child; the other grandparent on that side is not guessed), the memory's text names that member
instead; otherwise nothing is decided and the caller goes on as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory import entities

OTHER_ONE = re.compile(r"另(?:外)?(?:一个|那个|一位)|the other (?:one|kid|child)", re.I)
_CHILDREN = frozenset(("儿子", "女儿", "孩子", "宝宝", "孙子", "孙女", "外孙", "外孙女"))
_GRANDPARENTS = frozenset(("爷爷", "奶奶", "外公", "外婆"))
_KINDS = (_CHILDREN, _GRANDPARENTS)


def other_member(member: str, links: Mapping[str, str]) -> str | None:
    """The one other member of ``member``'s kind the household names (its name, or its
    relation word when no name is known), else None."""
    relation = links.get(member, member)
    kind = next((k for k in _KINDS if relation in k), frozenset((relation,)))
    people = _people({n: r for n, r in links.items() if r in kind})
    others = [p for p in people if member not in p]
    return others[0][0] if len(others) == 1 else None


def _people(links: Mapping[str, str]) -> list[tuple[str, ...]]:
    """The names grouped by person: a given name goes with its full name (子涵 with 刘子涵)."""
    groups: list[list[str]] = []
    for name in sorted(links, key=len, reverse=True):
        group = next((g for g in groups if any(name in n or n in name for n in g)), None)
        if group is None:
            groups.append([name])
        else:
            group.append(name)
    return [(*g, links[g[0]]) for g in groups]


def moved(text: str, member: str, other: str) -> str:
    """``text`` about ``other`` instead of ``member``."""
    if member in text:
        return text.replace(member, other)
    said = entities.canonical(member)
    for word in (member, said, *(w for g in entities.SYNONYMS if said in g for w in g)):
        if word and word in text:
            return text.replace(word, other, 1)
    return f"{other}，{text}"


def said_of_another(said: str) -> bool:
    return OTHER_ONE.search(said) is not None
