"""What an identified member's turn reads beside their own store, and the member's privacy."""

from __future__ import annotations

import time

import numpy as np
from redis.asyncio import Redis

from memory.schema import PersonId
from server.tools import Sharing
from server.voices.identify import identify
from server.voices.store import Voice, VoiceStore

HOME = PersonId("kitchen")


def _voice(member: str, axis: int, private: bool = False) -> Voice:
    prints = np.zeros((3, 8), np.float32)
    prints[:, axis] = 1.0
    return Voice(PersonId(member), member.split("~")[-1], prints, time.time(), private)


VOICES = [_voice("kitchen~grandma", 0), _voice("kitchen~mum", 1),
          _voice("kitchen~teen", 2, private=True)]  # fmt: skip


def test_a_member_reads_the_household_and_the_shared_members_constraints() -> None:
    heard = np.zeros(8, np.float32)
    heard[0] = 1.0
    found = identify(heard, VOICES)
    assert found.member == PersonId("kitchen~grandma")
    assert found.sharing(HOME, "kitchen") == (
        Sharing(HOME, "kitchen", whole=True),
        Sharing(PersonId("kitchen~mum"), "mum"),
    )  # the private member is never read to another voice, the speaker not twice


def test_a_private_member_still_reads_the_households() -> None:
    heard = np.zeros(8, np.float32)
    heard[2] = 1.0
    found = identify(heard, VOICES)
    assert found.member == PersonId("kitchen~teen")
    shared = found.sharing(HOME, "kitchen")
    assert [s.person for s in shared] == [HOME, "kitchen~grandma", "kitchen~mum"]


def test_an_unknown_voice_reads_only_the_devices_store() -> None:
    heard = np.zeros(8, np.float32)
    heard[5] = 1.0
    found = identify(heard, VOICES)
    assert found.member is None and found.sharing(HOME, "kitchen") == ()


async def test_privacy_is_kept_and_survives_a_re_enrolment(redis: Redis) -> None:
    store = VoiceStore(redis)
    prints = np.eye(3, 8, dtype=np.float32)
    await store.put("house", "teen", "小宇", prints)
    assert (await store.voices("house"))[0].private is False
    marked = await store.set_private("house", "teen", True)
    assert marked is not None and marked.private
    await store.put("house", "teen", "小宇", prints)  # the voice changed: enrolled again
    [voice] = await store.voices("house")
    assert voice.private and voice.speaker == "小宇"
    assert await store.set_private("house", "nobody", True) is None
