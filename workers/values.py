"""A change or a correction said as a new value, written into the memory it changes.

「婆婆原先早上打八个单位，从明儿起改成十二个单位」 changes the stored
「婆婆每天早上打八个单位胰岛素」. Replacing that memory with the person's sentence would keep
the old value in its text (the read path would still find 八个单位) and lose what the value is
of (胰岛素). So when a change names its new value, the old memory keeps its wording with the
value swapped: 「婆婆每天早上打十二个单位胰岛素」. Two forms are read, by structure rather
than by topic:

- 「不是 A，是 B」 (a correction): A is swapped for B where the memory says A — the whole phrase
  first, else the part that differs (「对芒果过敏」 / 「对猕猴桃过敏」 → 芒果 / 猕猴桃);
- a change verb and its new value (改成, 调到, 加到, 换成 …): the value is a count, a dose, a
  day or an hour, and the memory's value of the same shape is swapped — the same words around a
  different number (「八个单位」 → 「十二个单位」, 「周三」 → 「周五」, 「七点」 → 「八点」).

Anything else (no value found, or none of the same shape in the memory) returns None, and the
caller writes the fact as said.
"""

from __future__ import annotations

import re

_NUMERAL = "0-9０-９一二三四五六七八九十百千两半零〇"
_DAYS = "日天末"  # after 周 / 星期 / 礼拜
_NOT_BUT = re.compile(
    r"不是(?P<old>[^，,。！？!?；;]+?)[，,、]\s*(?:而|就)?是(?P<new>[^，,。！？!?；;]+)"
)
_CHANGED = re.compile(
    r"(?:改成|改为|改到|换成|换到|调到|调成|调去|调咗去|改咗去|加到|减到|升到|降到|变成|挪到|推到|"
    r"提到|改咗|换咗)(?P<new>[^，,。！？!?；;]+)"
)
# the same in English: 「he isn't, he's Year 2」, 「the dose went up to 20 mg」
_CHANGED_EN = re.compile(
    r"(?i)(?:\b(?:isn't|wasn't|aren't|not)\b[^.;!?]*?[,—–]\s*(?:he's|she's|it's|they're|he is|"
    r"she is|it is|they are)\s+(?:actually\s+|now\s+|in\s+)?"
    r"|\b(?:changed|moved|switched|went up|went down|increased|reduced|raised|lowered|upped|"
    r"bumped(?: up)?)\s+(?:it\s+)?to\s+)(?P<new>[^,.;!?—–]+)"
)
_PARTICLES = re.compile(r"(?:了|啦|咯|喇|嘞|咧|啰|喔|哦|嘛|呢|吧|噢)+$")
_WEEK = ("星期", "礼拜", "周")
_MIN_PHRASE = 2


def changes(said: str) -> bool:
    """Does ``said`` give a value a new one with a change verb (加到, 改成, went up to …)?"""
    return _CHANGED.search(said) is not None or _CHANGED_EN.search(said) is not None


def swapped(old_text: str, said: str) -> str | None:
    """``old_text`` with the value ``said`` changes swapped for the new one, or None."""
    said = re.sub(r"（[^）]*）", "", said)  # the dates the write path wrote in
    correction = _NOT_BUT.search(said)
    if correction is not None:
        old, new = correction.group("old").strip(), _clean(correction.group("new"))
        for a, b in ((old, new), _core(old, new)):
            if len(a) >= _MIN_PHRASE and b and a in old_text and b not in old_text:
                return old_text.replace(a, b, 1)
        return None
    change = _CHANGED.search(said) or _CHANGED_EN.search(said)
    if change is None:
        return None
    found = _same_shape(old_text, _clean(change.group("new")))
    if found is None or found[0] == found[1]:
        return None
    return old_text.replace(found[0], found[1], 1)


def _clean(value: str) -> str:
    return _PARTICLES.sub("", value.strip())


def _core(old: str, new: str) -> tuple[str, str]:
    """The parts of two phrases that differ (their common start and end removed)."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start : len(old) - end], new[start : len(new) - end]


def _same_shape(text: str, new: str) -> tuple[str, str] | None:
    """The phrase of ``text`` that has ``new``'s words around a different number, and what
    replaces it: 「八个单位」 → 「十二个单位」; 「礼拜三」 → 「周五」; with only the words after
    the number alike, the number and those words (「每天两片」 in 「每天吃一片」: 「一片」 →
    「两片」). None when nothing is of that shape."""
    numbers = list(re.finditer(f"[{_NUMERAL}]+", new))
    if not numbers:
        return None
    found = _shape_at(text, new, numbers[0])
    if found is None and len(numbers) > 1:  # 「一天两颗」: the value is the last number
        found = _shape_at(text, new, numbers[-1])
    return found


def _shape_at(text: str, new: str, number: re.Match[str]) -> tuple[str, str] | None:
    before, after = new[: number.start()], new[number.end() :]
    week = next((w for w in _WEEK if before.endswith(w)), None)
    if week is not None:
        lead = re.escape(before[: -len(week)]) + "(" + "|".join(_WEEK) + ")"
        day = re.search(lead + f"[{_NUMERAL}{_DAYS}]" + re.escape(after), text)
        if day is None:
            return None  # the memory's own word for the week stays: 「每周二」 → 「每周四」
        return day.group(0), before[: -len(week)] + day.group(1) + number.group(0) + after
    unit = re.match(r"\s*[A-Za-z%]+", after)
    if unit is not None:
        after = unit.group(0)  # 「20 mg last week」: the unit, not what follows it
    if not after and len(before.strip()) < _MIN_PHRASE:
        return None  # a bare number: which of the memory's numbers?
    whole = re.search(re.escape(before) + f"[{_NUMERAL}]+" + re.escape(after), text)
    if whole is not None:
        return whole.group(0), before + number.group(0) + after
    if not after:
        return None
    tail = re.search(f"[{_NUMERAL}]+" + re.escape(after), text)
    return (tail.group(0), number.group(0) + after) if tail is not None else None
