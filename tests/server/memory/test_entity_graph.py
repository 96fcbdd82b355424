"""The household entity graph, both ways: a question naming a child, a pet or a nickname reaches
the constraint stored under the relation word, and a relation reaches what is stored under a
name — on the real embedder and Qdrant Edge engine, without crossing persons."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.settings import load_settings
from memory import entities
from memory.importer import MemoryLine, import_memories
from memory.schema import MemoryClass, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath

WANG, ZHAO = PersonId("wang"), PersonId("zhao")
MANGO = "女儿对芒果过敏，吃了嘴巴会肿"
CHOCOLATE = "猫不能吃巧克力和洋葱"
PEANUT = "小橙子对花生过敏"
HOUSEHOLD = [
    ("女儿叫小橙子，今年五岁", MemoryClass.FACT, "女儿"),
    ("小橙子小名叫橙橙", MemoryClass.FACT, "小橙子"),
    (MANGO, MemoryClass.SAFETY, "女儿"),
    ("我家猫叫年糕，是只英短", MemoryClass.FACT, "猫"),
    (CHOCOLATE, MemoryClass.SAFETY, "猫"),
    ("年糕每天吃两顿猫粮", MemoryClass.FACT, "年糕"),
    ("我每周二晚上打羽毛球", MemoryClass.FACT, "我"),
]


@pytest.fixture
def read_path(tmp_path: Path, embedder: UseEmbedder) -> Iterator[ReadPath]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    lines = [MemoryLine(text=t, cls=c, subject=s) for t, c, s in HOUSEHOLD]
    import_memories(lines, WANG, embedder, store)
    # another family with the same names: never reached from Wang's questions
    other = [MemoryLine(text="小橙子对猕猴桃过敏", cls=MemoryClass.SAFETY, subject="小橙子"),
             MemoryLine(text="年糕不能喝牛奶", cls=MemoryClass.SAFETY, subject="年糕")]  # fmt: skip
    import_memories(other, ZHAO, embedder, store)
    # the graph alone: the safety lookup (tests/server/memory/test_lookup.py) would reach these
    # constraints in round 1 and take the credit
    settings = load_settings().memory.model_copy(update={"safety_lookup_limit": 0})
    yield ReadPath(embedder, store, settings)
    store.close()


def _safety(recall: object) -> dict[str, str]:
    return {r.memory.text: r.why for r in recall.safety}  # type: ignore[attr-defined]


@pytest.mark.parametrize("question", ["小橙子有什么忌口", "小橙子可以吃水果捞吗"])
async def test_a_name_reaches_the_constraint_under_the_relation(
    read_path: ReadPath, question: str
) -> None:
    recall = await read_path.recall(WANG, question, time.time())
    assert _safety(recall).get(MANGO) == "entity", recall.as_json()
    assert "小橙子对猕猴桃过敏" not in _safety(recall)  # the other family's 小橙子
    assert recall.round_trips <= 2


async def test_a_name_in_a_hit_on_another_matter_brings_none_of_her_constraints(
    read_path: ReadPath,
) -> None:
    piano = "小橙子的钢琴课从周日改到了每周六上午十点"
    lines = [MemoryLine(text=piano, cls=MemoryClass.FACT, subject="小橙子"),
             MemoryLine(text="我每周四晚上七点有吉他课", cls=MemoryClass.FACT, subject="我"),
             MemoryLine(text=PEANUT, cls=MemoryClass.SAFETY, subject="小橙子")]  # fmt: skip
    import_memories(lines, WANG, read_path.embedder, read_path.store)
    mine = await read_path.recall(WANG, "我每周四的吉他课几点开始？", time.time())
    recalled = {r.memory.text: r.why for r in mine.related}
    assert recalled.get(piano) == "direct", mine.as_json()  # her class is like mine…
    assert not mine.safety, mine.as_json()  # …and her allergy is no concern of my question
    hers = await read_path.recall(WANG, "小橙子周六上完钢琴课想吃点心", time.time())
    assert PEANUT in _safety(hers), hers.as_json()  # a request for her a constraint could touch
    assert _safety(hers).get(MANGO) == "entity", hers.as_json()
    when = await read_path.recall(WANG, "小橙子周六几点上钢琴课？", time.time())
    assert piano in {r.memory.text for r in when.related}, when.as_json()
    # a question for the time of her class is no occasion for her allergies
    assert not when.safety and {PEANUT, MANGO} <= {m.text for m in when.unneeded}, when.as_json()
    still = await read_path.recall(WANG, "小橙子的钢琴课还是周日上吗？", time.time())
    assert piano in {r.memory.text for r in still.related}, still.as_json()
    assert not still.safety, still.as_json()
    treat = await read_path.recall(WANG, "小橙子上完钢琴课能吃块蛋糕吗？", time.time())
    assert PEANUT in _safety(treat), treat.as_json()  # may she: her constraints answer it


async def test_a_pets_name_reaches_the_constraint_under_the_pet_word(read_path: ReadPath) -> None:
    recall = await read_path.recall(WANG, "给年糕买点零食", time.time())
    assert _safety(recall).get(CHOCOLATE) == "entity", recall.as_json()
    assert "年糕不能喝牛奶" not in _safety(recall)


async def test_with_the_lookup_on_the_constraints_arrive_and_stay_in_the_household(
    read_path: ReadPath,
) -> None:
    read_path.settings = read_path.settings.model_copy(update={"safety_lookup_limit": 4})
    recall = await read_path.recall(WANG, "给年糕买点零食", time.time())
    assert CHOCOLATE in _safety(recall) and "年糕不能喝牛奶" not in _safety(recall)


async def test_the_pet_word_reaches_what_is_stored_under_the_pets_name(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(WANG, "猫一天喂几顿？", time.time())
    related = {r.memory.text for r in recall.related}
    assert "年糕每天吃两顿猫粮" in related, recall.as_json()


def test_links_come_only_from_a_memory_about_a_name_the_question_says() -> None:
    assert entities.linked_to("小橙子能喝芒果冰沙吗", "女儿", ("女儿", "小橙子")) == [
        "女儿", "闺女",
    ]  # fmt: skip
    assert entities.linked_to("橙橙能吃芒果吗", "小橙子", ("小橙子", "橙橙")) == ["小橙子"]
    assert entities.linked_to("今天吃什么", "女儿", ("女儿", "小橙子")) == []
    assert "猫" in entities.relations_in("给猫咪买点零食")


async def test_a_fact_question_about_the_constraint_itself_keeps_it(read_path: ReadPath) -> None:
    """Left out only when the question does not ask about it: 「爸爸是哪年查出高血压的？」 shares
    高血压 with the constraint, 「爸爸今年多大了？」 nothing but whom it is about."""
    salt = "爸爸有高血压，饭菜不能太咸"
    lines = [MemoryLine(text=salt, cls=MemoryClass.SAFETY, subject="爸爸"),
             MemoryLine(text="爸爸今年六十五岁", cls=MemoryClass.FACT, subject="爸爸")]  # fmt: skip
    import_memories(lines, WANG, read_path.embedder, read_path.store)
    asked = await read_path.recall(WANG, "我爸是哪年查出高血压的？", time.time())
    assert salt in _safety(asked), asked.as_json()
    age = await read_path.recall(WANG, "我爸今年多大了？", time.time())
    assert salt not in _safety(age) and salt in {m.text for m in age.unneeded}, age.as_json()


async def test_a_request_naming_one_of_the_household_concerns_only_them(
    read_path: ReadPath,
) -> None:
    """「晚上做个宫保鸡丁给小橙子吃」 names her, as 「给我女儿…」 would: her constraints, under her
    name or the relation word 「女儿叫小橙子」 links to it — not the mother's or the cat's, which
    the safety lookup reads for a request that names nobody."""
    mom = "妈妈每天早上吃降压药，不能和西柚一起吃"
    lines = [MemoryLine(text=mom, cls=MemoryClass.SAFETY, subject="妈妈"),
             MemoryLine(text=PEANUT, cls=MemoryClass.SAFETY, subject="小橙子")]  # fmt: skip
    import_memories(lines, WANG, read_path.embedder, read_path.store)
    read_path.settings = load_settings().memory  # the safety lookup on
    hers = await read_path.recall(WANG, "晚上做个宫保鸡丁给小橙子吃", time.time())
    assert {PEANUT, MANGO} <= set(_safety(hers)), hers.as_json()
    assert mom not in _safety(hers) and CHOCOLATE not in _safety(hers), hers.as_json()
    everyone = await read_path.recall(WANG, "晚上做个宫保鸡丁", time.time())
    assert {PEANUT, MANGO, mom} <= set(_safety(everyone)), everyone.as_json()
    # a nickname, two name statements away from the relation word: 橙橙 → 小橙子 → 女儿
    nickname = await read_path.recall(WANG, "橙橙能喝芒果汁吗？", time.time())
    assert MANGO in _safety(nickname) and mom not in _safety(nickname), nickname.as_json()
    pet = await read_path.recall(WANG, "年糕能吃巧克力吗", time.time())
    assert CHOCOLATE in _safety(pet) and MANGO not in _safety(pet), pet.as_json()
