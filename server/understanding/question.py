"""A question understood once (``Question``): what one utterance asks of memory — its relation
words, whether it is anchored in the household, whose constraints it can touch, the kinds of fact
and the times it asks for, whether it touches a safety topic, what kind of question it is — read
from its text once per turn, when first needed, and taken by the read path, the safety lookup,
the constraints said first and the reply checks instead of each reading the text again.

Each reading is the function that owns it (``memory.entities``, ``memory.slot_kinds``,
``memory.when``, ``server.understanding.lookup``, ``server.understanding.knowledge``,
``server.understanding.asking``); this value only keeps the answers. It sits below both the
memory and the device (``server.memory``, ``server.device``), which take it from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from memory import entities, slot_kinds, terms, when
from memory.utterance_kinds import KindReading, UtteranceKind
from providers.embedder import Vector
from server.understanding import answer_shapes, knowledge, lookup, words
from server.understanding.asking import (
    asks_about_the_household_state,
    asks_caution,
    asks_for_a_fact,
    asks_liking,
    without_asking,
)

# the present moment: a question for the time or day it is now is the clock's, not memory's
_NOW = re.compile(r"现在|今天|今儿|今日|此刻|这会儿?|眼下")
_MOMENT = frozenset(("clock", "day"))
_DEGREES = re.compile(r"零下|温度|多少度|几度|冷不冷|热不热")
_APPLIANCE = re.compile(r"空调|暖气片|热水器|水温|烤箱|冰箱|地暖|体温|发烧")
_WEATHER_EN = re.compile(r"\bweather\b|\btemperature\b|\bwill it rain\b", re.IGNORECASE)
# what a person does with food and medicine: the plate is theirs, not the home's
_EATING = re.compile(r"吃|喝|尝|嚼|啃|咽|服用|ate|eat|drink", re.IGNORECASE)
_NOW_EN = re.compile(
    r"\bwhat time is it\b|\bwhat(?:'s| is) the (?:time|date)\b|\bwhat day is (?:it|today)\b|"
    r"\btoday'?s date\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, eq=False)
class Question:
    """``text`` as said; ``now`` for the times it names (``memory.when``); ``vector`` and
    ``kind`` once the read path has embedded it (``memory.utterance_kinds``)."""

    text: str
    now: float | None = None
    vector: Vector | None = None
    kind: KindReading | None = None

    @cached_property
    def relations(self) -> tuple[str, ...]:
        """The relation words it is about, family words expanded (``entities.relations_in``)."""
        return tuple(entities.relations_in(self.text))

    @cached_property
    def anchored(self) -> bool:
        """About the household itself: 我, a relation (``entities.personally_anchored``)."""
        return entities.personally_anchored(self.text)

    @cached_property
    def anchored_beyond_asking(self) -> bool:
        """Anchored once the words that only ask are left out (「我想知道…」)."""
        return entities.personally_anchored(without_asking(self.text))

    @cached_property
    def of_the_world(self) -> bool:
        """About the world, not the home, however alike they read: it names a place and nothing
        of the household (「杭州有多少人口？」), or asks the weather or the present moment's
        time or day (「现在几点了」「今天星期几」)."""
        if self.anchored:
            return False
        if terms.WEATHER.search(self.text):
            return True
        if self.asks_the_moment:
            return True
        return bool(words.places_in(self.text))  # last: it cuts the text into words

    @cached_property
    def about_eating(self) -> bool:
        """It is about eating, drinking or taking something (吃, 喝, 尝, 服用 — "eat", "drink")."""
        return _EATING.search(self.text) is not None

    @cached_property
    def asks_the_weather(self) -> bool:
        """It asks the weather or the temperature (「外头这会儿零下多少度」「明天下雨吗」)."""
        if _APPLIANCE.search(self.text):  # 「空调调到几度」 is the air conditioner's
            return False
        return any(p.search(self.text) for p in (terms.WEATHER, _DEGREES, _WEATHER_EN))

    @cached_property
    def asks_the_moment(self) -> bool:
        """It asks the time or the day it is now (「现在几点了」「今天星期几」 — "what time is it"):
        the clock answers, not memory nor the model's guess."""
        if _NOW_EN.search(self.text):
            return True
        if _NOW.search(self.text) is None:
            return False
        return bool({s.name for s in answer_shapes.asked(self.text)} & _MOMENT)

    @cached_property
    def scope(self) -> lookup.Scope:
        """Whose constraints it can touch, from its own words (``lookup.scope_of``)."""
        return lookup.scope_of(self.text)

    @cached_property
    def outsiders(self) -> bool:
        """Only for people outside the household (``lookup.for_outsiders``)."""
        return lookup.for_outsiders(self.text)

    @cached_property
    def topics(self) -> frozenset[str]:
        """The safety topics it is about (``lookup.topics_of``)."""
        return lookup.topics_of(self.text)

    @cached_property
    def touches(self) -> bool:
        """It touches a safety topic (``lookup.touches_safety``)."""
        return lookup.touches_safety(self.text)

    @cached_property
    def names_covered(self) -> bool:
        """It names something a constraint family covers (``knowledge.names_covered``)."""
        return knowledge.names_covered(self.text)

    @cached_property
    def informational(self) -> bool:
        """A question about the world (``lookup.asks_for_information``)."""
        return lookup.asks_for_information(self.text)

    @cached_property
    def slots(self) -> tuple[str, ...]:
        """The kinds of fact it asks for (``memory.slot_kinds``)."""
        return slot_kinds.asked(self.text)

    @cached_property
    def times(self) -> tuple[str, ...]:
        """The times a plan in it names (``memory.when``); for a question about memory, every
        part of the days it names (「下礼拜四我有啥安排」: a plan at any time then answers it)."""
        if self.kind is not None and self.kind.kind is UtteranceKind.MEMORY_QUESTION:
            return when.asked_whole_days(self.text, self.now)
        return when.asked(self.text, self.now)

    @cached_property
    def fact(self) -> bool:
        """It asks for a recorded fact (``asking.asks_for_a_fact``)."""
        return asks_for_a_fact(self.text)

    @cached_property
    def state(self) -> bool:
        """It asks what is so (``asking.asks_about_the_household_state``)."""
        return asks_about_the_household_state(self.text)

    @cached_property
    def caution(self) -> bool:
        """It asks what to watch out for (``asking.asks_caution``)."""
        return asks_caution(self.text)

    @cached_property
    def liking(self) -> bool:
        """It asks what someone likes (``asking.asks_liking``)."""
        return asks_liking(self.text)

    @cached_property
    def terms(self) -> frozenset[str]:
        """Its content terms (``memory.terms``), against which a memory's are counted."""
        return frozenset(terms.terms(self.text))
