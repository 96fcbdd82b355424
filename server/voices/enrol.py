"""Enrolment: three sentences of one member's voice → their voiceprints in the household.

Checks each sentence (``checks``), checks the sentences agree, refuses a voice that is already
enrolled as another member (``same_voice``: one person enrolled twice under two names would split
their memories), then stores one voiceprint per condition (``augment``). Enrolling a member again
(a child whose voice changed) replaces their voiceprints and keeps their memories.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
from redis.asyncio import Redis

from memory.identity import person_id
from memory.registry import Stores
from server.persons import PersonMap
from server.voices.augment import conditions
from server.voices.checks import (
    SENTENCES,
    Refusal,
    check_agreement,
    check_sentence,
    trim_quiet,
    unit_mean,
)
from server.voices.embedder import VoiceEmbedder
from server.voices.features import pcm16_to_float
from server.voices.identify import THRESHOLD, scores
from server.voices.store import Voice, VoiceStore

# Sentences to read aloud (the device reads them first, the console shows them): each long
# enough for the 1.5 s of voice a sentence needs.
READ_ALOUD = {
    "zh": (
        "今天天气很好，我们一起去公园散步吧。",
        "我早上喜欢喝一杯热牛奶，再吃两片面包。",
        "周末的时候，全家人一起在厨房里做饭。",
    ),
    "en": (
        "The weather is lovely today, let's take a walk in the park.",
        "In the morning I like a cup of hot milk and two slices of toast.",
        "At the weekend the whole family cooks together in the kitchen.",
    ),
}


def voiceprints(embedder: VoiceEmbedder, sentences: Sequence[np.ndarray]) -> np.ndarray:
    """(conditions, dim): per condition, the unit mean of the sentences' embeddings."""
    per: dict[str, list[np.ndarray]] = {}
    for n, wav in enumerate(sentences):
        for condition, heard in conditions(wav, seed=n).items():
            per.setdefault(condition, []).append(embedder.embed_wave(heard))
    rows = [unit_mean(per[c]) for c in per]
    return np.stack(rows)


def measure(embedder: VoiceEmbedder, sentences: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The checked sentences' mean embedding and the voiceprints to store (CPU work: run it off
    the event loop)."""
    if len(sentences) != SENTENCES:
        raise Refusal("sentences", f"enrolment takes {SENTENCES} sentences, got {len(sentences)}")
    waves = [trim_quiet(pcm16_to_float(s)) for s in sentences]
    windows = [check_sentence(w, embedder, n) for n, w in enumerate(waves)]
    check_agreement(windows)
    return unit_mean([unit_mean(w) for w in windows]), voiceprints(embedder, waves)


async def enrol(
    store: VoiceStore,
    embedder: VoiceEmbedder,
    household: str,
    member: str,
    speaker: str,
    sentences: Sequence[bytes],
    *,
    own_voice_only: bool = False,
) -> Voice:
    """Enrol (or re-enrol) ``member`` of ``household`` from 16 kHz 16-bit mono sentences.
    ``own_voice_only``: an enrolled member is re-enrolled only by a voice that is theirs."""
    member = person_id(member)
    mean, prints = await asyncio.to_thread(measure, embedder, sentences)
    enrolled = await store.voices(household)
    others = [v for v in enrolled if v.member != member]
    known = [v for v in enrolled if v.member == member]
    if own_voice_only and known and scores(mean, known)[0] < THRESHOLD:
        raise Refusal(
            "name_taken",
            f"{known[0].speaker} is enrolled with another voice",
            member=known[0].member,
            speaker=known[0].speaker,
        )
    for voice, score in zip(others, scores(mean, others), strict=True):
        if score >= THRESHOLD:
            raise Refusal(
                "same_voice",
                f"this voice is already enrolled as {voice.member} ({voice.speaker})",
                member=voice.member,
                speaker=voice.speaker,
            )
    return await store.put(household, member, speaker, prints)


async def enrol_member(
    redis: Redis,
    embedder: VoiceEmbedder,
    household: str,
    member: str,
    speaker: str,
    sentences: Sequence[bytes],
    *,
    own_voice_only: bool = False,
) -> Voice:
    """``enrol``, then the member as a person of their own: their memory store exists and their
    words are stored under their speaker name."""
    voice = await enrol(VoiceStore(redis), embedder, household, member, speaker, sentences,
                        own_voice_only=own_voice_only)  # fmt: skip
    await Stores(redis).create(voice.member, voice.member)
    await PersonMap(redis).name_speaker(voice.member, voice.speaker)
    return voice
