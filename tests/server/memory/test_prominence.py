"""Recall that holds on phrasing the read path was not tuned to: the memory that stands out from
the person's others, relatives named from the child's side or by their children's word, and the
constraints of the pets that share the home. Real embedder, real Qdrant Edge engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from config.settings import load_settings
from memory.importer import MemoryLine, import_memories
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath

WU = PersonId("wu")
ROWS = [
    ("烟雾报警器的备用电池放在鞋柜最上面的抽屉里", "fact", "我"),
    ("婆婆在吃华法林，活血化瘀的药和膏药都不能用", "safety", "婆婆"),
    ("公公肝硬化，一滴酒都不能喝", "safety", "公公"),
    ("我妈在吃降压药，西柚和西柚汁都不能碰", "safety", "我妈"),
    ("家里的猫叫可乐，百合花的花粉和叶子对它都是剧毒", "safety", "猫"),
    ("狗狗不能吃巧克力", "safety", "狗"),
    ("我们家住在成都高新区", "fact", "我"),
    ("老公在一家银行上班", "fact", "老公"),
    ("我每周六上午去游泳", "fact", "我"),
    ("儿子叫乐乐，上小学二年级", "fact", "儿子"),
    ("乐乐喜欢拼乐高", "preference", "乐乐"),
    ("我喜欢喝茉莉花茶", "preference", "我"),
    ("老公周五晚上要加班", "event", "老公"),
]


@pytest.fixture
def read_path(tmp_path: Path, embedder: UseEmbedder) -> Iterator[ReadPath]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    lines = [MemoryLine(text=t, cls=c, subject=s, source="test") for t, c, s in ROWS]
    import_memories(lines, WU, embedder, store)
    yield ReadPath(embedder, store, load_settings().memory)
    store.close()


def recalled(recall: object) -> list[str]:
    return [r.memory.text for r in (*recall.safety, *recall.related)]  # type: ignore[attr-defined]


ASKED_BY_WHAT_IT_DOES = "冒烟会叫的那个报警的，它的备用电池放哪儿了"
# the other ways an unanchored question reaches a memory, off: what is left is prominence
ONLY_PROMINENCE = {"topic_terms": 0, "lexical_limit": 0, "cue_limit": 0, "question_nearest": 0}


async def test_the_memory_that_stands_out_is_recalled_without_a_word_in_common(
    read_path: ReadPath,
) -> None:
    """No 我, no relation, no name, no shared topic word: the closest memory stands far enough
    above the person's others to be what the question is about."""
    read_path.settings = read_path.settings.model_copy(update=ONLY_PROMINENCE)
    recall = await read_path.recall(WU, ASKED_BY_WHAT_IT_DOES)
    assert recalled(recall) == [ROWS[0][0]]
    assert recall.round_trips <= 2


async def test_prominence_zero_turns_it_off(read_path: ReadPath) -> None:
    update = {**ONLY_PROMINENCE, "prominence": 0.0}
    read_path.settings = read_path.settings.model_copy(update=update)
    recall = await read_path.recall(WU, ASKED_BY_WHAT_IT_DOES)
    assert ROWS[0][0] not in recalled(recall)


async def test_a_store_too_small_to_tell_has_no_prominent_memory(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "one", embedder.dim)
    import_memories([MemoryLine(text=ROWS[0][0], cls="fact", subject="我", source="test")],
                    WU, embedder, store)  # fmt: skip
    settings = load_settings().memory.model_copy(update=ONLY_PROMINENCE)
    recall = await ReadPath(embedder, store, settings).recall(WU, ASKED_BY_WHAT_IT_DOES)
    store.close()
    assert recalled(recall) == []


async def test_a_question_about_a_place_of_the_world_is_not_about_the_home_there(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(WU, "成都一共有多少个区？")
    assert recalled(recall) == []


async def test_a_grandparent_named_from_the_childs_side_is_the_speakers_in_law(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(WU, "孩子奶奶腰又疼了，给她贴张活血止痛膏吧")
    assert ROWS[1][0] in [r.memory.text for r in recall.safety]


async def test_a_grandparent_no_one_owns_is_the_childrens(read_path: ReadPath) -> None:
    """从儿称: in a home with children 爷爷 is the children's grandfather."""
    recall = await read_path.recall(WU, "今晚让爷爷陪客人多喝两杯白酒")
    assert ROWS[2][0] in [r.memory.text for r in recall.safety]


async def test_a_relation_in_any_spelling_reaches_the_constraint(read_path: ReadPath) -> None:
    recall = await read_path.recall(WU, "超市西柚打折，给母亲带两个回去")
    assert ROWS[3][0] in [r.memory.text for r in recall.safety]


async def test_a_pets_constraint_concerns_what_is_brought_into_the_home(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(WU, "朋友送了一大束香水百合，我插在客厅茶几上了")
    assert ROWS[4][0] in [r.memory.text for r in recall.safety]


async def test_a_pets_constraint_is_not_read_for_what_the_speaker_eats(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(WU, "我下午想吃块黑巧克力")
    assert ROWS[5][0] not in [r.memory.text for r in recall.safety]
