"""What can be the source of a memory: people's statements, never commands, questions, small
talk or the assistant's words."""

from __future__ import annotations

import pytest

from workers import sources


@pytest.mark.parametrize(
    "said",
    [
        "你好小智", "小智小智", "今天天气不错", "现在几点了", "明天会下雨吗", "放首歌吧",
        "声音小一点", "把客厅的灯关了", "讲个笑话", "哈哈，谢谢，拜拜", "帮我给我妈打个电话",
        "帮我定个明天早上七点的闹钟", "北京到上海坐高铁要多久",
    ],
)  # fmt: skip
def test_noise_is_not_memorable(said: str) -> None:
    assert not sources.memorable(said)


@pytest.mark.parametrize(
    "said",
    [
        "我不吃香菜", "小橙子每周六上午上钢琴课", "年糕肠胃不好，不能喝牛奶", "算了，上海不去了",
        "帮我记一下，我女儿对鸡蛋过敏", "提醒我明天下午三点去医院",
        "My daughter is allergic to peanuts.",
    ],
)  # fmt: skip
def test_statements_are_memorable(said: str) -> None:
    """Names the filter has never heard, retractions, a reminder with a date, another language:
    all go to the model (the filter only removes what is clearly noise)."""
    assert sources.memorable(said)


def test_a_fact_must_be_what_a_person_said() -> None:
    user = "帮我定个明天早上七点的闹钟"
    assistant = "好的，明天早上七点的闹钟已经设置好了。"
    assert not sources.supported("明天早上七点的闹钟已经设置好了", user, assistant)
    assert not sources.supported(
        "小橙子上小学二年级", "我女儿叫小橙子\n她才五岁", "小橙子今年上小学二年级了吧"
    )
    assert sources.supported("妈妈在吃降压药", "我妈在吃降压药，医生交代不能吃西柚", "好的")
    assert sources.supported("家住在滨江区", "我们家上个月从西湖区搬到了滨江区", "好的。")


def test_source_of_picks_the_utterance_with_the_most_shared_wording() -> None:
    said = ["我女儿叫小橙子", "她对花生过敏"]
    assert sources.source_of("小橙子对花生过敏", said) == "她对花生过敏"
    assert sources.source_of("天气", said) is None
