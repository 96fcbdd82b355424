"""Cues on the read path: a question that shares no words with a constraint reaches it through
a cue the write path made; the cue is logged, never rendered; a stale cue or another family
member's constraint stays out; still at most two round trips."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from config.settings import load_settings
from memory.schema import Memory, MemoryClass
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath
from server.understanding import knowledge
from tests.memory.conftest import ZHANG

HEIGHTS = "我恐高，站在高处腿就发软"
GOUT = "爸爸有痛风，不能喝啤酒"


@pytest.fixture
def core_knowledge(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only the hand-written knowledge table: what a cue brings is not also found by the
    generated tables (热气球 is of their fear-of-heights family)."""
    core = tuple(f for f in knowledge.families() if f.table == knowledge.CORE)
    monkeypatch.setattr(knowledge, "families", lambda: core)
    _forget_knowledge()
    yield
    monkeypatch.undo()
    _forget_knowledge()


def _forget_knowledge() -> None:
    for cached in (
        knowledge._compiled,
        knowledge._covered,
        knowledge._families_of,
        knowledge._hazards,
        knowledge._conditions,
        knowledge._every_item,
        knowledge._items,
    ):
        cached.cache_clear()


def _with_cues(store: EdgeMemoryStore, embedder: UseEmbedder, text: str, subject: str,
               cues: list[str]) -> Memory:  # fmt: skip
    memory = Memory(text=text, person=ZHANG, cls=MemoryClass.SAFETY, subject=subject)
    store.upsert([memory], embedder.embed([text]))
    store.put_cues(ZHANG, memory, cues, embedder.embed(cues))
    return memory


@pytest.mark.usefixtures("core_knowledge")
async def test_a_cue_brings_its_constraint_into_the_safety_group(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    read_path = ReadPath(embedder, store, load_settings().memory)
    question = "周末去坐热气球看风景"
    before = await read_path.recall(ZHANG, question)
    assert HEIGHTS not in [r.memory.text for r in before.safety]
    _with_cues(store, embedder, HEIGHTS, "我", ["坐热气球", "玻璃栈道", "蹦极", "摩天轮"])
    recall = await read_path.recall(ZHANG, question)
    [cued] = [r for r in recall.safety if r.memory.text == HEIGHTS]
    assert cued.why == "cue" and cued.cue == "坐热气球"
    assert HEIGHTS in recall.block and "坐热气球" not in recall.block
    assert recall.as_json()["groups"]["safety"][0]["cue"] == "坐热气球"  # type: ignore[index]
    assert recall.round_trips <= 2


async def test_cues_of_an_older_text_and_of_someone_else_stay_out(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    read_path = ReadPath(embedder, store, load_settings().memory)
    gout = _with_cues(store, embedder, GOUT, "爸爸", ["动物内脏", "老火靓汤", "海鲜大餐"])
    mom = await read_path.recall(ZHANG, "给我妈买点动物内脏")
    assert GOUT not in [r.memory.text for r in mom.safety + mom.related]
    dad = await read_path.recall(ZHANG, "给我爸买点动物内脏")
    assert GOUT in [r.memory.text for r in dad.safety]
    # the memory's text changed since its cues were made: they no longer bring it
    revised = Memory(text="爸爸有痛风，医生说海鲜要少吃", person=ZHANG, cls=MemoryClass.SAFETY,
                     subject="爸爸", id=gout.key)  # fmt: skip
    store.upsert([revised], embedder.embed([revised.text]))
    again = await read_path.recall(ZHANG, "给我爸买点动物内脏")
    assert all(r.why != "cue" for r in again.safety + again.related)


async def test_a_question_about_the_world_is_no_situation_for_a_cue(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    read_path = ReadPath(embedder, store, load_settings().memory)
    _with_cues(store, embedder, HEIGHTS, "我", ["长城", "黄山"])
    asked = await read_path.recall(ZHANG, "长城有多长？")
    assert asked.block == "" and asked.safety == ()
    plan = await read_path.recall(ZHANG, "周末去长城")
    assert [r.why for r in plan.safety if r.memory.text == HEIGHTS] == ["cue"]


async def test_a_cue_made_for_several_memories_brings_each_up_to_the_limit(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """One point per cue text: 「坐缆车」 made for two of the speaker's constraints brings both
    (Hearth's own lookup off, so only cues bring them); ``cue_limit`` caps the memories cues
    bring, not the points."""
    question = "我想坐缆车"
    claustro = _with_cues(store, embedder, "我有幽闭恐惧症，不坐电梯", "我", ["坐缆车", "钻山洞"])
    _with_cues(store, embedder, HEIGHTS, "我", ["坐缆车", "玻璃栈道"])
    settings = load_settings().memory.model_copy(update={"safety_lookup_limit": 0})
    both = await ReadPath(embedder, store, settings).recall(ZHANG, question)
    cued = {r.memory.text: r.cue for r in both.safety if r.why == "cue"}
    assert cued == {claustro.text: "坐缆车", HEIGHTS: "坐缆车"}
    one = ReadPath(embedder, store, settings.model_copy(update={"cue_limit": 1}))
    capped = await one.recall(ZHANG, question)
    assert len([r for r in capped.safety if r.why == "cue"]) == 1
