"""A question understood once (server/memory/question.py): each reading is its owner's, made the
first time it is needed and kept; the read path builds one per recall and hands it on."""

from __future__ import annotations

import pytest

from memory import entities, slot_kinds, when
from server.memory import knowledge, lookup
from server.memory.applies import applying, closest
from server.memory.question import Question
from server.memory.readpath import ReadPath
from server.understanding import grounding
from tests.memory.conftest import ZHANG
from tests.server.memory.test_applies import ALL, DAD_GOUT, MANGO

QUESTIONS = [
    "给我女儿买个芒果蛋糕",
    "小橙子周六几点上钢琴课？",
    "我想知道长城有多少年历史",
    "周四晚上能约朋友吃饭吗？",
    "给我同事买杯奶茶",
    "我们去坐摩天轮吧",
    "我老婆在哪上班？",
    "小橙子有什么要注意的？",
]
NOW = 1_764_547_200.0  # a Monday


@pytest.mark.parametrize("text", QUESTIONS)
def test_each_reading_is_the_one_its_owner_makes(text: str) -> None:
    q = Question(text, NOW)
    assert q.relations == tuple(entities.relations_in(text))
    assert q.anchored is entities.personally_anchored(text)
    assert q.anchored_beyond_asking is entities.personally_anchored(grounding.without_asking(text))
    assert q.scope == lookup.scope_of(text)
    assert q.outsiders is lookup.for_outsiders(text)
    assert q.topics == lookup.topics_of(text)
    assert q.touches is lookup.touches_safety(text)
    assert q.names_covered is knowledge.names_covered(text)
    assert q.informational is lookup.asks_for_information(text)
    assert q.slots == slot_kinds.asked(text)
    assert q.times == when.asked(text, NOW)
    assert q.fact is grounding.asks_for_a_fact(text)
    assert q.state is grounding.asks_about_the_household_state(text)
    assert q.caution is grounding.asks_caution(text)


def test_a_reading_is_made_once_and_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = lookup.touches_safety

    def counted(text: str) -> bool:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(lookup, "touches_safety", counted)
    q = Question("给我女儿买个芒果蛋糕")
    assert calls == []
    assert q.touches and q.touches
    assert calls == ["给我女儿买个芒果蛋糕"]


def test_the_constraints_said_first_are_the_same_for_the_text_and_the_question() -> None:
    said = [(m, None) for m in ALL]
    found = [(MANGO, 0.5), (DAD_GOUT, 0.48)]
    for text in ("给我女儿买个芒果蛋糕", "给我同事买杯奶茶", "晚上给爸爸喝点啤酒", "给她买个芒果"):
        assert applying(Question(text), said) == applying(text, said)
        assert closest(Question(text), found) == closest(text, found)
    assert applying(Question("晚上给爸爸喝点啤酒"), said) == [DAD_GOUT]


async def test_the_read_path_reads_its_question_once_and_hands_it_on(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(ZHANG, "给我女儿买个芒果蛋糕", NOW)
    understood = recall.understood
    assert understood is not None and understood.text == recall.question
    assert understood.vector is not None and understood.kind == recall.kind
    assert understood.now == NOW
