"""Enrolment by voice on the device (「记住我的声音，我是妈妈」), as a state machine that never
touches a socket, a model or Redis.

::

    request ──(no name given)──► NAME ──► READING 1 ► 2 ► 3 ──► CHECKING ──► DONE
                                            ▲                      │
                                            └── a refused sentence ┘ (read again, once)

It hears what the person said — the recognised text, the utterance's PCM as the VAD cut it, and
the time — and answers what to say (``Say``) or the enrolment to run (``Enrol``). The session
runs the enrolment (``server.voices.enrol``) and tells the machine how it went (``enrolled``,
``refused``, ``unavailable``), which answers the closing sentence. A cancel word ends the flow
at any step; a flow left without an answer for ``IDLE_S`` is abandoned (``expired``), and what is
said then is an ordinary turn.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from memory.identity import IdentityError, registrable
from server.device.enrolment_words import (
    ORDINAL,
    ORDINAL_IN,
    REFUSED,
    SAY,
    SENTENCES,
    EnrolmentRequest,
    answered_name,
    is_cancel,
)

IDLE_S = 60.0  # longer than any pause between reading one sentence and the next
RETRIES = 1  # refused sentences read again, per flow
# refusals that blame one sentence: reading it again may well succeed
PER_SENTENCE = frozenset({"silence", "not_speech", "too_short", "inconsistent", "two_voices"})


class Stage(enum.Enum):
    NAME = "name"
    READING = "reading"
    CHECKING = "checking"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Say:
    text: str
    done: bool = False  # the flow is over once this is said


@dataclass(frozen=True, slots=True)
class Enrol:
    """Run the enrolment of ``speaker`` from these sentences (16 kHz 16-bit mono)."""

    speaker: str
    sentences: tuple[bytes, ...]


class GuidedEnrolment:
    def __init__(self, request: EnrolmentRequest, now: float) -> None:
        self.language = request.language
        self.speaker = _valid(request.speaker)
        self.stage = Stage.READING if self.speaker else Stage.NAME
        self.sentences: list[bytes | None] = [None] * len(SENTENCES[self.language])
        self.reading = 0
        self.retries = RETRIES
        self.last = now

    @property
    def done(self) -> bool:
        return self.stage is Stage.DONE

    def expired(self, now: float) -> bool:
        """Left without an answer too long: whatever comes next is not part of the flow."""
        return self.stage in (Stage.NAME, Stage.READING) and now - self.last > IDLE_S

    def start(self) -> Say:
        if self.speaker is None:
            return Say(self._say("ask_name"))
        return Say(self._join(self._say("begin", name=self.speaker), self._read(0)))

    def heard(self, text: str, pcm: bytes, now: float) -> Say | Enrol | None:
        """The person's answer: a name, a sentence read, or a cancel word. None: nothing to
        say (they spoke while their sentences are being checked; only a cancel counts then)."""
        if self.stage is Stage.DONE:
            raise RuntimeError("the enrolment is over: it hears nothing now")
        self.last = now
        if is_cancel(text):
            self.stage = Stage.DONE
            return Say(self._say("cancelled"), done=True)
        if self.stage is Stage.CHECKING:
            return None
        if self.stage is Stage.NAME:
            self.speaker = _valid(answered_name(text, self.language))
            if self.speaker is None:
                return Say(self._say("ask_name"))
            self.stage = Stage.READING
            return self.start()
        if not pcm:  # typed or a wake word: nothing to hear the voice in
            return Say(self._read(self.reading))
        self.sentences[self.reading] = pcm
        missing = [n for n, s in enumerate(self.sentences) if s is None]
        if missing:
            self.reading = missing[0]
            return Say(self._read(self.reading))
        self.stage = Stage.CHECKING
        assert self.speaker is not None
        return Enrol(self.speaker, tuple(s for s in self.sentences if s is not None))

    def enrolled(self, again: bool) -> Say:
        """The voice is enrolled (``again``: the member's voiceprint was replaced)."""
        self.stage = Stage.DONE
        return Say(self._say("re_enrolled" if again else "enrolled", name=self.speaker), True)

    def refused(self, reason: str, sentence: int | None = None, other: str | None = None) -> Say:
        """The enrolment refused (``server.voices.checks.Refusal``, or ``household_full``): a
        sentence to read again, or the reason and the end."""
        ordinal = ORDINAL_IN[self.language][sentence] if sentence is not None else ""
        table = REFUSED[self.language]
        why = table.get(reason, "").format(ordinal=ordinal, other=other or "", name=self.speaker)
        if reason in PER_SENTENCE and sentence is not None and self.retries > 0:
            self.retries -= 1
            self.sentences[sentence] = None
            self.reading, self.stage = sentence, Stage.READING
            again = self._say("again", sentence=SENTENCES[self.language][sentence])
            return Say(self._join(why, again))
        self.stage = Stage.DONE
        closing = self._say("give_up") if reason in PER_SENTENCE or not why else ""
        return Say(self._join(why, closing), done=True)

    def unavailable(self) -> Say:
        """Voices cannot be enrolled here (no model, Redis down)."""
        self.stage = Stage.DONE
        return Say(self._say("unavailable"), done=True)

    def _read(self, n: int) -> str:
        sentence = SENTENCES[self.language][n]
        return self._say("read", ordinal=ORDINAL[self.language][n], sentence=sentence)

    def _say(self, what: str, **values: object) -> str:
        return SAY[self.language][what].format(**values)

    def _join(self, *parts: str) -> str:
        return ("" if self.language == "zh" else " ").join(p for p in parts if p)


def _valid(name: str | None) -> str | None:
    """A name a member may be enrolled under (not empty, not 'me'), else None."""
    if name is None:
        return None
    try:
        return registrable(name)
    except IdentityError:
        return None
