"""The read path: per turn, no LLM, at most two store round trips.

1. Embed the utterance.
2. Round 1 (one batch): direct vector hits above ``threshold``; the best BM25 matches of the
   question's words (``lexical_limit``: a name, a rare word the question shares with a memory)
   whose cosine reaches ``lexical_threshold`` and that share two content terms with the
   question (one if it is anchored in the household: ``memory.terms``). A question with no
   anchor word (我, a relation, a name) takes a direct hit below ``strict_threshold`` only when
   it shares a topic word with it (``topic_terms``; not a when-word, name or place), the
   closest one only; plus, when the
   question names a relation (女儿, 老婆, 家里人 → all), memories about that relation
   (``entity_limit``, ``relation_threshold``). Names in lexical hits do not start round 2's
   name search (only what the question itself names links, below). When the request touches a
   safety topic (food, medicine, a purchase, an outing, a pet: ``understanding.lookup``), the
   same batch reads the person's safety constraints, and those of whoever the request is about
   join the safety group (``safety_lookup_limit``) — Hearth looks before the model answers.
   A question asking where someone lives or works, their school, name or age (``slot_limit``,
   ``memory.slot_kinds``) reads the memories stating that kind of fact, whatever their words
   (「我是做什么工作的？」 → 「…跳槽了，现在在一家新能源汽车公司当工程师」), kept when they are
   about whoever the question asks about. A plan naming a weekday (``schedule_limit``,
   ``memory.when``: 「周四晚上能约朋友吃饭吗？」) reads what the household already has at that
   time (「我每周四晚上七点有吉他课」), for whoever the plan concerns (``lookup.Scope``).
3. Round 2, same-entity completion, both ways: proper names pulled out of round-1 hits
   (「女儿叫小橙子」 → 小橙子), and the relation words and other names of round-1 hits about a name
   the question says (asked about 小橙子: 女儿, 闺女, a nickname), select memories about them
   (``entity_limit``), and — in the same batch — the safety constraints about them
   (``entity_limit`` more, safety class only).
4. Expired ``decay=time`` memories are dropped. The narrow searches (relation, names) let the
   engine exclude them; the person-wide direct search does not (that per-point condition cost
   more than the search itself at 10,000 memories): it fetches ``EXPIRY_SLACK`` extra hits and
   drops expired ones here. Only when a full page held so many expired hits that fewer than
   ``limit`` live ones remain does round 2 repeat the direct search with the engine excluding
   them — so expired memories still never use up the limit, within two round trips.
   Round 1 also searches the person's cues (``cue_limit``, ``cue_threshold``: what the write
   path said each constraint or preference matters for, 「芒果冰沙」 for a mango allergy); the
   memories they point at are read by id in round 2 — for the person the request concerns, and
   never for a question about the world (「长城有多长？」, neither anchored nor a safety topic).
5. Safety-class memories recalled by any round are promoted into the safety group (with its
   mandatory rule); the rest go to the related group. A constraint about someone the question
   does not concern (``lookup.Scope``; or a name only a hit on another matter brought: 「小橙子的
   钢琴课…」 for 「我的吉他课几点开始？」) is left out, whichever round found it, and logged
   (``unconcerned``); so is, on a question for what is so that no constraint could touch
   (「小橙子周六几点上钢琴课？」「老婆周一还练瑜伽吗？」), a constraint it does not ask about
   (no content word in common once whom it is about is left out) and no cue of it matched
   (``unneeded``). The related group carries at most ``related_limit`` lines (what a slot,
   schedule or cue search found first, then the best scores; the rest logged as ``beyond``):
   every line is prompt the model reads before its first word.
6. The block says what memory does not hold: a personal question with nothing recalled gets the
   "no memory about this" marker, a looked-up request with no constraint in scope says so.
   A question for a household fact also gets its ``Grounds`` — what memory holds about whoever
   it is about — against which the turn checks each spoken sentence
   (``server.understanding.grounding``: a name, place or number memory does not hold is not said).
7. The injected text and each memory's group are logged.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import structlog

from config.settings import MemorySettings
from memory import entities, slot_kinds, terms, utterance_kinds
from memory.schema import Memory, MemoryClass, PersonId
from memory.store import Hit, MemoryStore, Search, search_async
from memory.utterance_kinds import KindReading, UtteranceKind
from providers.embedder import Embedder, Vector, embed_async
from server.memory import applies, household_read
from server.memory.read_result import Group, ReadResult, Recalled, Why
from server.memory.render import describe, render_block
from server.tools import Sharing, ToolContext
from server.understanding import knowledge, lookup
from server.understanding.grounding import Grounds, memory_lacks, names_a_held_topic
from server.understanding.question import Question
from server.understanding.words import places_in
from server.understanding.words import warm as warm_words

log = structlog.get_logger(__name__)
EXPIRY_SLACK = 4  # extra direct hits fetched so that a few expired ones cost no round trip
PROMINENCE_PAGE = 6  # hits a page needs before the closest one's standing out is read from it
LEXICAL_TERMS = 2  # content terms a lexical hit shares with an unanchored question (LoCoMo dev)
LEXICAL_TERMS_ANCHORED = 1
# an unanchored question asks about one thing: the closest memory sharing its topic word is
# taken, not every one (on LoCoMo's long transcripts every word is in many lines)
TOPIC_HITS = 1
# how sure the utterance-kind classifier must be before a turn reads no memory at all
QUIET_CONFIDENCE = 0.8
Names = Callable[[PersonId], Sequence[str]]  # a person's household names, known now
# the searches that find a constraint by what the request means (not the lookup's scan of all)
MEANT = frozenset(("direct", "lexical", "cue"))
SAFETY_SCAN = 20  # the lookup reads this many of the person's constraints (check_safety's cap)


@dataclass
class _Draft:
    """A recall under way: the groups and verdicts the rounds have reached so far
    (``ReadResult`` when done)."""

    question: str
    person: PersonId
    safety: list[Recalled] = field(default_factory=list)
    related: list[Recalled] = field(default_factory=list)
    block: str = ""
    looked: bool = False
    applies: list[Memory] = field(default_factory=list)
    grounds: Grounds | None = None
    unconcerned: list[Memory] = field(default_factory=list)
    unneeded: list[Memory] = field(default_factory=list)
    beyond: list[Recalled] = field(default_factory=list)
    kind: KindReading | None = None
    round_trips: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    understood: Question | None = None

    def done(self) -> ReadResult:
        return ReadResult(
            self.question, self.person, tuple(self.safety), tuple(self.related), self.block,
            self.looked, tuple(self.applies), self.grounds, tuple(self.unconcerned),
            tuple(self.unneeded), tuple(self.beyond), self.kind, self.round_trips,
            self.timings_ms, self.understood,
        )  # fmt: skip


@dataclass
class _Reading:
    """One recall under way: what its question asks of memory (read once, before round 1) and
    what the rounds have found so far."""

    understood: Question  # the question, read once (understanding.question)
    now: float
    result: _Draft
    covered: bool  # …or names only something a constraint family covers (understanding.knowledge)
    cues: bool  # the person's cues are searched
    asked: tuple[str, ...]  # the kinds of fact asked (memory.slot_kinds)
    at: tuple[str, ...]  # the times a plan names (memory.when)
    found: dict[str, Recalled] = field(default_factory=dict)
    targeted: set[str] = field(default_factory=set)  # by a slot, schedule or cue search
    again: bool = False  # round 2 repeats the direct search (a page of expired hits)
    cued: dict[str, Hit] = field(default_factory=dict)  # the memories cues point at
    concerned: list[str] = field(default_factory=list)  # whom the question is about
    nearest: list[Hit] = field(default_factory=list)  # round 1's live direct hits, best first
    named: bool = False  # round 1 searched the household names the question says

    @property
    def question(self) -> str:
        return self.understood.text

    @property
    def vector(self) -> Vector:
        assert self.understood.vector is not None  # embedded before round 1
        return self.understood.vector

    @property
    def relations(self) -> list[str]:
        return list(self.understood.relations)

    @property
    def anchored(self) -> bool:  # first person, a relation or a name (memory.entities)
        return self.understood.anchored

    @property
    def touches(self) -> bool:  # the request touches a safety topic (understanding.lookup)
        return self.understood.touches


class ReadPath:
    def __init__(
        self, embedder: Embedder, store: MemoryStore, settings: MemorySettings,
        embedded_llm: bool = True, names: Names | None = None,
    ) -> None:  # fmt: skip
        self.embedder = embedder
        self.store = store
        self.settings = settings
        self.embedded_llm = embedded_llm  # the related budget (``related_limit: auto``)
        # the household's names known now, never awaited (server.memory.household): a name
        # the question says is searched for in round 1, before any hit has named it
        self.names = names
        self._shared: dict[str, ReadPath] = {}  # other stores of a household, by owner
        warm_words()  # the place names of unanchored questions: jieba's dictionary, once

    async def recall(self, person: PersonId, question: str, now: float | None = None) -> ReadResult:
        now = time.time() if now is None else now
        result = _Draft(question, person)
        clock = _Stopwatch(result.timings_ms)
        [vector] = await embed_async(self.embedder, [question])
        result.kind = utterance_kinds.classify(vector, self.embedder.name, question)
        result.understood = Question(question, now, vector, result.kind)
        clock.lap("embed")
        reading, searches = self._first_round(result.understood, result)
        first = await search_async(self.store, person, searches, now)
        result.round_trips += 1
        self._take_first_round(reading, searches, first)
        clock.lap("round1")
        second = self._second_round(reading)
        if second:
            hits = await search_async(self.store, person, second, now)
            result.round_trips += 1
            self._take_second_round(reading, hits)
        clock.lap("round2")
        ordered = self._in_scope(reading)
        if all(r.why == "lookup" for r in ordered):  # nothing found for the question itself
            have = {r.memory.key for r in ordered}
            ordered += [r for r in self._nearest(reading) if r.memory.key not in have]
        self._within_prompt(reading, ordered)
        if result.safety and self.settings.say_constraints:
            self._said_first(reading, ordered)
        result.block = render_block(
            [r.memory for r in result.safety],
            [r.memory for r in result.related],
            now,
            looked=result.looked,
            personal=reading.anchored,
            inline_rules=self.settings.inline_rules,
            lacking=result.grounds is not None and result.grounds.lacking,
        )
        clock.lap("render")
        result.timings_ms["total"] = sum(result.timings_ms.values())
        return result.done()

    def _first_round(self, understood: Question, result: _Draft) -> tuple[_Reading, list[Search]]:
        """What the question asks of memory, and round 1's searches for it (one batch)."""
        question, vector, relations = understood.text, understood.vector, understood.relations
        assert vector is not None  # embedded first
        s = self.settings
        # the whole page, whatever its scores: how far the closest stands out is read from it
        searches = [Search(vector, s.limit + EXPIRY_SLACK, None, exclude_expired=False)]
        if s.lexical_limit:
            searches.append(Search(vector, s.lexical_limit, s.lexical_threshold, text=question))
        # a request naming only something a constraint family covers (「我们去坐摩天轮吧」)
        # is looked up too, and keeps only the constraints of such a family
        touches = understood.touches
        covered = not touches and understood.names_covered
        result.looked = s.safety_lookup_limit > 0 and (touches or covered)
        if result.looked:  # Hearth looks before the model answers: same round trip
            searches.append(Search(vector, SAFETY_SCAN, None, cls=MemoryClass.SAFETY.value))
        # what the write path said the memories matter for — never for a question about the
        # world (「长城有多长？」): no situation of the household's
        cues = s.cue_limit > 0 and (
            understood.anchored or result.looked or not understood.informational
        )
        asked = understood.slots if s.slot_limit else ()
        if asked:  # 「我是做什么工作的？」: the memories stating it, whatever their words
            searches.append(Search(vector, s.slot_limit, None, slots=asked))
        at = understood.times if s.schedule_limit else ()
        if at:  # 「周四晚上能约朋友吃饭吗？」: what the household already has then
            searches.append(Search(vector, s.schedule_limit, None, when=at))
        if cues:
            searches.append(
                Search(vector, s.cue_limit, s.cue_threshold, cues=True, exclude_expired=False)
            )
        if relations and s.entity_limit:
            # "the family" spans several people: give every member a chance
            limit = s.entity_limit * (2 if len(relations) > 2 else 1)
            searches.append(Search(vector, limit, s.relation_threshold, relations))
        # 「孙玉芳搬东西有啥要注意的」: no hit names 玉芳 unless her memories are asked for — the
        # name round of round 2, a round early (its hits are "entity" hits, as there)
        named = self._names_said(result.person, question, relations) if s.entity_limit else ()
        if named:
            searches.append(Search(vector, s.entity_limit, s.relation_threshold, named))
        assert understood.now is not None
        reading = _Reading(understood, understood.now, result, covered, cues, asked, at)
        reading.named = bool(named)
        return reading, searches

    def _names_said(
        self, person: PersonId, question: str, relations: Sequence[str]
    ) -> tuple[str, ...]:
        """The household's names (known before this turn) the question says."""
        known = self.names(person) if self.names is not None else ()
        return tuple(
            name for name in known
            if name not in relations and name not in entities.RELATIONS
            and entities.said_itself(question, name)
        )  # fmt: skip

    def _take_first_round(
        self, reading: _Reading, searches: list[Search], first: list[list[Hit]]
    ) -> None:
        question, now, found, s = reading.question, reading.now, reading.found, self.settings
        live = [h for h in first[0] if not h.memory.expired(now)]
        # a full page with too few live hits: more may lie below it → ask again in round 2
        reading.again = len(first[0]) == searches[0].limit and len(live) < s.limit
        reading.nearest = live
        direct = self._direct(reading.understood, live[: s.limit], _standing_out(live))
        _collect(found, direct, "direct", now)
        rounds = iter(first[1:])
        if s.lexical_limit:
            lexical = self._lexical(reading.understood, next(rounds))
            _collect(found, lexical, "lexical", now)
        if reading.result.looked:
            self._take_lookup(reading, next(rounds))
        if reading.asked:
            about_whom = _about_whom_asked(
                question, reading.anchored, reading.relations, next(rounds)
            )
            _collect(found, about_whom, "slot", now)
            reading.targeted |= {h.memory.key for h in about_whom}
        if reading.at:
            scope = reading.understood.scope
            then = [h for h in next(rounds) if scope.covers(question, h.memory)]
            _collect(found, then, "schedule", now)
            reading.targeted |= {h.memory.key for h in then}
        reading.cued = _cued(next(rounds), found, s.cue_limit) if reading.cues else {}
        reading.targeted |= reading.cued.keys()
        rest = list(rounds)
        by_name = rest.pop() if reading.named else []
        for about in rest:
            _collect(found, about, "relation", now)
        _collect(found, by_name, "entity", now)

    def _take_lookup(self, reading: _Reading, hits: list[Hit]) -> None:
        """The safety lookup's scan: the constraints in scope of the request."""
        question, now, result = reading.question, reading.now, reading.result
        held = {h.memory.key: h for h in hits if not h.memory.expired(now)}
        understood = reading.understood
        # a request for people outside the household (「给同事买生日蛋糕」) reads none — unless it
        # names a member too (「Leo 同学过生日…让他吃一小块」)
        outsiders = understood.outsiders and not any(
            entities.mentions(question, h.memory.subject, h.memory.entities) for h in held.values()
        )
        chosen = [] if outsiders else lookup.within(
            question, understood.scope, understood.topics, [h.memory for h in held.values()],
            self.settings.safety_lookup_limit,
        )  # fmt: skip
        if reading.covered:
            chosen = [m for m in chosen if knowledge.covers(m.text, question)]
            result.looked = bool(chosen)  # none covers it: no lookup to speak of
        _collect(reading.found, [held[m.key] for m in chosen], "lookup", now)

    def _second_round(self, reading: _Reading) -> list[Search]:
        """Round 2's searches: the entities round 1 linked, a repeated direct search, the cued."""
        question, found, vector, s = reading.question, reading.found, reading.vector, self.settings
        relations, asked = reading.relations, reading.asked
        second: list[Search] = []
        # a word match, a clash in time or a constraint the lookup read as a safety net is no
        # sign the question is about whoever it names
        starters = [r for r in found.values() if r.why not in ("lexical", "schedule", "lookup")]
        names = _names_from(starters, relations)
        linked = _linked(found.values(), question)
        names += [w for w in linked if w not in names + relations]
        # whoever the question is about, by the names of the hits about them (「女儿叫小橙子」
        # for 「我女儿…」) or its own: only their constraints join from round 2 — a name in a
        # hit on another matter (「小橙子的钢琴课…」 for 「我的吉他课…」) brings no allergy
        scope = _scope(question, list(found.values()), linked)
        concerned = _names_from([r for r in starters if scope.covers(question, r.memory)], [])
        concerned += linked
        reading.concerned = concerned
        if names and s.entity_limit:
            second.append(Search(vector, s.entity_limit, None, tuple(names)))
        if concerned and s.entity_limit:
            # the constraints of whoever the question is about come first, however many other
            # memories about them rank higher (a child's allergy among her classes and toys)
            safety = MemoryClass.SAFETY.value
            second.append(Search(vector, s.entity_limit, None, tuple(concerned), cls=safety))
            if asked:  # …and so does the kind of fact asked (「我女儿最着迷什么」: her likes)
                second.append(Search(vector, s.entity_limit, None, tuple(concerned), slots=asked))
        if reading.again:
            second.append(Search(vector, s.limit + EXPIRY_SLACK, None))
        if reading.cued:  # the memories cues point at, read by id
            second.append(Search(vector, len(reading.cued), None, ids=tuple(reading.cued)))
        return second

    def _take_second_round(self, reading: _Reading, hits: list[list[Hit]]) -> None:
        now, found = reading.now, reading.found
        if reading.cued:
            _collect_cued(found, reading.understood, hits.pop(), reading.cued, now)
        if reading.again:
            page = hits.pop()
            again = self._direct(reading.understood, page, _standing_out(page))
            _collect(found, again, "direct", now)
        for about in hits:
            _collect(found, about, "entity", now)

    @staticmethod
    def _in_scope(reading: _Reading) -> list[Recalled]:
        """Everything found, best first, without the constraints this turn has no concern with."""
        question, result = reading.question, reading.result
        ordered = sorted(reading.found.values(), key=lambda r: r.score, reverse=True)
        # a constraint of someone the question does not concern is no concern of this turn,
        # whichever round brought it (「我头疼，能吃片布洛芬吗？」 and 爸爸's gout); whom it
        # concerns, again with the name statements round 2 brought (「女儿叫小橙子」 for 橙橙)
        scope = _scope(question, ordered, _linked(ordered, question))
        shared_home = _shares_the_home(reading.understood, scope)
        result.unconcerned = [
            r.memory for r in ordered
            if not _concerns(question, scope, reading.concerned, r.memory)
            and not (shared_home and _a_pets_concern(r, question))
        ]  # fmt: skip
        # …and on a question for what is so that no constraint could touch (「小橙子周六几点上
        # 钢琴课？」「老婆周一还练瑜伽吗？」), one the question does not ask about: the local
        # model said the peanut allergy and stopped, the class time never said
        understood = reading.understood
        # covered: the request names something one of these constraints covers — not only
        # something of some family (「小橙子周六几点上钢琴课？」: 橙子, a name's part)
        covered = reading.covered and any(
            knowledge.covers(r.memory.text, question) for r in ordered if r.group == "safety"
        )
        if understood.state and not (reading.touches or covered or understood.caution):
            result.unneeded = [
                r.memory for r in ordered
                if r.group == "safety" and r.why != "cue" and not _asked_about(understood, r.memory)
            ]  # fmt: skip
        left_out = {m.key for m in (*result.unconcerned, *result.unneeded)}
        return [r for r in ordered if r.memory.key not in left_out]

    def _nearest(self, reading: _Reading) -> list[Recalled]:
        """A question about memory, not anchored in the person, for which nothing was found but
        the safety lookup's constraints (「塞进耳朵里量体温的那个东西放哪了」 for a thermometer
        stored in English, 「后天雯雯有什么事」, or 「测血糖的那个东西在哪」 where 血糖
        brought only a diabetes rule): the person asked memory, so the nearest few by meaning
        that reach ``question_nearest_floor`` are read, and the model judges (the grounds
        still tell it when none holds the answer)."""
        s, kind = self.settings, reading.result.kind
        if kind is None or kind.kind is not UtteranceKind.MEMORY_QUESTION:
            return []
        # 「杭州有多少人口？」 asks no memory of the home there; a question anchored in the person
        # (「我最喜欢哪个球星」) had the lower threshold already, and a nearest line sharing only
        # 「我喜欢」 is no answer to it
        if reading.understood.of_the_world or reading.understood.anchored:
            return []
        near = [h for h in reading.nearest if h.score >= s.question_nearest_floor]
        return [
            Recalled(h.memory, h.score, "nearest", _group(h.memory))
            for h in near[: s.question_nearest]
        ]

    def _within_prompt(self, reading: _Reading, ordered: list[Recalled]) -> None:
        """The groups the block shows (related lines within budget), and the turn's grounds."""
        now, result = reading.now, reading.result
        result.safety = [r for r in ordered if r.group == "safety"]
        related = [r for r in ordered if r.group == "related"]
        budget = self.settings.related_budget(self.embedded_llm)
        result.related = _within_budget(related, budget, reading.targeted)
        result.beyond = [r for r in related if r not in result.related]
        # whether memory holds the answer is judged on what the model will read — and when
        # only a line past the budget holds it, the budget gives way: the block must not say
        # 「这些记忆里没有这个问题的答案」 of an answer memory has
        shown = [r.memory for r in ordered if r.group == "safety" or r in result.related]
        result.grounds = _grounds(reading.understood, shown, now)
        if result.beyond and result.grounds is not None and result.grounds.lacking:
            whole = _grounds(reading.understood, [r.memory for r in ordered], now)
            if whole is not None and not whole.lacking:
                result.related, result.beyond, result.grounds = related, [], whole
        # a plan the schedule search found at the time the question names is what it asks
        # (「下礼拜四我有啥安排」 and 「下周四下午去…拔智齿」), whatever its words
        planned = any(r.why == "schedule" for r in result.related)
        if planned and result.grounds is not None and result.grounds.lacking:
            result.grounds = replace(result.grounds, lacking=False)

    @staticmethod
    def _said_first(reading: _Reading, ordered: list[Recalled]) -> None:
        """The constraints Hearth says first (server.memory.applies), whatever brought them into
        the safety group."""
        question, result = reading.question, reading.result
        said = [(r.memory, r.cue) for r in result.safety]
        linked = _linked(ordered, question)
        result.applies = applies.nearest_of_each(
            applies.applying(reading.understood, said, linked),
            {r.memory.key: r.score for r in result.safety},
        )
        # a question for a household fact (「豆豆的狗粮一袋能吃几天？」) is answered, not warned;
        # a constraint the knowledge table has judged is not the closest (布洛芬 is not of a
        # penicillin allergy's family), but one of a family it does not know may be (三鲜馅 for
        # a shrimp allergy: the table knows 饺子, not what a 三鲜 filling holds)
        if not result.applies and result.grounds is None and _asks_or_plans(result.kind):
            by_meaning = [(r.memory, r.score) for r in result.safety if r.why in MEANT]
            # judged only when the request names what some family covers (read once, cached)
            judged = {
                m.key for m, _ in by_meaning if knowledge.rules_out(m.text, question)
            } if reading.understood.names_covered else set()  # fmt: skip
            result.applies = applies.closest(reading.understood, by_meaning, linked, judged)
        understood = reading.understood
        asked = result.kind is not None and result.kind.kind is UtteranceKind.MEMORY_QUESTION
        if asked and understood.state and not understood.caution:
            # a question for what is so (「娭毑的血糖仪放哪了」「公公的华法林现在一天吃几片」) is
            # answered from memory, not warned: its constraints stay in the group for the model
            result.applies = []
        if result.kind is not None and result.kind.kind is UtteranceKind.STATEMENT:
            # the person telling the constraint is not reminded of it
            result.applies = [m for m in result.applies if not applies.restated(question, m)]

    @staticmethod
    def _lexical(understood: Question, hits: list[Hit]) -> list[Hit]:
        """A word match counts when it is more than chance: the question names what the memory
        is about (林芳 in 「我老婆叫林芳」), or it shares one content term with a question
        anchored in the household, two otherwise (「北京到上海多远」 shares only 北京 with
        「住在北京朝阳区」)."""
        question, asked = understood.text, understood.terms
        needed = LEXICAL_TERMS_ANCHORED if understood.anchored else LEXICAL_TERMS
        return [
            h
            for h in hits
            if entities.mentions(question, h.memory.subject, h.memory.entities)
            or len(asked & terms.terms(h.memory.text)) >= needed
        ]

    def _direct(self, understood: Question, hits: list[Hit], prominence: float | None) -> list[Hit]:
        """The direct hits recalled: the closest when it stands out from the person's other
        memories (``prominence``: relative to this store and this question, not a fixed cut)
        and the question is not about the world, then each above ``threshold`` that
        ``_accept`` or ``_Topic`` keeps."""
        s, question, anchored = self.settings, understood.text, understood.anchored
        topic = _Topic(question, s.topic_terms)
        accepted, by_topic = [], 0
        for rank, hit in enumerate(hits):  # best first
            if (
                rank == 0 and s.prominence and prominence is not None
                and prominence >= s.prominence and hit.score >= s.prominence_floor
                and not understood.of_the_world  # last: it may cut the question into words
            ):  # fmt: skip
                log.debug("memory.prominent", key=hit.memory.key, score=round(hit.score, 3),
                          prominence=round(prominence, 3))  # fmt: skip
                accepted.append(hit)
                continue
            if hit.score < s.threshold:
                continue
            verdict = self._accept(question, anchored, hit)
            if verdict is None and by_topic < TOPIC_HITS:
                verdict = topic.shared_with(hit.memory)
                by_topic += verdict
            if verdict:
                accepted.append(hit)
        return accepted

    def _accept(self, question: str, anchored: bool, hit: Hit) -> bool | None:
        """A plain similarity cut cannot keep noise turns clean *and* recall what matters: a
        direct hit needs ``strict_threshold``, or ``threshold`` when the question is anchored in
        the household (first person, a relation, or the memory's own subject/name). None: an
        unanchored question below ``strict_threshold``, decided by ``_Topic``."""
        if hit.score >= self.settings.strict_threshold:
            return True
        memory = hit.memory
        if anchored or entities.mentions(question, memory.subject, memory.entities):
            return True
        return None

    async def read(self, utterance: str, context: ToolContext) -> ReadResult:
        """A device turn's read (``server.device.turn.MemoryReader``): recall, log what was
        injected, record the result in the turn's trace, return it."""
        if context.household:
            recall = await self._with_household(utterance, context)
        else:
            recall = await self.recall(context.person, utterance)
        if quiet_kind(recall.kind):
            # a command to the device or chit-chat: nothing of memory is read out for it (the
            # trace and the log say so: what was found is not what was injected)
            log.info("readpath.quiet_kind", question=utterance,
                     kind=recall.kind.as_json() if recall.kind else None,
                     found=[r.memory.text for r in recall.safety + recall.related])  # fmt: skip
            recall = recall.quieted()
        _log_injected(recall, context.person)
        recall.record(context.trace)
        return recall

    async def _with_household(self, utterance: str, context: ToolContext) -> ReadResult:
        """A member's turn: their own recall and the household's stores', concurrently, merged
        (``server.memory.household_read``)."""
        now = time.time()
        own, *shared = await asyncio.gather(
            self.recall(context.person, utterance, now),
            *(self._sharing(s).recall(s.person, utterance, now) for s in context.household),
        )
        log.info("readpath.household", person=context.person,
                 shared=[s.person for s in context.household])  # fmt: skip
        return household_read.merged(
            own, list(zip(context.household, shared, strict=True)), now,
            self.settings.inline_rules,
        )  # fmt: skip

    def _sharing(self, sharing: Sharing) -> ReadPath:
        """The read path over another store of the household, in its owner's voice."""
        found = self._shared.get(sharing.name)
        if found is None:
            owned = household_read.OwnedStore(self.store, sharing.name)
            found = ReadPath(self.embedder, owned, self.settings, self.embedded_llm, self.names)
            self._shared[sharing.name] = found
        return found

    async def prompt_block(self, utterance: str, context: ToolContext) -> str | None:
        """The block alone (``read``'s, recorded in the trace the same way)."""
        return (await self.read(utterance, context)).block or None


def _log_injected(recall: ReadResult, person: PersonId) -> None:
    log.info(
        "readpath.injected",
        person=person,
        question=recall.question,
        safety=[r.memory.text for r in recall.safety],
        related=[r.memory.text for r in recall.related],
        why={r.memory.text: r.why for r in recall.safety + recall.related},
        cues={r.memory.text: r.cue for r in recall.safety + recall.related if r.cue},
        said_first=[m.text for m in recall.applies],
        unconcerned=[m.text for m in recall.unconcerned],
        unneeded=[m.text for m in recall.unneeded],
        beyond=[r.memory.text for r in recall.beyond],
        # a fact question memory holds no answer to, and the lines that verdict read
        memory_lacks=recall.grounds.about if recall.grounds and recall.grounds.lacking else None,
        ms=round(recall.timings_ms["total"], 2),
        block=recall.block,
    )


def _asks_or_plans(kind: KindReading | None) -> bool:
    """A request, or a statement announcing an action to come (「礼拜天开车拉我妈去爬山」, 「切一片
    给鹦鹉」: the acts head, ``KindReading.plans``); unknown counts as one. Not a statement of a
    fact or an event, a question about memory (its answer is the constraint itself), a command
    or chit-chat. A statement of a fact hears only a constraint that plainly applies: said for
    the closest by meaning, 「米粒昨天冒出第一颗小牙了」 heard her honey rule, 「蕾蕾的糖耐改到周四
    上午」 her diet (a statement that does concern one, 「外婆给糯米织了身羊毛小衣裤」 and an
    eczema rule, is left to the knowledge tables)."""
    return kind is None or kind.plans


def quiet_kind(kind: KindReading | None) -> bool:
    """An utterance memory has nothing to add to: a command to the device or chit-chat, as the
    classifier reads it with at least ``QUIET_CONFIDENCE``."""
    return (
        kind is not None
        and kind.kind in (UtteranceKind.COMMAND, UtteranceKind.CHITCHAT)
        and kind.confidence >= QUIET_CONFIDENCE
    )


class _Topic:
    """Whether an unanchored question shares what a memory is about: a topic word that is not a
    when-word, a name or a place (「搬家搬到哪了？」 and 「…从西湖区搬到了滨江区」 share 搬到;
    「杭州有多少人口？」 shares only the city with 「我们家住在杭州」), and never weather talk.
    The question's place names (jieba) are read only when a word in common is found."""

    def __init__(self, question: str, needed: int) -> None:
        self.question = question
        self.needed = 0 if terms.WEATHER.search(question) else needed
        self._places: list[str] | None = None

    def shared_with(self, memory: Memory) -> bool:
        if not self.needed:
            return False
        if terms.shared_topic(self.question, memory.text, memory.entities) < self.needed:
            return False
        if self._places is None:
            self._places = places_in(self.question)
        names = [*memory.entities, *self._places]
        return terms.shared_topic(self.question, memory.text, names) >= self.needed


def _who(memory: Memory) -> list[str]:
    """Whom a memory is about, by name or relation word (the speaker's own words left out)."""
    about = (memory.subject, *memory.entities)
    return [word for word in about if word and word not in entities.SELF_WORDS]


def _grounds(understood: Question, recalled: list[Memory], now: float) -> Grounds | None:
    """For a question asking a fact about the household (「我儿子叫什么」「豆豆几岁」): the
    recalled memories about whoever it is about (``lookup.Scope``: 「我姐姐住在哪」 is not
    answered from a memory about the mother) as the block shows them (with their dates and who
    said them), and the speakers' names the block carries."""
    if not understood.fact:
        return None
    question, anchored = understood.text, understood.anchored
    naming = [m for m in recalled if entities.mentions(question, m.subject, m.entities)]
    named = bool(naming)
    if anchored and not named:  # 「我想知道长城有多少年历史」 asks about the world
        anchored = understood.anchored_beyond_asking
    if not anchored and not named and not names_a_held_topic(question, [m.text for m in recalled]):
        return None
    scope = understood.scope
    # the names of whoever the question names by relation (「女儿叫小橙子」: 「小橙子特别喜欢恐龙」
    # is about 「我女儿」 too)
    relations = set(scope.relations)
    aliases = {
        word
        for m in recalled
        if relations & {m.subject, *m.entities} and "name" in slot_kinds.kinds_of(m.text)
        for word in _who(m)
    }
    about = [
        m for m in recalled
        if scope.covers(question, m) or aliases & {m.subject, *m.entities}
    ]  # fmt: skip
    texts = [describe(m, now) for m in about]
    texts += sorted({m.speaker for m in recalled if m.speaker and m.speaker != "me"})
    # who it is about is no thing it asks for: their names, relation words and subjects
    names = {*understood.relations, *entities.SELF_WORDS, "我家", "我们家", "咱家"}
    names |= {w for m in recalled for w in (m.subject, *m.entities) if w}
    judged = about
    if named and scope.everyone and not understood.anchored:
        # 「豆豆上次打疫苗是什么时候？」 names 豆豆 and no one by relation: whether memory holds
        # the answer is judged on what is about 豆豆 (and whoever a line naming him is about:
        # 林芳 → 老婆), not on 小橙子's vaccine
        who = {word for m in naming for word in _who(m)}
        judged = [m for m in about if who & {m.subject, *m.entities}]
    held = tuple(m.text for m in judged)
    lacking = memory_lacks(understood, held, names)
    return Grounds(question, tuple(texts), lacking, held, tuple(sorted(names)))


def _about_whom_asked(
    question: str, anchored: bool, relations: list[str], hits: list[Hit]
) -> list[Hit]:
    """Slot hits about whoever the question asks about, and facts, not plans (「妈妈要来杭州住一
    周」 is no one's home): the one it names (「小橙子几岁了」), its relation words (「我老婆在哪
    上班」 is not answered with the speaker's job), or else — in a question anchored in the
    household (我, 我家, 咱家) — the speaker. A question about nobody of the household
    (「你叫什么名字？」) takes none. ``relations``: the question's (``entities.relations_in``)."""
    kept = []
    for hit in hits:
        memory = hit.memory
        if memory.cls is MemoryClass.EVENT:
            continue
        about = [w for w in (memory.subject, *memory.entities) if w]
        if entities.mentions(question, memory.subject, memory.entities):
            kept.append(hit)
        elif relations:
            if any(word in relations for word in about):
                kept.append(hit)
        elif anchored and all(word in entities.SELF_WORDS for word in about):
            kept.append(hit)
    return kept


def _standing_out(page: list[Hit]) -> float | None:
    """How far the closest memory stands out from the others of the page: its cosine minus the
    median of the rest. None on a page too short to tell (a store of a few memories)."""
    if len(page) < PROMINENCE_PAGE:
        return None
    return page[0].score - float(statistics.median(h.score for h in page[1:]))


def _collect(found: dict[str, Recalled], hits: list[Hit], why: Why, now: float) -> None:
    for hit in hits:
        memory = hit.memory
        if memory.expired(now):
            continue
        known = found.get(memory.key)
        if known is None:
            found[memory.key] = Recalled(memory, hit.score, why, _group(memory))
        elif known.why == "lexical" and why in ("relation", "slot", "schedule"):
            # a word match that is also about whom the question asks (「女儿叫小橙子」 for
            # 「我女儿…」): its names start the name round like any such hit
            found[memory.key] = replace(known, why=why)


def _group(memory: Memory) -> Group:
    """Safety-class memories are promoted into the safety group, whatever round found them."""
    return "safety" if memory.cls is MemoryClass.SAFETY else "related"


def _within_budget(related: list[Recalled], limit: int, targeted: set[str]) -> list[Recalled]:
    """The related memories the prompt carries (``related_limit``, 0: all), in score order:
    the ``targeted`` ones first — found by a search for the kind of fact asked, the time named
    or a cue, not by likeness alone (whichever round brought them first) — then the best
    scores. Every line is read by the model before its first word (~15 tokens, ~140 ms on two
    cores); the seventh fact about 老婆 does not help answer her birthday. A schedule hit scores
    low against 「周六上午全家去郊游怎么样？」 and is the one that matters."""
    if not limit or len(related) <= limit:
        return related
    first = sorted(related, key=lambda r: r.memory.key not in targeted)  # stable: by score
    kept = {r.memory.key for r in first[:limit]}
    return [r for r in related if r.memory.key in kept]


def _cued(hits: list[Hit], found: dict[str, Recalled], limit: int) -> dict[str, Hit]:
    """Cue hits by the memory they point at (the best cue each), memories not yet recalled, at
    most ``limit`` (a cue made for several memories points at each of them)."""
    cued: dict[str, Hit] = {}
    for hit in hits:
        key = hit.memory.key
        if key not in found and key not in cued and len(cued) < limit:
            cued[key] = hit
    return cued


def _collect_cued(
    found: dict[str, Recalled], understood: Question, memories: list[Hit], cued: dict[str, Hit],
    now: float,
) -> None:  # fmt: skip
    """The memories cues pointed at, scored by their cue. A cue made for an older text of its
    memory is ignored (the memory waits for new cues); a constraint about someone the request
    does not concern stays out (``lookup.Scope``: 「给我妈买啤酒」 never brings 爸爸's gout)."""
    question, scope = understood.text, understood.scope
    for hit in memories:
        memory, cue = hit.memory, cued.get(hit.memory.key)
        if cue is None or memory.text != cue.memory.text or memory.expired(now):
            continue
        if memory.key in found or not scope.covers(question, memory):
            continue
        found[memory.key] = Recalled(memory, cue.score, "cue", _group(memory), cue.cue)


def _asked_about(understood: Question, memory: Memory) -> bool:
    """Does ``question`` ask about what ``memory`` says, not only about whom it is about — a
    content word in common once names, relation words and 我 are left out of both (「年糕只能
    吃什么猫粮？」 and 「猫肾不好，只能吃处方猫粮」: 只能, 猫粮; not 「小橙子周六几点上钢琴课？」
    and 「小橙子对花生过敏」)?"""
    people = {*_who(memory), *understood.relations, *entities.SELF_WORDS}
    asked, said = understood.text, memory.text
    for word in sorted(people, key=len, reverse=True):
        asked, said = asked.replace(word, "|"), said.replace(word, "|")
    return terms.shared_topic(asked, said) > 0


def _concerns(question: str, scope: lookup.Scope, concerned: list[str], memory: Memory) -> bool:
    """Is a recalled memory for this turn? A constraint only when it is about whoever the
    question concerns (``lookup.Scope``: the speaker, a relation it names, everyone when it
    names nobody or all of us), or about one of the ``concerned`` names."""
    if memory.cls is not MemoryClass.SAFETY or scope.covers(question, memory):
        return True
    return any(word in concerned for word in _who(memory)) or _says_its_opening(question, memory)


def _says_its_opening(question: str, memory: Memory) -> bool:
    """Does the question name whom a constraint is about by the word its text opens with?
    The write path names a constraint's subject by relation (老公, 我爸) while the person called
    them by a nickname the name readers do not take for one (「强子有痛风…」, 「老爷子有房颤…」):
    a request saying 强子 or 老爷子 concerns it."""
    opening = entities.opening_word(memory.text)
    return opening is not None and entities.said_itself(question, opening)


def _a_pets_concern(recalled: Recalled, question: str) -> bool:
    """A pet's memory the request brought by what it means, or one the lookup's scan read
    whose knowledge family covers what the request names (a non-stick pan left on the fire
    for a bird: 「新买了个不粘锅…空锅大火烧几分钟」)."""
    m = recalled.memory
    if not (entities.about_a_pet(m.text, m.subject, m.entities) or knowledge.of_an_animal(m.text)):
        return False
    return recalled.why in MEANT or knowledge.covers(m.text, question)


def _shares_the_home(understood: Question, scope: lookup.Scope) -> bool:
    """Is the request about the home the pets share rather than about someone's plate? A pet's
    constraint the request means (a lily on the table, a non-stick pan left on the fire) is its
    concern when it names no other member and is not about what the speaker eats."""
    if scope.relations and not any(w in entities.PETS for w in scope.relations):
        return False
    return not understood.about_eating or "pet" in understood.topics


def _names_from(recalled: Iterable[Recalled], relations: list[str]) -> list[str]:
    names: list[str] = []
    for item in recalled:
        memory = item.memory
        candidates = entities.names_in(memory.text)
        if memory.subject and memory.subject not in entities.RELATIONS:
            candidates.append(memory.subject)
        candidates += [e for e in memory.entities if e not in entities.RELATIONS]
        for name in candidates:
            if name not in names and name not in relations and name not in ("我", "用户"):
                names.append(name)
    return names


def _scope(question: str, recalled: list[Recalled], linked: list[str]) -> lookup.Scope:
    """Whose constraints the question can touch, knowing the household names it says from
    the recalled memories, and whom those names are (``linked``: ``_linked`` of the same
    memories, then ``_aliases``)."""
    named = _said_names(recalled, question)
    return lookup.scope_of(question, named, _aliases(recalled, [*named, *linked]))


def _said_names(recalled: Iterable[Recalled], question: str) -> list[str]:
    """The household names (not relation words) of recalled memories the question says."""
    said: list[str] = []
    for item in recalled:
        said += [
            word
            for word in entities.names_said(question, item.memory.subject, item.memory.entities)
            if word not in said
        ]
    return said


def _aliases(recalled: Iterable[Recalled], words: list[str]) -> list[str]:
    """``words`` and every other name and relation word the recalled name statements tie to
    them, hop by hop (「小橙子小名叫橙橙」, then 「女儿叫小橙子」: 橙橙 reaches 女儿)."""
    statements = [
        set(_who(r.memory)) for r in recalled if "name" in slot_kinds.kinds_of(r.memory.text)
    ]
    known = set(words)
    grew = True
    while grew:
        grew = False
        for who in statements:
            if who & known and not who <= known:
                known |= who
                grew = True
    return [*words, *sorted(known - set(words))]


def _linked(recalled: Iterable[Recalled], question: str) -> list[str]:
    """Relation words and other names of recalled memories about a name the question says."""
    linked: list[str] = []
    for item in recalled:
        memory = item.memory
        for word in entities.linked_to(question, memory.subject, memory.entities):
            if word not in linked:
                linked.append(word)
    return linked


class _Stopwatch:
    def __init__(self, into: dict[str, float]) -> None:
        self.into = into
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = (now - self.last) * 1000
        self.last = now
