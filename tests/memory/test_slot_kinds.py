"""Which kind of fact a memory states, and which a question asks for."""

from __future__ import annotations

import pytest

from memory import schema, slot_kinds
from memory.schema import Memory, PersonId


def test_a_text_states_every_kind_it_names() -> None:
    assert slot_kinds.kinds_of("女儿叫小橙子，今年五岁") == ["name", "age"]
    assert slot_kinds.kinds_of("我上个月跳槽了，现在当工程师") == ["work"]
    assert slot_kinds.kinds_of("小橙子对花生过敏") == []


@pytest.mark.parametrize("text", ["我老公是医生", "爸爸退休前是中学老师", "妈妈在工厂当会计"])
def test_an_occupation_said_with_shi_or_dang_is_work(text: str) -> None:
    assert slot_kinds.kinds_of(text) == ["work"]


def test_a_teacher_named_is_no_one_s_work() -> None:
    assert slot_kinds.kinds_of("小橙子的钢琴老师姓王") == []
    assert "work" not in slot_kinds.kinds_of("王老师是小橙子的钢琴老师")


@pytest.mark.parametrize(
    ("question", "kind"),
    [("我是做什么工作的？", "work"), ("我老婆在哪上班？", "work"), ("我们家住在哪？", "residence"),
     ("小橙子上几年级了？", "school"), ("我女儿叫什么名字？", "name"), ("豆豆几岁了？", "age"),
     ("我家猫最喜欢吃哪种零食？", "likes"), ("小橙子最喜欢什么？", "likes")],
)  # fmt: skip
def test_a_question_asks_for_its_kind(question: str, kind: str) -> None:
    assert kind in slot_kinds.asked(question)


@pytest.mark.parametrize("question", ["今天天气怎么样", "放首周杰伦的歌", "把灯关了"])
def test_small_talk_asks_for_no_kind(question: str) -> None:
    assert slot_kinds.asked(question) == ()


def test_the_payload_carries_the_kinds_of_its_text() -> None:
    payload = Memory("我们家住在杭州西湖区", PersonId("p")).to_payload()
    assert payload[schema.SLOTS] == ["residence"]
