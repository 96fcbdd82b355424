"""A change or a correction said as a new value is written into the memory it changes."""

from __future__ import annotations

import pytest

from workers.values import swapped


@pytest.mark.parametrize(
    ("old", "said", "new"),
    [
        ("外婆每天晚上吃半片安眠药", "外婆那个药从下礼拜起加到一片了", "外婆每天晚上吃一片安眠药"),
        ("儿子在实验小学读三年级", "不是三年级，是四年级，我记岔了", "儿子在实验小学读四年级"),
        ("老公对头孢过敏", "老公不是对头孢过敏，是对青霉素过敏", "老公对青霉素过敏"),
        ("女儿每周二下午上游泳课", "游泳课调到礼拜四了", "女儿每周四下午上游泳课"),
        ("爷爷早上六点半起床遛弯", "爷爷现在改成七点半起了", "爷爷早上七点半起床遛弯"),
    ],
)  # fmt: skip
def test_the_old_wording_keeps_what_the_value_is_of(old: str, said: str, new: str) -> None:
    assert swapped(old, said) == new


@pytest.mark.parametrize(
    ("old", "said"),
    [
        ("我家住在西湖区", "搬到滨江区了"),  # no value of a shape to swap: the fact as said
        ("女儿每周二下午上游泳课", "改成三个"),  # a bare number: which one?
        ("妈妈对花生过敏", "我说的是周末去公园"),  # no change at all
    ],
)  # fmt: skip
def test_without_a_value_of_the_same_shape_nothing_is_swapped(old: str, said: str) -> None:
    assert swapped(old, said) is None


def test_english_changes_and_corrections_swap_the_value() -> None:
    said = "I said Mia's in Year 4 — she isn't, she's Year 5."
    assert swapped("Mia is in Year 4 at Riverside", said) == "Mia is in Year 5 at Riverside"
    dose = "The GP changed it to 50 mg this morning"
    assert swapped("Gran takes 25 mg of sertraline", dose) == "Gran takes 50 mg of sertraline"
