"""The utterance-kind classifier (memory.utterance_kinds): trained weights round-trip, the
shipped ones read the real embedder's vectors, and another embedder's vectors get no reading."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memory.utterance_kinds import (
    ACTS,
    GRAMS,
    KINDS,
    KindModel,
    KindReading,
    UtteranceKind,
    classify,
    shipped,
    train,
)
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


def test_the_heads_round_trip_and_a_plan_is_read_as_one(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    toy = KindModel("toy", rng.normal(size=(8, len(KINDS))), np.zeros(len(KINDS)))
    acts = np.concatenate([np.ones(8), np.zeros(GRAMS), [-4.0]])
    model = toy.with_lasting(np.zeros(9)).with_acts(acts)
    model.save(tmp_path / "w.npz")
    again = KindModel.load(tmp_path / "w.npz")
    assert again.acts is not None and np.allclose(again.acts, acts)
    assert again.read([1.0] * 8).acts is None  # the acts head reads the words too
    reading = again.read([1.0] * 8, "周末去爬山")
    assert reading.acts is not None and reading.acts > 0.95 and reading.lasting == 0.5
    assert reading.as_json()["acts"] == round(reading.acts, 3)
    statement = KindReading(UtteranceKind.STATEMENT, 0.9, {}, None, 0.8)
    assert statement.plans and not replace(statement, acts=0.2).plans
    assert KindReading(UtteranceKind.REQUEST, 0.9, {}).plans
    assert not KindReading(UtteranceKind.MEMORY_QUESTION, 0.9, {}, None, 0.9).plans


@pytest.mark.parametrize(
    ("text", "acts"),
    [
        ("周六带爸爸去爬香山", True),
        ("给奶奶冲一杯蜂蜜水", True),
        ("我打算下个月带孩子回老家", True),
        ("我爸有高血压", False),
        ("昨天带孩子去了动物园", False),
        ("我每周四晚上有吉他课", False),
    ],
)
def test_the_shipped_acts_head_reads_plans_not_facts(
    embedder: UseEmbedder, text: str, acts: bool
) -> None:
    [vector] = embedder.embed([text])
    reading = classify(vector, embedder.name, text)
    assert reading is not None and reading.acts is not None
    assert (reading.acts >= ACTS) is acts


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
