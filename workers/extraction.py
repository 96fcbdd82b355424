"""Stage 1 of the write path: the facts people said in a session, for Chinese household speech.

mem0's extraction prompt (English, a user talking to a chatbot) was the starting point; with the
1.5B local model it stored commands and questions as facts, dropped negations (「我不吃香菜」 →
「香菜」), invented subjects and copied the assistant's false claims. This prompt says, in Chinese
and with worked examples that are *not* bench items, what a household memory is. Around the call,
deterministic steps the model cannot get wrong:

- a session with no utterance worth remembering (``sources.memorable``) makes no call at all;
- a fact must be what a person said (``sources.supported``), never the assistant's words;
- a fact that lost the meaning of its source — a bare noun, a dropped negation — is replaced by
  the person's own utterance (``keep_meaning``);
- prompt fragments, placeholders and questions are rejected (``rejected``), each one logged;
- relative dates are resolved against the session's day (``dates.annotate``);
- a passing remark (what happened at lunch today) is rejected when the lasting head and the
  grammar of the sentence agree on it (``passing``);
- a fact drawn from an utterance the utterance-kind classifier reads, with 0.9 confidence, as
  a command, a question to the assistant or chit-chat (``memory.utterance_kinds``; ``Kinds``)
  is rejected, and such an utterance is never recovered as a fact.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import structlog

from memory import entities, names
from memory.utterance_kinds import KindReading, UtteranceKind
from providers.llm import StructuredLLM
from workers import dates, discourse, passing, sources
from workers.contract import Said
from workers.mem0_stages import FACTS_SCHEMA, reply_list, windows
from workers.tag_rules import CONSTRAINT

log = structlog.get_logger(__name__)

PROMPT = """你负责整理一个家庭语音助手的长期记忆。下面是一段对话：「用户」是家里人说的话，「助手」是语音助手说的话。
把用户说出的、以后还用得上的家庭信息写成记忆。规则：
1. 只从「用户」的话里取。「助手」的话只用来理解上下文：助手说的内容（它可能说错，也可能声称做了没做的事）绝不能写成记忆。
2. 每条记忆是一句完整的陈述句（用户说中文就写中文，说英文就照原样写英文，不要翻译），写明说的是谁：用户自己写「我」，家人写「我妈妈」「我老婆」「我女儿」这样的关系词，有名字就带上名字，宠物写名字。把「她」「他」「它」换成具体的人或宠物。
3. 否定和限制一个字都不能丢：「不吃」「不能」「过敏」「千万别」「受不了」都要保留。
4. 时间照原话抄：「明天」「下周三下午」「每周四晚上七点」，不要自己换算。
5. 改了的事只写新的说法（「改到周五了」写成「……改到周五了」）；说错了更正的，只写更正后的内容，不写错的那一半。
6. 取消的事写成「……取消了」；用户自己说「算了」「不去了」的打算不要写。
7. 这些不是记忆：提问（现在几点、明天会下雨吗）、让助手做事的命令（放歌、关灯、定闹钟、打电话）、打招呼、道谢、闲聊天气、唤醒词。整段都是这些就返回空列表。
只返回 JSON：{{"facts": ["……", "……"]}}

例子一
用户：我外公八十了，耳朵不太好
助手：老人家听力下降很常见。
用户：他不能吃太咸的，医生说血压高
→ {{"facts": ["我外公八十岁了，耳朵不太好", "我外公不能吃太咸的，医生说他血压高"]}}

例子二
用户：把空调打开
助手：好的，空调已经打开，顺便帮你预约了明天的保洁。
用户：谢谢
→ {{"facts": []}}

例子三
用户：我表哥周五来杭州
助手：好的。
用户：不对，是周六来，他周五要加班
→ {{"facts": ["我表哥周六来杭州"]}}

对话日期：{day}
对话：
{conversation}"""

_FRAGMENTS = re.compile(
    r"说话人|用户|助手|记忆|JSON|json|facts|subject|cls|示例|例子|规则|陈述句|关系词|\.\.\.|……|"
    r"<[^>]*>|\{|\}|xxx|XXX|某某"
)
_QUESTION = re.compile(r"[？?]\s*$|(?:吗|来着)[。.]?$")
_CLAUSES = re.compile(r"[，,。.！!；;]+")
BARE = 5  # a fact this short (characters) from a longer utterance has lost its meaning


# how sure the classifier must be that an utterance is not a statement before the facts drawn
# from it are rejected: a real fact lost costs more than a request stored (clause by clause
# the classifier read 「我恐高」 as chit-chat, so whole utterances are read)
NOT_STATEMENT_CONFIDENCE = 0.9


# a request this sure, that the lasting head does not read as carrying a lasting fact, is a
# request only (「给志刚发条消息，叫他带瓶酱油回来」); 「我老婆怀孕了，晚饭做点啥好」 reads lasting
REQUEST_CONFIDENCE = 0.8
REQUEST_LASTING = 0.3
# an utterance the classifier gives this little chance of being a statement, in which the lasting
# head reads nothing lasting either, is no memory whatever kind it is closest to: on the 714
# turns of the sessions sets and the 300 labelled utterances of the kinds set, every utterance
# this cuts is a request, a command, chit-chat or a question (none of the 60 statements)
UNLIKE_A_STATEMENT = 0.1
NOTHING_LASTING = 0.2
# …and one the classifier reads as a request or a command, with the lasting head lower still
# (set on the same data: at 0.15 it would cut 「阿仔下个礼拜一开学的啦」, lasting 0.14). Not
# chit-chat: the classifier reads short likings as chit-chat (「我喜欢喝咖啡」, lasting 0.11)
NOTHING_LASTING_AT_ALL = 0.12
_ASKS = (UtteranceKind.REQUEST, UtteranceKind.COMMAND)
# the lasting head on a fact's own (subject-named) text: a recovered utterance below RECOVER is
# a passing remark (「不说了，我去洗个澡」); a model fact below PASSING is rejected unless it
# states a constraint (the head misreads short constraints; a lost allergy costs most)
RECOVER = 0.1
PASSING = 0.05

Reader = Callable[[list[str]], Awaitable[dict[str, KindReading | None]]]


@dataclass(frozen=True)
class Kinds:
    """The utterance kind of each utterance the people said (the worker embeds them once), and
    a reader for other texts (the facts, once their subjects are named)."""

    readings: dict[str, KindReading | None] = field(default_factory=dict)
    reader: Reader | None = None
    # how surely each utterance's most telling clause carries a fact (``carries``): a request
    # whose one clause is a statement (「我在第三个抽屉放了备用钥匙，记得提醒我」) carries it
    clauses: dict[str, float] = field(default_factory=dict)

    def not_a_statement(self, text: str) -> KindReading | None:
        """The reading of the utterance closest in wording to ``text``, when that utterance is
        confidently a command, a question to the assistant or chit-chat — or a request that
        carries nothing lasting. A request often carries a fact (「我老婆怀孕了，晚饭做点啥好」,
        「我在第三个抽屉放了备用钥匙，记得提醒我」): the lasting head keeps those."""
        if not self.readings:
            return None
        said = sources.source_of(text, list(self.readings)) or text
        reading = self.readings.get(said)
        if reading is None or reading.kind is UtteranceKind.STATEMENT:
            return None
        lasting = 1.0 if reading.lasting is None else reading.lasting
        lasting = max(lasting, self.clauses.get(said, 0.0))
        statement = reading.scores.get(UtteranceKind.STATEMENT, 1.0)
        if statement < UNLIKE_A_STATEMENT and lasting < NOTHING_LASTING:
            return reading  # 「给俺放段柳琴戏听听」「宝宝，音量小声一点啦」, whichever kind it is
        if reading.kind in _ASKS and lasting < NOTHING_LASTING_AT_ALL:
            return reading  # 「给俺叫个车，去火车站」: a 0.55 request, 0.10 lasting
        if reading.kind is UtteranceKind.REQUEST:
            sure = reading.confidence >= REQUEST_CONFIDENCE and lasting < REQUEST_LASTING
            return reading if sure else None
        return reading if reading.confidence >= NOT_STATEMENT_CONFIDENCE else None

    async def lasting(self, texts: list[str]) -> dict[str, float]:
        """The lasting head's reading of each text (texts it cannot read are absent)."""
        read = await self.read(texts)
        return {t: r.lasting for t, r in read.items() if r.lasting is not None}

    async def read(self, texts: list[str]) -> dict[str, KindReading]:
        """The kinds model's reading of each text (texts it cannot read are absent)."""
        if self.reader is None or not texts:
            return {}
        return {t: r for t, r in (await self.reader(texts)).items() if r is not None}


# a fact that itself reads this surely as a request or a command is the request copied out
# (「我顺手帮我设个六点半嘅闹钟」), whatever the utterance around it was
FACT_REQUEST_CONFIDENCE = 0.95


# …or as a question, when it asks one (an interrogative word, a question mark): 「我外头今儿零下
# 多少度」
FACT_QUESTION_CONFIDENCE = 0.7
# (not 啥 / 几 / 什么: mostly indefinite in statements — 「吃啥都爱蘸大酱」「过来住几天」)
_ASKING = re.compile(
    r"(?:多少|几点|什么时候|哪里|哪儿|怎么样|为什么|多久|多远)(?![都也])|[？?吗]\s*$"
)


def asks_the_assistant(reading: KindReading | None, text: str = "") -> bool:
    """Does a fact's own text read surely as a request or a command to the assistant, or as a
    question it asks?"""
    if reading is None:
        return False
    if reading.kind in (UtteranceKind.REQUEST, UtteranceKind.COMMAND):
        return reading.confidence >= FACT_REQUEST_CONFIDENCE
    return (
        reading.kind is UtteranceKind.MEMORY_QUESTION
        and reading.confidence >= FACT_QUESTION_CONFIDENCE
        and _ASKING.search(text) is not None
    )


_CLAUSE_MARKS = re.compile(r"[，,。.！!；;：:？?]+")


def carries(reading: KindReading | None) -> float:
    """How surely a clause carries a fact: 1 when it reads as a statement the lasting head
    does not read as passing (below ``RECOVER``, as for an utterance the model left out:
    「叫他下班顺路带瓶酱油回来」 is a statement of an errand, 0.06), else its lasting."""
    if reading is None:
        return 0.0
    lasting = 1.0 if reading.lasting is None else reading.lasting
    if reading.kind is UtteranceKind.STATEMENT and lasting >= RECOVER:
        return 1.0
    return reading.lasting or 0.0


def clauses_of(utterance: str) -> list[str]:
    """An utterance's clauses of four characters or more, when it has more than one."""
    found = [c for c in _CLAUSE_MARKS.split(utterance) if len(c) >= 4]
    return found if len(found) > 1 else []


def spoken(utterances: Sequence[str]) -> list[str]:
    """People's utterances, wake words stripped, each once (what ``Kinds`` reads)."""
    found = []
    for utterance in utterances:
        said = sources.strip_wake_words(utterance).strip()
        if said and said not in found:
            found.append(said)
    return found


@dataclass
class Extracted:
    """Stage 1's result: the facts kept, and what was rejected and why (logged, reported)."""

    facts: list[str] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)  # utterances the model left out, kept
    calls: int = 0


def messages(window: Sequence[Said], day: dt.date) -> list[dict[str, str]]:
    lines = "\n".join(f"{'用户' if u.role == 'user' else '助手'}：{u.text.strip()}" for u in window)
    return [{"role": "user", "content": PROMPT.format(day=day.isoformat(), conversation=lines)}]


# the assistant's voice: the person is 「我」 to it, so a fact told as 「你的儿子…」「你最近…」 is
# the assistant restating (the person's own words are recovered instead)
_ASSISTANT_VOICE = re.compile(
    r"^(?:你的|您的|你家|你们家|你最近|你现在|你已经|你平时)|^your\b", re.I
)


def rejected(fact: str) -> str | None:
    """Why a fact may not be stored (None: it may)."""
    fact = sources.TAG_QUESTION.sub("", fact)
    if _POINTER.match(_REMEMBER_ASK.sub("", fact).strip("，,。 ")):
        return "a request to remember, with no fact in it"
    if _FRAGMENTS.search(fact):
        return "prompt fragment or placeholder"
    if _ASSISTANT_VOICE.search(fact.strip()):
        return "in the assistant's voice (「你的…」)"
    if _QUESTION.search(fact):
        return "a question"
    if not sources.memorable(fact):
        return "not a memory (a greeting, wake word, command or question)"
    if len(fact.strip("，。,. ")) < 2:
        return "empty"
    return None


def keep_meaning(fact: str, source: str | None) -> str:
    """The fact, or the person's own words where the fact lost its meaning: too bare
    (「香菜」 from 「我不吃香菜，一点都不能放」), or without the negation of the clause it came from
    (the clause, or the whole utterance when the clause names nobody)."""
    if source is None:
        return fact
    said = sources.strip_wake_words(source).strip("，。！!,. ")
    if len(fact) <= BARE < len(said):
        return said
    clauses = [c for c in _CLAUSES.split(said) if c]
    clause = max(clauses, key=lambda c: sources.support(fact, c), default=said)
    if sources.negated(fact):
        return fact
    if sources.support(fact, clause) >= 0.5 and sources.negated(clause):
        return clause if entities.subject_of(clause) is not None else said
    if sources.support(fact, clause) < 0.5 <= sources.support(fact, said) and sources.negated(said):
        return said  # the fact's words span clauses, one of which negates
    return fact


@dataclass(frozen=True)
class Household:
    """What the household is known to be before the session: its names, and the texts already
    remembered (what they introduce: 「咱家有条土狗叫二黑」 makes 二黑 a pet)."""

    names: tuple[str, ...] = ()
    remembered: tuple[str, ...] = ()


async def extract(
    llm: StructuredLLM,
    utterances: list[Said],
    day: dt.date,
    kinds: Kinds | None = None,
    household: Household | None = None,
) -> Extracted:
    """The facts the people in the session said, in order, each once. ``kinds``: the
    utterance kind of each utterance (none: only the word rules judge what is memorable);
    ``household``: names and memories that resolve who a pronoun or an elided subject means."""
    out = Extracted()
    kinds = kinds or Kinds()
    household = household or Household()
    people = [u.text for u in utterances if u.role == "user"]
    talk = _Talk(people, household, discourse.read(
        [sources.strip_wake_words(u) for u in people], household.names, household.remembered
    ))  # fmt: skip
    statements = [u for u in people if _statement(u, kinds)]
    if not sources.has_memorable(statements):
        log.info("extract.nothing_to_remember", utterances=len(utterances))
        return out
    assistant = "\n".join(u.text for u in utterances if u.role == "assistant")
    for window in windows(utterances):
        reply = await llm.complete_json(messages(window, day), FACTS_SCHEMA, "facts")
        out.calls += 1
        for raw in _facts(reply):
            _consider(out, raw, talk, assistant, day, kinds)
    candidates = [
        dates.annotate(part, day)
        for utterance in uncovered(statements, out.facts, talk)
        for part in introduction_apart(utterance)
    ]
    candidates += [
        dates.annotate(own, day)
        for utterance in statements
        if (own := about_oneself(utterance, [*out.facts, *candidates])) is not None
    ]
    readings = await kinds.read([*out.facts, *candidates])
    lasting = {t: r.lasting for t, r in readings.items() if r.lasting is not None}
    for fact in list(out.facts):
        read = lasting.get(fact)
        if (read is not None and read < PASSING and not CONSTRAINT.search(fact)) or passing.passing(
            fact, read
        ):
            out.facts.remove(fact)
            reason = f"a passing remark, nothing lasting ({lasting[fact]:.2f})"
            out.rejected.append({"fact": fact, "reason": reason})
            log.info("extract.rejected", fact=fact, reason=reason)
        elif asks_the_assistant(readings.get(fact), fact) and not CONSTRAINT.search(fact):
            out.facts.remove(fact)
            reason = f"the person's request, not a fact ({readings[fact].kind})"
            out.rejected.append({"fact": fact, "reason": reason})
            log.info("extract.rejected", fact=fact, reason=reason)
    for fact in candidates:
        read = lasting.get(fact)
        if fact in out.facts or lasting.get(fact, 1.0) < RECOVER or passing.passing(fact, read):
            continue
        if asks_the_assistant(readings.get(fact), fact) and not CONSTRAINT.search(fact):
            continue
        out.facts.append(fact)
        out.recovered.append(fact)
        log.info("extract.recovered", fact=fact)
    for name_fact in introductions(people, out.facts):
        out.facts.append(name_fact)
        out.recovered.append(name_fact)
        log.info("extract.recovered", fact=name_fact, reason="a self-introduction")
    return out


@dataclass(frozen=True)
class _Talk:
    """The people's utterances of a session, and who each one is about."""

    people: list[str]
    household: Household
    contexts: list[discourse.Context]

    def context_of(self, utterance: str | None) -> discourse.Context | None:
        if utterance is None or utterance not in self.people:
            return None
        return self.contexts[self.people.index(utterance)]

    def names_someone(self, text: str) -> bool:
        """Does ``text`` name a member of the household (「Lei is mad about 羊肉串」), one it
        already knew or one this session introduced?"""
        return self._member_names is not None and self._member_names.search(text) is not None

    @cached_property
    def _member_names(self) -> re.Pattern[str] | None:
        known: dict[str, discourse.Member] = {}
        for said in self.people:
            discourse.members_in(said, self.household.names, known)
        names = sorted({n for n in (*self.household.names, *known) if n}, key=len, reverse=True)
        if not names:
            return None
        return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(map(re.escape, names))})(?![a-z])")

    def named(self, fact: str, source: str | None) -> str:
        """The fact with its subject named (``discourse.resolve``)."""
        return discourse.resolve(fact, self.context_of(source), self.household.names)

    def reason_for_a_change(self, fact: str, source: str | None) -> bool:
        """「景区说那几天封山修路」 beside 「云台山那趟去不成了」: why a plan was called off, about
        no one in the household (after its subject was named) — the change itself is what is
        remembered."""
        if source is None or source not in self.people or sources.personal(fact):
            return False
        if sources.revises(source) or CONSTRAINT.search(fact):
            return False  # a correction, or a constraint of someone not yet named
        at = self.people.index(source)
        nearby = self.people[max(at - 1, 0) : at + 2]
        return any(sources.CANCELLED.search(s) for s in nearby if s != source)

    def invented_subject(self, fact: str) -> str | None:
        """The utterance the fact's content comes from, when the fact makes someone its subject
        whom that utterance never spoke of (「我自己是一点葱都不吃的」 → 「我老公是点葱都不吃的」)."""
        who = entities.subject_of(fact, self.household.names)
        if who is None or entities.canonical(who) == "我":
            return None
        source = sources.source_of(fact.replace(who, ""), self.people)
        if source is None:
            return None
        context = self.context_of(source)
        at = self.people.index(source)
        nearby = self.people[max(at - 1, 0) : at + 2]  # 「…不是毛毛」「是我老公志刚…」
        spoken_of = {
            m.who
            for said in nearby
            for _, m in discourse.members_in(said, self.household.names, {})
        }
        if context is not None and context.topic is not None:
            spoken_of.add(context.topic.who)
        invented = entities.canonical(who) not in spoken_of and all(who not in s for s in nearby)
        return source if invented else None


_OPENERS = re.compile(
    r"^(?:对|是啊|是的|嗯|哦|啊|对了|还有|另外|然后|跟你说|告诉你)[，,。！!\s]*"
    r"|^(?:Oh,? and|Oh|And|Also|Plus|Anyway)\b[,\s]*"
)


def uncovered(people: Sequence[str], facts: Sequence[str], talk: _Talk | None = None) -> list[str]:
    """People's statements the model drew no fact from (it dropped 「我女儿叫小橙子，今年五岁了」
    while keeping the next line): the person's own words become the fact, its subject named.
    Not for an utterance that is not memorable, is itself a retraction or correction, or is
    followed by one (「我想下周去学游泳」 … 「算了，还是不去了」), nor for one that does not speak
    about the household."""
    drawn_from = {sources.source_of(fact, people) for fact in facts}
    found = []
    for i, utterance in enumerate(people):
        text = _OPENERS.sub("", sources.strip_wake_words(utterance)).strip("，。！!,. ")
        if len(text) < 4 or not sources.memorable(text):
            continue
        if not sources.personal(text) and (talk is None or not talk.names_someone(text)):
            continue
        if _asks_to_do(text) and not CONSTRAINT.search(text):
            continue
        if any(sources.revises(later) for later in people[i:]) or utterance in drawn_from:
            continue
        found.append(tidy(talk.named(text, utterance) if talk is not None else text))
    return found


def _facts(reply: str) -> list[str]:
    items = reply_list("extract", reply, "facts")
    found = []
    for item in items:
        if isinstance(item, dict):  # {"fact": ...} or {"text": ...} from a chatty model
            item = item.get("fact") or item.get("text") or ""
        text = str(item).strip()
        if text:
            found.append(text)
    return found


def _statement(utterance: str, kinds: Kinds) -> bool:
    """Is ``utterance`` a statement (or can the classifier not tell)?"""
    return kinds.not_a_statement(sources.strip_wake_words(utterance)) is None


def _consider(
    out: Extracted, raw: str, talk: _Talk, assistant: str, day: dt.date, kinds: Kinds
) -> None:
    people = talk.people
    said = "\n".join(people)
    reason = rejected(raw)
    reading = kinds.not_a_statement(raw) if reason is None else None
    if reading is not None:
        reason = f"said as a {reading.kind.value}, not a statement ({reading.confidence:.2f})"
    if (
        reason is None
        and sources.mostly_english(said)
        and any(run not in said for run in _CJK_RUN.findall(raw))
    ):  # Chinese the person did not say, in an English session: 「所以葡萄、raisins和巧克力」
        reason = "translated (the person did not say it in this language)"
    comparable = sources.chinese(said)  # a translated fact cannot be traced by wording
    if reason is None and comparable and not sources.supported(raw, said, assistant):
        raw, removed = sources.person_part(raw, said, assistant)
        log.info("extract.not_said_removed", fact=raw, removed=removed)
        if len(raw) < 4:  # nothing of it is the person's
            raw, reason = (
                "，".join(removed),
                "not said by a person (the assistant's words, or invented)",
            )
    source = sources.source_of(raw, people)
    at = people.index(source) if source is not None else -1
    if reason is None and source is not None and _retracted(people, at):
        reason = "retracted later in the session"
    if reason is None and (unsaid := [n for n in entities.names_in(raw) if n not in said]):
        reason = f"a name nobody said ({unsaid[0]})"
    if reason is None and source is not None and _asks_to_do(source) and not CONSTRAINT.search(raw):
        reason = "asks the assistant to do something (「帮我…」)"
    if reason is not None:
        out.rejected.append({"fact": raw, "reason": reason})
        log.info("extract.rejected", fact=raw, reason=reason)
        return
    said_by = talk.invented_subject(raw)
    if said_by is not None:
        log.info("extract.subject_not_said", fact=raw, source=said_by)
        raw, source = sources.strip_wake_words(said_by).strip("，。！!,. "), said_by
    fact = dates.annotate(
        talk.named(tidy(keep_meaning(without_requests(raw), source)), source), day
    )
    if talk.reason_for_a_change(fact, source):
        reason = "the reason given for a change, about no one in the household"
        out.rejected.append({"fact": raw, "reason": reason})
        log.info("extract.rejected", fact=raw, reason=reason)
        return
    for part in introduction_apart(fact):
        if part not in out.facts:
            out.facts.append(part)


# a newcomer's name said in the same breath as a household fact: 「我叫邓雨桐，婆婆有糖尿病」
_INTRODUCTION = re.compile(
    r"(?:^|(?<=[，,。！!]))\s*(?:我|额|俺|阿拉)(?:叫|名叫|名字叫|的名字是|(?P<is>是|係|系))"
)
_ENGLISH_INTRODUCTION = re.compile(
    r"\b(?:I'm|I am|my name is|My name is) ([A-Z][a-z]+(?: [A-Z][a-z]+)?)\s*(?:—|–|-|,|;|\.)\s*"
    # the name said again in full: 「I'm Rachel, Rachel Dunmore — my dad…」
    r"(?:\1(?: [A-Z][a-z]+)?\s*(?:—|–|-|,|;)\s*)?"
    r"(?:and |so )?(?=\S)"
)
_NAME_RUN = re.compile(r"[\u4e00-\u9fff]{2,4}")


def _named_after(text: str) -> tuple[re.Match[str], str, int] | None:
    """A Chinese self-introduction in ``text``: its match, the name run after it (trimmed) and
    where that name ends; None when no name-like run follows."""
    found = _INTRODUCTION.search(text)
    run = _NAME_RUN.match(text, found.end()) if found is not None else None
    if found is None or run is None:
        return None
    said = entities.trim_name(run.group(0))
    return (found, said, found.end() + len(said)) if said else None


def introduced(utterance: str) -> str | None:
    """The speaker's name a self-introduction says (「喂，你好嘛，我叫谭晓燕，以后…」 → 谭晓燕,
    「I'm Emma, I teach…」 → Emma), else None: 是 introduces a name only when a name follows."""
    english = _ENGLISH_INTRODUCTION.search(utterance)
    if english is not None:
        return english.group(1)
    named = _named_after(utterance)
    if named is None:
        return None
    found, said, end = named
    if end < len(utterance) and utterance[end] not in "，,。！!；; —":
        return None  # the run goes on past what a name is
    if names.name_at(utterance, found.end()) is not None or names.tagged_name(said):
        return said
    if said[0] in names.SURNAMES and len(said) <= 3 and not names.is_common_word(said):
        return said  # 马海军, 王德顺: jieba reads 马 and 海军
    return None  # 「我叫外卖」「我是老师」: a word, not a name


def introductions(people: Sequence[str], facts: Sequence[str]) -> list[str]:
    """The speaker's name as its own memory whenever a person introduced themselves and no fact
    drawn from the session holds that name: the model keeps the household fact said in the same
    breath (「我叫谭晓燕，…我婆婆周秀英血压高得很」) and drops the name."""
    found = []
    for utterance in people:
        name = introduced(sources.strip_wake_words(utterance))
        if name is None or any(name in fact for fact in facts):
            continue
        fact = f"I'm {name}" if name.isascii() else f"我叫{name}"
        if fact not in found:
            found.append(fact)
    return found


_BREATH_END = re.compile(r"——|—|[。！!？?]")
_ADDRESSED = re.compile(r"你|恁|侬|您")
_CLAUSES = re.compile(r"[，,；;]")


def about_oneself(utterance: str, facts: Sequence[str]) -> str | None:
    """What a self-introduction goes on to say of the speaker in the same breath, as its own
    fact, when no fact holds it: 「你好，我是马海军，在西关开了个牛肉面馆子——我阿达…」 →
    「我在西关开了个牛肉面馆子」. Only the clauses right after the name that have no subject of
    their own; the first one that speaks of someone else ends it."""
    said = sources.strip_wake_words(utterance)
    name = introduced(said)
    if name is None or name.isascii():
        return None
    at = said.find(name) + len(name)
    end = _BREATH_END.search(said, at)
    kept = []
    for clause in _CLAUSES.split(said[at : end.start() if end else len(said)]):
        clause = clause.strip()
        if not clause or _ADDRESSED.search(clause):
            continue  # 「以后屋头的事我都跟你摆哈」: said to the assistant, not of oneself
        if entities.subject_of(clause) not in (None, "我") or discourse.members_in(clause, (), {}):
            break
        kept.append(clause)
    if not kept:
        return None
    fact = "，".join(kept)
    fact = fact if fact.startswith(("我", "俺")) else "我" + fact
    covered = sources.bigrams(" ".join(facts))
    words = sources.bigrams(fact) - sources.bigrams("我")
    return fact if len(words - covered) > len(words) / 2 else None


def introduction_apart(fact: str) -> list[str]:
    """One fact per memory: a self-introduction said in the same breath as another fact is its
    own memory (「我叫邓雨桐，屋头婆婆有糖尿病」 → 「我叫邓雨桐」, 「屋头婆婆有糖尿病」), so the
    speaker's name is never fused into a relative's constraint."""
    english = _ENGLISH_INTRODUCTION.search(fact)
    if english is not None and len(fact) - english.end() >= 8:
        return [f"I'm {english.group(1)}", fact[english.end() :].strip()]
    named = _named_after(fact)
    if named is None:
        return [fact]
    found, said, end = named
    if found.group("is") and names.name_at(fact, found.end()) is None:
        return [fact]  # 「我是老师，…」: 是 introduces a name only when a name follows
    rest = fact[end:].lstrip("，,。 ")
    if len(rest) < 4 or fact[end : end + 1] not in ("，", ",", "。", " "):
        return [fact]
    if entities.subject_of(rest) is None:
        return [fact]  # 「我叫小李，今年三十」: both about the speaker
    return [f"我叫{said}", rest]


_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_CLAUSE_SPLIT = re.compile(r"(?<=[，,；;])")


def without_requests(fact: str) -> str:
    """The fact without its clauses that ask the assistant to do something (「燃气费也该交了，
    你帮我交掉」 → 「燃气费也该交了」, which the lasting head then reads as passing); the fact
    as it was when every clause is one."""
    clauses = _CLAUSE_SPLIT.split(fact)
    kept = [c for c in clauses if not _asks_to_do(c.strip("，,；; "))]
    if not kept or len(kept) == len(clauses):
        return fact
    return "".join(kept).strip("，,；; ")


def _asks_to_do(source: str) -> bool:
    said = _OPENERS.sub("", sources.strip_wake_words(source))
    return sources.ASKS_TO_DO.match(said) is not None


_RETRACTS = re.compile(r"^(?:哦|嗯|啊|唉)?[，,\s]*(?:算了|不去了|去不成|不用了|还是不|取消)")


def _retracted(people: list[str], at: int) -> bool:
    """The person takes it back right after saying it (「我想下周去学游泳」 「算了，还是不去了」)."""
    if at < 0 or at + 1 >= len(people):
        return False
    return _RETRACTS.search(sources.strip_wake_words(people[at + 1])) is not None


_CORRECTION_OPENER = re.compile(
    r"^(?:哦|嗯|啊)?[，,\s]*(?:我之前说错了|我说错了|之前说错了|说错了|搞错了|不对|刚想起来|更正一下|纠正一下)[，,。！!\s]*"
)
_NOT_BUT = re.compile(
    r"^(?P<who>[^，,。]*?)不是(?P<old>[^，,。]*?)[，,]\s*(?:而)?是(?P<new>[^，,。]+)"
)
_TRAILING_NOT = re.compile(r"[，,]\s*不是[^，,。]*")
# 「…，你记住啊」「帮我记一下，…」: asking the assistant to remember is not part of the fact
_REMEMBER_ASK = re.compile(
    r"[，,]?\s*(?:你|我)?(?:要|可)?(?:千万|一定)?(?:记住|记好|记下|记得|记着点?|别忘了|不要忘了|别忘记)"
    r"(?:了|啊|哦|喔|呀|哈)?[！!。]*$|^(?:帮我|你)?记(?:一下|住|下)[，,：:\s]*"
)
# what is left of 「美多芭的事，你千万别忘了」 once the ask is cut: a pointer, not a fact
_POINTER = re.compile(r"^[^，,。]{1,8}的事(?:儿|情)?$")
_LEADING_NOT = re.compile(r"^不是[^，,。]*[，,]\s*(?=\S)")


def tidy(fact: str) -> str:
    """A correction keeps only the corrected value: 「我之前说错了，小橙子不是对芒果过敏，是对猕猴桃
    过敏」 → 「小橙子对猕猴桃过敏」; 「年糕其实是四岁，不是三岁」 → 「年糕其实是四岁」."""
    text = _REMEMBER_ASK.sub("", sources.TAG_QUESTION.sub("", fact)).strip()
    opened = _CORRECTION_OPENER.sub("", text)
    if opened != text:
        text = re.sub(
            r"^是(?=[^的])", "", opened
        )  # 「不对，是后天下午去银行」 → 「后天下午去银行」
    match = _NOT_BUT.match(text)
    if match is not None:
        new = match.group("new")
        joined = match.group("who") + (
            new if new.startswith(("对", "在", "叫", "住")) else "是" + new
        )
        text = joined + text[match.end() :]
    text = _LEADING_NOT.sub("", _TRAILING_NOT.sub("", text)).strip("，,。 ")
    return text or fact
