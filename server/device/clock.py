"""The present moment, for a turn that asks it (「现在几点了」「今天星期几」): the device's clock
answers, so the model reads the time instead of making one up (the local model said
「现在是12:30」 at four in the afternoon). Local time of the server's timezone; only added to the
turns that ask, so every other turn's prompt is unchanged."""

from __future__ import annotations

import time

_WEEKDAYS = {
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
}


def moment_note(language: str, now: float | None = None) -> str:
    """The note telling the model what time and day it is now, in the device's language."""
    at = time.localtime(time.time() if now is None else now)
    if language.split("-")[0] == "en":
        weekday = _WEEKDAYS["en"][at.tm_wday]
        return (
            f"It is now {at.tm_hour:02d}:{at.tm_min:02d} on {weekday}, "
            f"{time.strftime('%Y-%m-%d', at)}. Answer a question about the time or day from this."
        )
    weekday = _WEEKDAYS["zh"][at.tm_wday]
    return (
        f"现在是{at.tm_year}年{at.tm_mon}月{at.tm_mday}日，{weekday}，"
        f"{at.tm_hour}点{at.tm_min:02d}分。问到时间或日期，就照这个回答。"
    )
