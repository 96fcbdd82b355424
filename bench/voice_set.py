"""Synthetic voices for the voices bench: distinct espeak-ng speakers, made harder on purpose.

No package on the reachable registries ships recordings of several distinct speakers, so the
voices are espeak-ng's Mandarin voice (``cmn-latn-pinyin``) with different variants (formant
sets), base pitch and speed. Every figure measured on them is a figure on
**synthetic voices**. Enrolment sentences are clean (a guided enrolment, near the device); each
test utterance (3 s) is transformed to make identification harder, not easier: the speaker's pitch
moved by up to ±6 steps and tempo by up to ±15 % (a voice on another day), then one of: room
noise at 10–20 dB SNR, a far microphone (low-pass at ~3 kHz plus a 0.4 s reverberant tail), or
both. The one natural voice that ships in a package (xiaozhi-sdk's sample recordings) is added to
the unknown voices.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from dataclasses import dataclass

import numpy as np

from providers.opus import resample
from providers.tts import to_pinyin

RATE = 16000
TEST_SAMPLES = 3 * RATE  # every test utterance is 3 s


@dataclass(frozen=True, slots=True)
class SyntheticVoice:
    name: str
    variant: str  # espeak-ng variant (formants, voicing)
    pitch: int  # 0–99
    speed: int  # words a minute


# A household of four, and voices that are not in it.
MEMBERS = (
    SyntheticVoice("爸爸", "m3", 35, 165),
    SyntheticVoice("妈妈", "f2", 62, 170),
    SyntheticVoice("奶奶", "f4", 50, 140),
    SyntheticVoice("小橙子", "f5", 85, 185),
)
UNKNOWN = (
    SyntheticVoice("邻居", "m1", 40, 160),
    SyntheticVoice("快递员", "m7", 28, 180),
    SyntheticVoice("客人甲", "f1", 58, 165),
    SyntheticVoice("客人乙", "m5", 45, 150),
    SyntheticVoice("客人丙", "f3", 70, 175),
    SyntheticVoice("客人丁", "klatt", 38, 160),
)

ENROL = (
    "今天是星期几，我想记住我的声音",
    "我喜欢在早上喝一杯热茶再出门",
    "家里的钥匙放在门口的柜子上面",
)
TEST = (
    "帮我记一下明天下午去医院看牙",
    "我对花生过敏，吃东西要小心",
    "提醒我周五晚上给姥姥打电话",
    "明天早上七点半叫我起床好吗",
    "晚饭想吃红烧肉和一碗米饭",
    "客厅的灯太亮了，帮我调暗一点",
    "周末我们一家人去公园散步吧",
    "我的降压药每天晚上吃一片",
)


def espeak(text: str, voice: SyntheticVoice, pitch_shift: int = 0, tempo: float = 1.0) -> bytes:
    """``text`` in ``voice`` as 16 kHz 16-bit mono PCM."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        raise FileNotFoundError("espeak-ng is not installed (apt-get install espeak-ng)")
    pitch = min(99, max(0, voice.pitch + pitch_shift))
    args = [binary, "-v", f"cmn-latn-pinyin+{voice.variant}", "-p", str(pitch), "-s",
            str(round(voice.speed * tempo)), "--stdout", "--", to_pinyin(text)]  # fmt: skip
    out = subprocess.run(args, capture_output=True, check=True, timeout=30).stdout
    with wave.open(io.BytesIO(out)) as w:
        return resample(w.readframes(w.getnframes()), w.getframerate(), RATE)


def to_wave(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0


def to_pcm(wav: np.ndarray) -> bytes:
    return bytes((np.clip(wav, -1, 1) * 32767).astype("<i2").tobytes())


def add_noise(wav: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """Room noise (pink-ish: white noise through a one-pole low-pass) at ``snr_db``."""
    white = rng.standard_normal(len(wav)).astype(np.float32)
    noise = np.empty_like(white)
    acc = 0.0
    for i, x in enumerate(white):  # short signals; a loop keeps this dependency-free
        acc = 0.97 * acc + 0.03 * float(x)
        noise[i] = acc
    power = float(np.mean(wav**2)) or 1e-9
    noise *= np.sqrt(power / (float(np.mean(noise**2)) * 10 ** (snr_db / 10)))
    return (wav + noise).astype(np.float32)


def far_microphone(wav: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A speaker across the room: high frequencies lost (moving average ≈ 3 kHz low-pass),
    quieter, and a reverberant tail (exponentially decaying noise, RT60 ≈ 0.4 s) as loud as the
    direct sound give or take 3 dB (a living room at two to three metres)."""
    lowpassed = np.convolve(wav, np.ones(5, np.float32) / 5, mode="same")
    n = int(0.4 * RATE)
    tail = rng.standard_normal(n).astype(np.float32) * np.exp(-6.9 * np.arange(n) / n)
    drr_db = float(rng.uniform(-3, 3))  # direct-to-reverberant ratio
    tail *= np.sqrt(10 ** (-drr_db / 10) / float(np.sum(tail[1:] ** 2)))
    tail[0] = 1.0
    wet = np.convolve(lowpassed, tail)[: len(wav)]
    return (0.3 * wet / max(float(np.max(np.abs(wet))), 1e-9)).astype(np.float32)


def harder(text: str, voice: SyntheticVoice, rng: np.random.Generator) -> bytes:
    """One test utterance of ``voice``: moved pitch and tempo, then noise and/or far mic."""
    shift = int(rng.integers(-6, 7))
    tempo = float(rng.uniform(0.85, 1.15))
    wav = to_wave(espeak(text, voice, shift, tempo))
    kind = int(rng.integers(0, 3))
    if kind in (1, 2):
        wav = far_microphone(wav, rng)
    if kind in (0, 2):
        wav = add_noise(wav, float(rng.uniform(10, 20)), rng)
    return to_pcm(np.pad(wav, (0, max(0, TEST_SAMPLES - len(wav))))[:TEST_SAMPLES])


@dataclass(frozen=True, slots=True)
class VoiceSet:
    enrol: dict[str, list[bytes]]  # member → enrolment sentences
    tests: list[tuple[str, bytes]]  # (true member name, or "" for an unknown voice; PCM)


def build(seed: int = 46, natural: list[bytes] | None = None) -> VoiceSet:
    rng = np.random.default_rng(seed)
    enrol = {v.name: [espeak(t, v) for t in ENROL] for v in MEMBERS}
    tests = [(v.name, harder(t, v, rng)) for v in MEMBERS for t in TEST]
    tests += [("", harder(t, v, rng)) for v in UNKNOWN for t in TEST]
    tests += [("", pcm) for pcm in natural or []]
    return VoiceSet(enrol, tests)
