"""Issue 19, items 1-2: Hearth looks before the model answers (the safety lookup in the read
path's first round trip, scoped to whoever the request is about), and the block says what memory
does not hold. Real embedder, real Qdrant Edge store (the household fixture)."""

from __future__ import annotations

import pytest

from memory.schema import Memory, MemoryClass, PersonId
from server.memory.readpath import ReadPath
from server.memory.render import LOOKED_NOTHING, NO_MEMORY, SAFETY_GROUP
from server.understanding.lookup import for_outsiders, in_scope, scope_of, touches_safety
from tests.memory.conftest import ZHANG

CLAUSTRO = "我有幽闭恐惧症，不坐电梯"
WIFE = "我老婆对海鲜过敏，尤其是虾，一吃就起疹子"
DAD = "爸爸有高血压，不能吃太咸的东西"
MOM = "妈妈每天早上吃降压药，不能和西柚一起吃"


def texts(part: list) -> list[str]:  # type: ignore[type-arg]
    return [r.memory.text for r in part]


@pytest.mark.parametrize(
    "question",
    ["晚上做个宫保鸡丁", "给我爸买一箱啤酒", "我头疼，能吃片布洛芬吗？", "帮我订个酒店",
     "周末去爬山", "给猫喂点东西", "我想买盆绿萝", "我要坐电梯上二十楼"],
)  # fmt: skip
def test_requests_about_food_medicine_buying_outings_pets_touch_safety(question: str) -> None:
    assert touches_safety(question)


@pytest.mark.parametrize(
    "question",
    ["放首周杰伦的歌", "明天会下雨吗", "用Python写个排序", "现在几点了", "把灯关了", "讲个笑话",
     "我女儿叫什么名字？", "我老婆生日是哪天？", "定个十分钟的闹钟", "你好呀"],
)  # fmt: skip
def test_chat_music_weather_code_and_commands_do_not(question: str) -> None:
    assert not touches_safety(question)


def _constraint(text: str, subject: str | None, entities: tuple[str, ...] = ()) -> Memory:
    return Memory(text, PersonId("p"), MemoryClass.SAFETY, subject=subject, entities=entities)


CONSTRAINTS = [
    _constraint(WIFE, "老婆", ("老婆",)),
    _constraint(DAD, "爸爸", ("爸爸",)),
    _constraint(CLAUSTRO, "我"),
    _constraint("小橙子对花生过敏", "小橙子", ("小橙子",)),
    _constraint("家里不能用香薰", None),
]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("给我爸买一箱啤酒", [DAD]),  # 我爸 is possessive: dad's, not mine
        ("我老婆想吃蒜蓉粉丝蒸扇贝", [WIFE]),
        ("我中午一个人去爬山", [CLAUSTRO]),  # the speaker alone
        ("给小橙子买点零食", [WIFE, DAD, "小橙子对花生过敏"]),  # a name: everyone
        ("我们全家周末去吃火锅", [WIFE, DAD, "小橙子对花生过敏"]),
        ("买束鲜花放客厅", ["家里不能用香薰"]),  # plants: the household's own
    ],
)
def test_the_lookup_keeps_the_constraints_of_whoever_the_request_is_about(
    question: str, expected: list[str]
) -> None:
    assert [m.text for m in in_scope(question, CONSTRAINTS, 4)] == expected


def test_a_name_in_the_request_reaches_that_persons_constraint_in_a_relation_scope() -> None:
    scope = scope_of("给我爸和小橙子各买一杯奶茶")
    peanut = CONSTRAINTS[3]
    assert scope.covers("给我爸和小橙子各买一杯奶茶", peanut)
    assert not scope.covers("给我爸和小橙子各买一杯奶茶", CONSTRAINTS[0])


def test_the_speakers_own_constraint_is_theirs_whatever_it_mentions() -> None:
    """「我对猫毛过敏」 mentions the cat: still the speaker's, for any request the speaker is in
    (with the daughter, at a pet shop); not for a request only for her."""
    cat_hair = _constraint("我对猫毛过敏", "我", ("猫",))
    together = "我和女儿周末去宠物店玩"
    assert scope_of(together).covers(together, cat_hair)
    assert in_scope(together, [cat_hair, CONSTRAINTS[0]], 4) == [cat_hair]
    for_her = "给我女儿买只小兔子"
    assert not scope_of(for_her).covers(for_her, cat_hair)


async def test_a_request_the_model_might_not_check_gets_the_constraint_anyway(
    read_path: ReadPath,
) -> None:
    """「帮我订个三十楼以上的酒店房间」 shares no word with 「我有幽闭恐惧症，不坐电梯」 and scores
    below every threshold: only the lookup brings it, in the first round trip."""
    recall = await read_path.recall(ZHANG, "帮我订个三十楼以上的酒店房间")
    assert recall.looked and CLAUSTRO in texts(recall.safety)
    assert next(r for r in recall.safety if r.memory.text == CLAUSTRO).why == "lookup"
    assert recall.round_trips == 1
    assert recall.block.index(SAFETY_GROUP) < recall.block.index(CLAUSTRO)
    off = read_path.settings.model_copy(update={"safety_lookup_limit": 0})
    read_path.settings = off
    assert CLAUSTRO not in texts(
        (await read_path.recall(ZHANG, "帮我订个三十楼以上的酒店房间")).safety
    )


async def test_the_lookup_brings_only_the_constraints_of_whoever_it_is_about(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(ZHANG, "给我爸腌点咸菜带回去")
    assert DAD in texts(recall.safety)
    assert WIFE not in texts(recall.safety) and CLAUSTRO not in texts(recall.safety)


async def test_a_looked_up_request_with_no_constraint_in_scope_says_so(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(ZHANG, "给我同事买杯奶茶")  # 我 → the speaker's own: none
    lookup_hits = [r for r in recall.safety if r.why == "lookup"]
    assert recall.looked and all(r.memory.text == CLAUSTRO for r in lookup_hits)
    nothing = await read_path.recall(PersonId("li"), "帮我订一张去北京的高铁票")
    if not nothing.safety:
        assert LOOKED_NOTHING in nothing.block


@pytest.mark.parametrize("question", ["放首周杰伦的歌", "明天会下雨吗", "讲个笑话"])
async def test_quiet_requests_are_not_looked_up(read_path: ReadPath, question: str) -> None:
    recall = await read_path.recall(ZHANG, question)
    assert not recall.looked and recall.block == ""


async def test_a_personal_question_with_nothing_recalled_says_memory_has_nothing(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(ZHANG, "我是什么血型？")
    assert recall.safety == () and recall.related == ()
    assert NO_MEMORY in recall.block and recall.block.startswith("<memory>")


@pytest.mark.parametrize(
    ("question", "outsiders"),
    [("给我同事买杯奶茶", True), ("中秋给领导送点月饼", True), ("请客户吃顿海鲜", True),
     ("我和同事去吃火锅", False), ("和大学同学吃饭带上我老婆", False),
     ("我们请朋友来家里吃饭", False),
     ("给我妈买点水果", False), ("订个外卖", False)],
)  # fmt: skip
def test_a_request_only_for_people_outside_the_household_touches_no_constraint(
    question: str, outsiders: bool
) -> None:
    assert for_outsiders(question) is outsiders


def test_a_constraint_on_another_topic_stays_out_and_one_of_unknown_topic_stays_in() -> None:
    """A penicillin allergy is no answer to a meal (the local model recited it); a fear it
    cannot place is kept (a constraint missed costs more)."""
    penicillin = _constraint("我对青霉素过敏", "我")
    heights = _constraint("我恐高，站在高处腿就发软", "我")
    odd = _constraint("我不能熬夜", "我")
    meal = in_scope("我中午想吃个鸡腿饭", [penicillin, heights, odd], 4)
    assert [m.text for m in meal] == ["我不能熬夜"]
    medicine = in_scope("我感冒了，能吃阿莫西林吗？", [penicillin, heights, odd], 4)
    assert [m.text for m in medicine] == ["我对青霉素过敏", "我不能熬夜"]
    walkway = in_scope("带我去爬高空玻璃栈道", [penicillin, heights, odd], 4)
    assert [m.text for m in walkway] == ["我恐高，站在高处腿就发软", "我不能熬夜"]


@pytest.mark.parametrize(
    ("request_text", "subject", "concerned"),
    [
        ("我公公吃的那个抗凝药，平时要注意么子", "嗲嗲", True),  # a wife speaking
        ("我婆婆血糖高，晚饭给她做点么子好", "娭毑", True),
        ("给我爸买箱啤酒", "姥爷", True),  # the child's maternal grandfather: her father
        ("给我妈买点蛋糕", "嗲嗲", False),  # a grandfather is no one's mother
    ],
)
def test_a_member_called_from_the_childs_side_is_the_one_the_speaker_names(
    request_text: str, subject: str, concerned: bool
) -> None:
    memory = Memory("他在吃华法林，止疼药不能乱吃", ZHANG, MemoryClass.SAFETY, subject=subject,
                    entities=(subject,))  # fmt: skip
    assert scope_of(request_text).covers(request_text, memory) is concerned
