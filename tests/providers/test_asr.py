"""Speech to text: the offline whisper model on real Chinese speech, and the OpenAI-compatible
provider against a scripted transcription endpoint on loopback."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest
from pydantic import SecretStr

from bench.speech import character_error_rate, recorded_samples
from config.settings import AsrSettings, load_settings
from providers.asr import (
    OpenAITranscriptionASR,
    WhisperASR,
    clean_transcript,
    echoes_names,
    prompt_text,
)
from providers.errors import PermanentProviderError, TransientProviderError
from tests.support.scripted_llm import Reply, ScriptedLLM


@pytest.fixture(scope="module")
def whisper() -> WhisperASR:
    settings = load_settings()
    return WhisperASR(settings.asr, settings.resolve(settings.asr.model_dir))


@pytest.mark.parametrize("compute_type", ["int8", "float32"])
def test_whisper_transcribes_recorded_mandarin_closely(compute_type: str) -> None:
    """The same bound on two numeric paths (int8 and float32 kernels): CTranslate2 picks its
    kernels by the CPU (AVX2, AVX-512, AMX), so a verdict that holds on only one path would
    depend on the machine. Greedy int8 decoding sat at the bound (0.177) and failed on an AMX
    CPU; the default beam keeps the near-tied alternative."""
    settings = load_settings()
    asr = settings.asr.model_copy(update={"compute_type": compute_type})
    whisper = WhisperASR(asr, settings.resolve(asr.model_dir))
    rates = {}
    for sample in recorded_samples():
        text = whisper.transcribe_sync(sample.pcm, 16000)
        rates[sample.name] = character_error_rate(sample.text, text)
    assert rates["16k_take_photo.wav"] <= 0.15, rates
    assert sum(rates.values()) / len(rates) <= 0.2, rates


def test_silence_and_noise_transcribe_to_nothing(whisper: WhisperASR) -> None:
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 800, 32000).astype("<i2").tobytes()
    assert whisper.transcribe_sync(b"\0" * 64000, 16000) == ""
    assert whisper.transcribe_sync(noise, 16000) == ""
    assert whisper.transcribe_sync(b"\0" * 100, 16000) == ""  # too short to be speech


def test_wrong_sample_rate_is_a_clear_error(whisper: WhisperASR) -> None:
    with pytest.raises(PermanentProviderError, match="16 kHz"):
        whisper.transcribe_sync(b"\0" * 48000, 24000)


def test_cleaning_cuts_decoding_loops_and_converts_to_simplified() -> None:
    assert clean_transcript("看看這個是什麼", simplified=True) == "看看这个是什么"
    assert clean_transcript("我认为你要不要" + "认为你要不要" * 20, simplified=True) == (
        "我认为你要不要"
    )
    assert clean_transcript("天" * 60, simplified=False) == "天"
    assert clean_transcript("我天天吃药，谢谢谢谢", simplified=False) == "我天天吃药，谢谢谢谢"
    # a phrase three times running is a loop; short words people do repeat
    assert clean_transcript("一家里等于几家里等于几家里等于几", simplified=True) == "一家里等于几"
    assert (
        clean_transcript("好的好的好的，快点快点快点", simplified=True)
        == "好的好的好的，快点快点快点"
    )
    assert clean_transcript("  明天  早上 ", simplified=True) == "明天 早上"
    assert (
        clean_transcript("奶奶最爱吃红烧肉奶奶最爱吃红烧肉", simplified=True) == "奶奶最爱吃红烧肉"
    )
    assert clean_transcript("女儿对芒果过敏，女儿对芒果过敏。", simplified=True) == "女儿对芒果过敏"
    assert clean_transcript("好的好的", simplified=True) == "好的好的"  # said twice on purpose
    assert clean_transcript("我说的是今天不是明天", simplified=True) == "我说的是今天不是明天"


def _openai_settings(base_url: str) -> AsrSettings:
    return load_settings().asr.model_copy(
        update={"provider": "openai", "base_url": base_url, "api_key": SecretStr("k")}
    )


async def test_openai_provider_uploads_a_wav_and_cleans_the_text(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.transcriber = lambda body: Reply("幫我記一下買牛奶。\n")
    asr = OpenAITranscriptionASR(_openai_settings(scripted_llm.base_url))
    pcm = b"\x01\x00" * 16000
    assert await asr.transcribe(pcm, 16000) == "帮我记一下买牛奶。"
    body = scripted_llm.uploads[-1]
    assert b'name="language"' in body and b"\r\n\r\nzh\r\n" in body
    wav_start = body.index(b"RIFF")
    with wave.open(io.BytesIO(body[wav_start : wav_start + 44 + len(pcm)])) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16000, 1, 2)
        assert wav.readframes(wav.getnframes()) == pcm
    assert b'name="prompt"' not in body  # no prompt configured, no names: none sent
    await asr.transcribe(pcm, 16000, ("小橙子", "年糕"))
    assert b'name="prompt"' in scripted_llm.uploads[-1]
    assert "小橙子、年糕".encode() in scripted_llm.uploads[-1]
    # a reply that is the hint read back: asked again without it
    replies = iter([Reply("小橙子、年糕"), Reply("今天晚饭吃饺子吧")])
    scripted_llm.transcriber = lambda body: next(replies)
    assert await asr.transcribe(pcm, 16000, ("小橙子", "年糕")) == "今天晚饭吃饺子吧"
    assert b'name="prompt"' not in scripted_llm.uploads[-1]


def test_the_names_read_back_are_told_from_speech_that_names_them() -> None:
    names = ("小橙子", "王小明", "李娜", "年糕")
    assert echoes_names("小橙子、王小明、李娜、年糕", names)
    assert echoes_names("小明、豚子、王小明、豚子、王小明、豚子、王小明", names)
    assert not echoes_names("小橙子今天想吃年糕，行不行", names)  # two names, mostly speech
    assert not echoes_names("我女儿叫小橙子今年六岁", names)
    assert not echoes_names("今天晚饭吃饺子吧", names)


async def test_openai_provider_classifies_failures(scripted_llm: ScriptedLLM) -> None:
    asr = OpenAITranscriptionASR(_openai_settings(scripted_llm.base_url))
    scripted_llm.transcriber = lambda body: Reply(status=503)
    with pytest.raises(TransientProviderError):
        await asr.transcribe(b"\x01\x00" * 16000, 16000)
    scripted_llm.transcriber = lambda body: Reply(status=400)
    with pytest.raises(PermanentProviderError):
        await asr.transcribe(b"\x01\x00" * 16000, 16000)
    dead = OpenAITranscriptionASR(_openai_settings("http://127.0.0.1:9/v1"))
    with pytest.raises(TransientProviderError):
        await dead.transcribe(b"\x01\x00" * 16000, 16000)


def test_a_prompt_conditions_the_words_whisper_expects() -> None:
    """``asr.prompt`` reaches the decoder as whisper's previous text: a name the default decoding
    hears as 「周结轮」 on this VM comes out right when the prompt carries it. (Only the primed
    transcript is asserted: whether the unprimed one mishears may differ by CPU kernels.)"""
    settings = load_settings()
    sample = next(s for s in recorded_samples() if s.name == "16k_play_music.wav")
    primed = WhisperASR(
        settings.asr.model_copy(update={"prompt": "周杰伦"}),
        settings.resolve(settings.asr.model_dir),
    )
    assert "周杰伦" in primed.transcribe_sync(sample.pcm, 16000)
    tokenizer = primed._tokenizer
    context = primed._context(tokenizer, prompt_text("周杰伦", ()))
    assert context[0] == tokenizer.sot_prev and tokenizer.decode(context[1:]).strip() == "周杰伦"


def test_the_households_names_reach_whisper_as_the_prompt_would() -> None:
    """The names a session passes (server.memory.household) make the same previous text as
    ``asr.prompt`` holding them — the bench's names-as-prompt run measures this path — and
    come after the configured prompt, the end whisper keeps."""
    settings = load_settings()
    sample = next(s for s in recorded_samples() if s.name == "16k_play_music.wav")
    whisper = WhisperASR(settings.asr, settings.resolve(settings.asr.model_dir))
    assert "周杰伦" in whisper.transcribe_sync(sample.pcm, 16000, ("王小明", "周杰伦"))
    assert prompt_text("", ("王小明", "周杰伦")) == "王小明、周杰伦"
    assert prompt_text(" 家里的事。", ("年糕",)) == "家里的事。 年糕"
    assert prompt_text("", ()) == ""
