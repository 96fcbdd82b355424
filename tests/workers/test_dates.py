"""Relative dates resolved against the session's day (a Wednesday), without a model."""

from __future__ import annotations

import datetime as dt

import pytest

from workers import dates

WEDNESDAY = dt.date(2026, 11, 25)


@pytest.mark.parametrize(
    ("said", "last_day"),
    [
        ("明天上午十点我要去医院看牙", "2026-11-26"),
        ("后天去杭州", "2026-11-27"),
        ("下周三下午带孩子去打疫苗", "2026-12-02"),
        ("下星期一交报告", "2026-11-30"),
        ("这周五聚餐", "2026-11-27"),
        ("周六带我妈去体检", "2026-11-28"),
        ("下个月10号是我老婆生日", "2026-12-10"),
        ("12月20号开家长会", "2026-12-20"),
        ("三十号交房租", "2026-11-30"),
        ("下周要去北京开会", "2026-12-06"),  # a week, no day: until its Sunday
        ("我妹妹下个月要结婚了", "2026-12-31"),
        ("后天出差，周日晚上回来", "2026-11-29"),  # a trip lasts until its last date
    ],
)
def test_one_off_dates(said: str, last_day: str) -> None:
    assert dates.one_off_date(said, WEDNESDAY) == dt.date.fromisoformat(last_day)


@pytest.mark.parametrize(
    "said",
    [
        "我每周四晚上七点有吉他课",
        "我爸每天早上吃降压药",
        "我们家上个月搬到滨江区了",
        "我喜欢喝绿茶",
    ],
)
def test_schedules_past_dates_and_no_dates_are_not_events(said: str) -> None:
    assert dates.one_off_date(said, WEDNESDAY) is None


def test_the_date_is_written_next_to_the_words_that_said_it() -> None:
    assert dates.annotate("下周三下午我要带小橙子去打疫苗", WEDNESDAY) == (
        "下周三（12月2日）下午我要带小橙子去打疫苗"
    )
    assert dates.annotate("下周去北京", WEDNESDAY) == "下周（11月30日至12月6日）去北京"
    assert dates.annotate("12月20号开家长会", WEDNESDAY) == "12月20号开家长会"  # absolute already
    once = dates.annotate("明天看牙", WEDNESDAY)
    assert dates.annotate(once, WEDNESDAY) == once == "明天（11月26日）看牙"  # idempotent
    assert dates.annotate("每周四有课", WEDNESDAY) == "每周四有课"


def test_year_end_rolls_over() -> None:
    assert dates.one_off_date("下个月5号", dt.date(2026, 12, 20)) == dt.date(2027, 1, 5)
    assert dates.one_off_date("1月3号", dt.date(2026, 12, 20)) == dt.date(2027, 1, 3)


def test_a_bare_weekday_after_a_date_reads_from_that_date() -> None:
    said = "下周五我们去黄山住两晚，周日下午回来"
    assert dates.annotate(said, dt.date(2026, 12, 3)) == (
        "下周五（12月11日）我们去黄山住两晚，周日（12月13日）下午回来"
    )


def test_a_habit_on_a_bare_weekday_recurs_and_a_dated_plan_does_not() -> None:
    from workers.dates import recurring

    assert recurring("周末最爱去爬山，爬完喝个早茶")
    assert recurring("逢 Tuesday 放学去学游泳") and recurring("She swims every Tuesday")
    assert not recurring("礼拜六去体检") and not recurring("下周六喜欢去哪都行")
    assert not recurring("Lily has her check-up on Friday")
