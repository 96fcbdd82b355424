"""The tagging call: one LLM call for every memory a job touched → cls / decay / subject.

Results are aligned by the **echoed original text**, never by list position (position
alignment shifted labels by one in the original system and put one memory's expiry on the
next). An item that matches no text, or carries invalid tags, leaves its memory with safe
defaults and ``tags_pending`` set, so the person's next job tags it again.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import structlog

from memory.schema import Decay, MemoryClass
from providers.llm import StructuredLLM
from workers.mem0_stages import GarbageReply, reply_list

log = structlog.get_logger(__name__)

CLASSES = [c.value for c in MemoryClass]
WEEKDAYS = "一二三四五六日"
TAGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "cls": {"type": "string", "enum": CLASSES},
                    "decay": {"type": "string", "enum": [d.value for d in Decay]},
                    "expires_at": {"type": ["string", "null"]},
                    "subject": {"type": ["string", "null"]},
                },
                "required": ["text", "cls", "decay", "expires_at", "subject"],
            },
        }
    },
    "required": ["items"],
}

PROMPT = """你给一个家庭语音助手的记忆打标签。对下面每一条记忆，返回一个对象：
- text：原样抄写这条记忆的原文，一个字都不要改（我们靠原文对齐结果）。
- cls：safety（过敏、用药、疾病、饮食禁忌、恐惧症等安全约束）/ fact（事实：名字、住址、工作、关系、固定安排）/ preference（喜好、习惯）/ event（有具体日期的一次性事情：约会、出差、考试）。
- decay：event 且有日期时为 time，其余一律 volume（安全约束、事实和偏好永不过期）。
- expires_at：decay 为 time 时，把相对日期（明天、下周三、月底）按对话日期换算成 YYYY-MM-DD；否则为 null。
- subject：这条记忆说的是谁：说话人自己写「我」，家人写关系词（老婆、女儿、妈妈……），别人写名字。

对话日期：{day}（星期{weekday}）。换算日期时查这张日历：
{calendar}
只返回 JSON：{{"items": [...]}}，每条记忆一个对象。

记忆：
{memories}"""


@dataclass(frozen=True, slots=True)
class Tags:
    cls: MemoryClass
    decay: Decay
    expires_at: float | None
    subject: str | None


def calendar(day: dt.date, days: int = 14) -> str:
    """Relative day names → dates, so a small model looks a date up instead of computing it
    (「下周三」 is the Wednesday of the week after this one; weeks start on Monday)."""
    named = {0: "今天", 1: "明天", 2: "后天"}
    monday = day - dt.timedelta(days=day.weekday())
    lines = []
    for offset in range(days):
        date = day + dt.timedelta(days=offset)
        week = (date - monday).days // 7
        names = [f"{('本', '下', '下下')[week]}周{WEEKDAYS[date.weekday()]}"]
        if offset in named:
            names.insert(0, named[offset])
        lines.append(f"{date.isoformat()} = {'、'.join(names)}")
    return "\n".join(lines)


def tagging_messages(texts: list[str], day: dt.date) -> list[dict[str, str]]:
    listed = "\n".join(f"- {text}" for text in texts)
    content = PROMPT.format(day=day.isoformat(), weekday=WEEKDAYS[day.weekday()],
                            calendar=calendar(day), memories=listed)  # fmt: skip
    return [{"role": "user", "content": content}]


_TRAILING = re.compile(r"[\s。．.!！?？，,；;、\"'“”‘’]+$")


def align_key(text: str) -> str:
    """What must match between a memory and its echo: NFC, inner spaces and trailing
    punctuation ignored (models add a full stop); nothing else."""
    folded = unicodedata.normalize("NFKC", text).strip()
    return _TRAILING.sub("", re.sub(r"\s+", "", folded))


def _tags(item: dict[str, Any], day: dt.date) -> Tags | None:
    try:
        cls = MemoryClass(str(item.get("cls")))
        decay = Decay(str(item.get("decay")))
    except ValueError:
        return None
    subject = item.get("subject")
    subject = str(subject).strip() or None if subject is not None else None
    if cls is not MemoryClass.EVENT:
        return Tags(cls, Decay.VOLUME, None, subject)  # safety, facts, preferences never expire
    if decay is Decay.VOLUME:
        return Tags(cls, decay, None, subject)
    try:
        date = dt.date.fromisoformat(str(item.get("expires_at")))
    except ValueError:
        return None
    if date < day - dt.timedelta(days=1) or date > day + dt.timedelta(days=3660):
        return None  # a date in the past, or absurdly far: not trusted
    end_of_day = dt.datetime.combine(date, dt.time(23, 59, 59)).timestamp()
    return Tags(cls, Decay.TIME, end_of_day, subject)


# Texts per tagging call: one JSON reply for many texts ran past max_tokens (~25 texts at 1024)
# and came back cut off — every later job for that person failed on the same pending set.
TAG_BATCH = 10


def batches(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + TAG_BATCH] for i in range(0, len(texts), TAG_BATCH)]


async def tag(llm: StructuredLLM, texts: list[str], day: dt.date) -> dict[str, Tags | None]:
    """Tags for each text, TAG_BATCH texts per call (None: no usable answer for it → defaults
    and a retry flag; a batch whose reply is unreadable leaves only its own texts pending)."""
    result: dict[str, Tags | None] = {}
    for batch in batches(texts):
        reply = await llm.complete_json(tagging_messages(batch, day), TAGS_SCHEMA, "tags")
        try:
            result.update(align(batch, reply, day))
        except GarbageReply as exc:
            log.warning("tagging.batch_unreadable", texts=len(batch), error=str(exc)[:200])
            result.update(dict.fromkeys(batch))
    return result


def align(texts: list[str], reply: str, day: dt.date) -> dict[str, Tags | None]:
    items = reply_list("tag", reply, "items")
    by_key = {align_key(text): text for text in texts}
    result: dict[str, Tags | None] = dict.fromkeys(texts)
    for item in items:
        if not isinstance(item, dict):
            continue
        text = by_key.get(align_key(str(item.get("text", ""))))
        if text is not None and result[text] is None:
            result[text] = _tags(item, day)
    return result
