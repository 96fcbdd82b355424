"""What identification adds to a spoken turn: ASR alone vs ASR with identification beside it on
the same 3 s utterance (the device session starts both together and waits for both), on this
machine's cores. The difference of the medians is the time a turn waits more."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable

from providers.asr import WhisperASR
from server.voices.embedder import VoiceEmbedder


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def beside_asr(
    asr: WhisperASR, embedder: VoiceEmbedder, utterance: bytes, rounds: int = 10
) -> dict[str, float]:
    """Median ms of ASR alone and of ASR ‖ identification (both done), interleaved rounds."""
    alone, both = [], []
    asr.transcribe_sync(utterance, 16000)  # warm both
    embedder.embed(utterance)
    for _ in range(rounds):
        alone.append(_timed(lambda: asr.transcribe_sync(utterance, 16000)))

        def together() -> None:
            side = threading.Thread(target=embedder.embed, args=(utterance,))
            side.start()
            asr.transcribe_sync(utterance, 16000)
            side.join()

        both.append(_timed(together))
    a, b = statistics.median(alone), statistics.median(both)
    return {"asr_ms_p50": a, "asr_and_identify_ms_p50": b, "added_ms_p50": b - a}
