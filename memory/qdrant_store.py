"""The memory store on a Qdrant server (production), through qdrant-client.

Same layout and guarantees as the Edge store: one collection, ``person`` a keyword index marked
``is_tenant`` (Qdrant co-locates each tenant's points), every call scoped by person, expired
memories excluded by a range filter. A batch of searches is one ``query_batch_points`` call —
one round trip; a lexical search is a BM25 ``TextQuery`` on the text index in the same batch
(qdrant-client's local mode cannot rank by BM25 with this index: its lexical searches find
nothing, logged once). Calls block on the network, so callers on an event loop run them in a thread
(``remote = True``); local mode answers in-process and is not thread-safe (two jobs' concurrent
upsert and search broke its arrays), so its calls stay on the loop's thread (``remote = False``).

The URL must pin the scheme (``http://qdrant:6333`` in a plain container network): with an API key
and no scheme, qdrant-client switches to HTTPS and every call fails with an SSL error.
"""

from __future__ import annotations

from typing import Any

import structlog
from qdrant_client import QdrantClient, models

from config.settings import HearthSettings, SettingsError
from memory import schema
from memory.schema import Memory, MemoryId, PersonId
from memory.store import (
    LEXICAL_WIDER,
    Hit,
    Page,
    Search,
    backfill_patches,
    hits_of,
    lexical_hits,
    memories_of,
    owned_by,
    page_of,
    read_cue_changes,
)

log = structlog.get_logger(__name__)
# BM25 over the memory texts for lexical searches (as the Edge store's index)
_TEXT_INDEX = models.TextIndexParams(
    type=models.TextIndexType.TEXT,
    tokenizer=models.TokenizerType.MULTILINGUAL,
    lowercase=True,
    scoring=models.TextScoringParams(type=models.TextScoringType.BM25),
)


def in_process(client: QdrantClient) -> bool:
    """qdrant-client's local mode (``:memory:`` or a ``path``), which runs in this process."""
    options = client.init_options
    return bool(options.get("path")) or options.get("location") == ":memory:"


class QdrantMemoryStore:
    def __init__(self, client: QdrantClient, collection: str, dim: int) -> None:
        self.client = client
        self.remote = not in_process(client)
        self.collection = collection
        self.dim = dim
        fresh = not client.collection_exists(collection)
        if fresh:
            client.create_collection(
                collection,
                vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
            )
            client.create_payload_index(
                collection,
                schema.PERSON,
                models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True),
            )
        indexed = set() if fresh else set(client.get_collection(collection).payload_schema)
        for key in schema.KEYWORD_FIELDS[1:]:
            if key not in indexed:
                client.create_payload_index(collection, key, models.PayloadSchemaType.KEYWORD)
        for key in schema.FLOAT_FIELDS:
            if key not in indexed:
                client.create_payload_index(collection, key, models.PayloadSchemaType.FLOAT)
        if schema.TEXT not in indexed:
            client.create_payload_index(collection, schema.TEXT, _TEXT_INDEX)
        self.lexical = True  # until the client says it cannot rank by BM25 (local mode)
        if not fresh and (
            any(key not in indexed for key in schema.DERIVED_FIELDS) or self._stale()
        ):
            self._backfill_derived()

    def _stale(self) -> bool:
        """Memories whose derived fields another ``schema.DERIVATION`` made (cue points have no
        text)."""
        stale = models.Filter(
            must_not=[
                models.IsEmptyCondition(is_empty=models.PayloadField(key=schema.TEXT)),
                models.FieldCondition(
                    key=schema.DERIVED_V, match=models.MatchValue(value=schema.DERIVATION)
                ),
            ]
        )
        return self.client.count(self.collection, count_filter=stale, exact=True).count > 0

    def _backfill_derived(self) -> None:
        """Collections written before a derived field existed (``schema.DERIVED_FIELDS``) or by
        another ``schema.DERIVATION``: derive them again for those memories."""
        offset = None
        while True:
            records, offset = self.client.scroll(
                self.collection, limit=512, offset=offset, with_payload=True
            )
            for point_id, patch in backfill_patches(records):
                self.client.set_payload(self.collection, patch, points=[point_id])
            if offset is None:
                return

    @classmethod
    def from_settings(cls, settings: HearthSettings, dim: int) -> QdrantMemoryStore:
        url = settings.qdrant.url
        if not url:
            raise SettingsError("qdrant.url", "required for memory.store qdrant")
        if not url.startswith(("http://", "https://")):
            raise SettingsError("qdrant.url", "pin the scheme: http://host:6333 or https://…")
        key = settings.qdrant.api_key.get_secret_value() if settings.qdrant.api_key else None
        return cls(QdrantClient(url=url, api_key=key, timeout=10), settings.memory.collection, dim)

    @staticmethod
    def _filter(person: PersonId, search: Search | None, now: float | None) -> models.Filter:
        if not person:
            raise ValueError("a person is required for every memory operation")
        tenant = schema.cue_tenant(person) if search is not None and search.cues else person
        must: list[Any] = [
            models.FieldCondition(key=schema.PERSON, match=models.MatchValue(value=tenant))
        ]
        if search is not None and search.ids:
            must.append(models.HasIdCondition(has_id=list(search.ids)))
        must_not: list[Any] = []
        if now is not None and (search is None or search.exclude_expired):
            must_not.append(
                models.FieldCondition(key=schema.EXPIRES_AT, range=models.Range(lt=now))
            )
        if search is not None and search.cls:
            must.append(
                models.FieldCondition(key=schema.CLS, match=models.MatchValue(value=search.cls))
            )
        if search is not None and search.speaker:
            must.append(
                models.FieldCondition(
                    key=schema.SPEAKER, match=models.MatchValue(value=search.speaker)
                )
            )
        if search is not None and search.source:
            must.append(
                models.FieldCondition(
                    key=schema.SOURCE, match=models.MatchValue(value=search.source)
                )
            )
        if search is not None and search.entities_any:
            # this person's memories about these names: one selective indexed condition
            keys = [schema.person_entity(person, name) for name in search.entities_any]
            must.append(
                models.FieldCondition(key=schema.PERSON_ENTITIES, match=models.MatchAny(any=keys))
            )
        if search is not None and search.slots:
            slots = list(search.slots)
            must.append(models.FieldCondition(key=schema.SLOTS, match=models.MatchAny(any=slots)))
        if search is not None and search.when:
            at = list(search.when)
            must.append(models.FieldCondition(key=schema.WHEN, match=models.MatchAny(any=at)))
        return models.Filter(must=must, must_not=must_not or None)

    def search_batch(self, person: PersonId, searches: list[Search], now: float) -> list[list[Hit]]:
        asked = [s for s in searches if s.text is None or self.lexical]
        try:
            responses = self.client.query_batch_points(
                self.collection, [self._request(person, s, now) for s in asked]
            )
        except NotImplementedError as exc:
            # Intended degradation, not a stub: qdrant-client's local mode cannot rank by BM25
            # with the multilingual index, so lexical searches answer nothing from then on
            # (a Qdrant server ranks them). Anything else unimplemented is re-raised.
            if not self.lexical or not any(s.text is not None for s in searches):
                raise
            log.warning("store.lexical_unavailable", reason=str(exc))
            self.lexical = False
            return self.search_batch(person, searches, now)
        answers = iter(responses)
        results: list[list[Hit]] = []
        for search in searches:
            if search.text is not None and not self.lexical:
                results.append([])
                continue
            points = next(answers).points
            if search.text is None:
                results.append(hits_of(person, search, points))
            else:
                results.append(lexical_hits(search, points))
        return results

    def _request(self, person: PersonId, search: Search, now: float) -> models.QueryRequest:
        if search.text is not None:
            return models.QueryRequest(
                query=models.TextQuery(text=search.text),
                using=schema.TEXT,
                limit=search.limit * LEXICAL_WIDER,
                filter=self._filter(person, search, now),
                with_payload=True,
                with_vector=True,
            )
        return models.QueryRequest(
            query=search.vector,
            limit=search.limit,
            filter=self._filter(person, search, now),
            score_threshold=search.threshold,
            with_payload=True,
        )

    def get(self, person: PersonId, ids: list[MemoryId]) -> list[Memory]:
        return owned_by(person, self.client.retrieve(self.collection, list(ids), with_payload=True))

    def scroll(
        self, person: PersonId, cls: str | None = None, limit: int = 256, offset: str | None = None
    ) -> Page:
        search = Search([], 0, cls=cls) if cls else None
        return page_of(
            *self.client.scroll(
                self.collection, self._filter(person, search, None), limit=limit, offset=offset
            )
        )

    def newest(
        self, person: PersonId, select: Search, before: float | None, limit: int
    ) -> list[Memory]:
        order = models.OrderBy(
            key=schema.CREATED_AT, direction=models.Direction.DESC, start_from=before
        )
        records, _ = self.client.scroll(
            self.collection,
            self._filter(person, select, None),
            limit=limit,
            order_by=order,
        )
        return memories_of(records)

    def count(self, person: PersonId, speaker: str | None = None) -> int:
        search = Search([], 0, speaker=speaker) if speaker else None
        return self.client.count(self.collection, self._filter(person, search, None)).count

    def upsert(self, memories: list[Memory], vectors: list[list[float]]) -> None:
        points = []
        for memory, vector in zip(memories, vectors, strict=True):
            if not memory.person:
                raise ValueError("a person is required for every memory operation")
            points.append(
                models.PointStruct(id=memory.key, vector=vector, payload=memory.to_payload())
            )
        self.client.upsert(self.collection, points)

    def set_payload(self, person: PersonId, ids: list[MemoryId], payload: dict[str, Any]) -> None:
        owned: list[models.ExtendedPointId] = [m.key for m in self.get(person, ids)]
        if owned:
            payload = schema.derived(person, payload)
            self.client.set_payload(self.collection, payload, points=owned)

    def delete(self, person: PersonId, ids: list[MemoryId]) -> None:
        owned: list[models.ExtendedPointId] = [m.key for m in self.get(person, ids)]
        if owned:
            self.client.delete(self.collection, points_selector=owned)
            self.drop_cues(person, [MemoryId(str(key)) for key in owned])

    def _cues_of(self, person: PersonId, ids: list[MemoryId]) -> models.Filter:
        cues = self._filter(person, Search([], 0, cues=True), None)
        of = models.FieldCondition(key=schema.CUE_OF, match=models.MatchAny(any=list(ids)))
        return models.Filter(must=[*(cues.must or []), of])

    def drop_cues(self, person: PersonId, ids: list[MemoryId]) -> None:
        if ids:
            self._change_cues(person, ids, None, [], [])

    def put_cues(
        self, person: PersonId, memory: Memory, cues: list[str], vectors: list[list[float]]
    ) -> None:
        self._change_cues(person, [memory.key], memory, cues, vectors)

    def _change_cues(
        self,
        person: PersonId,
        leaving: list[MemoryId],
        memory: Memory | None,
        cues: list[str],
        vectors: list[list[float]],
    ) -> None:
        """Read the cue points the change touches, write what it makes (the caller holds the
        person's write lock, as every write does)."""
        where = self._cues_of(person, leaving)
        changes = read_cue_changes(
            person, leaving, memory, cues, vectors,
            scroll=lambda offset: self.client.scroll(
                self.collection, where, limit=256, offset=offset, with_payload=True
            ),
            retrieve=lambda ids: self.client.retrieve(self.collection, ids, with_payload=True),
        )  # fmt: skip
        if changes.deletes:
            gone: list[models.ExtendedPointId] = list(changes.deletes)
            self.client.delete(self.collection, points_selector=gone)
        for key, payload in changes.repoint:
            self.client.set_payload(self.collection, payload, points=[key])
        if changes.upserts:
            self.client.upsert(
                self.collection,
                [models.PointStruct(id=k, vector=v, payload=p) for k, v, p in changes.upserts],
            )

    def unset(self, person: PersonId, ids: list[MemoryId], keys: list[str]) -> None:
        owned: list[models.ExtendedPointId] = [m.key for m in self.get(person, ids)]
        if owned:
            self.client.delete_payload(self.collection, keys, points=owned)

    def delete_person(self, person: PersonId) -> None:
        for search in (None, Search([], 0, cues=True)):
            self.client.delete(self.collection, points_selector=self._filter(person, search, None))

    def close(self) -> None:
        self.client.close()
