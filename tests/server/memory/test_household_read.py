"""A member identified by voice hears what the household shares: the household's memory and
the other members' constraints, each in its owner's voice. Real embedder, real Qdrant Edge."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from config.settings import load_settings
from memory.importer import MemoryLine, import_memories
from memory.schema import Memory, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.household_read import in_owners_voice
from server.memory.readpath import ReadPath
from server.memory.safety import check_safety_tool
from server.tools import Sharing, ToolContext

HOME = PersonId("home")
GRANDMA = PersonId("home~grandma")
MUM = PersonId("home~mum")
EGG = "女儿叫朵朵，朵朵对鸡蛋过敏"
LIFT = "我有幽闭恐惧症，不坐电梯"
WARFARIN = "我在吃华法林，布洛芬和阿司匹林都不能吃"
GIFT = "我给老公订了一块手表当生日惊喜，别让他知道"


@pytest.fixture
def read_path(tmp_path: Path, embedder: UseEmbedder) -> Iterator[ReadPath]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_memories([MemoryLine(text=EGG, cls="safety", subject="朵朵", source="test"),
                     MemoryLine(text=LIFT, cls="safety", subject="我", source="test")],
                    HOME, embedder, store)  # fmt: skip
    import_memories([MemoryLine(text=WARFARIN, cls="safety", subject="我", source="test")],
                    GRANDMA, embedder, store)  # fmt: skip
    import_memories([MemoryLine(text=GIFT, cls="event", subject="我", source="test")],
                    MUM, embedder, store)  # fmt: skip
    yield ReadPath(embedder, store, load_settings().memory)
    store.close()


def speaking(member: PersonId, *others: Sharing) -> ToolContext:
    return ToolContext(
        member, "kitchen", "s1", household=(Sharing(HOME, "爸爸", whole=True), *others)
    )


async def test_a_member_hears_the_households_constraint(read_path: ReadPath) -> None:
    recall = await read_path.read("明天早上给朵朵蒸个鸡蛋羹", speaking(GRANDMA))
    assert EGG in recall.safety_texts
    assert recall.person == GRANDMA


async def test_another_members_constraint_is_heard_in_their_name(read_path: ReadPath) -> None:
    recall = await read_path.read(
        "奶奶腰疼，给她吃片布洛芬吧", speaking(MUM, Sharing(GRANDMA, "奶奶"))
    )
    assert "奶奶在吃华法林，布洛芬和阿司匹林都不能吃" in recall.safety_texts
    assert "奶奶在吃华法林" in recall.block


async def test_a_member_asking_for_themself_gets_their_own_not_the_owners(
    read_path: ReadPath,
) -> None:
    """The household store's 「我」 is the device's owner, not the grandmother speaking."""
    recall = await read_path.read("我腰疼得厉害，吃片布洛芬行不行", speaking(GRANDMA))
    assert WARFARIN in recall.safety_texts
    assert (
        LIFT not in recall.safety_texts and "爸爸有幽闭恐惧症，不坐电梯" not in recall.safety_texts
    )


async def test_another_members_other_memories_stay_theirs(read_path: ReadPath) -> None:
    recall = await read_path.read(
        "老公生日那天我送他什么好", speaking(GRANDMA, Sharing(MUM, "妈妈"))
    )
    assert not any("手表" in t for t in (*recall.safety_texts, *recall.related_texts))
    assert "手表" not in recall.block


async def test_a_member_not_shared_is_not_read(read_path: ReadPath) -> None:
    """A private member is left out of the household the session passes: nothing of theirs."""
    recall = await read_path.read("奶奶腰疼，给她吃片布洛芬吧", speaking(MUM))
    assert not any("华法林" in t for t in recall.safety_texts)


async def test_without_a_household_a_turn_reads_one_store(read_path: ReadPath) -> None:
    recall = await read_path.read("明天早上给朵朵蒸个鸡蛋羹", ToolContext(GRANDMA, "kitchen", "s1"))
    assert EGG not in recall.safety_texts


def test_a_memory_in_its_owners_voice() -> None:
    memory = Memory(text="我对花生过敏，我们家不买花生酱", person=GRANDMA, subject="我")
    named = in_owners_voice(memory, "奶奶")
    assert named.text == "奶奶对花生过敏，我们家不买花生酱" and named.subject == "奶奶"
    assert named.key == memory.key  # the same memory, read in another voice
    spoken = in_owners_voice(
        Memory(text="我怕猫", person=GRANDMA, subject="我", speaker="姥姥"), "奶奶"
    )
    assert spoken.text == "姥姥怕猫"


async def test_check_safety_answers_from_what_the_household_shares(read_path: ReadPath) -> None:
    tool = check_safety_tool(read_path.embedder, read_path.store)
    context = speaking(MUM, Sharing(GRANDMA, "奶奶"))
    answer = await tool.handler({"topic": "给奶奶买止痛药"}, context)
    assert "奶奶在吃华法林" in answer and "朵朵对鸡蛋过敏" in answer
    alone = await tool.handler({"topic": "给奶奶买止痛药"}, ToolContext(MUM, "kitchen", "s1"))
    assert "华法林" not in alone  # mum alone: her own store holds no constraint
