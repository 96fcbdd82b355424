"""A member's person id from the name they are enrolled under, when nobody typed one (on the
device, in the console).

Member ids are person ids, and person ids are global: two households each enrolling 「妈妈」 must
not share one memory store. A derived id is therefore the household's id, a dot, and the name in
ASCII (pinyin for Chinese: 妈妈 → ``kitchen.mama``). A name already enrolled in the household keeps
its member (enrolling again replaces the voiceprint, never the memories); a second name that
spells the same (小明, 晓明) gets a numbered id rather than the first one's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from pypinyin import Style, lazy_pinyin

from memory.identity import person_id, registrable
from memory.schema import PersonId
from server.voices.store import Voice

_NOT_ID = re.compile(r"[^a-z0-9]+")
MAX_ID = 64  # memory.identity.PERSON_PATTERN


def slug(name: str) -> str:
    """``name`` as lower-case ASCII letters, digits and '-' (pinyin for Chinese characters); a
    name with none of those (emoji, another script) a short hash of itself."""
    spelled = "".join(lazy_pinyin(name, style=Style.NORMAL, errors="default"))
    found = _NOT_ID.sub("-", spelled.lower()).strip("-")
    return found[:24].strip("-") or "v" + hashlib.sha1(name.encode()).hexdigest()[:8]


def _within(household: str, tail: str) -> str:
    candidate = f"{household}.{tail}"
    if len(candidate) <= MAX_ID:
        return candidate
    digest = hashlib.sha1(candidate.encode()).hexdigest()[:10]
    return f"{household[: MAX_ID - len(tail) - 12]}.{tail}-{digest}"


def same_name(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def member_for(household: str, speaker: str, enrolled: Sequence[Voice]) -> PersonId:
    """The member ``speaker`` is (or becomes) in ``household``, given its enrolled voices."""
    name = registrable(speaker)
    for voice in enrolled:
        if same_name(voice.speaker, name):
            return voice.member
    taken = {voice.member for voice in enrolled}
    base = slug(name)
    tail, n = base, 1
    while person_id(_within(household, tail)) in taken:
        n += 1
        tail = f"{base}-{n}"
    return person_id(_within(household, tail))
