"""The embedded store's cues: one Qdrant Edge shard per person, beside the memory shard.

A person's cues ("when it matters", README "Cues") are many more points than their memories —
up to six per constraint and preference — and a cue search was a filtered brute-force scan of
all of them inside the shared memory shard: at 10 persons × 10,000 memories with six cues each
(46,000 cue points a person) it cost ~1.7 ms of a 5.8 ms turn. In a shard of its own a person's
cues need no tenant filter, so they get an ordinary HNSW graph (``_GRAPH``; small shards stay
brute force below ``full_scan_threshold``), searched with a wide beam (``_BEAM``).

A graph has one blind spot: identical vectors. The same cue made for several memories
(「聚餐」 for two food constraints) is the same point several times, and such a clique can be
left out of a search or cut short by the limit. So every hit's cue text is looked up again by
an indexed condition (``CUE``) and all its copies join the hits — the same words, the same
score. How often the graph misses a cue hit the exact scan finds is measured by
``hearth bench readpath`` ("cue hits found"), not assumed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from memory import schema
from memory.schema import MemoryId, PersonId

_GRAPH = qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=2_000, payload_m=0)
_BEAM = 256
_QUANTIZED = qe.TurboQuantQuantizationConfig(
    bits=qe.TurboQuantBitSize.Bits2, memory=qe.Memory.Pinned
)
_SEARCH = qe.SearchParams(
    hnsw_ef=_BEAM, quantization=qe.QuantizationSearchParams(rescore=True, oversampling=4.0)
)
_EXACT = qe.SearchParams(exact=True)
COPIES = 64  # at most this many copies of the hits' cue texts join a search's hits


def _config(dim: int) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(
            size=dim, distance=qe.Distance.Cosine, datatype=qe.VectorStorageDatatype.Float16
        ),
        hnsw_config=_GRAPH,
        quantization_config=_QUANTIZED,
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1),  # index() decides when
        max_search_threads=1,
    )


class CueShards:
    """Each person's cue points (``schema.cue_payload``), in ``root/<person>``. Callers hold
    the memory store's write lock around writes."""

    def __init__(self, root: Path, dim: int) -> None:
        self.root = root
        self.dim = dim
        self._open: dict[str, qe.EdgeShard] = {}
        root.mkdir(parents=True, exist_ok=True)
        for folder in sorted(root.iterdir()):
            if folder.is_dir() and any(folder.iterdir()):
                self._open[folder.name] = qe.EdgeShard.load(str(folder), _config(dim))

    def _shard(self, person: PersonId, create: bool) -> qe.EdgeShard | None:
        if not person or "/" in person or person.startswith("."):
            raise ValueError("a person id is required for every cue operation")
        shard = self._open.get(person)
        if shard is None and create:
            folder = self.root / person
            folder.mkdir(parents=True, exist_ok=True)
            shard = qe.EdgeShard.create(str(folder), _config(self.dim))
            shard.update(
                qe.UpdateOperation.create_field_index(schema.CUE_OF, qe.PayloadSchemaType.Keyword)
            )
            shard.update(
                qe.UpdateOperation.create_field_index(schema.CUE, qe.PayloadSchemaType.Keyword)
            )
            self._open[person] = shard
        return shard

    # ---- reads ------------------------------------------------------------------------------

    def search(
        self, person: PersonId, vector: list[float], limit: int, threshold: float | None,
        exact: bool = False,
    ) -> list[Any]:  # fmt: skip
        """The person's best cue points (scored), and every copy of their cue texts."""
        shard = self._shard(person, create=False)
        if shard is None or limit <= 0:
            return []
        request = qe.QueryRequest(
            limit=limit, query=qe.Query.Nearest(vector), score_threshold=threshold,
            with_payload=True, params=_EXACT if exact else _SEARCH,
        )  # fmt: skip
        points: list[Any] = list(shard.query(request))
        texts = sorted({str((p.payload or {}).get(schema.CUE, "")) for p in points})
        if not points or exact:
            return points
        score = {str((p.payload or {}).get(schema.CUE, "")): p.score for p in points}
        same = qe.Filter(must=[qe.FieldCondition(schema.CUE, match=qe.MatchAny(texts))])
        copies, _ = shard.scroll(qe.ScrollRequest(limit=COPIES, filter=same, with_payload=True))
        seen = {str(p.id) for p in points}
        for copy in copies:
            if str(copy.id) not in seen:
                seen.add(str(copy.id))
                text = str((copy.payload or {}).get(schema.CUE, ""))
                points.append(_Scored(copy.id, copy.payload, score[text]))
        return sorted(points, key=lambda p: p.score, reverse=True)

    # ---- writes -----------------------------------------------------------------------------

    @staticmethod
    def _of(ids: Iterable[MemoryId]) -> qe.Filter:
        of = qe.FieldCondition(schema.CUE_OF, match=qe.MatchAny([str(i) for i in ids]))
        return qe.Filter(must=[of])

    def put(self, person: PersonId, memory: MemoryId, points: list[qe.Point]) -> None:
        """Replace the cues of one memory (none: it has no cues)."""
        shard = self._shard(person, create=bool(points))
        if shard is None:
            return
        shard.update(qe.UpdateOperation.delete_points_by_filter(self._of([memory])))
        if points:
            shard.update(qe.UpdateOperation.upsert_points(points))

    def add(self, person: PersonId, points: list[qe.Point]) -> None:
        """Cue points as they are (moving them from an older layout)."""
        shard = self._shard(person, create=True)
        if shard is not None and points:
            shard.update(qe.UpdateOperation.upsert_points(points))

    def drop(self, person: PersonId, ids: list[MemoryId]) -> None:
        shard = self._shard(person, create=False)
        if shard is not None and ids:
            shard.update(qe.UpdateOperation.delete_points_by_filter(self._of(ids)))

    def delete_person(self, person: PersonId) -> None:
        shard = self._open.pop(person, None)
        if shard is not None:
            shard.close()
        shutil.rmtree(self.root / person, ignore_errors=True)

    def index(self) -> int:
        """Build the graphs of the cues written since the last index; returns points folded."""
        folded = 0
        for shard in self._open.values():
            info = shard.info()
            pending = int(info.points_count) - int(info.indexed_vectors_count)
            if pending > 0:
                shard.optimize()
                folded += pending
        return folded

    def count(self) -> int:
        """Cue points of every person."""
        return sum(int(shard.info().points_count) for shard in self._open.values())

    def flush(self) -> None:
        for shard in self._open.values():
            shard.flush()

    def close(self) -> None:
        for shard in self._open.values():
            shard.flush()
            shard.close()
        self._open.clear()


class _Scored:
    """A copy of a hit's cue text, scored as the hit (the same words, the same vector)."""

    def __init__(self, point_id: Any, payload: Any, score: float) -> None:
        self.id, self.payload, self.score = point_id, payload, score
