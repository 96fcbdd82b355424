"""A passing remark: a moment just past, told in the completed aspect, with nothing lasting."""

from __future__ import annotations

import pytest

from workers.passing import HEAD_BELOW, narrates_a_moment, passing


@pytest.mark.parametrize(
    "text",
    [
        "中午在单位食堂吃了碗牛肉面",
        "昨晚楼上装修，吵了一晚上",
        "今天（12月3日）早上公交晚了十分钟",
        "We had pizza for lunch today",
    ],
)
def test_a_moment_just_past_is_narration(text: str) -> None:
    assert narrates_a_moment(text)


@pytest.mark.parametrize(
    "text",
    [
        "今天开始奶奶改吃半片降压药了",  # a change from today on
        "下午我跟你说错了，外公是八十二不是八十",  # a correction
        "今天刚查出来儿子对花生过敏",  # a constraint
        "明天下午带猫去打疫苗",  # later
        "我老婆在银行上班",  # no moment
        "Yesterday we moved to a flat near the lake",  # a change that lasts
    ],
)
def test_what_lasts_is_not_narration(text: str) -> None:
    assert not narrates_a_moment(text)


def test_both_readings_must_agree() -> None:
    text = "中午在单位食堂吃了碗牛肉面"
    assert passing(text, HEAD_BELOW - 0.1)
    assert not passing(text, HEAD_BELOW + 0.1)
    assert not passing(text, None)
    assert not passing("我老婆在银行上班", 0.01)
