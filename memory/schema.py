"""The memory record: the one home of the Qdrant payload schema.

Isolation: every point carries ``person`` (the store id). All persons share one collection/shard
with ``person`` as an indexed tenant key; every store method takes a ``PersonId`` and adds the
``person`` condition itself, so no query path can return another person's memory.
"""

from __future__ import annotations

import enum
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, NewType, TypeVar

from memory import slot_kinds, when

PersonId = NewType("PersonId", str)
MemoryId = NewType("MemoryId", str)
E = TypeVar("E", bound=enum.StrEnum)
_ID_NAMESPACE = uuid.UUID("6f1d3c2e-93a4-4c1b-9d7e-2b8f0a5e4c11")


class MemoryClass(enum.StrEnum):
    SAFETY = "safety"  # allergies, medicines, conditions: promoted into the safety group
    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"


# the classes whose memories get "when it matters" cues (where a missed memory costs most)
CUED_CLASSES = frozenset({MemoryClass.SAFETY, MemoryClass.PREFERENCE})


class Decay(enum.StrEnum):
    TIME = "time"  # expires at ``expires_at``
    VOLUME = "volume"  # never expires (facts and preferences)


# Invariant: ENTITIES holds the SUBJECT (unless the subject is the speaker: 我) plus every name
# and relation the text mentions. PERSON_ENTITIES is derived from it ("person:entity" per entity,
# see ``derived``): the relation and name rounds filter on it, so the engine starts from this
# person's few memories about those names instead of every person's (measured at 10×10,000:
# 1.4–2.0 ms → ~0.3 ms per round).
# SLOTS is derived from TEXT the same way: the kinds of fact the text states (where someone
# lives, works, studies, a name, an age: ``memory.slot_kinds``), so a question asking for one
# (「我是做什么工作的？」) finds the memories of that kind whatever their words; and WHEN: the
# weekdays (and parts of the day) it happens at (``memory.when``), so a plan at that time finds it.
# Payload keys (the schema). Indexed: PERSON (tenant), CLS, SUBJECT, ENTITIES, SPEAKER, SOURCE,
# PERSON_ENTITIES, SLOTS, WHEN, EXPIRES_AT, CREATED_AT.
TEXT = "text"
PERSON = "person"
SPEAKER = "speaker"
SOURCE = "source"
CLS = "cls"
DECAY = "decay"
EXPIRES_AT = "expires_at"
SUBJECT = "subject"
ENTITIES = "entities"
CREATED_AT = "created_at"
UPDATED_AT = "updated_at"
TAGS_PENDING = "tags_pending"  # tagging failed or has not run yet: safe defaults, retag later
HISTORY = "history"  # earlier texts of a superseded memory: [{"text", "replaced_at"}]
ORIGIN = "origin"  # session id a memory was extracted from (``POST /expand``)
PHOTO = "photo"  # an image memory's photo: {"question", "answer", "file", "content_type", ...}
CAMERA = "camera"  # the SOURCE of image memories (photos a camera board sent)
PERSON_ENTITIES = "person_entities"
SLOTS = "slots"
WHEN = "when"
DERIVED_V = "derived_v"  # the DERIVATION a memory's derived fields were made by
# Bump when the rules behind ``derived`` change (``memory.slot_kinds``, ``memory.when``): a store
# re-derives every memory made by another version when it opens. A test fingerprints what
# ``derived`` makes of the bench and fixture texts and fails until the bump is recorded
# (``tests/memory/test_derivation.py``).
DERIVATION = "3"  # 3: an occupation said with 是/当 is work (「我老公是医生」)
# "When it matters" cues (README "Cues"): extra points that point at memories — short
# situations, items and requests in which they should come up (a mango allergy → 芒果冰沙,
# 水果拼盘). They live in the person's *cue tenant* (PERSON = ``cue_tenant(person)``), so no
# memory search, scroll or count of the person ever meets one, and a cue search reads only
# that person's cues. A hit renders the memories it points at, never the cue. One point per
# distinct cue text of a person (``cue_id``): the same cue made for several memories is one
# vector pointing at each (fewer points to scan, no duplicate vectors).
CUE = "cue"  # the cue's words
CUE_OF = "cue_of"  # the memories it points at (indexed: a memory's cues go with it)
CUE_FOR = "cue_for"  # the memory texts it was made for, in CUE_OF's order: cues of an older text
# of a memory are ignored. Points written before one point per text hold one id and one text.
DERIVED_FIELDS = (PERSON_ENTITIES, SLOTS, WHEN, DERIVED_V)  # what ``derived`` adds
KEYWORD_FIELDS = (PERSON, CLS, SUBJECT, ENTITIES, SPEAKER, SOURCE, CUE_OF, *DERIVED_FIELDS)
FLOAT_FIELDS = (EXPIRES_AT, CREATED_AT)


def person_entity(person: PersonId, entity: str) -> str:
    """One PERSON_ENTITIES value (person ids never hold ':': ``memory.identity.PERSON_PATTERN``)."""
    return f"{person}:{entity}"


def cue_tenant(person: PersonId) -> str:
    """The PERSON value of a person's cue points ('~' never occurs in a person id:
    ``memory.identity.PERSON_PATTERN``)."""
    return f"{person}~cues"


def cue_id(person: PersonId, cue: str) -> str:
    """Deterministic id of one cue text of one person (whichever memories it was made for)."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"cue\x00{person}\x00{cue}"))


CueRef = tuple[MemoryId, str]  # a memory a cue points at, and the text the cue was made for


def cue_payload(person: PersonId, cue: str, refs: list[CueRef]) -> dict[str, Any]:
    return {
        PERSON: cue_tenant(person),
        CUE_OF: [memory for memory, _ in refs],
        CUE_FOR: [text for _, text in refs],
        CUE: cue,
    }


def cue_refs(payload: dict[str, Any]) -> list[CueRef]:
    """The memories a cue point points at (a point of one memory, as written before one point
    per text, is read the same way)."""
    of, made_for = payload.get(CUE_OF), payload.get(CUE_FOR)
    if isinstance(of, str):
        return [(MemoryId(of), str(made_for or ""))]
    if not isinstance(of, list) or not isinstance(made_for, list):
        return []
    return [(MemoryId(str(m)), str(t)) for m, t in zip(of, made_for, strict=False)]


def derived(person: PersonId, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` plus the fields derived from it (PERSON_ENTITIES when ENTITIES is set, SLOTS
    and WHEN when TEXT is, with the DERIVATION that made them): every write of ENTITIES or TEXT
    goes through here."""
    extra: dict[str, Any] = {}
    if ENTITIES in payload:
        extra[PERSON_ENTITIES] = [person_entity(person, str(e)) for e in payload[ENTITIES] or ()]
    if TEXT in payload:
        extra[SLOTS] = slot_kinds.kinds_of(str(payload[TEXT]))
        extra[WHEN] = when.keys_of(str(payload[TEXT]))
        extra[DERIVED_V] = DERIVATION
    return {**payload, **extra} if extra else payload


def memory_id(person: PersonId, text: str) -> MemoryId:
    """Deterministic id: the same text stored twice for one person is one point."""
    return MemoryId(str(uuid.uuid5(_ID_NAMESPACE, f"{person}\x00{text.strip()}")))


@dataclass(frozen=True, slots=True)
class Photo:
    """What an image memory keeps besides its text: the question asked about the photo, the
    vision model's answer, and where the photo's bytes are (``memory.photos.PhotoFiles``)."""

    question: str
    answer: str
    file: str  # name inside the person's photo folder
    content_type: str
    size: int
    device: str | None = None

    def to_payload(self) -> dict[str, Any]:
        fields = ("question", "answer", "file", "content_type", "size", "device")
        return {name: getattr(self, name) for name in fields}

    @classmethod
    def from_payload(cls, raw: Any) -> Photo | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("file"), str):
            return None
        return cls(
            question=str(raw.get("question", "")),
            answer=str(raw.get("answer", "")),
            file=raw["file"],
            content_type=str(raw.get("content_type", "application/octet-stream")),
            size=int(raw["size"]) if isinstance(raw.get("size"), int) else 0,
            device=raw.get("device") if isinstance(raw.get("device"), str) else None,
        )


@dataclass(frozen=True, slots=True)
class Memory:
    text: str
    person: PersonId
    cls: MemoryClass = MemoryClass.FACT
    decay: Decay = Decay.VOLUME
    expires_at: float | None = None
    subject: str | None = None
    entities: tuple[str, ...] = ()
    speaker: str | None = None
    source: str = "import"
    created_at: float = field(default_factory=time.time)
    updated_at: float | None = None
    id: MemoryId | None = None
    history: tuple[tuple[str, float], ...] = ()  # (earlier text, replaced at), oldest first
    tags_pending: bool = False
    origin: str | None = None  # the session it came from (write path); None: stored by a call
    photo: Photo | None = None  # set on image memories (source CAMERA)

    @property
    def key(self) -> MemoryId:
        return self.id or memory_id(self.person, self.text)

    def expired(self, now: float) -> bool:
        """Past its expiry — the same test the stores' filter makes (``expires_at < now``), so a
        memory is never expired to one search and live to another."""
        return self.expires_at is not None and self.expires_at < now

    def to_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            TEXT: self.text,
            PERSON: self.person,
            CLS: self.cls.value,
            DECAY: self.decay.value,
            ENTITIES: list(self.entities),
            SOURCE: self.source,
            CREATED_AT: self.created_at,
            UPDATED_AT: self.updated_at or self.created_at,
        }
        for key, value in ((EXPIRES_AT, self.expires_at), (SUBJECT, self.subject),
                           (SPEAKER, self.speaker), (ORIGIN, self.origin)):  # fmt: skip
            if value is not None:
                payload[key] = value
        if self.tags_pending:
            payload[TAGS_PENDING] = True
        if self.photo is not None:
            payload[PHOTO] = self.photo.to_payload()
        if self.history:
            payload[HISTORY] = [{"text": t, "replaced_at": at} for t, at in self.history]
        return derived(self.person, payload)

    @classmethod
    def from_payload(cls, point_id: str, payload: dict[str, Any]) -> Memory:
        return cls(
            id=MemoryId(str(point_id)),
            text=str(payload.get(TEXT, "")),
            person=PersonId(str(payload.get(PERSON, ""))),
            cls=_enum(MemoryClass, payload.get(CLS), MemoryClass.FACT),
            decay=_enum(Decay, payload.get(DECAY), Decay.VOLUME),
            expires_at=_float(payload.get(EXPIRES_AT)),
            subject=payload.get(SUBJECT),
            entities=tuple(payload.get(ENTITIES) or ()),
            speaker=payload.get(SPEAKER),
            source=str(payload.get(SOURCE, "unknown")),
            created_at=_float(payload.get(CREATED_AT)) or 0.0,
            updated_at=_float(payload.get(UPDATED_AT)),
            tags_pending=bool(payload.get(TAGS_PENDING, False)),
            origin=payload.get(ORIGIN),
            photo=Photo.from_payload(payload.get(PHOTO)),
            history=tuple(
                (str(h.get("text", "")), _float(h.get("replaced_at")) or 0.0)
                for h in payload.get(HISTORY) or ()
                if isinstance(h, dict)
            ),
        )


def _enum(kind: type[E], raw: Any, default: E) -> E:
    try:
        return kind(raw)
    except ValueError:
        return default


def _float(raw: Any) -> float | None:
    return float(raw) if isinstance(raw, int | float) else None
