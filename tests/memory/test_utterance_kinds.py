"""The utterance-kind classifier (memory.utterance_kinds): trained weights round-trip, the
shipped ones read the real embedder's vectors, and another embedder's vectors get no reading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.utterance_kinds import KINDS, KindModel, UtteranceKind, classify, shipped, train
from providers.embedder import UseEmbedder


def test_training_separates_kinds_and_weights_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(len(KINDS), 16))
    labels = [KINDS[i % len(KINDS)] for i in range(200)]
    vectors = np.array([centres[KINDS.index(k)] + 0.1 * rng.normal(size=16) for k in labels])
    model = train(vectors, labels, "toy")
    assert all(model.read(v.tolist()).kind == k for v, k in zip(vectors, labels, strict=True))
    model.save(tmp_path / "w.npz")
    again = KindModel.load(tmp_path / "w.npz")
    reading = again.read(vectors[0].tolist())
    assert reading.kind == labels[0]
    assert again.embedder == "toy"
    assert sum(reading.scores.values()) == pytest.approx(1.0, abs=1e-6)


def test_another_embedders_vector_gets_no_reading() -> None:
    assert classify([0.0] * 512, "some-hosted-embedder") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("声音调大一点", UtteranceKind.COMMAND),
        ("谢谢你啊", UtteranceKind.CHITCHAT),
        ("我女儿对鸡蛋过敏", UtteranceKind.STATEMENT),
        ("明天早上给女儿做什么早饭好", UtteranceKind.REQUEST),
        ("我女儿叫什么名字来着", UtteranceKind.MEMORY_QUESTION),
    ],
)
def test_the_shipped_weights_read_plain_utterances(
    embedder: UseEmbedder, text: str, kind: UtteranceKind
) -> None:
    assert shipped() is not None
    [vector] = embedder.embed([text])
    reading = classify(vector, embedder.name)
    assert reading is not None
    assert reading.kind is kind


def test_the_shipped_weights_are_what_the_training_files_give(embedder: UseEmbedder) -> None:
    """`hearth bench kinds --train` reproduces the shipped weights from the committed data."""
    from bench.kinds import embed_all, training_set

    items = training_set()
    vectors = embed_all(embedder, [i.text for i in items])
    model = train(vectors, [i.kind for i in items], embedder.name)
    ours = shipped()
    assert ours is not None and ours.embedder == embedder.name
    same = sum(
        model.read(v.tolist()).kind == ours.read(v.tolist()).kind for v in vectors
    )  # fmt: skip
    assert same / len(items) >= 0.99
