"""Relative dates in Chinese household speech, resolved against the session's own day.

「下周三下午带小橙子去打疫苗」 said on Wednesday 2026-11-25 means 2026-12-02; read two weeks
later, 「下周三」 would be wrong. So the write path resolves what it can, deterministically (a
1.5B model computed 「下周三」 as this week's Thursday): the date is written into the memory's
text next to the words that said it (「下周三（12月2日）」) and becomes the expiry of a one-off
event. A recurring schedule (「每周四」) is never an event and never expires.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 6}
_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
        "九": 9, "十": 10}  # fmt: skip
_DAY_NUM = r"(\d{1,2}|[一二三四五六七八九十]{1,3})"
_WEEK = r"(?:周|星期|礼拜)"

RECURRING = re.compile(
    r"每(?:天|日|晚|早|周|个?星期|个?礼拜|个?月|年|次|逢)|天天|周[一二三四五六日天]都|"
    r"(?:星期|礼拜)[一二三四五六日天]都|工作日|平时|经常|总是|一直|"
    r"逢\s*(?:周|星期|礼拜|[A-Z][a-z]+day)|\bevery (?:[A-Z][a-z]+day|weekend)\b|\bon (?:[A-Z][a-z]+days|weekends)\b"
)
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"大后天"), "offset3"),
    (re.compile(r"后天"), "offset2"),
    (re.compile(r"明天|明早|明晚|明儿"), "offset1"),
    (re.compile(r"今天|今晚|今早|今儿"), "offset0"),
    (re.compile(r"下下" + _WEEK + r"([一二三四五六日天末])"), "nweek2"),
    (re.compile(r"下个?" + _WEEK + r"([一二三四五六日天末])"), "nweek1"),
    (re.compile(r"(?:这|本|这个)" + _WEEK + r"([一二三四五六日天末])"), "nweek0"),
    (re.compile(r"下个?月" + _DAY_NUM + r"[号日]"), "nextmonth"),
    (re.compile(r"(\d{1,2}|[一二三四五六七八九十]{1,3})月" + _DAY_NUM + r"[号日]"), "monthday"),
    (re.compile(r"月底"), "monthend"),
    (re.compile(r"下个?月初"), "nextmonthstart"),
    (re.compile(r"下个?" + _WEEK + r"(?![一二三四五六日天末])"), "nextweek"),
    (re.compile(r"下个?月(?!\d|[一二三四五六七八九十]|初)"), "nextmonthwhole"),
    (re.compile(r"(?<![上下这本每个])" + _WEEK + r"([一二三四五六日天末])"), "weekday"),
    (re.compile(r"(?<![月\d一二三四五六七八九十])" + _DAY_NUM + r"[号]"), "day"),
)
_PAST = re.compile(r"上个?(?:周|星期|礼拜|月)|昨天|前天|去年|以前|之前|那天")


@dataclass(frozen=True, slots=True)
class Found:
    date: dt.date  # the last day the phrase can mean
    start: int
    end: int
    label: (
        str | None
    )  # what the text gains: 「12月2日」, 「11月30日至12月6日」; None: absolute already


def _number(raw: str) -> int | None:
    if raw.isdigit():
        return int(raw)
    if raw == "十":
        return 10
    if raw.startswith("十"):
        return 10 + _NUM.get(raw[1:], 0)
    if raw.endswith("十"):
        return _NUM.get(raw[0], 0) * 10
    if "十" in raw:
        tens, units = raw.split("十", 1)
        return _NUM.get(tens, 0) * 10 + _NUM.get(units, 0)
    return _NUM.get(raw)


def _safe(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _resolve(kind: str, match: re.Match[str], today: dt.date) -> dt.date | None:
    monday = today - dt.timedelta(days=today.weekday())
    if kind.startswith("offset"):
        return today + dt.timedelta(days=int(kind[-1]))
    if kind.startswith("nweek"):
        weeks = int(kind[-1])
        return monday + dt.timedelta(days=7 * weeks + WEEKDAY[match.group(1)])
    if kind == "weekday":  # a bare 周五: the coming one (today counts)
        ahead = (WEEKDAY[match.group(1)] - today.weekday()) % 7
        return today + dt.timedelta(days=ahead)
    if kind == "nextmonth":
        year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        number = _number(match.group(1))
        return _safe(year, month, number) if number else None
    if kind == "nextweek":  # 下周 with no day: until that week's Sunday
        return monday + dt.timedelta(days=13)
    if kind == "nextmonthwhole":  # 下个月 with no day: until that month's last day
        year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return dt.date(year, month, calendar.monthrange(year, month)[1])
    if kind == "nextmonthstart":
        year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return dt.date(year, month, 1)
    if kind == "monthday":
        said_month, number = _number(match.group(1)), _number(match.group(2))
        if not said_month or not number:
            return None
        found = _safe(today.year, said_month, number)
        if found is not None and found < today:
            found = _safe(today.year + 1, said_month, number)
        return found
    if kind == "monthend":
        return today.replace(day=calendar.monthrange(today.year, today.month)[1])
    if kind == "day":  # a bare 10号: this month, or the next if it has passed
        number = _number(match.group(1))
        if not number:
            return None
        found = _safe(today.year, today.month, number)
        if found is not None and found < today:
            year, month = (
                (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
            )
            found = _safe(year, month, number)
        return found
    return None


def mentions(text: str, today: dt.date) -> list[Found]:
    """Every future date the text names, in order (overlapping phrases: the longest wins). A
    bare weekday after a date reads from that date (「下礼拜六去云台山，礼拜天晚上回来」: the
    Sunday after that Saturday)."""
    spotted: list[tuple[re.Match[str], str]] = []
    taken: list[tuple[int, int]] = []
    for pattern, kind in _RULES:
        for match in pattern.finditer(text):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            taken.append(span)
            spotted.append((match, kind))
    found: list[Found] = []
    for match, kind in sorted(spotted, key=lambda spot: spot[0].start()):
        date = _resolve(kind, match, today)
        if date is not None and found and kind == "weekday" and date < found[-1].date:
            after = found[-1].date
            date = after + dt.timedelta(days=(WEEKDAY[match.group(1)] - after.weekday()) % 7)
        if date is None or date < today:
            continue
        found.append(Found(date, *match.span(), _label(kind, date)))
    return found


def _label(kind: str, date: dt.date) -> str | None:
    if kind == "monthday":
        return None
    if kind == "nextweek":
        first = date - dt.timedelta(days=6)
        return f"{first.month}月{first.day}日至{date.month}月{date.day}日"
    if kind == "nextmonthwhole":
        return f"{date.year}年{date.month}月"
    return f"{date.month}月{date.day}日"


# 「游泳训练从周二改成周三了」: a weekly day moved to another — still a schedule, not two dates
_DAY_MOVED = re.compile(
    _WEEK
    + r"[一二三四五六日天][^，,。]{0,6}?(?:改|换|调|挪)(?:到|成|为)"
    + _WEEK
    + r"[一二三四五六日天]"
)


# a habit said with a bare weekday or weekend (no 这 / 下 / 本 before it): 「周末最钟意去白云山
# 行山」, 「伊欢喜打 badminton，礼拜六上半天…」 — every weekend, not this one; Cantonese 逢
# (every): 「逢 Monday 同 Wednesday…」
_HABIT = re.compile(
    r"喜欢|欢喜|钟意|中意|最爱|爱(?:去|打|玩|看|吃|喝|逛)|习惯|一般|通常|常常|向来|照例"
)
_BARE_WEEKDAY = re.compile(r"(?<![上下这本每个])" + _WEEK + r"[一二三四五六日天末]")


def recurring(text: str) -> bool:
    if RECURRING.search(text) is not None or _DAY_MOVED.search(text) is not None:
        return True
    return _HABIT.search(text) is not None and _BARE_WEEKDAY.search(text) is not None


def one_off_date(text: str, today: dt.date) -> dt.date | None:
    """The last day of a one-off event the text names (None: no date, a recurring schedule,
    or only past dates)."""
    if recurring(text):
        return None
    dates = [f.date for f in mentions(text, today)]
    return max(dates) if dates else None


def annotate(text: str, today: dt.date) -> str:
    """「下周三下午…」 → 「下周三（12月2日）下午…」; text already carrying the date is left alone."""
    if recurring(text):
        return text
    out, last = [], 0
    for found in mentions(text, today):
        out.append(text[last : found.end])
        label = found.label
        if label and label not in text and not re.match(r"\s*[（(]", text[found.end :]):
            out.append(f"（{label}）")
        last = found.end
    out.append(text[last:])
    return "".join(out)


def past(text: str) -> bool:
    return _PAST.search(text) is not None
