"""A question understood once (server/understanding/question.py): each reading is its owner's,
made the first time it is needed and kept; the reply's grounding takes it as the read path read it
(the read path building one per recall: tests/server/memory/test_readpath.py)."""

from __future__ import annotations

import pytest

from memory import entities, slot_kinds, when
from server.understanding import asking, grounding, knowledge, lookup
from server.understanding.question import Question

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
    assert q.anchored_beyond_asking is entities.personally_anchored(asking.without_asking(text))
    assert q.scope == lookup.scope_of(text)
    assert q.outsiders is lookup.for_outsiders(text)
    assert q.topics == lookup.topics_of(text)
    assert q.touches is lookup.touches_safety(text)
    assert q.names_covered is knowledge.names_covered(text)
    assert q.informational is lookup.asks_for_information(text)
    assert q.slots == slot_kinds.asked(text)
    assert q.times == when.asked(text, NOW)
    assert q.fact is asking.asks_for_a_fact(text)
    assert q.state is asking.asks_about_the_household_state(text)
    assert q.caution is asking.asks_caution(text)
    assert q.liking is asking.asks_liking(text)


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


LACKING = [
    ("豆豆今年几岁了？", ("我们家的狗叫豆豆，是一只柯基",), {"豆豆"}),
    ("我爸最爱吃什么菜？", ("爸爸退休以后最喜欢去钓鱼",), {"爸爸", "我爸"}),
    ("小橙子有什么要注意的？", ("小橙子对花生过敏",), {"小橙子"}),
    ("老婆的瑜伽课几点开始？", ("老婆每周二和周五晚上练瑜伽",), {"老婆"}),
    ("豆豆是公的还是母的？", ("豆豆是一只柯基",), {"豆豆"}),
]


@pytest.mark.parametrize(("text", "texts", "names"), LACKING)
def test_memory_lacks_reads_the_question_it_is_given_as_its_text(
    text: str, texts: tuple[str, ...], names: set[str]
) -> None:
    assert grounding.memory_lacks(Question(text), texts, names) is grounding.memory_lacks(
        text, texts, names
    )


def test_grounds_judge_what_was_said_on_the_question_as_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Grounds.with_said`` asks the ``Question`` the read path read, not the text again."""
    understood = Question("我儿子叫什么名字？")
    assert understood.slots and not understood.caution  # read once, here
    monkeypatch.setattr(slot_kinds, "asked", lambda text: pytest.fail(f"read again: {text}"))
    grounds = grounding.Grounds(understood.text, (), lacking=True)
    assert grounds.with_said(["我儿子叫小明"], understood).lacking is False


@pytest.mark.parametrize(
    ("text", "world"),
    [("成都一共有多少个区？", True), ("明天会下雨吗", True), ("现在几点了", True),
     ("今天是星期几来着", True), ("我们家住在成都哪个区？", False),
     ("小橙子的钢琴课是星期几", False), ("我今天几点去医院", False),
     ("那个咕嘟冒泡的水瓶谁管换水", False)],
)  # fmt: skip
def test_a_question_about_the_world_not_the_home(text: str, world: bool) -> None:
    """A place of the world, the weather, the present moment's time or day: not memory's."""
    assert Question(text, 0.0, None, None).of_the_world is world


def test_a_question_for_the_moment_is_the_clocks() -> None:
    from server.understanding.question import Question

    for asked in ("现在几点了", "今天星期几", "今天几号啊", "What time is it?"):
        assert Question(asked).asks_the_moment, asked
    for other in ("明天几点出发", "小橙子周六几点上钢琴课？", "今天天气怎么样", "我今天好累"):
        assert not Question(other).asks_the_moment, other


def test_a_question_for_the_weather() -> None:
    from server.understanding.question import Question

    for asked in ("外头这会儿零下多少度", "明天下雨吗", "What's the weather like?"):
        assert Question(asked).asks_the_weather, asked
    for other in ("把空调调到26度", "给我妈买点西柚", "孩子发烧三十八度怎么办"):
        assert not Question(other).asks_the_weather, other
