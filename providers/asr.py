"""Speech to text: faster-whisper ``base`` offline (default) and OpenAI-compatible
``/audio/transcriptions`` for production.

Both take one finished utterance (16-bit mono PCM) and return its text, already cleaned: whisper
writes traditional characters for Mandarin about half the time (converted with OpenCC ``t2s``) and,
on unclear audio, loops a syllable until its token budget runs out (the loop is cut). An
utterance that is noise, or that whisper itself calls non-speech, returns ``""``: no turn.
"""

from __future__ import annotations

import asyncio
import io
import re
import wave
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import openai
import structlog
from opencc import OpenCC

from config.settings import AsrSettings
from providers.errors import PermanentProviderError, TransientProviderError
from providers.model_files import install_whisper

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

log = structlog.get_logger(__name__)

ASR_SAMPLE_RATE = 16000
HOPELESS_LOGPROB = -2.5
PROMPT_TOKENS = 223  # whisper's limit on previous text: half its 448-token context
PROMPTS_KEPT = 64  # tokenised prompts kept (one per household's names)
WHISPER_FRAMES = 3000  # 30 s of 10 ms mel frames: whisper's native window
# A unit of 1-8 characters repeated 6+ times in a row, or of 4-12 repeated 3+ times
# (「一家里等于几家里等于几家里等于几」): whisper's decoding loop, not speech. People do repeat
# short words (谢谢谢谢, 好的好的好的, 快点快点快点), never a phrase three times running.
_LOOP = re.compile(r"(.{1,8}?)\1{5,}|(.{4,12}?)\2{2,}")
# The whole utterance written twice (「奶奶最爱吃红烧肉奶奶最爱吃红烧肉」): whisper's other loop
_TWICE = re.compile(r"^(.{4,}?)[\s,，、.。]*\1[\s,，、.。]*$")
_SEPARATOR = re.compile(r"([,，、.。])\s+")
_PUNCTUATION = re.compile(r"[\s,，、.。!！?？;；:：]+")
_T2S = OpenCC("t2s")


class SpeechToText(Protocol):
    name: str

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        """``names``: names the speaker's household uses (server.memory.household), a hint."""
        ...


def prompt_text(prompt: str, names: Sequence[str]) -> str:
    """What the recogniser reads as "previous text": ``asr.prompt``, then the household's
    names (last: whisper keeps the end of a long prompt)."""
    return " ".join(part for part in (prompt.strip(), "、".join(names)) if part)


def clean_transcript(text: str, *, simplified: bool) -> str:
    """One line of text a person would have said: loops cut to one repetition (a whole
    utterance written twice too), traditional characters converted, whitespace collapsed."""
    text = _SEPARATOR.sub(r"\1", text)  # 「见见, 见见,见见」: one separator style, so loops match
    text = _LOOP.sub(lambda m: m.group(1) or m.group(2), text)
    text = _TWICE.sub(r"\1", text)
    if simplified:
        text = _T2S.convert(text)
    return " ".join(text.split())


def echoes_names(text: str, names: Sequence[str]) -> bool:
    """On unclear audio whisper may "hear" its previous text: the household's names, listed
    (「今天晚饭吃饺子吧」 in a robotic voice came back as 「小橙子、王小明、李娜…」). True when
    names occur at least twice and make up half of what was heard."""
    heard = _PUNCTUATION.sub("", text)
    rest, found = heard, 0
    for name in sorted(names, key=len, reverse=True):
        found += rest.count(name)
        rest = rest.replace(name, "")
    return found >= 2 and len(rest) * 2 <= len(heard)


def read_back(heard: str, names: Sequence[str]) -> bool:
    """``echoes_names``, logged: both providers then ask again without the names."""
    if names and echoes_names(heard, names):
        log.info("asr.names_echoed", heard=heard)
        return True
    return False


def token_budget(seconds: float) -> int:
    """Generous for speech (Mandarin is ~4-6 characters a second, ~1.3 tokens each) yet small
    enough that a decoding loop ends in well under a second."""
    return int(16 + 12 * seconds)


class WhisperASR:
    """faster-whisper (CTranslate2, int8) on one dedicated thread: utterances queue in order and
    the event loop never waits on the model."""

    name = "whisper"

    def __init__(self, settings: AsrSettings, model_dir: Path) -> None:
        self._settings = settings
        self._model_dir = model_dir
        self._model: WhisperModel | None = None
        self._tokenizer: Any = None
        self._prompts: dict[str, list[int]] = {}  # prompt text → its tokens
        self._pool = ThreadPoolExecutor(1, "asr")

    def _load(self) -> WhisperModel:
        if self._model is None:
            from faster_whisper import WhisperModel  # heavy import, only when ASR is used

            install_whisper(self._model_dir)
            self._model = WhisperModel(
                str(self._model_dir),
                device="cpu",
                compute_type=self._settings.compute_type,
                cpu_threads=self._settings.threads,
                local_files_only=True,
            )
        return self._model

    async def warm(self) -> None:
        """Load the model now (0.6 s) rather than on the first spoken turn."""
        await asyncio.get_running_loop().run_in_executor(self._pool, self._load)

    def transcribe_sync(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        if sample_rate != ASR_SAMPLE_RATE:
            raise PermanentProviderError(self.name, f"expected 16 kHz PCM, got {sample_rate} Hz")
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        if audio.size < ASR_SAMPLE_RATE // 10:
            return ""
        try:
            heard = self._decode(audio, prompt_text(self._settings.prompt, names))
            if read_back(heard, names):  # the hint, not the speech: again without it
                heard = self._decode(audio, prompt_text(self._settings.prompt, ()))
            return heard
        except (RuntimeError, ValueError, OSError) as exc:
            raise PermanentProviderError(self.name, str(exc)) from exc

    def _decode(self, audio: np.ndarray[Any, np.dtype[np.float32]], previous: str) -> str:
        """One utterance, one window, greedy by default. Whisper pads every input to a 30 s
        window; CTranslate2's encoder also takes shorter ones, and the encoder is most of the
        cost (30 s: 1.2 s, 10 s: 0.2 s on 2 cores) — so the window fits the utterance, never
        below ``window_s``. No temperature fallback: bounded time; loops are cut instead."""
        import ctranslate2
        from faster_whisper.tokenizer import Tokenizer

        model = self._load()
        features = model.feature_extractor(audio)
        frames = int(features.shape[-1])
        window = min(WHISPER_FRAMES, max(int(self._settings.window_s * 100), frames + 100))
        if frames < window:
            features = np.pad(features, [(0, 0), (0, window - frames)])
        features = np.ascontiguousarray(features[None, :, :window], dtype=np.float32)
        encoded = model.model.encode(ctranslate2.StorageView.from_array(features), to_cpu=False)
        tokenizer = self._tokenizer or Tokenizer(
            model.hf_tokenizer, True, task="transcribe", language=self._settings.language
        )
        self._tokenizer = tokenizer  # built once: the vocabulary lookups cost on every turn
        context = self._context(tokenizer, previous)
        prompt = [*context, *tokenizer.sot_sequence, tokenizer.no_timestamps]
        budget = token_budget(audio.size / ASR_SAMPLE_RATE)
        [result] = model.model.generate(
            encoded,
            [prompt],
            beam_size=self._settings.beam_size,
            max_length=len(prompt) + budget,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=[-1],
        )
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        # whisper's own rule (silent if it says so and is unsure of any text), plus text it is
        # hopelessly unsure of: on silence it writes 「我」 at -3.3; real speech scores -0.2..-0.6
        silent = result.no_speech_prob > self._settings.no_speech_threshold and avg_logprob < -1
        if silent or avg_logprob < HOPELESS_LOGPROB:
            log.info("asr.dropped", no_speech=round(result.no_speech_prob, 3),
                     avg_logprob=round(avg_logprob, 2))  # fmt: skip
            return ""
        return clean_transcript(tokenizer.decode(tokens), simplified=self._settings.simplified)

    def _context(self, tokenizer: Any, previous: str) -> list[int]:
        """``previous`` (see ``prompt_text``) as whisper's "previous text" (``<|startofprev|>``
        …): it conditions the script and the words it expects. Nothing when it is empty."""
        if not previous:
            return []
        tokens = self._prompts.get(previous)
        if tokens is None:
            words = tokenizer.encode(" " + previous)
            tokens = [tokenizer.sot_prev, *words[-(PROMPT_TOKENS - 1) :]]
            if len(self._prompts) >= PROMPTS_KEPT:
                self._prompts.clear()
            self._prompts[previous] = tokens
        return tokens

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(
            self._pool, self.transcribe_sync, pcm, sample_rate, tuple(names)
        )
        try:
            async with asyncio.timeout(self._settings.timeout_s):
                return await work
        except TimeoutError as exc:
            raise TransientProviderError(self.name, "transcription timed out") from exc


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm)
    return out.getvalue()


class OpenAITranscriptionASR:
    """Any OpenAI-compatible ``/audio/transcriptions`` endpoint (whisper.cpp server, vLLM,
    FunASR/SenseVoice gateways, OpenAI itself); the utterance is uploaded as a WAV file."""

    name = "openai-asr"

    def __init__(self, settings: AsrSettings) -> None:
        if not settings.base_url:
            raise PermanentProviderError(self.name, "asr.base_url is required for provider openai")
        self._settings = settings
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() or "none",
            timeout=settings.timeout_s,
            max_retries=1,
        )

    async def warm(self) -> None:
        return None

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        if len(pcm) < sample_rate // 10 * 2:
            return ""
        wav = wav_bytes(pcm, sample_rate)
        heard = await self._request(wav, prompt_text(self._settings.prompt, names))
        if read_back(heard, names):  # the hint, not the speech: again without it
            heard = await self._request(wav, prompt_text(self._settings.prompt, ()))
        return heard

    async def _request(self, wav: bytes, previous: str) -> str:
        extra: dict[str, Any] = {"prompt": previous} if previous else {}
        try:
            text = await self._client.audio.transcriptions.create(
                model=self._settings.model,
                file=("utterance.wav", wav, "audio/wav"),
                language=self._settings.language,
                response_format="text",
                **extra,
            )
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientProviderError(self.name, str(exc)) from exc
        except openai.APIStatusError as exc:
            kind = TransientProviderError if exc.status_code >= 500 else PermanentProviderError
            raise kind(self.name, f"HTTP {exc.status_code}") from exc
        if not isinstance(text, str):  # a server that ignored response_format=text
            text = getattr(text, "text", "")
            if not isinstance(text, str):
                raise PermanentProviderError(self.name, "response carries no text")
        return clean_transcript(text, simplified=self._settings.simplified)


class WarmableASR(SpeechToText, Protocol):
    async def warm(self) -> None: ...


def build_asr(settings: AsrSettings, model_dir: Path) -> WarmableASR:
    if settings.provider == "openai":
        return OpenAITranscriptionASR(settings)
    return WhisperASR(settings, model_dir)
