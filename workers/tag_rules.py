"""What the tagging model's answer may not get wrong, settled by rules on the memory's text.

The tagging call still decides what needs judgement (a preference or a fact). The rest is read
off the text, because the 1.5B model got it wrong often enough to matter:

- **subject**: who the text is about (``entities.subject_of``: 「我妈在吃降压药」 → 妈妈, never
  医生 and never a fragment of the prompt); the model's subject only when the text names nobody,
  and only if the text mentions it;
- **class**: a text stating a constraint (an allergy, a medicine, an illness, 「不能吃」), or one
  the learned safety head (``memory.memory_class``) reads as one — sure on its own, likely when
  the model said so too, never for a liking or against a model that called it a preference
  — is ``safety``; any other is not, whatever the model said; a liking or a dislike
  (「喜欢」「不吃」) the model called a fact is a ``preference``;
- **decay / expiry**: a recurring schedule (「每周四」) is never an event and never expires; a
  one-off date the text names (resolved against the session's day) is the expiry of the event,
  in place of the model's arithmetic; an event with no usable date never expires.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from memory import class_heads, entities, memory_class
from memory.schema import Decay, MemoryClass
from workers import dates
from workers.tagging import Tags

CONSTRAINT = re.compile(
    r"过敏|不耐受|不能吃|不能喝|不能碰|不能沾|不能用|忌口|禁忌|忌[食吃]|中毒|恐惧症|哮喘|糖尿病|高血压|"
    r"心脏病|癫痫|痛风|[\u4e00-\u9fff]{1,3}药|药物|"
    # phobias and conditions an outing, a trip or a meal must respect
    r"恐高|恐水|幽闭|晕车|晕船|怀孕|孕期|肾病|肾不好|胃病|"
    # a dosing regimen names a medicine whatever its name (「一天吃三回美多芭」)
    r"(?:一天|每天|每日|天天|一日)(?:吃|服|打|用)[一二两三四五六七八九十\d]+(?:回|次|片|粒|针|支|袋)|"
    # a diagnosis (「前年查出来肾结石」「确诊了帕金森」) and what a doctor forbids
    r"(?:查出|确诊|诊断出?|得了?)[^，。]{0,8}?(?:病|症|炎|结石|瘤|癌)|结石|肿瘤|癌|帕金森|"
    r"别沾|别吃|别喝|不要吃|不要喝|少吃|少喝|不让吃|不让喝|"
    # a reaction: 「一吃桃嗓子眼就发痒」
    r"一(?:吃|喝|碰|闻|用)[^，。]{1,6}就(?:发痒|痒|过敏|起疹|红|肿|吐|拉肚子|喘|难受)|"
    # said in English
    r"(?i:allerg|intoleran|can't (?:eat|take|have|drink)|cannot (?:eat|take|have|drink)|"
    r"medication|diabet|asthma|epilep|pregnan|blood pressure|coeliac|celiac|gluten|lactose)"
)
# a time an event happens at; an "event" naming none is a fact (「咱家有条土狗叫二黑，五岁了」)
WHEN = re.compile(
    r"[今明后昨前]天|[今明]儿|[今明]晚|[今明]早|周|星期|礼拜|[号日月]|[点时]|早上|上午|中午|下午|晚上|"
    r"回头|待会|一会|马上|过几天|下次|下回|上回|上次|去年|今年|明年|前年|刚才|最近|这几天|"
    r"\b(?:today|tomorrow|tonight|yesterday|week|month|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b",
    re.I,
)


LIKING = re.compile(r"喜欢|爱吃|爱喝|爱听|爱看|爱玩|最爱|讨厌|不吃|不喝|不爱|受不了|偏爱|口味")


def _reads_as_constraint(safety: float | None, model_said: MemoryClass) -> bool:
    """The learned reading decides beside the model: sure on its own, likely enough when the
    model said ``safety`` too — never against a model that heard a liking (「不爱吃香菜」 reads
    close to a food rule)."""
    if safety is None or model_said is MemoryClass.PREFERENCE:
        return False
    if model_said is MemoryClass.SAFETY:
        return safety >= memory_class.LIKELY
    return safety >= memory_class.SURE


def _by_heads(text: str, cls: MemoryClass, reading: class_heads.ClassReading) -> MemoryClass:
    """A class the heads are sure of, or deny (never safety: that is decided before)."""
    if reading.preference >= class_heads.SURE:
        return MemoryClass.PREFERENCE
    if cls is MemoryClass.PREFERENCE and reading.preference < class_heads.UNLIKELY:
        return MemoryClass.PREFERENCE if LIKING.search(text) else MemoryClass.FACT
    if cls is MemoryClass.EVENT and reading.event < class_heads.UNLIKELY:
        return MemoryClass.FACT  # a routine, a birthday: lasting
    return cls


def subject(text: str, proposed: str | None, names: Iterable[str]) -> str:
    found = entities.subject_of(text, names)
    if found is not None:
        return entities.canonical(found)
    if proposed:
        word = entities.canonical(proposed)
        group = [proposed, word, *(w for g in entities.SYNONYMS if word in g for w in g)]
        if any(w in text for w in group):
            return word
    return "我"


def settle(
    text: str, tags: Tags | None, day: dt.date, names: Iterable[str], safety: float | None = None,
    reading: class_heads.ClassReading | None = None,
) -> Tags:  # fmt: skip
    """The model's tags for ``text`` with the rules applied (``tags`` None: the model gave no
    usable tags for it — the rules alone decide, with ``fact`` where judgement was needed).
    ``safety``: the learned reading that the text states a constraint (``memory.memory_class``;
    None: not read) — sure on its own, likely enough when the tagging model says so too.
    ``reading``: the class heads' (``memory.class_heads``) — a sure liking is a preference
    whatever the model said, a liking or a happening the head denies is a fact."""
    cls = tags.cls if tags is not None else MemoryClass.FACT
    # a liking reads close to a food rule: a liking word, or the liking head sure of one, leaves
    # the constraint to the pattern and to a safety head sure on its own
    liking = reading is not None and reading.preference >= class_heads.SURE
    learned = None if LIKING.search(text) else safety
    if liking and learned is not None and learned < memory_class.SURE:
        learned = None
    if CONSTRAINT.search(text) or _reads_as_constraint(learned, cls):
        cls = MemoryClass.SAFETY
    elif cls is MemoryClass.SAFETY:
        cls = MemoryClass.FACT
    if cls is not MemoryClass.SAFETY and reading is not None:
        cls = _by_heads(text, cls, reading)
    if cls is MemoryClass.FACT and LIKING.search(text):
        cls = MemoryClass.PREFERENCE  # a liking or a dislike is a preference
    who = subject(text, tags.subject if tags is not None else None, names)
    if cls is MemoryClass.SAFETY:
        return Tags(cls, Decay.VOLUME, None, who)
    if dates.recurring(text):
        return Tags(MemoryClass.FACT if cls is MemoryClass.EVENT else cls, Decay.VOLUME, None, who)
    day_of = dates.one_off_date(text, day)
    lasting = reading is not None and reading.event < class_heads.UNLIKELY  # a birthday's date
    if day_of is not None and cls is not MemoryClass.PREFERENCE and not lasting:
        end = dt.datetime.combine(day_of, dt.time(23, 59, 59)).timestamp()
        return Tags(MemoryClass.EVENT, Decay.TIME, end, who)
    if cls is MemoryClass.EVENT and not WHEN.search(text):
        return Tags(MemoryClass.FACT, Decay.VOLUME, None, who)
    if cls is MemoryClass.EVENT and tags is not None and tags.expires_at is not None:
        return Tags(cls, Decay.TIME, tags.expires_at, who)
    return Tags(cls, Decay.VOLUME, None, who)
