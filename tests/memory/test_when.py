"""Time keys: what a plan at a weekday meets."""

from __future__ import annotations

import time

from memory import schema, when
from memory.schema import Memory, PersonId


def test_a_memory_is_keyed_by_its_weekdays_and_their_parts_of_the_day() -> None:
    assert when.keys_of("我每周四晚上七点有吉他课") == ["周四晚上"]
    assert when.keys_of("老婆的瑜伽课改到了每周二和周五晚上") == ["周二晚上", "周五晚上"]
    assert when.keys_of("星期天早上去爬山") == ["周日上午"]
    assert when.keys_of("周四去医院复查") == ["周四"]  # any time that day
    assert when.keys_of("周末去爬山") == [] and when.keys_of("小橙子对花生过敏") == []


def test_a_change_keeps_only_the_new_time() -> None:
    assert when.keys_of("小橙子的钢琴课从周日改到了每周六上午十点") == ["周六上午"]


def test_a_plan_at_a_part_of_the_day_meets_only_that_part() -> None:
    assert when.asked("周四晚上能约朋友吃饭吗？") == ("周四晚上", "周四")
    assert when.asked("周五去看电影吧") == ()  # a whole day is too coarse for a clash
    assert when.asked("明天会下雨吗") == ()


def test_the_payload_carries_the_time_keys() -> None:
    payload = Memory("我每周四晚上七点有吉他课", PersonId("p")).to_payload()
    assert payload[schema.WHEN] == ["周四晚上"]


def test_a_day_counted_from_today_is_its_weekday() -> None:
    wednesday = time.mktime((2026, 12, 2, 12, 0, 0, 0, 0, -1))  # local noon
    assert when.asked("后天上午小橙子有什么安排？", wednesday) == ("周五上午", "周五")
    assert when.asked("明晚能约朋友吃饭吗？", wednesday) == ("周四晚上", "周四")
    assert when.asked("大后天下午有空吗？", wednesday) == ("周六下午", "周六")
    assert when.asked("今晚出去吃饭吧", wednesday) == ("周三晚上", "周三")
    assert when.asked("后天上午有什么安排？") == ()  # no clock, no counting
    assert when.asked("明天会下雨吗", wednesday) == ()  # a whole day: too coarse


def test_a_question_asking_what_is_on_a_day_takes_every_part_of_it() -> None:
    """「下礼拜四我有啥安排」 is answered by a plan at any time that Thursday; 周末 is both days."""
    thursday = when.asked_whole_days("下礼拜四我有啥安排")
    assert {"周四", "周四上午", "周四下午", "周四晚上"} <= set(thursday)
    weekend = when.asked_whole_days("这个周末家里有什么事")
    assert {"周六", "周日", "周六上午", "周日晚上"} <= set(weekend)
    assert when.asked_whole_days("周四晚上有空吗") == ("周四晚上", "周四")  # the part it names
    assert when.asked_whole_days("钥匙放哪了") == ()
    assert when.asked("下礼拜四我有啥安排") == ()  # a plan's clash needs a part of the day
