"""Text to speech: espeak-ng Mandarin (light default) and OpenAI-compatible ``/audio/speech``."""

from __future__ import annotations

import asyncio
import io
import re
import shutil
import wave
from dataclasses import dataclass
from typing import Protocol

import openai
from pypinyin import Style, lazy_pinyin

from config.settings import TTSSettings
from providers.errors import PermanentProviderError, TransientProviderError

_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U0001f900-\U0001f9ff\u200d\ufe0f]", re.UNICODE
)
_MARKDOWN = re.compile(r"[*_`#>|~]+")


@dataclass(frozen=True, slots=True)
class SpeechAudio:
    pcm: bytes  # 16-bit signed little-endian mono
    sample_rate: int


class TextToSpeech(Protocol):
    name: str

    async def synthesize(self, text: str) -> SpeechAudio: ...


def speakable(text: str) -> str:
    """What a sentence sounds like: no emoji, no markdown, collapsed whitespace."""
    text = _MARKDOWN.sub("", _EMOJI.sub("", text))
    return " ".join(text.split())


def to_pinyin(text: str) -> str:
    """Hanzi → tone-numbered pinyin for espeak's ``cmn-latn-pinyin`` voice (never ``cmn``)."""
    parts = lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True)
    out = " ".join(p.strip() for p in parts if p.strip())
    # Chinese punctuation → pauses espeak understands.
    return out.translate(str.maketrans("，。！？；：、", ",.!?;:,"))


class EspeakTTS:
    """espeak-ng subprocess; ~0.07 s per sentence, 22.05 kHz mono."""

    name = "espeak"

    def __init__(self, settings: TTSSettings) -> None:
        binary = shutil.which("espeak-ng")
        if binary is None:
            raise PermanentProviderError(self.name, "espeak-ng is not installed (apt-get)")
        self._binary = binary
        self._voice = settings.espeak_voice
        self._speed = settings.espeak_speed
        self._timeout = settings.timeout_s

    async def synthesize(self, text: str) -> SpeechAudio:
        spoken = to_pinyin(speakable(text))
        if not spoken:
            return SpeechAudio(b"", 22050)
        proc = await asyncio.create_subprocess_exec(
            self._binary,
            "-v",
            self._voice,
            "-s",
            str(self._speed),
            "--stdout",
            "--",
            spoken,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(self._timeout):
                out, err = await proc.communicate()
        except TimeoutError as exc:
            proc.kill()
            await proc.wait()
            raise TransientProviderError(self.name, "synthesis timed out") from exc
        if proc.returncode != 0:
            raise PermanentProviderError(self.name, err.decode(errors="replace").strip()[:200])
        return _read_wav(out)


def _read_wav(data: bytes) -> SpeechAudio:
    try:
        with wave.open(io.BytesIO(data)) as wav:
            if wav.getsampwidth() != 2 or wav.getnchannels() != 1:
                raise PermanentProviderError("espeak", "expected 16-bit mono WAV")
            return SpeechAudio(wav.readframes(wav.getnframes()), wav.getframerate())
    except (wave.Error, EOFError) as exc:
        raise PermanentProviderError("espeak", f"unreadable WAV: {exc}") from exc


class OpenAISpeechTTS:
    """Any OpenAI-compatible ``/audio/speech`` endpoint, raw PCM response (24 kHz s16le)."""

    name = "openai-tts"
    PCM_RATE = 24000

    def __init__(self, settings: TTSSettings) -> None:
        if not settings.base_url:
            raise PermanentProviderError(self.name, "tts.base_url is required for provider openai")
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() or "none",
            timeout=settings.timeout_s,
            max_retries=1,
        )
        self._model = settings.model
        self._voice = settings.voice

    async def synthesize(self, text: str) -> SpeechAudio:
        spoken = speakable(text)
        if not spoken:
            return SpeechAudio(b"", self.PCM_RATE)
        try:
            response = await self._client.audio.speech.create(
                model=self._model, voice=self._voice, input=spoken, response_format="pcm"
            )
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientProviderError(self.name, str(exc)) from exc
        except openai.APIStatusError as exc:
            kind = TransientProviderError if exc.status_code >= 500 else PermanentProviderError
            raise kind(self.name, f"HTTP {exc.status_code}") from exc
        return SpeechAudio(response.content, self.PCM_RATE)


def build_tts(settings: TTSSettings) -> TextToSpeech:
    if settings.provider == "openai":
        return OpenAISpeechTTS(settings)
    return EspeakTTS(settings)
