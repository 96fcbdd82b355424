"""The Qdrant-server store through qdrant-client (local mode stands in for the server here:
same client calls; production points it at `http://qdrant:6333`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from config.settings import SettingsError, load_settings
from memory import schema
from memory.importer import import_file
from memory.qdrant_store import QdrantMemoryStore, in_process
from memory.schema import MemoryClass
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath
from tests.memory.conftest import FIXTURES, LI, ZHANG

# Local mode ignores payload indexes (a Qdrant server uses them); the warning says so.
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


@pytest.fixture
def qdrant_store(tmp_path: Path, embedder: UseEmbedder) -> Iterator[QdrantMemoryStore]:
    store = QdrantMemoryStore(QdrantClient(path=str(tmp_path / "q")), "memories", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", ZHANG, embedder, store)
    import_file(FIXTURES / "household_li.jsonl", LI, embedder, store)
    yield store
    store.close()


async def test_same_read_path_results_on_the_server_store(
    qdrant_store: QdrantMemoryStore, embedder: UseEmbedder
) -> None:
    read_path = ReadPath(embedder, qdrant_store, load_settings().memory)
    implicit = await read_path.recall(ZHANG, "订个海鲜礼包送我老婆")
    assert "我老婆对海鲜过敏，尤其是虾，一吃就起疹子" in [r.memory.text for r in implicit.safety]
    nickname = await read_path.recall(ZHANG, "我女儿能吃花生酱吗")
    assert "小橙子对花生过敏" in [r.memory.text for r in nickname.safety]
    assert (await read_path.recall(ZHANG, "放首周杰伦的歌")).block == ""
    other = await read_path.recall(LI, "订个海鲜礼包送我老婆")
    assert all(r.memory.person == LI for r in other.safety + other.related)


def test_scoped_reads_and_writes(qdrant_store: QdrantMemoryStore) -> None:
    assert qdrant_store.count(ZHANG) == 15 and qdrant_store.count(LI) == 5
    safety = qdrant_store.scroll(ZHANG, cls=MemoryClass.SAFETY.value).memories
    assert {m.person for m in safety} == {ZHANG} and len(safety) == 5
    some_li = qdrant_store.scroll(LI).memories[0]
    assert qdrant_store.get(ZHANG, [some_li.key]) == []  # another person's id reads nothing
    qdrant_store.delete(ZHANG, [some_li.key])  # …and deletes nothing
    assert qdrant_store.count(LI) == 5
    qdrant_store.delete_person(LI)
    assert qdrant_store.count(LI) == 0 and qdrant_store.count(ZHANG) == 15


def test_url_must_pin_the_scheme() -> None:
    settings = load_settings(
        memory={"store": "qdrant"}, qdrant={"url": "qdrant:6333", "api_key": "k"}
    )
    with pytest.raises(SettingsError) as info:
        QdrantMemoryStore.from_settings(settings, 512)
    assert info.value.key == "qdrant.url"


async def test_a_collection_from_before_the_derived_fields_is_backfilled(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    client = QdrantClient(path=str(tmp_path / "q"))
    import_file(FIXTURES / "household_zhang.jsonl", ZHANG, embedder,
                QdrantMemoryStore(client, "memories", embedder.dim))  # fmt: skip
    records, _ = client.scroll("memories", limit=1000, with_payload=True)
    derived = list(schema.DERIVED_FIELDS)
    client.delete_payload("memories", derived, points=[r.id for r in records])
    for key in derived:
        client.delete_payload_index("memories", key)
    reopened = QdrantMemoryStore(client, "memories", embedder.dim)
    records, _ = client.scroll("memories", limit=1000, with_payload=True)
    assert all((r.payload or {}).get(schema.PERSON_ENTITIES) for r in records
               if (r.payload or {}).get(schema.ENTITIES))  # fmt: skip
    assert all(schema.SLOTS in (r.payload or {}) for r in records)
    nickname = await ReadPath(embedder, reopened, load_settings().memory).recall(
        ZHANG, "我女儿能吃花生酱吗"
    )
    assert "小橙子对花生过敏" in [r.memory.text for r in nickname.safety]
    reopened.close()


def test_local_mode_stays_on_the_callers_thread(qdrant_store: QdrantMemoryStore) -> None:
    """Local mode is not thread-safe: two arq jobs' upsert and search in threads broke its arrays
    (IndexError in a CI run). Only a server store runs its calls in a worker thread."""
    assert qdrant_store.remote is False
    assert in_process(QdrantClient(location=":memory:"))
    # never contacted: construction is lazy without the version check
    assert not in_process(QdrantClient(url="http://127.0.0.1:9", check_compatibility=False))
