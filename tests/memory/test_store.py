"""The embedded store: person-scoped entity rounds, and stores written before PERSON_ENTITIES."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import qdrant_edge as qe

from config.settings import SettingsError, load_settings
from memory import schema
from memory.schema import Memory
from memory.store import EdgeMemoryStore, Search
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath
from tests.memory.conftest import LI, ZHANG


def _memories() -> list[Memory]:
    return [
        Memory("小橙子对花生过敏", ZHANG, subject="小橙子", entities=("小橙子",)),
        Memory("小橙子喜欢恐龙", LI, subject="小橙子", entities=("小橙子",)),  # another family's
        Memory("我住在杭州", ZHANG),
    ]


def test_entity_rounds_stay_inside_the_person(tmp_path: Path, embedder: UseEmbedder) -> None:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    memories = _memories()
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    [vector] = embedder.embed(["小橙子能吃什么"])
    [hits] = store.search_batch(ZHANG, [Search(vector, 5, None, ("小橙子",))], time.time())
    assert [h.memory.text for h in hits] == ["小橙子对花生过敏"]
    # a later tagging patch of ENTITIES re-derives the person-scoped keys
    home = next(m for m in memories if m.text == "我住在杭州")
    store.set_payload(ZHANG, [home.key], {schema.ENTITIES: ["杭州"]})
    [hits] = store.search_batch(ZHANG, [Search(vector, 5, None, ("杭州",))], time.time())
    assert [h.memory.text for h in hits] == ["我住在杭州"]
    store.close()


def test_slot_searches_find_the_kind_of_fact_whatever_its_words(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    memories = [*_memories(), Memory("我上个月跳槽了，现在当工程师", ZHANG)]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    [vector] = embedder.embed(["我是做什么工作的？"])
    asked = [Search(vector, 5, None, slots=(kind,)) for kind in ("work", "residence")]
    work, home = store.search_batch(ZHANG, asked, time.time())
    assert [h.memory.text for h in work] == ["我上个月跳槽了，现在当工程师"]
    assert [h.memory.text for h in home] == ["我住在杭州"]
    [others] = store.search_batch(LI, [Search(vector, 5, None, slots=("work",))], time.time())
    assert others == []
    store.close()


def test_a_store_from_before_the_derived_fields_is_backfilled_on_open(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    path = tmp_path / "memory"
    legacy = qe.EdgeShard.create(
        str(path),
        qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=embedder.dim, distance=qe.Distance.Cosine)),
    )
    for key in schema.KEYWORD_FIELDS:
        if key not in schema.DERIVED_FIELDS:
            legacy.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))
    memories = _memories()
    points = []
    for memory, vector in zip(memories, embedder.embed([m.text for m in memories]), strict=True):
        payload = memory.to_payload()
        for key in schema.DERIVED_FIELDS:
            del payload[key]
        points.append(qe.Point(memory.key, vector, payload))
    legacy.update(qe.UpdateOperation.upsert_points(points))
    legacy.flush()
    legacy.close()

    store = EdgeMemoryStore(path, embedder.dim)
    [vector] = embedder.embed(["小橙子能吃什么"])
    for person, text in ((ZHANG, "小橙子对花生过敏"), (LI, "小橙子喜欢恐龙")):
        [hits] = store.search_batch(person, [Search(vector, 5, None, ("小橙子",))], time.time())
        assert [h.memory.text for h in hits] == [text]
    [home] = store.search_batch(ZHANG, [Search(vector, 5, None, slots=("residence",))], time.time())
    assert [h.memory.text for h in home] == ["我住在杭州"]
    store.close()
    reopened = EdgeMemoryStore(path, embedder.dim)  # the index now exists: nothing to backfill
    assert set(schema.DERIVED_FIELDS) <= set(reopened._shard.info().payload_schema)
    reopened.close()


def test_memories_derived_by_another_version_are_derived_again_on_open(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """The rules behind the derived fields changed (``schema.DERIVATION``): a memory whose
    fields an older version made gets them again, so a rule change reaches stored memories."""
    path = tmp_path / "memory"
    store = EdgeMemoryStore(path, embedder.dim)
    home = Memory("我住在杭州", ZHANG)
    store.upsert([home], embedder.embed([home.text]))
    stale = {schema.SLOTS: [], schema.WHEN: ["周一"], schema.DERIVED_V: "0"}
    store._shard.update(qe.UpdateOperation.set_payload([home.key], stale))
    store.close()
    reopened = EdgeMemoryStore(path, embedder.dim)
    [vector] = embedder.embed(["我住在哪？"])
    [hits] = reopened.search_batch(ZHANG, [Search(vector, 5, None, slots=("residence",))], 0.0)
    assert [h.memory.text for h in hits] == ["我住在杭州"]
    [record] = reopened._shard.retrieve([home.key], True, False)
    assert (
        record.payload[schema.WHEN] == [] and record.payload[schema.DERIVED_V] == schema.DERIVATION
    )
    reopened.close()


def test_a_store_open_in_another_process_is_a_clear_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "memory"
    EdgeMemoryStore(path, 8).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, qdrant_edge as qe; s = qe.EdgeShard.load(sys.argv[1]);"
         " s.info(); print('open', flush=True); sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(SettingsError, match="open in another process"):
            EdgeMemoryStore(path, 8)
    finally:
        holder.communicate("", timeout=30)


async def test_index_folds_pending_memories_and_later_writes_are_still_found(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    memories = _memories()
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    assert store.index(0) is None  # 0 = never
    assert store.index(4) is None  # fewer pending than asked for
    folded = store.index(3)
    assert folded is not None and folded[0] == 3
    assert store.index(1) is None  # nothing pending any more
    # written after the index: found in the appendable segment, next to the indexed ones
    late = Memory("小橙子最近开始对芒果过敏", ZHANG, subject="小橙子", entities=("小橙子",))
    store.upsert([late], embedder.embed([late.text]))
    read_path = ReadPath(embedder, store, load_settings().memory)
    recall = await read_path.recall(ZHANG, "小橙子能吃芒果和花生吗")
    recalled = [r.memory.text for r in recall.safety + recall.related]
    assert late.text in recalled and "小橙子对花生过敏" in recalled
    assert all(r.memory.person == ZHANG for r in recall.safety + recall.related)
    store.close()
    reopened = EdgeMemoryStore(tmp_path / "memory", embedder.dim)  # the layout survives a reload
    info = reopened._shard.info()
    assert (info.points_count, info.indexed_vectors_count) == (4, 3)
    refolded = reopened.index(1)
    assert refolded is not None and refolded[0] == 1
    reopened.close()


def test_a_float32_store_from_before_float16_storage_is_indexed_too(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    path = tmp_path / "memory"
    vectors = qe.EdgeVectorParams(size=embedder.dim, distance=qe.Distance.Cosine)
    old = qe.EdgeShard.create(str(path), qe.EdgeConfig(vectors=vectors))
    memories = _memories()
    old.update(
        qe.UpdateOperation.upsert_points(
            [
                qe.Point(m.key, v, m.to_payload())
                for m, v in zip(memories, embedder.embed([m.text for m in memories]), strict=True)
            ]
        )
    )
    old.close()
    store = EdgeMemoryStore(path, embedder.dim)
    assert store.indexable
    assert store.index(1) is not None
    [vector] = embedder.embed(["小橙子能吃什么"])
    [hits] = store.search_batch(ZHANG, [Search(vector, 5, 0.2)], time.time())
    assert [h.memory.text for h in hits][:1] == ["小橙子对花生过敏"]
    store.close()


def test_a_failed_index_build_leaves_the_store_serving(
    tmp_path: Path, embedder: UseEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.memory.engine import build_memory
    from tests.conftest import make_settings

    def fails(self: EdgeMemoryStore, min_points: int) -> None:
        raise Exception("Service runtime error: No space left on device")

    settings = make_settings(tmp_path, memory={"index_min_points": 1})
    store = EdgeMemoryStore(settings.resolve(settings.memory.store_path), embedder.dim)
    memories = _memories()
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    store.close()
    monkeypatch.setattr(EdgeMemoryStore, "index", fails)
    engine = build_memory(settings, embedder)  # opening indexes, and the build fails
    try:
        [vector] = embedder.embed(["小橙子能吃什么"])
        [hits] = engine.store.search_batch(ZHANG, [Search(vector, 5, None, ("小橙子",))], 0.0)
        assert [h.memory.text for h in hits] == ["小橙子对花生过敏"]
    finally:
        engine.close()
