"""The memory safety head (memory.memory_class): the shipped weights read the real embedder's
vectors, constraints said without the usual words read as constraints, and another embedder's
vectors get no reading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.memory_class import LIKELY, SURE, SafetyHead, safety, shipped
from memory.utterance_kinds import train_binary
from providers.embedder import UseEmbedder


def test_a_trained_head_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    vectors = np.vstack([rng.normal(1.0, 0.2, (40, 8)), rng.normal(-1.0, 0.2, (40, 8))])
    head = SafetyHead("toy", train_binary(vectors, [True] * 40 + [False] * 40))
    head.save(tmp_path / "h.npz")
    again = SafetyHead.load(tmp_path / "h.npz")
    assert again.embedder == "toy"
    assert again.read(vectors[0].tolist()) > 0.9 > 0.1 > again.read(vectors[-1].tolist())


def test_another_embedders_vector_gets_no_reading() -> None:
    assert safety([0.0] * 512, "some-hosted-embedder") is None


@pytest.mark.parametrize(
    "text",
    [
        "外婆吃着华法林，柚子一口都碰不得",
        "家里的鹦鹉闻不得不粘锅烧干的烟",
        "小儿子一碰猕猴桃嘴巴就肿",
    ],
)
def test_constraints_without_the_usual_words_read_as_constraints(
    embedder: UseEmbedder, text: str
) -> None:
    assert shipped() is not None
    [vector] = embedder.embed([text])
    reading = safety(vector, embedder.name)
    assert reading is not None and reading >= LIKELY


@pytest.mark.parametrize("text", ["大女儿在实验二小读四年级", "老公周末喜欢去钓鱼"])
def test_plain_facts_and_likings_are_not_sure_constraints(embedder: UseEmbedder, text: str) -> None:
    [vector] = embedder.embed([text])
    reading = safety(vector, embedder.name)
    assert reading is not None and reading < SURE
