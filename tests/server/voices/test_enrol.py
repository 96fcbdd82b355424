"""Enrolment into a household's voice store (real Redis, real model, real voices), and who is
speaking afterwards."""

from __future__ import annotations

import numpy as np
import pytest
from redis.asyncio import Redis

from bench.voice_recordings import Speaker
from memory.registry import Stores
from server.persons import PersonMap
from server.voices.checks import Refusal
from server.voices.embedder import VoiceEmbedder
from server.voices.enrol import enrol, enrol_member
from server.voices.identify import identify
from server.voices.store import HOUSEHOLD_BYTES_LIMIT, MAX_MEMBERS, HouseholdFull, VoiceStore
from tests.server.voices.conftest import pcm

HOME = "kitchen-home"


async def _enrol(redis: Redis, embedder: VoiceEmbedder, member: str, s: Speaker) -> None:
    await enrol(VoiceStore(redis), embedder, HOME, member, member, [pcm(w) for w in s.enrol])


async def test_enrolled_members_are_told_apart_and_strangers_stay_unknown(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    members, strangers = real_speakers[:4], real_speakers[4:]
    for n, s in enumerate(members):
        await _enrol(redis, voice_embedder, f"member{n}", s)
    voices = await VoiceStore(redis).voices(HOME)
    assert [v.member for v in voices] == ["member0", "member1", "member2", "member3"]
    named = [
        identify(voice_embedder.embed(pcm(w)), voices).member
        for n, s in enumerate(members)
        for w in s.tests[:6]
    ]
    expected = [f"member{n}" for n in range(4) for _ in range(6)]
    right = sum(a == b for a, b in zip(named, expected, strict=True))
    wrong = sum(a is not None and a != b for a, b in zip(named, expected, strict=True))
    assert right >= len(expected) // 2 and wrong <= 1  # unsure → unknown, rarely the wrong one
    accepted = [
        identify(voice_embedder.embed(pcm(w)), voices).member
        for s in strangers
        for w in s.tests[:6]
    ]
    assert sum(a is not None for a in accepted) <= 2  # of 30 stranger utterances
    assert 0 < await VoiceStore(redis).size_bytes(HOME) < HOUSEHOLD_BYTES_LIMIT // 50


async def test_the_same_voice_under_a_second_name_is_refused(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    await _enrol(redis, voice_embedder, "mum", real_speakers[0])
    with pytest.raises(Refusal) as caught:
        await _enrol(redis, voice_embedder, "mother", real_speakers[0])
    assert caught.value.reason == "same_voice" and caught.value.member == "mum"
    assert [v.member for v in await VoiceStore(redis).voices(HOME)] == ["mum"]


async def test_re_enrolment_replaces_the_voiceprint_of_the_same_member(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    store = VoiceStore(redis)
    await _enrol(redis, voice_embedder, "kid", real_speakers[0])
    (before,) = await store.voices(HOME)
    await _enrol(redis, voice_embedder, "kid", real_speakers[1])  # the voice changed
    (after,) = await store.voices(HOME)
    assert after.member == "kid" and after.enrolled_at >= before.enrolled_at
    assert not np.array_equal(after.prints, before.prints)
    new_voice = voice_embedder.embed(pcm(real_speakers[1].tests[0]))
    assert float(np.max(after.prints @ new_voice)) > float(np.max(before.prints @ new_voice))


async def test_where_anyone_may_ask_only_the_members_own_voice_re_enrols_them(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    mum, guest = real_speakers[0], real_speakers[1]
    await enrol_member(redis, voice_embedder, HOME, "mum", "妈妈", [pcm(w) for w in mum.enrol])
    with pytest.raises(Refusal) as caught:
        await enrol_member(redis, voice_embedder, HOME, "mum", "妈妈",
                           [pcm(w) for w in guest.enrol], own_voice_only=True)  # fmt: skip
    assert caught.value.reason == "name_taken" and caught.value.speaker == "妈妈"
    (kept,) = await VoiceStore(redis).voices(HOME)
    assert float(np.max(kept.prints @ voice_embedder.embed(pcm(mum.tests[0])))) > 0.8
    again = await enrol_member(redis, voice_embedder, HOME, "mum", "妈妈",
                               [pcm(w) for w in mum.enrol], own_voice_only=True)  # fmt: skip
    assert again.member == "mum"


async def test_an_enrolled_member_is_a_person_with_a_store_and_a_speaker_name(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    sentences = [pcm(w) for w in real_speakers[2].enrol]
    await enrol_member(redis, voice_embedder, HOME, "gran", "奶奶", sentences)
    assert await PersonMap(redis).speaker_of("gran") == "奶奶"
    assert await Stores(redis).get("gran") is not None


async def test_removing_a_member_deletes_their_voice_data(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    store = VoiceStore(redis)
    await _enrol(redis, voice_embedder, "guest", real_speakers[2])
    assert await store.remove(HOME, "guest")
    assert await store.voices(HOME) == []
    assert await store.size_bytes(HOME) == 0
    assert not await store.remove(HOME, "guest")


async def test_a_wrong_number_of_sentences_is_refused(
    redis: Redis, voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    with pytest.raises(Refusal) as caught:
        await enrol(
            VoiceStore(redis), voice_embedder, HOME, "a", "a", [pcm(real_speakers[0].enrol[0])]
        )
    assert caught.value.reason == "sentences"


async def test_a_household_holds_a_bounded_number_of_voices(redis: Redis) -> None:
    store = VoiceStore(redis)
    prints = np.eye(3, 256, dtype=np.float32)
    for n in range(MAX_MEMBERS):
        await store.put(HOME, f"m{n}", f"m{n}", prints)
    with pytest.raises(HouseholdFull):
        await store.put(HOME, "one-more", "one-more", prints)
    await store.put(HOME, "m0", "m0", prints)  # re-enrolling a member still works when full
    assert await store.size_bytes(HOME) < HOUSEHOLD_BYTES_LIMIT


def test_no_enrolled_voice_means_unknown(voice_embedder: VoiceEmbedder) -> None:
    assert identify(np.ones(256, np.float32) / 16, []).member is None
