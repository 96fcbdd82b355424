"""What a device says is checked before TTS, sentence by sentence, whatever the model wrote.

One turn's checks and their state, without I/O (the turn feeds sentences, speaks what comes back): a
sentence that only gives the question back is not spoken (``echo``); the device's machinery is
never spoken (``machinery``); a claimed act no tool took is replaced by the honest sentence
(``claims``); an act no offered tool does is declined first (``claims.requested_act``); a reminder
of the model's own after Hearth said the constraints the request names is not repeated
(``claims.repeats_reminder``); a household fact memory does not hold is not stated, and when memory
plainly lacks the answer nothing comes before "I don't know" (``grounding``). ``closing`` says what
the turn must still say when the model is done.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from memory import terms
from providers.tts import speakable
from server import metrics
from server.device.claims import (
    LOOKUP_TOOLS,
    REMINDER,
    acknowledges_only,
    apologises_only,
    claims_action,
    declined_note,
    honest_sentence,
    opens_reminder_only,
    reminds,
    repeats_reminder,
    requested_act,
    says_cannot,
    tool_could_do,
)
from server.device.echo import echoes
from server.device.heeding import Heeded, recommends_against, refuses
from server.device.machinery import machinery_in, without_ids, without_markup, without_notes
from server.device.sentences import ends_sentence
from server.memory.read_result import ReadResult
from server.understanding.asking import asks_anything
from server.understanding.grounding import (
    Grounds,
    admits,
    constraints_of_claimed,
    continues,
    dont_know,
    restates_a_line,
    states_something,
    unheld_allergies,
    unsupported,
)
from server.understanding.question import Question

log = structlog.get_logger(__name__)
# a reminder sharing this share of its words with the utterance only tells it back
TOLD_BACK = 0.7
# after Hearth's reminder, a sentence this much of the request's own words that refuses nothing
# goes along with what the reminder warns of (「好的，我已经安排了元旦带堂客去灰汤住两晚」 after
# her no-hot-springs rule; 「给他买两盒吧」 after the warfarin one)
GOES_ALONG = 0.5
_REMINDER_HEAD = re.compile(r"^\s*(提醒(一下|你)?|注意|要注意|小心|温馨提示|不过)[，,：:！!\s]*")
_ASKS_BACK = re.compile(r"[？?]\s*$")
# a piece cut at a clause mark, not a sentence's end
_CUT_AT_CLAUSE = re.compile(r"[，,：:；;、]\s*$")
_WORDY = re.compile(r"[\u4e00-\u9fff]|[A-Za-z]+|\d+")
# what a statement of the person's gets when the model's reply came to nothing
ACKNOWLEDGED = {"zh": "好的，我知道了。", "en": "OK, got it."}
ACKNOWLEDGED_AFTER = {"zh": "我知道了。", "en": "Got it."}  # after the model's own 「好的，」
# what any other turn gets then: ask again, rather than leave silence
APOLOGY_EMPTY = {
    "zh": "嗯，这个我一时不知道怎么回答，换个说法再问我一次好吗？",
    "en": "Hmm, I am not sure how to answer that. Could you ask me another way?",
}


@dataclass
class ReplyChecks:
    """``replaced``: the turn trace's list of what was not said as written, and why;
    ``tools_ran``: the names of the tools run so far this turn."""

    language: str
    replaced: list[dict[str, Any]]
    tools_ran: Callable[[], list[str]]
    question: str = ""  # what the person said this turn (a reply giving it back is dropped)
    understood: Question | None = None  # …as the read path read it (understanding.question)
    grounds: Grounds | None = None  # a fact question: what the reply may state
    # any other turn with memory injected: the question and the injected lines, the
    # constraints among them (an allergy the reply claims must be one memory holds)
    held: tuple[str, ...] = ()
    held_constraints: tuple[str, ...] = ()
    opening: str = ""  # the reply's first segment (how it began: 「好的，」…)
    claim_replaced: bool = False  # a claimed act was replaced by the honest sentence
    fact_dropped: bool = False  # a sentence stating a fact memory lacks was not spoken
    stated: bool = False  # a sentence stating a fact that holds was spoken
    dropped_last: bool = False  # the sentence before this one was not spoken
    admitted: bool = False  # a sentence saying it does not know was spoken
    declining: bool = False  # an act no offered tool does: the reply must say it cannot
    constraints: bool = False  # the read path recalled safety constraints this turn
    reminded: bool = False  # Hearth said the constraints the request names, first
    repeating: bool = False  # inside a reminder of the model's own (its first clause dropped)
    repeats: int = 0  # segments not spoken because they repeated Hearth's reminder
    opener: str = ""  # 「提醒一下，」 held back until what it reminds of is spoken
    kind: str | None = None  # what the person just did (memory.utterance_kinds), if known
    heeded: tuple[Heeded, ...] = ()  # the constraints Hearth said first, and what they forbid
    # the safety group's other constraints (of whoever the request concerns), not said: a
    # sentence recommending what one forbids is replaced by that constraint, said then
    guarded: tuple[Heeded, ...] = ()
    substance: bool = False  # something more than a bare 「好的，」 was spoken
    acknowledged: bool = False  # a bare 「好的，」 was spoken, cut off
    said_instead: list[str] = field(default_factory=list)  # constraints said for a dropped claim
    spoken: int = 0  # pieces spoken so far this turn
    # a clause cut at a comma or colon after the first audio, held until what follows it is
    # spoken: if that is dropped, the clause is closed with a full stop or left unsaid
    # (「…不能给她。这个我这里做不到，」「好伐，」「出行清单如下：」 were fragments)
    trailing: str = ""
    ended_cut: bool = False  # the last piece spoken ended at a comma or colon

    def take(self, read: ReadResult, said: Sequence[str] = ()) -> None:
        """What the read path found for this turn's question (``said``: what the person said
        earlier in the session, which a reply may state too)."""
        self.question, self.understood = read.question, read.understood
        grounds = read.grounds
        self.grounds = None if grounds is None else grounds.with_said(said, read.understood)
        safety = read.safety_texts
        related = read.related_texts
        # what a reply may claim of the household: the question, what the person said earlier
        # in the session and what memory holds — with nothing injected, an allergy claimed of
        # a member (「老爷子对腰椎MR过敏」 to a request memory held nothing for) is invented
        self.held = (read.question, *said, *safety, *related)
        self.held_constraints = safety
        self.kind = None if read.kind is None else read.kind.kind.value

    def declined(
        self, text: str, functions: list[dict[str, Any]], read: ReadResult | None = None
    ) -> str | None:
        """An act no offered tool does (「帮我定个七点的闹钟」 with no alarm tool): the reply
        must say it cannot; returns this turn's note to the model. A safety reminder may come
        before it when the read path recalled constraints (the safety rule: first). Measured: a
        note asking for the reminder first made the local model remind of constraints that did
        not apply (「北京对青霉素过敏」 to a train ticket)."""
        act = requested_act(text)
        if act is None or honest_sentence(self.language) is None:
            return None
        if tool_could_do(act, functions):
            return None
        self.declining, self.constraints = True, read is not None and bool(read.safety)
        log.info("turn.act_without_tool", act=act.what, question=text)
        return declined_note(act, self.language)

    def check(self, sentence: str) -> list[str]:
        """What to say for one sentence of the reply: nothing, it, or the honest sentence
        before it."""
        self.opening = self.opening or sentence
        if not self.opener and self._opens_only(sentence):
            self.opener = sentence  # said with what follows, or not at all if that is dropped
            return []
        spoken = self._unechoed(sentence)
        spoken = None if spoken is None else self._unmachined(spoken)
        spoken = None if spoken is None else self._repeated(spoken)
        spoken = None if spoken is None else self._unheeded(spoken)
        spoken = None if spoken is None else self._not_told_back(spoken)
        spoken = None if spoken is None else self._claimed(spoken)
        before: list[str] = []
        if spoken is not None and self.declining:
            spoken, before = self._decline(spoken)
        spoken = None if spoken is None else self._invented(spoken)
        opener, self.opener = self.opener, ""  # said with what follows, or dropped with it
        if spoken is None:
            return before
        said = before + [s for s in (opener, spoken) if s]
        self.substance = self.substance or any(not acknowledges_only(s) for s in said)
        # a bare 「好的，」 cut off (a comma, no full stop) is a fragment; 「好的。」 is a reply
        self.acknowledged = self.acknowledged or any(
            acknowledges_only(s) and not ends_sentence(s) for s in said
        )
        return self._held_back(said)

    def _told(self) -> bool:
        """Does the person's utterance ask nothing: a statement, or a plan or request that
        asks no question (「周末带姥姥去冰雪大世界」)?"""
        return self.kind == "statement" or (
            self.kind == "request" and bool(self.question) and not asks_anything(self.question)
        )

    def _held_back(self, said: list[str]) -> list[str]:
        """``said`` after the clause held from before, less a clause it ends on (a comma or
        colon) when the turn's first audio is out: that clause waits for what follows."""
        if not said:
            return said
        if self.trailing:
            said, self.trailing = [self.trailing, *said], ""
        # after the first audio (Hearth's own reminder is one), or an honest 「这个我这里做不到，」
        # whose continuation may be dropped
        after_first = self.spoken or self.reminded or len(said) > 1 or says_cannot(said[-1])
        if after_first and _CUT_AT_CLAUSE.search(said[-1]):
            self.trailing = said.pop()
        self.spoken += len(said)
        if said:
            self.ended_cut = _CUT_AT_CLAUSE.search(said[-1]) is not None
        return said

    def _released(self) -> str | None:
        """The held clause when nothing followed it: closed with a full stop when it says
        something alone (「这个我这里做不到，」 → 「这个我这里做不到。」); not said when it only
        acknowledges (「好伐，」), introduces what was dropped (「清单如下：」) or is a word or
        two (「医生，」)."""
        held, self.trailing = self.trailing, ""
        if not held:
            return None
        body = _CUT_AT_CLAUSE.sub("", held.rstrip())
        if held.rstrip()[-1] in "：:" or acknowledges_only(held) or len(_WORDY.findall(body)) < 4:
            log.info("turn.fragment_dropped", said=held)
            self._drop(held, "a clause whose continuation was not spoken")
            return None
        return body + ("." if body[-1:].isascii() else "。")

    def closing(self) -> str | None:
        """What the turn must still say when the model is done: that it cannot (it never said
        so), that it does not know (memory lacks the answer, or every fact stated was invented)."""
        released = self._released()
        rest = self._closing()
        if released is None and rest is None and self.ended_cut and self._told():
            # the first audio was cut at a comma (「好主意，」) and nothing followed it
            return ACKNOWLEDGED_AFTER.get(self.language.split("-")[0], ACKNOWLEDGED_AFTER["zh"])
        if released is None or rest is None:
            return released or rest
        if says_cannot(released) and rest == honest_sentence(self.language):
            return released
        return f"{released}{rest}"

    def _closing(self) -> str | None:
        honest = dont_know(self.language)
        cannot = honest_sentence(self.language)
        lacking = self.grounds is not None and self.grounds.lacking
        if self.declining and cannot is not None and not self._acted():
            return cannot
        if honest is not None and lacking and not self.admitted:
            return honest
        if honest is not None and self.fact_dropped and not self.stated:
            return honest
        if self.acknowledged and not self.substance and not self.reminded:
            # only 「好的，」 was said (what followed was dropped): never end on a fragment
            return self.fallback(after_acknowledgement=True)
        return None

    def fallback(self, after_acknowledgement: bool = False) -> str:
        """What a turn that would otherwise say nothing (or only 「好的，」) says: what asks
        nothing — a statement, a plan or a request that asks no question (「周末带姥姥去冰雪
        大世界」) — is acknowledged (「好的，我知道了。」); a question about memory gets "I don't
        know"; any other question the apology that asks again."""
        language = self.language.split("-")[0]
        told = self._told()
        if self.kind == "memory_question" and not told:  # asked of memory: it does not know
            honest = dont_know(self.language)
            if honest is not None:
                return honest
        table = ACKNOWLEDGED if told else APOLOGY_EMPTY
        said = table.get(language, table["zh"])
        if after_acknowledgement and told:
            return ACKNOWLEDGED_AFTER.get(language, ACKNOWLEDGED_AFTER["zh"])
        return said

    def _unheld_allergy(self, text: str) -> str | None:
        """``text`` unless, on a turn memory was read for, it claims an allergy neither memory
        nor the person holds, or holds of someone else (the local model: 「妈妈对荔枝过敏」 to a
        gift of lychees, 「爷爷对花生过敏」 from 小橙子's line)."""
        if not self.held:  # memory was not read (off)
            return text
        missing = unheld_allergies(text, self.held, self.held_constraints)
        if not missing:
            return text
        log.warning("turn.unheld_allergy_dropped", said=text, unsupported=missing)
        metrics.INVENTED_FACTS_REPLACED.inc()
        self._drop(text, f"an allergy memory does not hold: {missing}")
        self.dropped_last = True
        # what memory does say of them, in its words, once (「妈妈有糖尿病，甜的要少吃」)
        instead = [
            line
            for line in constraints_of_claimed(text, self.held, self.held_constraints)
            if line not in self.said_instead
        ]
        opening = "" if self.opener else REMINDER.get(self.language.split("-")[0])
        if not instead or opening is None:
            return None
        self.said_instead += instead
        self.dropped_last = False
        said = "；".join(line.rstrip("。！!.").replace("我", "你") for line in instead)
        return f"{opening}{said}。"

    def _acted(self) -> bool:
        """Did a tool that acts (not a lookup) run in this turn?"""
        return any(name not in LOOKUP_TOOLS for name in self.tools_ran())

    def _drop(self, said: str, why: str) -> None:
        self.replaced.append({"said": said, "why": why})

    def _opens_only(self, sentence: str) -> bool:
        """A first clause that says nothing alone and would dangle if what follows is dropped:
        「提醒一下，」 (unless Hearth's reminder came first); after that reminder, a bare
        「好的，」 (「提醒一下：猫肾不好，只能吃处方猫粮。好的，」 when the model's next sentence
        gave the request back) — the first audio is out already, so holding it costs nothing."""
        if not self.reminded:
            return opens_reminder_only(sentence)
        return not self.declining and acknowledges_only(sentence)

    def _unechoed(self, text: str) -> str | None:
        """``text`` unless it only gives the question back (``echo``): not spoken; a turn
        left with nothing said ends as any empty reply does (or with "I don't know" when memory
        lacks the answer)."""
        if not self.question or not echoes(text, self.question):
            return text
        log.warning("turn.echo_dropped", said=text, question=self.question)
        self._drop(text, "gives the question back")
        return None

    def _unmachined(self, text: str) -> str | None:
        """``text`` unless it speaks the device's machinery (a prompt part, a tool, an id:
        ``server.device.machinery``): a reminder keeps its warning, ids cut out; any other such
        sentence is not spoken. A tool call written as text in it is cut off."""
        noted = without_notes(text)
        if noted != text:
            log.info("turn.prompt_note_cut", said=text)
            self._drop(text, "a memory line's note from the prompt")
            text = noted
        cut = without_markup(text)
        if cut != text:
            log.warning("turn.markup_dropped", said=text)
            self._drop(text, "tool call as text")
            if not speakable(cut):
                return None
            text = cut
        named = machinery_in(text)
        if named is None:
            return text
        if reminds(text):
            return without_ids(text)
        log.warning("turn.machinery_dropped", said=text, named=named)
        self._drop(text, f"machinery: {named}")
        return None

    def _repeated(self, text: str) -> str | None:
        """``text`` unless it is part of a reminder of the model's own after Hearth said the
        constraints first: the whole sentence, however the splitter cut it (「提醒一下，」 then
        「你老婆对海鲜过敏。」)."""
        if not self.reminded or not (self.repeating or repeats_reminder(text)):
            return text
        log.info("turn.reminder_repeat_dropped", said=text)
        self._drop(text, "reminder repeated")
        self.repeats += 1
        self.repeating = not ends_sentence(text)
        return None

    def _unheeded(self, text: str) -> str | None:
        """``text`` unless it recommends what a constraint Hearth said this turn forbids
        (``heeding``): not spoken, and a sentence leaning on it is not spoken either."""
        if self.dropped_last and self.heeded and continues(text):
            self._drop(text, "continues a sentence not spoken")
            return None
        against = recommends_against(text, self.heeded)
        unsaid = None if against is not None else recommends_against(text, self.guarded)
        if against is None and unsaid is None:
            return text
        constraint = against or unsaid
        assert constraint is not None
        log.warning("turn.unsafe_recommendation_dropped", said=text, constraint=constraint.text)
        metrics.UNSAFE_RECOMMENDATIONS_DROPPED.inc()
        self._drop(text, f"recommends what a constraint forbids: {constraint.text}")
        self.dropped_last = True
        if unsaid is None:
            return None
        # a constraint of the safety group Hearth had not said: said now, in its place, once
        self.guarded = tuple(g for g in self.guarded if g is not unsaid)
        self.heeded = (*self.heeded, unsaid)
        opening = REMINDER.get(self.language.split("-")[0])
        return None if opening is None else f"{opening}{unsaid.text}。"

    def _not_told_back(self, text: str) -> str | None:
        """``text`` unless it is a reminder of what the person just said (「提醒一下，明天下午你要
        带女儿去放风筝」 right after they said so: most of its words are the utterance's), or a
        reminder on a command or chit-chat (「提醒一下，老爷子耳朵背」 to turn the volume up)."""
        if not self.question:
            return text
        if not reminds(text) and not (self.opener and reminds(self.opener)):
            return self._not_restated(text)
        # a reminder is for a plan or a request: not on a command or chit-chat, nor on a
        # statement memory holds no constraint for (「客厅灯调暗点，刺眼睛得很」 read as one)
        if self.kind in ("command", "chitchat") or (
            self.kind == "statement" and not self.held_constraints
        ):
            log.info("turn.reminder_not_due_dropped", said=text, kind=self.kind)
            self._drop(text, "a reminder on a command or chit-chat")
            return None
        said = terms.terms(_REMINDER_HEAD.sub("", text).replace("你", "我"))
        if not said or len(said & self._question_terms()) < TOLD_BACK * len(said):
            return text
        log.info("turn.told_back_dropped", said=text, question=self.question)
        self._drop(text, "reminds the person of what they just said")
        return None

    def _not_restated(self, text: str) -> str | None:
        """``text`` unless, on a statement, it tells the statement back (「阿敏新报咗个粤剧兴趣
        班…」 given back whole, 「你最近迷上抖音跳广场舞了」 for what 外婆 does): most of its
        words are the utterance's — the person hears the acknowledgment instead; or, after
        Hearth said a constraint first, it goes along with the request in the request's own
        words and refuses nothing (``GOES_ALONG``) — the reminder stands alone."""
        if _ASKS_BACK.search(text):
            return text
        along = self.reminded and not refuses(text)
        if not along and self.kind != "statement":
            return text
        said = terms.terms(text.replace("你", "我"))
        share = GOES_ALONG if along else TOLD_BACK
        if len(said) < 2 or len(said & self._question_terms()) < share * len(said):
            return text
        if along:
            log.info("turn.going_along_dropped", said=text, question=self.question)
            self._drop(text, "goes along with what Hearth's reminder warns of")
        else:
            log.info("turn.statement_told_back_dropped", said=text, question=self.question)
            self._drop(text, "tells the person's statement back")
        return None

    def _question_terms(self) -> frozenset[str]:
        understood = self.understood
        if understood is not None and understood.text == self.question:
            return understood.terms  # read once this turn
        return frozenset(terms.terms(self.question))

    def _claimed(self, text: str) -> str | None:
        """``text`` unless it claims an act no tool took: then the honest sentence (None: said
        already this turn)."""
        honest = honest_sentence(self.language)
        if honest is None or self._acted() or not claims_action(text, self.opening):
            return text
        log.warning("turn.claimed_action_replaced", said=text)
        metrics.CLAIMS_REPLACED.inc()
        self._drop(text, "claimed action")
        if self.claim_replaced:
            return None
        self.claim_replaced = True
        return honest

    def _decline(self, text: str) -> tuple[str | None, list[str]]:
        """In a turn asking for an act no tool does, the reply says it cannot: its first
        sentence, or right after a safety reminder; else the honest sentence goes first. A
        bare 「好的，」 before it is dropped (it would sound like a yes)."""
        honest = honest_sentence(self.language)
        if honest is None or says_cannot(text) or self._acted():
            self.declining = False  # said so, or a tool did act after all
            return text, []
        if acknowledges_only(text):
            return None, []
        if apologises_only(text) or (self.constraints and reminds(text)):
            return text, []
        self.declining = False
        self.claim_replaced = True  # a claim later in the turn is dropped, not said again
        return text, [honest]

    def _invented(self, text: str) -> str | None:
        """``text`` unless it states a household fact memory lacks (None: not spoken; the turn
        ends with "I don't know" if nothing it stated held). Not checked after a tool ran (its
        result may be the answer)."""
        grounds = self.grounds
        if dont_know(self.language) is None or self.tools_ran():
            return text
        if grounds is None:
            return self._unheld_allergy(text)
        if grounds.lacking and not self.admitted:
            # memory holds no answer: nothing is said before "I don't know" (a small model
            # answers 「班主任姓王」 from the piano teacher's line)
            if admits(text):
                self.admitted = True
                return text
            if says_cannot(text) or restates_a_line(text, grounds):
                return text  # honest, or true: context before "I don't know"
            missing = unsupported(text, grounds)
            log.warning("turn.answer_memory_lacks_dropped", said=text, unsupported=missing)
            metrics.INVENTED_FACTS_REPLACED.inc()
            why = "memory holds no answer" + (f", not in memory: {missing}" if missing else "")
            self._drop(text, why)
            self.dropped_last = True
            return None
        missing = unsupported(text, grounds)
        if not missing and not (self.dropped_last and continues(text)):
            self.dropped_last = False
            self.stated = self.stated or states_something(text)
            return text
        why = f"not in memory: {missing}" if missing else "continues a sentence not spoken"
        log.warning("turn.invented_fact_replaced", said=text, unsupported=missing)
        metrics.INVENTED_FACTS_REPLACED.inc()
        self._drop(text, why)
        self.fact_dropped = self.dropped_last = True
        return None
