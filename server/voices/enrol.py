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

from memory.identity import person_id
from server.voices.augment import conditions
from server.voices.checks import SENTENCES, Refusal, check_agreement, check_sentence, unit_mean
from server.voices.embedder import VoiceEmbedder
from server.voices.features import pcm16_to_float
from server.voices.identify import THRESHOLD, scores
from server.voices.store import Voice, VoiceStore


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
    waves = [pcm16_to_float(s) for s in sentences]
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
) -> Voice:
    """Enrol (or re-enrol) ``member`` of ``household`` from 16 kHz 16-bit mono sentences."""
    member = person_id(member)
    mean, prints = await asyncio.to_thread(measure, embedder, sentences)
    others = [v for v in await store.voices(household) if v.member != member]
    for voice, score in zip(others, scores(mean, others), strict=True):
        if score >= THRESHOLD:
            raise Refusal(
                "same_voice",
                f"this voice is already enrolled as {voice.member} ({voice.speaker})",
                member=voice.member,
            )
    return await store.put(household, member, speaker, prints)
