"""The names and words a household uses, for the speech recogniser.

Whisper hears a name it has never seen as the nearest common words (「小橙子」 → 「小城自」,
「周杰伦」 → 「周结轮」); given the name in its "previous text" it writes it right. The names
come from the person's own memories — the names they introduce (「女儿叫小橙子」), their
subjects and entities, the registered speakers who said them — read from the store in the
background when a session opens and again when they are ``REFRESH_S`` old: an utterance never
waits on this, a name the write path learned from one session is heard in the next, and a store
that is down costs the recogniser its hint, nothing else (logged).

Beside the names, the household's words — the things its memories talk about (瑜伽课, 处方猫粮,
新能源汽车: nouns of two to four characters, by jieba's tagger) — go to the hotwords
(``server.device.hotwords``), which put a word back where its sound was heard as other
characters (「手机后尾耗」 → 尾号). They are not given to whisper: a long prompt of words it reads
back on unclear audio.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable

import jieba.posseg
import structlog

from memory import entities
from memory.schema import Memory, PersonId
from memory.store import MemoryStore, Search, store_call

log = structlog.get_logger(__name__)

SCAN = 500  # the person's newest memories read per refresh (names recur; old ones too)
MEMBERS = 40  # the names the read path looks for in a question (the recogniser takes fewer)
REFRESH_S = 300.0  # how long a person's names are kept before they are read again
RETRY_S = 30.0  # after a failed read


def ranked_names(memories: Iterable[Memory], limit: int) -> list[str]:
    """The household's names, those most memories are about first (ties: first seen)."""
    counts: Counter[str] = Counter()
    for memory in memories:
        about = [memory.subject, *memory.entities, memory.speaker]
        names = entities.household_names([memory.text], about)
        counts.update(name for name in names if not any(ch.isdigit() for ch in name))
    return [name for name, _ in counts.most_common(limit)]


def household_words(memories: Iterable[Memory], limit: int) -> list[str]:
    """The nouns the memories use most (two to four Chinese characters; person names are the
    names' business), most used first."""
    counts: Counter[str] = Counter()
    for memory in memories:
        counts.update({
            word for word, flag in jieba.posseg.lcut(memory.text)
            if flag.startswith("n") and flag != "nr" and _WORD.fullmatch(word)
        })  # fmt: skip
    return [word for word, _ in counts.most_common(limit)]


Words = tuple[str, ...]  # names or nouns
Phrases = tuple[tuple[str, str], ...]  # (phrase, the household word in it)
_WORD = re.compile(r"[\u4e00-\u9fff]{2,4}")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def household_phrases(memories: Iterable[Memory], words: Iterable[str]) -> list[tuple[str, str]]:
    """(phrase, word): each of ``words`` with the characters it stands beside in the memories
    (「打疫苗」, 「疫苗」 being the word), for the hotwords — the sound of a word with its
    neighbour is rarely a chance (「打一秒」 is 打疫苗 heard wrong; 「一秒」 alone is a word)."""
    wanted = sorted(set(words), key=len, reverse=True)
    found: dict[str, str] = {}
    for memory in memories:
        text = memory.text
        for word in wanted:
            for at in _occurrences(text, word):
                left = text[at - 1] if at > 0 and _HAN.fullmatch(text[at - 1]) else ""
                end = at + len(word)
                right = text[end] if end < len(text) and _HAN.fullmatch(text[end]) else ""
                for phrase in {left + word, word + right, left + word + right} - {word}:
                    found.setdefault(phrase, word)
    return sorted(found.items())


def _occurrences(text: str, word: str) -> list[int]:
    at, found = text.find(word), []
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found


class HouseholdNames:
    """Per person, the names to give the recogniser and the words for the hotwords: what is
    known now, never awaited."""

    def __init__(
        self,
        store: MemoryStore,
        limit: int,
        clock: Callable[[], float] = time.monotonic,
        word_limit: int = 0,
    ) -> None:
        self._store = store
        self._limit = limit
        self._word_limit = word_limit
        self._clock = clock
        # read at (monotonic), names, words, phrases
        self._known: dict[PersonId, tuple[float, Words, Words, Phrases]] = {}
        self._reading: dict[PersonId, asyncio.Task[None]] = {}
        self._again: set[PersonId] = set()  # refreshed while a read was under way

    def known(self, person: PersonId) -> tuple[str, ...]:
        """The person's names for the recogniser (its ``limit``), as last read (none yet:
        ``()``); a stale or missing entry starts a read in the background."""
        return self.members(person)[: self._limit]

    def members(self, person: PersonId) -> tuple[str, ...]:
        """Every name of the person's household as last read (up to ``MEMBERS``, most used
        first), for the read path; as ``known``, never awaited."""
        entry = self._known.get(person)
        if entry is None or self._clock() >= entry[0]:
            self._start(person)
        return entry[1] if entry is not None else ()

    def words(self, person: PersonId) -> tuple[str, ...]:
        """The words the person's memories use, as last read (``known`` keeps them fresh)."""
        entry = self._known.get(person)
        return entry[2] if entry is not None else ()

    def phrases(self, person: PersonId) -> Phrases:
        """The words with their neighbours in the memories (``household_phrases``), as last
        read."""
        entry = self._known.get(person)
        return entry[3] if entry is not None else ()

    def refresh(self, person: PersonId) -> None:
        """Read the person's names again in the background (a session opens). A read already
        under way may have read the store before the change this refresh is for: one more
        follows it."""
        if person in self._reading:
            self._again.add(person)
        else:
            self._start(person)

    def _start(self, person: PersonId) -> None:
        """Read in the background, unless a read is already under way."""
        if person not in self._reading:
            task = asyncio.create_task(self.read(person))
            self._reading[person] = task
            task.add_done_callback(lambda _: self._read_done(person))

    def _read_done(self, person: PersonId) -> None:
        self._reading.pop(person, None)
        if person in self._again:
            self._again.discard(person)
            self._start(person)

    async def read(self, person: PersonId) -> None:
        """Read the person's names now."""
        _, previous, words, phrases = self._known.get(person, (0.0, (), (), ()))
        try:
            memories = await store_call(
                self._store, self._store.newest, person, Search([], 0), None, SCAN
            )
        except Exception as exc:  # the store down: recogniser and read path go on without
            log.warning("household.names_unavailable", person=person, error=str(exc))
            self._known[person] = (self._clock() + RETRY_S, previous, words, phrases)
            return
        names, words, phrases = await asyncio.to_thread(self._read_off, memories)
        if names != previous:
            log.info(
                "household.names", person=person, names=list(names), words=len(words),
                phrases=len(phrases),
            )  # fmt: skip
        self._known[person] = (self._clock() + REFRESH_S, names, words, phrases)

    def _read_off(self, memories: list[Memory]) -> tuple[Words, Words, Phrases]:
        """Names, words and their phrases (the tagger takes ~50 ms for 500 memories: off the
        event loop)."""
        names = tuple(ranked_names(memories, max(self._limit, MEMBERS)))
        words = household_words(memories, self._word_limit) if self._word_limit else []
        words = [w for w in words if w not in names]
        return names, tuple(words), tuple(household_phrases(memories, words))
