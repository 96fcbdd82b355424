"""Member ids derived from the name a voice is enrolled under: scoped to the household, stable,
the same member again for the same name."""

from __future__ import annotations

import numpy as np

from memory.identity import PERSON_PATTERN
from memory.schema import PersonId
from server.voices.members import member_for, slug
from server.voices.store import Voice


def _voice(member: str, speaker: str) -> Voice:
    return Voice(PersonId(member), speaker, np.zeros((3, 256), np.float32), 0.0)


def test_names_are_spelled_in_ascii() -> None:
    assert slug("妈妈") == "mama" and slug("王小二") == "wangxiaoer"
    assert slug("Grandpa Joe") == "grandpa-joe"
    assert slug("🙂").startswith("v") and len(slug("🙂")) == 9


def test_a_new_name_becomes_a_member_of_this_household_only() -> None:
    assert member_for("kitchen", "妈妈", []) == "kitchen.mama"
    assert member_for("device-aabbcc001122", "Mum", []) == "device-aabbcc001122.mum"
    assert member_for("kitchen", "妈妈", []) != member_for("cottage", "妈妈", [])


def test_a_name_already_enrolled_keeps_its_member() -> None:
    enrolled = [_voice("grandma", "奶奶"), _voice("kitchen.mum", "Mum")]
    assert member_for("kitchen", "奶奶", enrolled) == "grandma"
    assert member_for("kitchen", "mum", enrolled) == "kitchen.mum"  # case aside, one name


def test_two_names_spelled_alike_are_two_members() -> None:
    enrolled = [_voice("kitchen.xiaoming", "小明")]
    assert member_for("kitchen", "晓明", enrolled) == "kitchen.xiaoming-2"


def test_a_long_household_still_gives_a_valid_id() -> None:
    household = "h" * 64
    member = member_for(household, "妈妈", [])
    assert PERSON_PATTERN.fullmatch(member) and member != member_for("h" * 63, "妈妈", [])
