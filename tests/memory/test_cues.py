"""Cue points ("when it matters", issue 17) in both stores: they point at their memories, live in
the person's cue tenant (never in a memory search, scroll or count), go with their memory, and
never cross persons."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from memory import schema
from memory.qdrant_store import QdrantMemoryStore
from memory.schema import Memory, MemoryClass, PersonId
from memory.store import EdgeMemoryStore, MemoryStore, Search, cue_changes, cue_hits
from providers.embedder import UseEmbedder

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
ZHANG, LI = PersonId("zhang"), PersonId("li")
NOW = 1_800_000_000.0


@pytest.fixture(params=["edge", "qdrant"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: UseEmbedder
) -> Iterator[MemoryStore]:
    made: MemoryStore
    if request.param == "edge":
        made = EdgeMemoryStore(tmp_path / "edge", embedder.dim)
    else:
        made = QdrantMemoryStore(QdrantClient(path=str(tmp_path / "q")), "m", embedder.dim)
    yield made
    made.close()


def _remember(store: MemoryStore, embedder: UseEmbedder, person: PersonId, text: str) -> Memory:
    memory = Memory(text=text, person=person, cls=MemoryClass.SAFETY)
    store.upsert([memory], embedder.embed([text]))
    return memory


def _cue_search(embedder: UseEmbedder, question: str) -> Search:
    [vector] = embedder.embed([question])
    return Search(vector, 5, None, cues=True, exclude_expired=False)


def test_a_cue_hit_points_at_its_memory_and_stays_out_of_memory_reads(
    store: MemoryStore, embedder: UseEmbedder
) -> None:
    mango = _remember(store, embedder, ZHANG, "女儿对芒果过敏")
    cues = ["芒果冰沙", "水果拼盘", "泰国水果干"]
    store.put_cues(ZHANG, mango, cues, embedder.embed(cues))
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "给孩子买点泰国水果干")], NOW)
    assert hits[0].cue == "泰国水果干"
    assert hits[0].memory.key == mango.key and hits[0].memory.text == mango.text
    # memory reads never see a cue point
    assert store.count(ZHANG) == 1 and [m.text for m in store.scroll(ZHANG).memories] == [
        mango.text
    ]
    [vector] = embedder.embed(["泰国水果干"])
    [plain] = store.search_batch(ZHANG, [Search(vector, 10, None)], NOW)
    assert [h.memory.key for h in plain] == [mango.key] and plain[0].cue is None
    # the memory itself, by id, in a vector search
    [by_id] = store.search_batch(ZHANG, [Search(vector, 3, None, ids=(mango.key,))], NOW)
    assert [h.memory.text for h in by_id] == [mango.text]


def test_cues_are_replaced_and_go_with_their_memory(
    store: MemoryStore, embedder: UseEmbedder
) -> None:
    mango = _remember(store, embedder, ZHANG, "女儿对芒果过敏")
    heights = _remember(store, embedder, ZHANG, "我恐高")
    store.put_cues(ZHANG, mango, ["芒果冰沙", "水果拼盘"], embedder.embed(["芒果冰沙", "水果拼盘"]))
    store.put_cues(ZHANG, mango, ["芒果蛋糕"], embedder.embed(["芒果蛋糕"]))  # replaces
    store.put_cues(ZHANG, heights, ["玻璃栈道"], embedder.embed(["玻璃栈道"]))
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "水果")], NOW)
    assert sorted(h.cue or "" for h in hits) == ["玻璃栈道", "芒果蛋糕"]
    store.delete(ZHANG, [mango.key])
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "水果")], NOW)
    assert [h.cue for h in hits] == ["玻璃栈道"]  # no orphan cue of the deleted memory
    store.drop_cues(ZHANG, [heights.key])
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "水果")], NOW)
    assert hits == [] and store.count(ZHANG) == 1


def test_cues_never_cross_persons(store: MemoryStore, embedder: UseEmbedder) -> None:
    mine = _remember(store, embedder, ZHANG, "女儿对芒果过敏")
    theirs = _remember(store, embedder, LI, "儿子对芒果过敏")
    store.put_cues(ZHANG, mine, ["芒果冰沙"], embedder.embed(["芒果冰沙"]))
    store.put_cues(LI, theirs, ["芒果冰沙"], embedder.embed(["芒果冰沙"]))
    [hits] = store.search_batch(LI, [_cue_search(embedder, "来杯芒果冰沙")], NOW)
    assert [h.memory.key for h in hits] == [theirs.key]
    with pytest.raises(ValueError):
        store.put_cues(LI, mine, ["芒果"], embedder.embed(["芒果"]))  # another person's memory
    store.delete_person(LI)
    [gone] = store.search_batch(LI, [_cue_search(embedder, "来杯芒果冰沙")], NOW)
    [kept] = store.search_batch(ZHANG, [_cue_search(embedder, "来杯芒果冰沙")], NOW)
    assert gone == [] and [h.memory.key for h in kept] == [mine.key]


def test_an_import_line_may_carry_its_cues(store: MemoryStore, embedder: UseEmbedder) -> None:
    from memory.importer import import_memories, parse_lines

    lines = parse_lines(
        ['{"text": "我恐高", "cls": "safety", "cues": ["玻璃栈道", "摩天轮"]}',
         '{"text": "我喜欢喝绿茶", "cls": "preference"}']
    )  # fmt: skip
    stored = import_memories(lines, ZHANG, embedder, store)
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "去走玻璃栈道")], NOW)
    assert {h.cue for h in hits} == {"玻璃栈道", "摩天轮"}
    assert {h.memory.key for h in hits} == {stored[0].key} and store.count(ZHANG) == 2


def test_memories_read_by_id_are_the_persons_own_live_and_scored(
    store: MemoryStore, embedder: UseEmbedder
) -> None:
    """What cue hits resolve to, the same in both engines: another person's id and an expired
    memory never come back."""
    mango = _remember(store, embedder, ZHANG, "女儿对芒果过敏")
    heights = _remember(store, embedder, ZHANG, "我恐高")
    theirs = _remember(store, embedder, LI, "儿子对花生过敏")
    gone = Memory(text="下周三体检前不能吃早饭", person=ZHANG, cls=MemoryClass.SAFETY,
                  expires_at=NOW - 60)  # fmt: skip
    store.upsert([gone], embedder.embed([gone.text]))
    [vector] = embedder.embed(["芒果冰沙"])
    ids = (mango.key, heights.key, theirs.key, gone.key)
    [hits] = store.search_batch(ZHANG, [Search(vector, 5, None, ids=ids)], NOW)
    assert [h.memory.key for h in hits] == [mango.key, heights.key]  # best first
    assert hits[0].score > hits[1].score > 0
    [capped] = store.search_batch(ZHANG, [Search(vector, 1, hits[1].score + 0.01, ids=ids)], NOW)
    assert [h.memory.key for h in capped] == [mango.key]


def test_one_cue_text_is_one_point_for_every_memory_it_was_made_for(
    store: MemoryStore, embedder: UseEmbedder
) -> None:
    """The same cue made for two memories: one vector pointing at both; each memory's cues go
    with it without taking the other's."""
    nuts = _remember(store, embedder, ZHANG, "女儿对花生过敏")
    sesame = _remember(store, embedder, ZHANG, "我对芝麻过敏")
    shared = ["吃点心", "买零食"]
    store.put_cues(ZHANG, nuts, shared, embedder.embed(shared))
    store.put_cues(ZHANG, sesame, [*shared, "芝麻酱"], embedder.embed([*shared, "芝麻酱"]))
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "吃点心")], NOW)
    top = [h for h in hits if h.cue == "吃点心"]
    assert {h.memory.key for h in top} == {nuts.key, sesame.key}
    assert len({h.score for h in top}) == 1  # one point, one score
    [both] = store.search_batch(ZHANG, [Search(embedder.embed(["吃点心"])[0], 2, None, cues=True,
                                               exclude_expired=False)], NOW)  # fmt: skip
    assert {h.cue for h in both} == {"吃点心", "买零食"}  # two points fill the limit, not four
    store.put_cues(ZHANG, nuts, ["花生酱"], embedder.embed(["花生酱"]))  # nuts' cues replaced
    [hits] = store.search_batch(ZHANG, [_cue_search(embedder, "吃点心")], NOW)
    assert {h.memory.key for h in hits if h.cue == "吃点心"} == {sesame.key}
    store.delete(ZHANG, [sesame.key])
    [hits] = store.search_batch(ZHANG, [Search(embedder.embed(["吃点心"])[0], 10, None,
                                               cues=True, exclude_expired=False)], NOW)  # fmt: skip
    assert [(h.memory.key, h.cue) for h in hits] == [(nuts.key, "花生酱")]


def test_a_cue_point_of_one_memory_as_written_before_is_read_and_replaced() -> None:
    """Stores written before one point per cue text hold one id and one text per point."""
    memory = Memory(text="我恐高", person=ZHANG, cls=MemoryClass.SAFETY)
    old = {"person": "zhang~cues", "cue_of": memory.key, "cue_for": "我恐高", "cue": "爬山"}
    [hit] = cue_hits(ZHANG, old, 0.8)
    assert (hit.memory.key, hit.memory.text, hit.cue) == (memory.key, "我恐高", "爬山")
    changes = cue_changes(ZHANG, [("old-id", old)], [memory.key], memory, ["爬山"], [[0.1]])
    assert changes.deletes == ["old-id"] and changes.repoint == []
    [(key, _, payload)] = changes.upserts
    assert payload["cue_of"] == [memory.key] and payload["cue_for"] == ["我恐高"]
    assert key == schema.cue_id(ZHANG, "爬山") != "old-id"
