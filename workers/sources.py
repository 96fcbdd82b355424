"""What in a session can be the source of a memory, decided without an LLM.

Only what people said is a source; the assistant's turns are context (it can be wrong, and it
claims acts it never did). Of the people's utterances, commands (「放首歌」), questions
(「现在几点了」), greetings, thanks, wake words and weather small talk carry nothing to remember:
a session of nothing else costs no LLM call and leaves no memory. A fact the model extracts must
be *said* by a person: most of its wording has to come from their utterances, not from the
assistant's (``supported``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.entities import RELATIONS
from memory.terms import WEATHER

_WAKE = re.compile(r"(?:你好|嗨|嘿|hi|hey)?[，,\s]*小[智爱度艺]{1,2}(?:同学)?[，,。！!\s]*", re.I)
_SMALL_TALK = re.compile(
    r"^(?:你好|您好|嗨|哈喽|在吗|在不在|早上好|早安|中午好|晚上好|晚安|谢谢|谢啦|多谢|好的|好吧|"
    r"嗯+|哦+|啊+|哈+|行|可以|对|是的|没事了?|不用了|拜拜|再见|退下吧?)[啊呀哈吧呢了嗯！!。.，,\s]*$"
)
_QUESTION_END = re.compile(r"(?:吗|呢|么|嘛|没有|不)[？?。.！!]*$|[？?]\s*$")
_INTERROGATIVE = re.compile(r"几点|多少|什么时候|哪里|哪儿|怎么|为什么|多久|多远|谁|什么|哪")
_COMMAND = re.compile(
    r"^(?:请|麻烦|帮我|给我|替我|你)?(?:放|播|播放|打开|关|关掉|关上|调|调大|调小|设|设置|定|订|"
    r"查|查一下|搜|讲|唱|来|念|读|暂停|停|继续|下一首|上一首|拨|叫|导航|翻译|算(?!了)|说说|聊聊|讲讲)"
)
_REQUEST = re.compile(r"^(?:请|麻烦|帮我|给我|替我|你|把|帮忙)")
# asking the assistant to do something: 「帮俺网购一箱挂面」「再帮我叫个师傅上门」
ASKS_TO_DO = re.compile(
    r"^(?:再|你)?(?:帮我|帮俺|帮咱|帮忙|替我|替俺|麻烦你)(?!记)"
    # English asks the assistant in the imperative or with a modal: 「And remind me to pay…」
    r"|^(?:(?:and|also|oh|so|now|then)[,\s]+)*(?:remind me|can you|could you|would you|will you|"
    r"set (?:a|an|me|the)|tell me|look up|find me|book (?:a|an|me|the)|order (?:a|an|me|some)|"
    r"call (?:a|me)|text |send (?:a|an|him|her|them|my))\b"
    r"(?!\s+(?:please\s+)?(?:remember|note|keep in mind|make a note|not forget))",
    re.I,
)
# a question word: 「咱家狗叫啥」「她几岁」
_ASKS = re.compile(_INTERROGATIVE.pattern + r"|啥|几|多大")
_DEVICE_ACT = re.compile(
    r"电话|闹钟|音乐|歌|灯|空调|电视|窗帘|音量|声音|导航|计时|定时|微信|短信|消息|笑话|故事|"
    r"小一点|大一点|亮一点|暗一点"
)
_REMEMBER = re.compile(r"记住|记一下|记下|别忘了|你要记得|帮我记")
_PERSONAL = re.compile(r"我|咱|俺|他|她|它|家|" + "|".join(re.escape(w) for w in RELATIONS))
_CJK = re.compile(r"[\u4e00-\u9fff]")
# a tag question closing a statement (「俺娘七十三了，…，晓得不」) does not make it a question
TAG_QUESTION = re.compile(
    r"[，,]\s*(?:你)?(?:晓得不|晓得伐|知道不|知道吧|知道吗|懂不|对吧|是吧|是不是|你说是不是)[？?。！!]*$"
    r"|[，,]\s*(?:OK|okay|ok|right|yeah|got it|alright|all right)[？?。！!.]*$"
)
_PARTS = re.compile(r"[，,。.！!？?；;、\s]+")


def strip_wake_words(text: str) -> str:
    return _WAKE.sub("", text).strip()


def memorable(text: str) -> bool:
    """Could this utterance carry something worth remembering? False only for what is clearly
    not: wake words, greetings and thanks, questions, device commands, weather small talk;
    every other statement goes to the model (a name it has never heard, 「小橙子每周六上钢琴课」,
    must not be lost to this filter). Utterances in other scripts are left to the model."""
    said = strip_wake_words(text)
    if not _ASKS.search(TAG_QUESTION.sub("", said)):
        said = TAG_QUESTION.sub("", said)  # 「俺娘七十三了，晓得不」 tells; 「狗叫啥，晓得不」 asks
    parts = [p for p in _PARTS.split(said) if p]
    if not parts or all(_SMALL_TALK.match(p) for p in parts):
        return False
    if not chinese(said):
        return len(said.split()) >= 3  # another language: the model decides
    if _REMEMBER.search(said):
        return True
    question = _QUESTION_END.search(said) is not None or (
        _INTERROGATIVE.search(said) is not None and not _PERSONAL.search(said)
    )
    if question:
        return False
    command = _COMMAND.match(said) is not None or (
        (_REQUEST.match(said) is not None or len(said) <= 6)
        and _DEVICE_ACT.search(said) is not None
    )
    if command and not _statement_after_command(said):
        return False
    return not (WEATHER.search(said) and not _PERSONAL.search(said))


def _statement_after_command(said: str) -> bool:
    """「提醒我明天下午三点去医院」 carries an event; 「帮我给我妈打个电话」 does not."""
    return re.search(r"明天|后天|下周|下个?月|[号日]|周[一二三四五六日天]", said) is not None and (
        re.search(r"提醒", said) is not None
    )


# a plan called off (one home: the merge rules take the same words)
CANCELLED = re.compile(
    r"取消|不去了|去不成|去不了|不成了|不用去了|不办了|不买了|算了|作罢|推掉|泡汤|黄了|"
    # the same said in dialect: Cantonese 唔去/去唔成/唔使去, 冇得去 (Wuhan), 甭去了 (north)
    r"唔去|去唔成|唔使去|冇得去|甭去了|"
    r"called off|cancel|scrap|not going|won't go|isn't happening|never mind|forget (?:it|about)",
    re.I,
)
# a correction said in dialect or English: 讲错 / 说岔 / 唔係 (Cantonese 不是), 毋是 (Minnan)
CORRECTED = (
    r"不对|不是|说错|搞错|弄错|记错|讲错|说岔|讲岔|唔係|唔系|毋是|"
    r"\b(?:wrong|my mistake|mixed (?:it|them|that) up|I meant|thinking of someone else|"
    r"scratch that|correction)\b|\b(?:isn't|wasn't|aren't|doesn't)\s*[,—–-]"
)
_REVISES = re.compile(CANCELLED.pattern + "|" + CORRECTED + r"|改到|改成", re.I)


_PERSONAL_EN = re.compile(
    r"\b(?:I|I'm|I've|I'd|my|me|mine|we|our|us|he|she|his|her|it|mom|dad|wife|husband|son|"
    r"daughter|kids?|grandma|grandpa|baby|dog|cat)\b",
    re.I,
)


def personal(text: str) -> bool:
    """Does the statement speak about the household (我, 家, a relation, 他/她/它; in English
    the same words)?"""
    return _PERSONAL.search(text) is not None or _PERSONAL_EN.search(text) is not None


def revises(text: str) -> bool:
    """Is this a retraction or correction of something said before?"""
    return _REVISES.search(text) is not None


def has_memorable(utterances: Sequence[str]) -> bool:
    return any(memorable(u) for u in utterances)


def bigrams(text: str) -> set[str]:
    """Character pairs of the CJK and word runs of ``text`` (what wording a fact shares). Not
    ``memory.terms``: that drops numbers and short words as noise for lexical search, while a
    fact's wording must keep them (「第12个抽屉」 is not 「第13个抽屉」)."""
    runs = re.findall(r"[\u4e00-\u9fff]+|[a-z0-9]+", text.lower())
    pairs: set[str] = set()
    for run in runs:
        if run.isascii():
            pairs.add(run)
            continue
        pairs.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            pairs.add(run)
    return pairs


def chinese(text: str) -> bool:
    return _CJK.search(text) is not None


def mostly_english(text: str) -> bool:
    """English with at most a few Chinese words (「his 班主任 is 李老师, Ms Li」): more than
    twice as many Latin letters as Chinese characters."""
    return len(re.findall(r"[A-Za-z]", text)) > 2 * len(_CJK.findall(text))


# negation in content (不吃, 不能, 没法, 别给); 「不是」「不对」 are corrections, not content
_NEGATION = re.compile(r"不(?!是|对|过)|没(?!问题|事)|别|未|禁|忌|勿|免")


def negated(text: str) -> bool:
    return _NEGATION.search(text) is not None


_FILLER = frozenset({"我的", "我们", "一个", "的是", "是我", "了我", "我要", "我在"})


def support(fact: str, said: str) -> float:
    """Share of the fact's wording (bigrams) found in ``said``."""
    mine = bigrams(fact) - _FILLER
    if not mine:
        return 0.0
    return len(mine & bigrams(said)) / len(mine)


def supported(fact: str, people: str, assistant: str, floor: float = 0.4) -> bool:
    """Is the fact what people said? Most of its wording is theirs, and more of it is theirs than
    the assistant's (a fact built from the assistant's claim fails the second test)."""
    theirs = support(fact, people)
    return theirs >= floor and theirs >= support(fact, assistant) - 0.2


def source_of(fact: str, utterances: Sequence[str]) -> str | None:
    """The person's utterance a fact comes from (most shared wording), None if none shares any."""
    best, best_score = None, 0.0
    for utterance in utterances:
        score = support(fact, utterance)
        if score > best_score:
            best, best_score = utterance, score
    return best


_FACT_CLAUSES = re.compile(r"[，,。；;！!]+")


def person_part(fact: str, people: str, assistant: str) -> tuple[str, list[str]]:
    """The clauses of a fact the people said, and those they did not (the assistant's words the
    model mixed in: 「朵朵对鸡蛋过敏，可以用豆腐代替鸡蛋」 keeps 「朵朵对鸡蛋过敏」). Empty when no
    clause is theirs."""
    kept: list[str] = []
    removed: list[str] = []
    for clause in (c.strip() for c in _FACT_CLAUSES.split(fact)):
        if not clause:
            continue
        (kept if supported(clause, people, assistant, floor=0.5) else removed).append(clause)
    return "，".join(kept), removed
