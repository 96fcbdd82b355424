"""What an enrolment refuses: silence, music, a too-short sentence, two voices, a sentence
spoken by someone else — each with its machine-readable reason."""

from __future__ import annotations

import numpy as np
import pytest

from bench.voice_recordings import Speaker
from server.voices.checks import Refusal, check_agreement, check_sentence
from server.voices.embedder import VoiceEmbedder
from tests.server.voices.conftest import music


def _refused(wav: np.ndarray, embedder: VoiceEmbedder) -> Refusal:
    with pytest.raises(Refusal) as caught:
        check_sentence(wav, embedder, 0)
    assert caught.value.sentence == 0
    return caught.value


def test_a_spoken_sentence_passes(
    voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    windows = check_sentence(real_speakers[0].enrol[0], voice_embedder, 0)
    assert windows.shape == (4, 256)  # 4 s: four overlapping 1.6 s windows
    np.testing.assert_allclose(np.linalg.norm(windows, axis=1), 1.0, atol=1e-5)


def test_silence_is_refused(voice_embedder: VoiceEmbedder) -> None:
    assert _refused(np.zeros(64000, np.float32), voice_embedder).reason == "silence"


def test_music_is_refused(voice_embedder: VoiceEmbedder) -> None:
    assert _refused(music(), voice_embedder).reason == "not_speech"


def test_noise_is_refused(voice_embedder: VoiceEmbedder) -> None:
    noise = np.random.default_rng(1).standard_normal(64000).astype(np.float32) * 0.05
    assert _refused(noise, voice_embedder).reason == "not_speech"


def test_a_sentence_of_one_second_is_too_short(
    voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    second = real_speakers[0].enrol[0][:16000]
    assert _refused(second, voice_embedder).reason == "too_short"


def test_two_people_taking_turns_in_a_sentence_are_refused(
    voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    pairs = list(zip(real_speakers, real_speakers[1:] + real_speakers[:1], strict=True))
    for a, b in pairs:
        own = [check_sentence(w, voice_embedder, n) for n, w in enumerate(a.enrol[:2])]
        turns = np.concatenate([a.enrol[2][:32000], b.enrol[0][:32000]])
        with pytest.raises(Refusal) as caught:
            check_agreement([*own, check_sentence(turns, voice_embedder, 2)])
        assert caught.value.reason in {"two_voices", "inconsistent"}
        assert caught.value.sentence == 2


def test_a_sentence_read_by_someone_else_is_refused(
    voice_embedder: VoiceEmbedder, real_speakers: list[Speaker]
) -> None:
    for a, b in zip(real_speakers, real_speakers[1:] + real_speakers[:1], strict=True):
        own = [check_sentence(w, voice_embedder, n) for n, w in enumerate(a.enrol)]
        check_agreement(own)
        other = check_sentence(b.enrol[2], voice_embedder, 2)
        with pytest.raises(Refusal) as caught:
            check_agreement([own[0], own[1], other])
        # the whole sentence, or at least one of its windows, is not the enrolled voice
        assert caught.value.reason in {"inconsistent", "two_voices"}
        assert caught.value.sentence == 2
