"""The shipped class heads read a liking and a one-off happening; another embedder gets none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory import class_heads
from memory.text_heads import TextHeads
from providers.embedder import UseEmbedder


@pytest.fixture(scope="module")
def embedder() -> UseEmbedder:
    return UseEmbedder()


def test_the_heads_tell_a_liking_a_routine_and_a_plan(embedder: UseEmbedder) -> None:
    texts = ["二舅最爱吃他自己腌的辣白菜", "外公每天早上六点去公园打太极", "下周四带外公去医院复查"]
    readings = [
        class_heads.read(v, embedder.name, t)
        for t, v in zip(texts, embedder.embed(texts), strict=True)
    ]
    liking, routine, plan = readings
    assert liking is not None and routine is not None and plan is not None
    assert liking.preference > routine.preference and liking.preference > plan.preference
    assert plan.event > routine.event


def test_another_embedder_gets_no_reading() -> None:
    assert class_heads.read([0.0] * 512, "some-other-embedder", "外公爱喝茶") is None


def test_heads_keep_their_labels_through_a_file(tmp_path: Path) -> None:
    heads = TextHeads("e", ("a", "b"), np.zeros((2, 4)))
    heads.save(tmp_path / "h.npz")
    assert TextHeads.load(tmp_path / "h.npz", ("a", "b")).labels == ("a", "b")
    with pytest.raises(ValueError, match="labels"):
        TextHeads.load(tmp_path / "h.npz", ("b", "a"))
