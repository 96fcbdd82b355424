"""When a memory happens, as keys a plan can be matched against: a weekday, and that weekday at
a part of the day (「我每周四晚上七点有吉他课」 → 周四晚上; 「周四去复查」 → 周四: any time).

A plan names a time (「周四晚上能约朋友吃饭吗？」, or a day counted from today: 「后天上午小橙子
有什么安排？」 on a Wednesday is Friday morning): what the household already has then is what
a good assistant brings up (the guitar class) — and the two share no meaning the embedder sees.
The keys are derived from a memory's text into the payload (``schema.WHEN``) and read off the
question by the same rules, so the read path finds them by an indexed condition. A change
written out (「从周日改到了每周六上午十点」) keeps only the new time.
"""

from __future__ import annotations

import re
import time

_DAY = {"一": "一", "二": "二", "三": "三", "四": "四", "五": "五", "六": "六", "日": "日",
        "天": "日", "末": None}  # fmt: skip
_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_PART = {
    "早上": "上午", "早晨": "上午", "上午": "上午", "中午": "中午", "下午": "下午",
    "傍晚": "晚上", "晚上": "晚上", "晚饭": "晚上", "夜里": "晚上", "今晚": "晚上",
    "明晚": "晚上", "今早": "上午", "明早": "上午",
}  # fmt: skip
# a day counted from today, as a question says it (「大后天」 before 「后天」)
_FROM_TODAY = {"今天": 0, "今晚": 0, "今早": 0, "明天": 1, "明晚": 1, "明早": 1, "明儿": 1,
               "后天": 2, "大后天": 3}  # fmt: skip
_RELATIVE = re.compile("|".join(sorted(_FROM_TODAY, key=len, reverse=True)))
_WEEKDAYS = "一二三四五六日"  # time.localtime().tm_wday: Monday is 0
_PARTS = re.compile("|".join(sorted(_PART, key=len, reverse=True)))
# 「从周日改到了每周六」: the old time is not when it happens any more
_CHANGED_FROM = re.compile(r"从[^，。；,;]*?(?=改到|改成|改为|换到|换成|调到|调成|挪到)")


def _days(text: str) -> list[str]:
    days: list[str] = []
    for match in _WEEKDAY.finditer(text):
        day = _DAY[match.group(1)]
        if day is not None and f"周{day}" not in days:
            days.append(f"周{day}")
    return days


def _parts(text: str) -> list[str]:
    parts: list[str] = []
    for match in _PARTS.finditer(text):
        part = _PART[match.group(0)]
        if part not in parts:
            parts.append(part)
    return parts


def keys_of(text: str) -> list[str]:
    """A memory's time keys: each weekday it names with each part of the day it names, or the
    weekday alone when it names none (any time that day)."""
    text = _CHANGED_FROM.sub("", text)
    days, parts = _days(text), _parts(text)
    return [day + part for day in days for part in parts] if parts else days


def _counted(question: str, now: float) -> list[str]:
    """The weekdays of the days the question counts from today (「明天」「后天」…)."""
    days: list[str] = []
    for match in _RELATIVE.finditer(question):
        weekday = time.localtime(now + _FROM_TODAY[match.group(0)] * 86400).tm_wday
        if (day := f"周{_WEEKDAYS[weekday]}") not in days:
            days.append(day)
    return days


def _named_days(question: str, now: float | None, *, weekend: bool = False) -> list[str]:
    """The weekdays a question names, then those it counts from today (given ``now``);
    ``weekend``: 周末 as Saturday and Sunday."""
    days = _days(question)
    if weekend and _WEEKEND.search(question):
        days += [day for day in ("周六", "周日") if day not in days]
    if now is not None:
        days += [day for day in _counted(question, now) if day not in days]
    return days


def asked_whole_days(question: str, now: float | None = None) -> tuple[str, ...]:
    """The keys of every part of the days a question names when it asks what is on then
    (「下礼拜四我有啥安排」, 「这个周末家里有什么事」): a plan at any time of those days
    answers it. 周末 is Saturday and Sunday."""
    days = _named_days(question, now, weekend=True)
    parts = _parts(question) or _ALL_PARTS
    return (*(day + part for day in days for part in parts), *days)


_WEEKEND = re.compile(r"(?:周|礼拜|星期)末")
_ALL_PARTS = list(dict.fromkeys(_PART.values()))


def asked(question: str, now: float | None = None) -> tuple[str, ...]:
    """The keys a plan is at: a weekday with a part of the day (「周四晚上」 meets 「周四晚上七
    点」, not 「周四上午」), and that weekday at no stated time; given ``now``, a day counted
    from today is its weekday (「明晚」 on a Wednesday: 周四晚上). A question naming a whole day
    only gives none: it is too coarse to be a clash (「钢琴课还是周日上吗？」 is no plan for
    Sunday, and every plan of that day would match)."""
    days, parts = _named_days(question, now), _parts(question)
    if not parts:
        return ()
    return (*(day + part for day in days for part in parts), *days)
