"""The speaker-embedding candidates compared on the real recordings (``bench.voice_recordings``):
closed-set identification among nine speakers, and identification at the threshold where at most
2 % of unknown voices are accepted (every household of four, as in ``hearth bench voices``, with
one voiceprint per member from three clean sentences), and milliseconds per 3 s utterance on one
thread.

    .venv/bin/python -m bench.voice_candidates onnx     # Hearth's: Resemblyzer on onnxruntime
    .venv/bin/python -m bench.voice_candidates mfcc     # no learned weights: cepstral statistics
    # Resemblyzer as published (PyTorch), in a scratch environment, never Hearth's:
    python3 -m venv /tmp/rz && /tmp/rz/bin/pip install torch==2.13.0 && \\
      /tmp/rz/bin/pip install resemblyzer 'setuptools<81' && \\
      /tmp/rz/bin/python -m bench.voice_candidates torch

Only numpy, the standard library and the candidate's own runtime are imported, so the PyTorch
reference runs outside Hearth's environment.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.voice_recordings import clips, fetch, speakers

Embed = Callable[[np.ndarray], np.ndarray]
WEIGHTS = Path("data/models/voice-encoder-resemblyzer-0.1.4.npz")
CACHE = Path("data/models/parts")


def candidate(name: str) -> Embed:
    if name == "onnx":
        from server.voices.embedder import VoiceEmbedder

        return VoiceEmbedder(WEIGHTS).embed_wave
    if name == "torch":
        import torch  # type: ignore[import-not-found,unused-ignore]
        from resemblyzer import VoiceEncoder  # type: ignore[import-not-found,unused-ignore]
        from resemblyzer.audio import (  # type: ignore[import-not-found,unused-ignore]
            normalize_volume,
        )

        torch.set_num_threads(1)
        encoder = VoiceEncoder("cpu", verbose=False)
        return lambda w: np.asarray(
            encoder.embed_utterance(normalize_volume(w, -30, increase_only=True))
        )
    if name == "mfcc":
        return _cepstral_statistics
    raise SystemExit(f"unknown candidate {name!r}: onnx, torch or mfcc")


def _cepstral_statistics(wav: np.ndarray) -> np.ndarray:
    """Mean and spread of 19 cepstra over the louder frames (the classic pre-neural baseline)."""
    from server.voices.features import mel_spectrogram

    log_mel = np.log(mel_spectrogram(wav) + 1e-6)
    n = log_mel.shape[1]
    basis = np.cos(np.pi * np.arange(20)[:, None] * (np.arange(n) + 0.5) / n)
    cepstra = log_mel @ basis.T
    energy = log_mel.max(axis=1)
    cepstra = cepstra[energy > np.percentile(energy, 30)]
    v = np.concatenate([cepstra.mean(0)[1:], cepstra.std(0)[1:]])
    return np.asarray(v / np.linalg.norm(v))


def measure(embed: Embed) -> dict[str, float]:
    found = speakers(clips(fetch(CACHE)))
    prints = {}
    for s in found:
        mean = np.mean([embed(w) for w in s.enrol], axis=0)
        prints[s.name] = mean / np.linalg.norm(mean)
    tests: dict[str, list[np.ndarray]] = {}
    took: list[float] = []
    for s in found:
        tests[s.name] = []
        for w in s.tests:
            start = time.perf_counter()
            tests[s.name].append(embed(w))
            took.append((time.perf_counter() - start) * 1000)
    names = sorted(prints)
    table = np.stack([prints[n] for n in names])
    top1 = np.mean([names[int(np.argmax(table @ v))] == n for n in names for v in tests[n]])
    members: list[tuple[bool, float]] = []
    strangers: list[tuple[bool, float]] = []
    for household in itertools.combinations(names, 4):
        sub = np.stack([prints[n] for n in household])
        for n in names:
            for v in tests[n]:
                scores = sub @ v
                best = int(np.argmax(scores))
                row = (household[best] == n, float(scores[best]))
                (members if n in household else strangers).append(row)
    stranger_scores = np.sort([s for _, s in strangers])
    threshold = float(stranger_scores[int(np.ceil(0.98 * len(stranger_scores)))])
    at = np.mean([right and score > threshold for right, score in members])
    fa = np.mean([score > threshold for _, score in strangers])
    return {"closed_set_top1": float(top1), "threshold": threshold,
            "identification_at_fa": float(at), "false_accept": float(fa),
            "ms_p50": float(np.percentile(took, 50))}  # fmt: skip


if __name__ == "__main__":
    for key, value in measure(candidate(sys.argv[1])).items():
        print(f"{key}: {value:.4f}")
