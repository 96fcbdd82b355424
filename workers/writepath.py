"""One finished session → memories: extract, merge, apply, tag, patch. Every step is
idempotent, so arq's at-least-once delivery (a worker killed mid-job) stores nothing twice.

- Stage outputs (facts, the merge plan, the tags) are checkpointed in Redis under the session
  id before they are used: a re-run repeats no LLM call and applies the same plan.
- A new memory's id is derived from (session, plan position): applying twice is one point.
- An UPDATE whose target already holds the new text, and a DELETE of a missing point, are
  no-ops.
- A job holds the person's *merge* lock from merge to tags, so two jobs for one person never
  merge concurrently; the *store* lock (shared with the API, MCP and the console) only around
  its apply and its tag patch, so those writers never wait for an LLM call. ADD / UPDATE write
  through the one write (``memory.writes.MemoryWriter``: the duplicate check, the memory's shape
  and its retag mark are everyone's), so no entry point writes a memory differently. A tag
  patch skips a memory whose text changed after it was tagged (it stays pending).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import structlog
from pydantic import ValidationError
from redis.asyncio import Redis

from config import keys
from config.settings import WriteSettings
from memory import class_heads, entities, memory_class, schema, slot_heads, utterance_kinds
from memory.identity import ME
from memory.locks import holding_person
from memory.memory_class import SURE
from memory.registry import Speakers
from memory.schema import Decay, Memory, MemoryClass, MemoryId, PersonId
from memory.store import Hit, MemoryStore, Search, cosine, search_async, store_call
from memory.writes import Duplicate, MemoryWriter, NoTagging
from providers.embedder import Embedder, Vector, embed_async
from providers.errors import ProviderError
from providers.llm import StructuredLLM
from workers import cues, dates, extraction, mem0_stages, slots, sources, tag_rules, tagging
from workers.contract import Said, SessionJob
from workers.mem0_stages import MergeOp

log = structlog.get_logger(__name__)
_IDS = uuid.UUID("1b7f4a52-3c8e-4e0b-a6f1-5d2c9e7b8a30")
CONFLICT_LOG_LIMIT = 500
VECTOR_CACHE = 1024
COVER_SIMILARITY = 0.6  # a NONE/UPDATE/DELETE on a memory this close accounts for a fact
MERGE_BATCH = 20  # facts per merge call: a long session's facts and their candidates fit the model
RULE_CANDIDATES = 10  # stored memories the slot rules look at per fact


class RecordError(ValueError):
    """The job's record is not a session transcript (permanent: never retried)."""


def parse_job(record: dict[str, Any]) -> SessionJob:
    """The record validated against the job contract, before anything else reads it."""
    try:
        return SessionJob.model_validate(record)
    except ValidationError as exc:
        raise RecordError(f"not a session record: {exc.errors()[0]['msg']}") from exc


@dataclass(frozen=True, slots=True)
class SessionTranscript:
    session_id: str
    person: PersonId
    device_id: str
    source: str
    ended_at: float
    utterances: list[Said]  # the job's own lines, each with its speaker

    @classmethod
    def from_record(cls, record: dict[str, Any] | SessionJob) -> SessionTranscript:
        parsed = record if isinstance(record, SessionJob) else parse_job(record)
        utterances = [
            u.model_copy(
                update={"speaker": u.speaker or (ME if u.role == "assistant" else parsed.person)}
            )
            for u in parsed.transcript
            if u.role != "system" and u.text.strip()
        ]
        return cls(
            session_id=parsed.session_id,
            person=PersonId(parsed.person),
            device_id=parsed.device_id,
            source=parsed.source,
            ended_at=parsed.ended,
            utterances=utterances,
        )

    @property
    def day(self) -> dt.date:
        return dt.datetime.fromtimestamp(self.ended_at).date()

    @property
    def user_speaker(self) -> str | None:
        return next((u.speaker for u in self.utterances if u.role == "user"), None)


@dataclass
class Outcome:
    """What one job did; also the job's arq result."""

    session_id: str
    facts: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    duplicates: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)  # facts the merge reply left out
    rejected: list[dict[str, str]] = field(default_factory=list)  # facts not stored, and why
    rules: list[dict[str, str]] = field(default_factory=list)  # what the slot rules decided
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    tagged: int = 0
    tags_pending: int = 0
    cued: int = 0  # memories whose "when it matters" cues were (re)made
    cues_pending: int = 0
    cues_deferred: str | None = None  # why the cue call failed (a cue job retries later)
    llm_calls: int = 0
    replayed: bool = False

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class _Job:
    """One job's apply step: who wrote, when, what it did, and the points it read up front."""

    session: SessionTranscript
    speaker: str | None
    outcome: Outcome
    now: float
    stored: dict[str, Memory]


@dataclass(frozen=True, slots=True)
class PlannedOp:
    """A merge operation resolved to real ids: what apply executes (checkpointed)."""

    event: str
    text: str
    target: str | None
    id: str  # the point this op writes (ADD: derived from session + position)


class Checkpoint:
    """Stage outputs of one session in a Redis hash (7 days)."""

    def __init__(self, redis: Redis, session_id: str) -> None:
        self.redis = redis
        self.key = keys.write_checkpoint(session_id)

    async def get(self, name: str) -> Any:
        raw = await self.redis.hget(self.key, name)
        return None if raw is None else orjson.loads(raw)

    async def put(self, name: str, value: Any) -> None:
        await self.redis.hset(self.key, name, orjson.dumps(value).decode())
        await self.redis.expire(self.key, keys.CHECKPOINT_TTL_S)


class WritePath:
    def __init__(
        self,
        redis: Redis,
        embedder: Embedder,
        store: MemoryStore,
        llm: StructuredLLM,
        settings: WriteSettings,
        speaker_limit: int = 50,
    ) -> None:
        self.redis = redis
        self.embedder = embedder
        self.store = store
        self.llm = llm
        self.settings = settings
        self.speaker_limit = speaker_limit
        self.clock: Callable[[], float] = time.time
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        # the one write (memory.writes); this job tags what it wrote itself, in the same job
        self.writer = MemoryWriter(
            embedder, store, redis, NoTagging(), settings.duplicate_threshold
        )

    async def _embed(self, texts: list[str]) -> list[Vector]:
        """Embed once per text: a fact's vector serves its search and its ADD (bounded cache,
        shared by concurrent jobs — so read what is needed before awaiting)."""
        known = {t: self._vectors[t] for t in texts if t in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            fresh = await embed_async(self.embedder, missing)
            known.update(zip(missing, fresh, strict=True))
            self._vectors.update(zip(missing, fresh, strict=True))
            while len(self._vectors) > VECTOR_CACHE:
                self._vectors.popitem(last=False)
        return [known[t] for t in texts]

    async def remember(self, record: dict[str, Any] | SessionJob) -> Outcome:
        session = SessionTranscript.from_record(record)
        outcome = Outcome(session.session_id)
        checkpoint = Checkpoint(self.redis, session.session_id)
        done = await checkpoint.get("done")
        if done is not None:
            return Outcome(**{**done, "replayed": True})
        facts = await checkpoint.get("facts")
        if facts is None:
            kinds = await self._kinds(session)
            household = await self._household(session)
            found = await extraction.extract(
                self.llm, session.utterances, session.day, kinds, household
            )
            outcome.llm_calls += found.calls
            facts = found.facts
            await checkpoint.put("rejected", found.rejected)
            await checkpoint.put("facts", facts)
        outcome.rejected = await checkpoint.get("rejected") or []
        outcome.facts = len(facts)
        speaker = await self._speaker(session)
        async with self._merging(session.person):
            plan = await self._plan(session, facts, checkpoint, outcome)
            async with self.writer.locked(session.person):  # the store: milliseconds
                touched = await self._apply(session, speaker, plan, outcome)
            await self._tag(session, touched, checkpoint, outcome)
            await self.make_cues(session.person, outcome)
        await checkpoint.put("done", outcome.as_json())
        log.info("write.done", person=session.person, **_summary(outcome))
        return outcome

    async def _kinds(self, session: SessionTranscript) -> extraction.Kinds:
        """What each utterance the people said is (a statement, a request…): one embedding
        batch; nothing when the embedder is not the one the classifier was trained for."""
        said = extraction.spoken([u.text for u in session.utterances if u.role == "user"])
        if not said or utterance_kinds.shipped() is None:
            return extraction.Kinds()
        parts = {u: extraction.clauses_of(u) for u in said}
        read = await self._read_kinds([*said, *(c for cs in parts.values() for c in cs)])
        clauses = {
            u: max(extraction.carries(read.get(c)) for c in cs) for u, cs in parts.items() if cs
        }
        return extraction.Kinds({u: read[u] for u in said}, self._read_kinds, clauses)

    async def _read_kinds(self, texts: list[str]) -> dict[str, utterance_kinds.KindReading | None]:
        vectors = await self._embed(texts)
        return {text: utterance_kinds.classify(vector, self.embedder.name, text)
                for text, vector in zip(texts, vectors, strict=True)}  # fmt: skip

    def _merging(self, person: PersonId) -> contextlib.AbstractAsyncContextManager[None]:
        """One write job per person from merge to tags (its LLM calls take minutes): another
        job for this person waits that long. API, MCP and console writes take only the store
        lock (``MemoryWriter.locked``), which this job holds just around its apply and its tag
        patch — they never wait for an LLM."""
        wait = 2 * self.settings.timeout_s
        return holding_person(self.redis, person, wait_s=wait, key=keys.merge_lock(person))

    async def _speaker(self, session: SessionTranscript) -> str | None:
        """The user's speaker name, registered in the person's store (API by-speaker sees it)."""
        name = session.user_speaker
        if name is None or name == ME:
            return name
        registered = await Speakers(self.redis).register(session.person, name, self.speaker_limit)
        if registered is None:
            log.warning("write.speaker_limit", person=session.person, speaker=name)
            return None
        return name

    # ---- stage 2: merge against similar stored memories -------------------------------------

    async def _plan(
        self,
        session: SessionTranscript,
        facts: list[str],
        checkpoint: Checkpoint,
        outcome: Outcome,
    ) -> list[PlannedOp]:
        saved = await checkpoint.get("plan")
        if saved is not None:
            return [PlannedOp(**op) for op in saved]
        if not facts:
            await checkpoint.put("plan", [])
            return []
        people = [u.text for u in session.utterances if u.role == "user"]
        links = (await self._known_names(session.person, people))[1]  # one scroll per job
        plan: list[PlannedOp] = []
        for batch, start in enumerate(range(0, len(facts), MERGE_BATCH)):
            chunk = facts[start : start + MERGE_BATCH]
            plan += await self._plan_batch(session, batch, chunk, links, outcome)
        await checkpoint.put("plan", [dataclasses.asdict(op) for op in plan])
        return plan

    async def _plan_batch(
        self, session: SessionTranscript, batch: int, facts: list[str],
        links: dict[str, str], outcome: Outcome,
    ) -> list[PlannedOp]:  # fmt: skip
        """Up to MERGE_BATCH facts against their similar stored memories (and the facts before
        them in this session): the slot rules first (``workers.slots``), then — per
        ``write.merge`` — one merge call for what they left, or an ADD."""
        vectors = await self._embed(facts)
        mode = self.settings.merge
        # the rules look further than the model is shown: a slot-mate (the old employer) can
        # rank below five closer but unrelated memories
        limit = self.settings.merge_candidates if mode == "model" else max(
            self.settings.merge_candidates, RULE_CANDIDATES
        )  # fmt: skip
        searches = [Search(v, limit) for v in vectors]
        found = await search_async(self.store, session.person, searches, self.clock())
        found = [[h for h in hits if h.memory.photo is None] for hits in found]  # not the model's
        names = _names(facts, found)
        people = [u.text for u in session.utterances if u.role == "user"]
        learned = await self._attributes(facts, vectors, found)
        plan: list[PlannedOp] = []
        written: list[tuple[PlannedOp, Vector]] = []  # this batch's ADDs: later facts' candidates
        left: list[int] = []
        for i, (fact, hits, vector) in enumerate(zip(facts, found, vectors, strict=True)):
            candidates = [
                slots.Candidate(
                    h.memory.key,
                    h.memory.text,
                    h.memory.subject,
                    h.score,
                    h.memory.cls is MemoryClass.EVENT,
                )
                for h in hits
            ]
            candidates += [
                slots.Candidate(
                    op.id,
                    op.text,
                    None,
                    cosine(vector, v),
                    dates.one_off_date(op.text, session.day) is not None,
                )
                for op, v in written
            ]
            decision = None
            if mode != "model":
                source = sources.source_of(fact, people)
                decision = slots.decide(fact, source, candidates, names, learned, links)
            point = str(uuid.uuid5(_IDS, f"{session.session_id}\x00{batch}.rule.{i}"))
            if decision is None:
                if mode == "model" or (mode == "rules+model" and hits):
                    left.append(i)
                    continue
                op = PlannedOp("ADD", fact, None, point)
                plan.append(op)
                written.append((op, vector))
                continue
            self._ruled(session, fact, decision, outcome)
            plan = _placed(plan, written, decision, fact, vector, point)
        if left:
            plan += await self._merged_by_model(
                session, batch, [facts[i] for i in left], [found[i] for i in left], outcome
            )
        return plan

    async def _attributes(
        self, facts: list[str], vectors: list[Vector], found: list[list[Hit]]
    ) -> dict[str, tuple[str, ...]]:
        """What the slot heads read in each fact and each memory it may act on (where someone
        lives, works, studies; a name, an age), by text, with ``constraint`` first where the
        safety head reads one (a constraint is many-valued, whatever else it says); empty for
        another embedder."""
        if slot_heads.shipped() is None:
            return {}
        stored = list(dict.fromkeys(h.memory.text for hits in found for h in hits))
        texts = [*facts, *stored]
        every = [*vectors, *(await self._embed(stored))]
        learned: dict[str, tuple[str, ...]] = {}
        for text, vector in zip(texts, every, strict=True):
            kinds = slot_heads.stated(vector, self.embedder.name, text)
            if kinds is None:
                continue
            constraint = (memory_class.safety(vector, self.embedder.name) or 0.0) >= SURE
            learned[text] = ("constraint", *kinds) if constraint else kinds
        return learned

    @staticmethod
    def _ruled(
        session: SessionTranscript, fact: str, decision: slots.Decision, outcome: Outcome
    ) -> None:
        record = {
            "fact": fact, "op": decision.event, "rule": decision.rule,
            "target": decision.target.text if decision.target else "",
        }  # fmt: skip
        outcome.rules.append(record)
        log.info("write.rule", person=session.person, **record)

    async def _merged_by_model(
        self,
        session: SessionTranscript,
        batch: int,
        facts: list[str],
        found: list[list[Hit]],
        outcome: Outcome,
    ) -> list[PlannedOp]:
        """mem0's merge call for ``facts`` against their similar stored memories."""
        candidates: dict[str, Memory] = {}
        for hits in found:
            for hit in hits:
                candidates.setdefault(hit.memory.key, hit.memory)
        shown = list(candidates.values())
        ops = await mem0_stages.merge(self.llm, [m.text for m in shown], facts)
        outcome.llm_calls += 1
        # the first batch keeps the ids single-call plans always had (re-runs of old jobs)
        positions = [str(i) if batch == 0 else f"{batch}.{i}" for i in range(len(ops))]
        plan = [self._resolve(session, p, op, shown) for p, op in zip(positions, ops, strict=True)]
        for fact in _uncovered(facts, found, plan):
            # the merge reply said nothing about this fact (small models drop items): keep it;
            # the duplicate check at apply time still drops it if its meaning is stored
            point = str(uuid.uuid5(_IDS, f"{session.session_id}\x00recovered\x00{fact}"))
            plan.append(PlannedOp("ADD", fact, None, point))
            outcome.recovered.append(fact)
        return plan

    @staticmethod
    def _resolve(
        session: SessionTranscript, position: str, op: MergeOp, shown: list[Memory]
    ) -> PlannedOp:
        target = shown[op.target].key if op.target is not None else None
        new_id = str(uuid.uuid5(_IDS, f"{session.session_id}\x00{position}"))
        if op.event in ("UPDATE", "DELETE") and target is None:
            # an id the model invented: an UPDATE still carries a fact worth keeping
            event = "ADD" if op.event == "UPDATE" else "NONE"
            return PlannedOp(event, op.text, None, new_id)
        point = new_id if op.event == "ADD" or target is None else target
        return PlannedOp(op.event, op.text, target, point)

    # ---- apply ------------------------------------------------------------------------------

    async def _apply(
        self,
        session: SessionTranscript,
        speaker: str | None,
        plan: list[PlannedOp],
        outcome: Outcome,
    ) -> list[MemoryId]:
        # every point the plan may touch, read in one call: targets, and the points an earlier
        # attempt of this job may already have written
        ids = [MemoryId(op.id) for op in plan if op.event != "NONE"]
        ids += [MemoryId(_fallback_id(op)) for op in plan if op.event == "UPDATE"]
        stored = await store_call(self.store, self.store.get, session.person, ids) if ids else []
        job = _Job(session, speaker, outcome, round(self.clock(), 6), {m.key: m for m in stored})
        touched: list[MemoryId] = []
        for op in plan:
            if op.event == "NONE":
                outcome.unchanged += 1
            elif op.event == "ADD":
                if await self._add(job, op):
                    touched.append(MemoryId(op.id))
            elif op.event == "UPDATE":
                if await self._update(job, op):
                    touched.append(MemoryId(op.id))
            elif op.event == "DELETE":
                await self._delete(job, op)
        return touched

    async def _add(self, job: _Job, op: PlannedOp) -> bool:
        if op.id in job.stored:
            job.outcome.added.append(op.id)  # applied by an earlier attempt of this job
            return True
        [vector] = await self._embed([op.text])
        written = await self.writer.add(
            job.session.person, op.text, vector, source=job.session.source,
            speaker=job.speaker, now=job.now, memory_id=MemoryId(op.id),
            origin=job.session.session_id,
        )  # fmt: skip
        if isinstance(written, Duplicate):
            job.outcome.duplicates.append(op.text)  # its meaning is already stored
            return False
        job.outcome.added.append(op.id)
        return True

    async def _update(self, job: _Job, op: PlannedOp) -> bool:
        old = job.stored.get(op.id)
        if old is None:  # deleted since the plan was made: keep the fact as a new memory
            return await self._add(job, PlannedOp("ADD", op.text, None, _fallback_id(op)))
        if old.text == op.text:
            job.outcome.updated.append(op.id)  # applied by an earlier attempt
            return True
        if not await self._allowed(job, old, op):
            return False
        [vector] = await self._embed([op.text])
        author = replace(old, speaker=job.speaker, source=job.session.source)
        await self.writer.revise(
            author, op.text, vector, now=job.now, origin=job.session.session_id
        )
        job.outcome.updated.append(op.id)
        return True

    async def _delete(self, job: _Job, op: PlannedOp) -> None:
        """A plan called off ends (it expires now, what ended it kept in its history: 「云台山
        那趟去不成了」); any other memory taken back is deleted."""
        old = job.stored.get(op.id)
        if old is None or not await self._allowed(job, old, op):
            return
        person = job.session.person
        if old.cls is MemoryClass.EVENT and not old.expired(job.now):
            history = [*old.history, (f"{old.text}（{op.text}）", job.now)]
            payload = {
                schema.EXPIRES_AT: job.now,
                schema.DECAY: Decay.TIME.value,
                schema.HISTORY: [{"text": t, "replaced_at": at} for t, at in history],
            }
            await store_call(self.store, self.store.set_payload, person, [old.key], payload)
            log.info("write.ended", person=person, text=old.text, because=op.text)
        else:
            await store_call(self.store, self.store.delete, person, [old.key])
            log.info("write.deleted", person=person, text=old.text, because=op.text)
        job.outcome.deleted.append(op.id)

    async def _allowed(self, job: _Job, old: Memory, op: PlannedOp) -> bool:
        """Source priority: a write may not overturn a memory from a higher-priority source."""
        session = job.session
        if old.source == session.source:
            return True
        priority = self.settings.source_priority
        mine, theirs = priority.get(session.source, 0), priority.get(old.source, 0)
        kept = theirs > mine
        record = {
            "at": self.clock(),
            "session": session.session_id,
            "op": op.event,
            "memory_id": old.key,
            "stored": old.text,
            "stored_source": old.source,
            "proposed": op.text,
            "proposed_source": session.source,
            "decision": "kept stored" if kept else "applied",
        }
        job.outcome.conflicts.append(record)
        pipe = self.redis.pipeline(transaction=True)
        pipe.lpush(keys.conflicts(session.person), orjson.dumps(record))
        pipe.ltrim(keys.conflicts(session.person), 0, CONFLICT_LOG_LIMIT - 1)
        await pipe.execute()
        log.info("write.conflict", person=session.person, **record)
        return not kept

    # ---- tagging and the payload patch ------------------------------------------------------

    async def tag_pending(self, person: PersonId) -> Outcome:
        """Tag the person's retag set now (memories any entry point wrote with default tags),
        under the person lock; nothing pending, no LLM call."""
        outcome = Outcome(f"tag:{person}")
        async with self._merging(person):
            day = dt.datetime.fromtimestamp(self.clock()).date()
            await self._tag_ids(person, [], day, None, outcome)
            await self.make_cues(person, outcome)
        if outcome.tagged or outcome.tags_pending or outcome.cued or outcome.cues_pending:
            log.info("write.tagged", person=person, **_summary(outcome))
        return outcome

    async def cue_pending(self, person: PersonId) -> Outcome:
        """Make the cues the person's cue set waits for (a cue job's retry), under the merge
        lock; nothing pending, no LLM call."""
        outcome = Outcome(f"cues:{person}")
        async with self._merging(person):
            await self.make_cues(person, outcome)
        return outcome

    # ---- "when it matters" cues -------------------------------------------------------------

    async def make_cues(self, person: PersonId, outcome: Outcome) -> None:
        """Cues for the person's cue set (``keys.recue``: memories tagged or revised since their
        cues were made): constraints and preferences get new cues, any other class loses its
        old ones, a memory still waiting for tags waits here too. A failed call leaves them in
        the set — stored and recalled as before — and says why in ``outcome.cues_deferred``."""
        key = keys.recue(person)
        ids = [MemoryId(m.decode()) for m in await self.redis.smembers(key)]
        if not ids or not self.settings.cues:
            outcome.cues_pending = len(ids)
            return
        memories = await store_call(self.store, self.store.get, person, ids)
        wanted = [m for m in memories if m.cls in schema.CUED_CLASSES and not m.tags_pending]
        texts = list(dict.fromkeys(m.text for m in wanted))
        made: dict[str, list[str] | None] = {}
        if texts:
            names = tuple((await self._known_names(person, texts))[0])
            try:
                made = await cues.cue(self.llm, texts, names)
            except ProviderError as exc:
                outcome.cues_deferred = repr(exc)[:300]
                log.warning("write.cues_deferred", person=person, error=outcome.cues_deferred)
            outcome.llm_calls += cues.calls(texts)
        phrases = list(dict.fromkeys(c for found in made.values() for c in found or ()))
        vectors = dict(zip(phrases, await self._embed(phrases), strict=True)) if phrases else {}
        async with self.writer.locked(person):
            current = {m.key: m for m in await store_call(self.store, self.store.get, person, ids)}
            for memory_id in ids:
                memory = current.get(memory_id)
                if memory is not None and memory.tags_pending:
                    continue  # cued once its tags say what it is
                if memory is not None and memory.cls in schema.CUED_CLASSES:
                    found = made.get(memory.text)
                    if found is None:
                        continue  # no usable cues yet (or revised since asked): stays pending
                    await store_call(self.store, self.store.put_cues, person, memory, found,
                                     [vectors[c] for c in found])  # fmt: skip
                    outcome.cued += 1
                    log.info("write.cues", person=person, text=memory.text, cues=found)
                    # (none: the answer held nothing worth keeping — final, not retried)
                elif memory is not None:
                    await store_call(self.store, self.store.drop_cues, person, [memory_id])
                await self.redis.srem(key, memory_id)
        outcome.cues_pending = int(await self.redis.scard(key))
        if outcome.cues_pending and outcome.cues_deferred is None and texts:
            outcome.cues_deferred = "unreadable cue replies for some memories"

    async def _tag(
        self,
        session: SessionTranscript,
        touched: list[MemoryId],
        checkpoint: Checkpoint,
        outcome: Outcome,
    ) -> None:
        said = [u.text for u in session.utterances if u.role == "user"]
        await self._tag_ids(session.person, touched, session.day, checkpoint, outcome, said)

    async def _tag_ids(
        self,
        person: PersonId,
        touched: list[MemoryId],
        day: dt.date,
        checkpoint: Checkpoint | None,
        outcome: Outcome,
        said: Sequence[str] = (),
    ) -> None:
        """Tag the memories ``touched`` and those waiting for tags. ``said``: the session's
        words, where the household names its members (「我婆婆孙秀兰」)."""
        retag_key = keys.retag(person)
        pending = [MemoryId(m.decode()) for m in await self.redis.smembers(retag_key)]
        ids = list(dict.fromkeys([*touched, *pending]))
        memories = await store_call(self.store, self.store.get, person, ids) if ids else []
        if not memories:
            return
        texts = list(dict.fromkeys(m.text for m in memories))
        saved = await checkpoint.get("tags") if checkpoint is not None else None
        if saved is None or set(saved) != set(texts):
            tags = await tagging.tag(self.llm, texts, day)
            outcome.llm_calls += len(tagging.batches(texts))
            saved = {t: (None if v is None else dataclasses.asdict(v)) for t, v in tags.items()}
            if checkpoint is not None:
                await checkpoint.put("tags", saved)
        known, links = await self._known_names(person, [*texts, *said])
        vectors = await self._embed(texts)
        safety = {
            text: memory_class.safety(vector, self.embedder.name)
            for text, vector in zip(texts, vectors, strict=True)
        }
        readings = {
            text: class_heads.read(vector, self.embedder.name, text)
            for text, vector in zip(texts, vectors, strict=True)
        }
        async with self.writer.locked(person):  # the patch, not the LLM call, holds the store
            # read again under the lock: a memory revised since it was tagged keeps waiting
            current = await store_call(self.store, self.store.get, person, ids)
            for memory in current:
                if memory.text not in saved:
                    continue  # revised since it was tagged: stays pending for the next job
                settled = tag_rules.settle(
                    memory.text, _tags_of(saved[memory.text]), day, known,
                    safety.get(memory.text), readings.get(memory.text),
                )  # fmt: skip
                await self._patch(person, memory, settled, known, links, outcome)

    async def _household(self, session: SessionTranscript) -> extraction.Household:
        """The person's household before the session: names and the memories that introduce
        them (who 「它」 or 「志刚」 is)."""
        page = await store_call(self.store, self.store.scroll, session.person)
        said = [u.text for u in session.utterances if u.role == "user"]
        names = entities.household_names(
            [*said, *(m.text for m in page.memories)], (m.subject for m in page.memories)
        )
        remembered = tuple(m.text for m in page.memories if any(n in m.text for n in names))
        return extraction.Household(tuple(n for n in names if n != ME), remembered)

    async def _known_names(
        self, person: PersonId, texts: list[str]
    ) -> tuple[set[str], dict[str, str]]:
        """Names the household uses, introduced in these texts or in the person's memories
        (「我儿子叫乐乐」 stored last week makes 乐乐 a subject today), and the relation each
        name stands for (``entities.name_links``)."""
        page = await store_call(self.store, self.store.scroll, person)
        stored = page.memories
        every = [*texts, *(m.text for m in stored)]
        found = entities.household_names(every, (m.subject for m in stored))
        return {n for n in found if n != ME}, entities.name_links(every)

    async def _patch(
        self, person: PersonId, memory: Memory, tags: tagging.Tags, known: set[str],
        links: dict[str, str], outcome: Outcome,
    ) -> None:  # fmt: skip
        """One memory's tags into its payload (under the store lock)."""
        patch = {
            schema.CLS: tags.cls.value,
            schema.DECAY: tags.decay.value,
            schema.EXPIRES_AT: tags.expires_at,
            schema.SUBJECT: tags.subject,
            schema.ENTITIES: list(entities.entities_for(memory.text, tags.subject, known, links)),
            schema.TAGS_PENDING: False,
        }
        await store_call(self.store, self.store.set_payload, person, [memory.key], patch)
        await self.redis.srem(keys.retag(person), memory.key)
        await self.redis.sadd(keys.recue(person), memory.key)  # what it matters for, next
        outcome.tagged += 1
        if tags.cls is MemoryClass.SAFETY:
            log.info("write.safety", person=person, text=memory.text, subject=tags.subject)


def _fallback_id(op: PlannedOp) -> str:
    """The point an UPDATE writes when its target has gone (deterministic, for re-runs)."""
    return str(uuid.uuid5(_IDS, op.id + op.text))


def _uncovered(facts: list[str], found: list[list[Hit]], plan: list[PlannedOp]) -> list[str]:
    """Facts no merge operation accounts for: none carries the fact's text, and none acts on a
    stored memory close to it (similarity ≥ COVER_SIMILARITY)."""
    texts = {tagging.align_key(op.text) for op in plan}
    acted_on = {op.target for op in plan if op.target is not None}
    missing = []
    for fact, hits in zip(facts, found, strict=True):
        if tagging.align_key(fact) in texts:
            continue
        if any(h.memory.key in acted_on and h.score >= COVER_SIMILARITY for h in hits):
            continue
        missing.append(fact)
    return missing


def _placed(
    plan: list[PlannedOp],
    written: list[tuple[PlannedOp, Vector]],
    decision: slots.Decision,
    fact: str,
    vector: Vector,
    point: str,
) -> list[PlannedOp]:
    """The plan with a rule's decision for ``fact`` in it (``written`` kept in step)."""
    target = decision.target
    if decision.event == "UPDATE" and decision.text:
        log.info("write.value_swapped", fact=fact, text=decision.text)
        fact = decision.text  # the old wording with the new value (``workers.values``)
    earlier = next((n for n, (op, _) in enumerate(written) if target and op.id == target.key), None)
    if earlier is not None:  # a fact of this same session restated, corrected or retracted
        op, _ = written[earlier]
        if (
            decision.event == "NONE"
        ):  # said again (「我女儿叫小橙子」 after 「…叫小橙子，她对花生过敏」)
            return [*plan, PlannedOp("NONE", fact, op.id, point)]
        kept = [p for p in plan if p.id != op.id]
        if decision.event == "UPDATE":
            replaced = replace(op, text=fact)
            kept.append(replaced)
            written[earlier] = (replaced, vector)
        else:
            written.pop(earlier)
        return kept
    if target is None or decision.event == "NONE":
        return [*plan, PlannedOp("NONE", fact, target.key if target else None, point)]
    acted = next((n for n, p in enumerate(plan) if p.target == target.key), None)
    if acted is None:
        return [*plan, PlannedOp(decision.event, fact, target.key, target.key)]
    # two facts of one session on one memory (「搬到滨江区了」「不住西湖区了」): one write; the
    # statement of the new value wins over the denial of the old one
    first = plan[acted]
    if first.event == decision.event == "UPDATE" and (
        sources.negated(first.text) and not sources.negated(fact)
    ):
        plan = [*plan[:acted], replace(first, text=fact), *plan[acted + 1 :]]
    return [*plan, PlannedOp("NONE", fact, target.key, point)]


def _tags_of(raw: dict[str, Any] | None) -> tagging.Tags | None:
    """Checkpointed tags back into ``Tags`` (None: the model gave none usable for the text)."""
    if raw is None:
        return None
    return tagging.Tags(
        MemoryClass(raw["cls"]), Decay(raw["decay"]), raw["expires_at"], raw["subject"]
    )


def _names(facts: list[str], found: list[list[Hit]]) -> list[str]:
    """Names the facts and their candidates introduce or are about."""
    memories = [h.memory for hits in found for h in hits]
    texts = [*facts, *(m.text for m in memories)]
    return [n for n in entities.household_names(texts, (m.subject for m in memories)) if n != ME]


def _summary(outcome: Outcome) -> dict[str, Any]:
    return {
        "session": outcome.session_id,
        "facts": outcome.facts,
        "added": len(outcome.added),
        "updated": len(outcome.updated),
        "deleted": len(outcome.deleted),
        "duplicates": len(outcome.duplicates),
        "recovered": len(outcome.recovered),
        "rejected": len(outcome.rejected),
        "rules": len(outcome.rules),
        "conflicts": len(outcome.conflicts),
        "tagged": outcome.tagged,
        "tags_pending": outcome.tags_pending,
        "cued": outcome.cued,
        "cues_pending": outcome.cues_pending,
        "llm_calls": outcome.llm_calls,
    }
