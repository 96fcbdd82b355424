"""Early transcripts matched to the utterance they heard: scripted recognisers, no audio."""

from __future__ import annotations

import asyncio

import pytest

from server.device.early_asr import EarlyTranscripts
from server.device.listening import BYTES_PER_MS, EndReason, SpeechPaused, UtteranceEnded

VOICE = b"\x01\x02" * 800
SILENCE = b"\0\0" * 400


def ended(pcm: bytes, voiced_ms: int) -> UtteranceEnded:
    return UtteranceEnded(pcm=pcm, voiced_ms=voiced_ms, reason=EndReason.SILENCE,
                          speech_ended_at=0.0)  # fmt: skip


async def hear(pcm: bytes) -> str:
    return f"{len(pcm)} bytes"


async def test_the_utterance_that_ended_at_the_pause_takes_its_transcript() -> None:
    early = EarlyTranscripts(lambda: 1.0, 100)  # the wait is 100 ms, the pause 25 ms so far
    early.start(SpeechPaused(VOICE + SILENCE, 300, 25), hear)
    taken = early.take(ended(VOICE + SILENCE + SILENCE, 300))
    assert taken is not None
    heard = await taken.task
    # heard as the utterance will end: the rest of the wait (75 ms) as digital silence
    assert heard.text == f"{len(VOICE + SILENCE) + 75 * BYTES_PER_MS} bytes"
    assert early.take(ended(VOICE + SILENCE + SILENCE, 300)) is None  # taken once


@pytest.mark.parametrize(
    "utterance",
    [
        ended(VOICE + SILENCE + VOICE + SILENCE, 600),  # the speaker went on after the pause
        ended(VOICE + VOICE + SILENCE, 300),  # other audio with the same voiced time
    ],
)
async def test_an_utterance_with_more_or_other_audio_is_transcribed_anew(
    utterance: UtteranceEnded,
) -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(pcm: bytes) -> str:
        started.set()
        await release.wait()
        return "stale"

    early = EarlyTranscripts(lambda: 1.0, 25)
    early.start(SpeechPaused(VOICE + SILENCE, 300, 25), slow)
    async with asyncio.timeout(5):
        await started.wait()
    pending = early._pending
    assert pending is not None
    assert early.take(utterance) is None
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(5):
            await pending.task  # the stale transcript does not hold the recogniser longer


async def test_a_new_pause_supersedes_the_last_and_a_stale_failure_is_nobodys() -> None:
    async def broken(pcm: bytes) -> str:
        raise RuntimeError("recogniser crashed")

    early = EarlyTranscripts(lambda: 1.0, 25)
    early.start(SpeechPaused(VOICE + SILENCE, 300, 25), broken)
    first = early._pending
    assert first is not None
    async with asyncio.timeout(5):
        await asyncio.wait([first.task])
    early.start(SpeechPaused(VOICE + SILENCE + VOICE + SILENCE, 600, 25), hear)
    taken = early.take(ended(VOICE + SILENCE + VOICE + SILENCE + SILENCE, 600))
    assert taken is not None and taken is not first
    assert (await taken.task).text == f"{len(VOICE + SILENCE + VOICE + SILENCE)} bytes"
