"""The lexical search (BM25 over memory texts, in the same batch as the vector searches): on the
embedded store and on the Qdrant-server store's client, person-scoped, expiry-aware, scored by
cosine like every hit, and read-path recall of a memory the vector search ranks too low."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import qdrant_edge as qe
from qdrant_client import QdrantClient

from config.settings import load_settings
from memory import schema
from memory.qdrant_store import QdrantMemoryStore
from memory.schema import Decay, Memory, MemoryClass, PersonId
from memory.store import EdgeMemoryStore, Search, cosine, lexical_hits
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath
from tests.memory.conftest import LI, ZHANG

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
PAST, FUTURE = 1_700_000_000.0, 4_102_444_800.0


def _memories() -> list[Memory]:
    return [
        Memory("Caroline: I went to a LGBTQ support group yesterday.", ZHANG),
        Memory("Melanie: I painted a lake sunrise last year.", ZHANG),
        Memory("Caroline: the support group meets again on Friday.", LI),  # another person's
        Memory(
            "Caroline: pottery class at the support group last week",
            ZHANG,
            MemoryClass.EVENT,
            Decay.TIME,
            PAST,
        ),
        Memory("Melanie: my kids love camping.", ZHANG, MemoryClass.EVENT, Decay.TIME, FUTURE),
    ]


@pytest.fixture
def store(tmp_path: Path, embedder: UseEmbedder) -> EdgeMemoryStore:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    memories = _memories()
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    return store


def test_bm25_picks_the_shared_words_scores_by_cosine_and_stays_in_the_person(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    question = "When did Caroline go to the LGBTQ support group?"
    [vector] = embedder.embed([question])
    [hits] = store.search_batch(ZHANG, [Search(vector, 5, None, text=question)], time.time())
    texts = [h.memory.text for h in hits]
    assert texts[0] == "Caroline: I went to a LGBTQ support group yesterday."
    assert "Caroline: the support group meets again on Friday." not in texts  # Li's
    assert not any("pottery" in t for t in texts)  # expired: excluded in the engine
    assert "Melanie: my kids love camping." not in texts  # no shared word
    assert hits[0].lexical > 0
    [memory_vector] = embedder.embed([hits[0].memory.text])
    assert hits[0].score == pytest.approx(cosine(vector, memory_vector), abs=2e-3)  # float16


def test_the_threshold_is_on_cosine(store: EdgeMemoryStore, embedder: UseEmbedder) -> None:
    question = "Did Caroline see Melanie painted at the support group?"
    [vector] = embedder.embed([question])
    [all_hits] = store.search_batch(ZHANG, [Search(vector, 5, None, text=question)], time.time())
    assert len(all_hits) == 3  # Caroline's, and Melanie's two
    cut = max(h.score for h in all_hits) - 1e-6
    [kept] = store.search_batch(ZHANG, [Search(vector, 5, cut, text=question)], time.time())
    assert [h.score >= cut for h in kept] == [True]


def test_a_store_from_before_the_text_index_gets_it_on_open(
    tmp_path: Path, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    store._shard.update(qe.UpdateOperation.delete_field_index(schema.TEXT))
    assert schema.TEXT not in store._shard.info().payload_schema
    store.close()
    reopened = EdgeMemoryStore(store.path, embedder.dim)
    question = "LGBTQ support group"
    [vector] = embedder.embed([question])
    [hits] = reopened.search_batch(ZHANG, [Search(vector, 3, None, text=question)], time.time())
    assert hits and "LGBTQ" in hits[0].memory.text
    reopened.close()


async def test_the_read_path_recalls_by_shared_words_what_cosine_alone_does_not(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    settings = load_settings().memory
    question = "When did Melanie paint a sunrise?"  # cosine 0.49: under the strict cut
    # the topic rule would take it directly, and the nearest of a question no route answers
    off = {"lexical_limit": 0, "topic_terms": 0, "question_nearest": 0}
    without = ReadPath(embedder, store, settings.model_copy(update=off))
    recall = await without.recall(ZHANG, question)
    target = "Melanie: I painted a lake sunrise last year."
    assert target not in [r.memory.text for r in recall.related]  # no anchor: strict cut
    lexical = settings.model_copy(update={"topic_terms": 0})
    recall = await ReadPath(embedder, store, lexical).recall(ZHANG, question)
    found = {r.memory.text: r.why for r in recall.related}
    assert found.get(target) == "lexical"
    assert recall.round_trips == 1  # the lexical search rode in round 1


def test_the_server_store_in_local_mode_says_it_cannot_rank_by_bm25(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    store = QdrantMemoryStore(QdrantClient(path=str(tmp_path / "q")), "memories", embedder.dim)
    memories = _memories()
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    question = "LGBTQ support group"
    [vector] = embedder.embed([question])
    searches = [Search(vector, 3, None), Search(vector, 3, None, text=question)]
    dense, lexical = store.search_batch(ZHANG, searches, time.time())
    assert dense and lexical == [] and store.lexical is False
    store.close()


def test_bm25_ties_are_broken_by_meaning_the_same_way_every_time() -> None:
    """Memories sharing only a name with the question tie on BM25; the engine's order among
    them is not stable, so the cut to the limit is made here: by cosine, then key."""
    near, far = [1.0, 0.0], [0.6, 0.8]

    def point(text: str, bm25: float, vector: list[float]) -> SimpleNamespace:
        memory = Memory(text=text, person=PersonId("p"))
        return SimpleNamespace(id=memory.key, payload=memory.to_payload(), score=bm25,
                               vector=vector)  # fmt: skip

    rows = [point(f"Leo {n}", 1.5, far) for n in range(4)]
    rows.insert(2, point("Leo 对麸质过敏", 1.5, near))
    rows.append(point("Leo 和 Leo 的 Leo", 0.9, near))  # lower BM25: never read past the cut
    search = Search(near, 2, None, text="Leo")
    for order in (rows, rows[::-1]):
        hits = lexical_hits(search, order)
        assert hits[0].memory.text == "Leo 对麸质过敏"
        assert [h.memory.text for h in hits] == [h.memory.text for h in lexical_hits(search, rows)]
