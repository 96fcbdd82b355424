"""Issue 19, item 1: the constraints a request plainly names are said by Hearth itself, first —
an item both share, one step of world knowledge, a cue's item — of whoever the request is about,
and never a constraint the request does not touch (the LOOK rule). Unit tests on the rules, then
the read path on the household fixture (real embedder, real Qdrant Edge store)."""

from __future__ import annotations

import pytest

from memory.schema import Memory, MemoryClass, PersonId
from server.memory.applies import (
    applying,
    closest,
    forbidding,
    nearest_of_each,
    spoken,
    touches,
)
from server.memory.readpath import ReadPath
from server.understanding.knowledge import rules_out
from server.understanding.question import Question
from tests.memory.conftest import ZHANG

P = PersonId("zhang")


def constraint(text: str, subject: str, speaker: str | None = None) -> Memory:
    about = () if subject == "我" else (subject,)
    return Memory(text, P, MemoryClass.SAFETY, subject=subject, entities=about, speaker=speaker)


DAD_GOUT = constraint("爸爸有痛风，不能喝啤酒", "爸爸")
DAD_SALT = constraint("爸爸有高血压，饭菜不能太咸", "爸爸")
PEANUT = constraint("小橙子对花生过敏", "小橙子")
MANGO = constraint("女儿对芒果过敏，吃了嘴巴会肿", "女儿")
PENICILLIN = constraint("我对青霉素过敏", "我")
HEIGHTS = constraint("我恐高，站在高处腿就发软", "我")
CAT = constraint("猫肾不好，只能吃处方猫粮", "猫")
ALL = [DAD_GOUT, DAD_SALT, PEANUT, MANGO, PENICILLIN, HEIGHTS, CAT]


def said(question: str, aliases: tuple[str, ...] = ()) -> list[str]:
    return [m.text for m in applying(question, [(m, None) for m in ALL], aliases)]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("给我爸买一箱啤酒", [DAD_GOUT]),  # the same item
        ("给小橙子买点花生糖", [PEANUT]),
        ("晚上做个宫保鸡丁给小橙子吃", [PEANUT]),  # a dish that holds the allergen
        ("我喉咙发炎，能吃阿莫西林吗", [PENICILLIN]),  # a medicine of the family
        ("给我爸腌点咸菜带回去", [DAD_SALT]),  # salty, for a no-salt diet
        ("周末去走玻璃栈道", [HEIGHTS]),  # up high, for a fear of heights
        ("给年糕换一款便宜的猫粮", [CAT]),
    ],
)
def test_a_request_naming_what_a_constraint_is_about_gets_it(
    question: str, expected: list[Memory]
) -> None:
    assert said(question) == [m.text for m in expected]


@pytest.mark.parametrize(
    "question",
    [
        "我下班想去跑个步",  # nothing any constraint is about (LOOK)
        "我想喝杯热牛奶再睡",
        "给我买一双跑步鞋",
        "给我同事买一箱啤酒",  # for someone outside the household
        "给我妈买一箱啤酒",  # 爸爸's gout is not 妈妈's
        "我对什么过敏？",  # 过敏 names no item
    ],
)
def test_nothing_is_said_that_the_request_does_not_touch(question: str) -> None:
    assert said(question) == []


def test_a_name_reaches_the_constraint_stored_under_its_relation_word() -> None:
    assert said("给小橙子买个芒果蛋糕") == []  # nothing links 小橙子 to 女儿 here…
    assert said("给小橙子买个芒果蛋糕", ("女儿",)) == [MANGO.text]  # …memory does


def test_a_cue_of_the_write_path_counts_by_its_item() -> None:
    swim = constraint("我戴的助听器不能进水", "我")
    assert not touches("下午去泳池玩玩", swim)
    assert touches("下午去泳池玩玩", swim, cue="游泳池、泳池、潜水")
    assert not touches("下午去泳池玩玩", swim, cue="洗头、淋雨")


def test_the_constraint_is_said_to_whoever_listens() -> None:
    assert spoken(PENICILLIN) == "你对青霉素过敏"  # their own words
    assert spoken(constraint("我恐高。", "我", speaker="me")) == "你恐高"
    assert spoken(constraint("我恐高", "我", speaker="张伟")) == "张伟恐高"  # someone else's


async def test_the_read_path_says_first_only_what_the_request_names(read_path: ReadPath) -> None:
    dad = await read_path.recall(ZHANG, "给我爸腌点咸菜带回去")
    assert [m.text for m in dad.applies] == ["爸爸有高血压，不能吃太咸的东西"]
    assert dad.as_json()["applies"] == ["爸爸有高血压，不能吃太咸的东西"]
    wife = await read_path.recall(ZHANG, "订个海鲜礼包送我老婆")
    assert [m.text for m in wife.applies] == ["我老婆对海鲜过敏，尤其是虾，一吃就起疹子"]
    run = await read_path.recall(ZHANG, "我下班想去跑个步")
    assert run.looked and run.applies == ()
    off = read_path.settings.model_copy(update={"say_constraints": False})
    read_path.settings = off
    assert (await read_path.recall(ZHANG, "给我爸腌点咸菜带回去")).applies == ()


def test_a_request_naming_only_what_a_family_covers_is_looked_up() -> None:
    from server.understanding.knowledge import covers, names_covered
    from server.understanding.lookup import in_scope, touches_safety

    assert not touches_safety("我们去坐摩天轮吧") and names_covered("我们去坐摩天轮吧")
    assert not names_covered("我家宝贝今天真乖")  # one character (贝) never starts a lookup
    assert covers(HEIGHTS.text, "帮我订个旋转餐厅靠窗的位子")
    # a revolving restaurant is food by its words, up high by what it is: kept for its family
    assert in_scope("帮我订个旋转餐厅靠窗的位子", [PENICILLIN, HEIGHTS], 4) == [HEIGHTS]


async def test_the_read_path_looks_up_a_covered_thing_and_keeps_only_its_family(
    read_path: ReadPath,
) -> None:
    lift = await read_path.recall(ZHANG, "去地铁站坐直梯下去吧")
    assert lift.looked
    assert [r.memory.text for r in lift.safety if r.why == "lookup"] == ["我有幽闭恐惧症，不坐电梯"]
    assert [m.text for m in lift.applies] == ["我有幽闭恐惧症，不坐电梯"]
    nothing = await read_path.recall(ZHANG, "周末去坐摩天轮吧")  # no fear of heights held
    assert not nothing.looked and nothing.applies == ()


def test_the_constraints_said_first_are_the_same_for_the_text_and_the_question() -> None:
    said = [(m, None) for m in ALL]
    found = [(MANGO, 0.5), (DAD_GOUT, 0.48)]
    for text in ("给我女儿买个芒果蛋糕", "给我同事买杯奶茶", "晚上给爸爸喝点啤酒", "给她买个芒果"):
        assert applying(Question(text), said) == applying(text, said)
        assert closest(Question(text), found) == closest(text, found)
    assert applying(Question("晚上给爸爸喝点啤酒"), said) == [DAD_GOUT]


def test_a_pets_food_rule_is_not_said_for_what_someone_else_eats() -> None:
    bird = constraint("豆豆是玄凤鹦鹉，牛油果和白酒都不能给它", "豆豆")
    assert applying("晚上想喝碗甜白酒煮鸡蛋", [(bird, None)]) == []
    assert applying("豆豆想尝一口白酒", [(bird, None)]) == [bird]


def test_a_pets_rule_concerns_what_is_brought_into_the_home() -> None:
    cat = constraint("番薯是猫，百合花对它有毒，家里不能摆百合", "番薯")
    assert applying("邻居送了一盆香水百合，我先摆在客厅窗台上", [(cat, None)]) == [cat]


def test_of_one_members_applying_constraints_the_nearest_in_meaning_are_said() -> None:
    painkillers = constraint("婆婆吃着华法林，布洛芬、阿司匹林这类止痛药都不能吃", "婆婆")
    herbs = constraint("婆婆吃华法林期间，三七粉、丹参这些活血的东西不能碰", "婆婆")
    son = constraint("儿子对芝麻过敏", "儿子")
    scores = {painkillers.key: 0.52, herbs.key: 0.31, son.key: 0.2}
    # the herbs are further than the margin from the painkillers; the son's is another member's
    assert nearest_of_each([painkillers, herbs, son], scores) == [painkillers, son]
    close = {painkillers.key: 0.52, herbs.key: 0.45}
    assert nearest_of_each([painkillers, herbs], close) == [painkillers, herbs]
    # a constraint with no score (nothing to compare) is kept
    assert nearest_of_each([painkillers, herbs], {painkillers.key: 0.9}) == [painkillers, herbs]


def test_people_are_not_items() -> None:
    # 「那口子」 and 「医生」 in both say nothing about what the request names
    fava = constraint("我那口子有蚕豆病，蚕豆一颗都不能吃", "老公")
    assert not touches("我那口子最近迷上钓鱼了，周末都往河边跑", fava)
    diabetes = constraint("我查出来妊娠糖尿病，医生喊控糖，甜食甜饮料要少", "我")
    assert not touches("我老汉儿腰杆痛，医生喊他去拍个核磁共振", diabetes)
    assert touches("我那口子想吃炒蚕豆", fava)


def test_a_pet_named_after_a_food_is_not_that_food() -> None:
    kiwi = constraint("Kiwi is a budgie — never overheat a nonstick pan, the fumes can kill birds.",
                      "Kiwi")  # fmt: skip
    assert not touches("Morning! Rough night — Kiwi started chirping at five.", kiwi)
    allergy = constraint("我对猕猴桃过敏", "我")
    assert touches("买点kiwi回来榨汁", allergy)


def test_a_request_for_an_outsider_that_names_a_member_is_that_members() -> None:
    leo = constraint("Leo has coeliac disease: strictly gluten-free, no wheat", "Leo")
    assert applying("Leo 同学过生日，蛋糕是面粉做的，让他吃一小块应该没啥吧？", [(leo, None)]) == [
        leo
    ]
    assert applying("同事过生日，帮我挑个面粉做的蛋糕", [(leo, None)]) == []


def test_the_speakers_own_constraint_is_said_beside_a_named_members() -> None:
    grapefruit = constraint("我吃的降压药是非洛地平，不能配西柚", "我")
    mango = constraint("阿兰对芒果过敏", "阿兰")
    both = [(grapefruit, None), (mango, None)]
    # the member named cooks or shares; the speaker eats too
    assert applying("阿兰，煮一碗西柚甜汤给我喝", both) == [grapefruit]
    assert applying("下午我跟阿兰去吃芒果西柚冰", both) == [mango, grapefruit]
    # still only what the request names: the speaker's rule is no concern of her mango
    assert applying("给阿兰买一袋芒果带回去", both) == [mango]


def test_the_closest_leaves_out_only_what_the_knowledge_table_ruled_out() -> None:
    shrimp = constraint("我媳妇吃虾就起疙瘩，带壳的海鲜一律不碰", "媳妇")
    heights = constraint("我媳妇恐高", "媳妇")
    found = [(shrimp, 0.29), (heights, 0.2)]
    # the table knows 饺子, not what a 三鲜 filling holds: the closest is still said
    assert closest("今儿晚上给媳妇包点三鲜馅饺子", found) == [shrimp]
    # a constraint the table has judged is not said
    assert closest("今儿晚上给媳妇包点三鲜馅饺子", found, judged={shrimp.key, heights.key}) == []
    assert rules_out("我对青霉素过敏", "我头疼，能吃片布洛芬吗")
    assert not rules_out("我对青霉素过敏", "我想换个手机壳")  # it names nothing the table knows


def test_a_statement_hears_a_constraint_only_for_what_it_forbids() -> None:
    pill = constraint("我吃的降压药是非洛地平，医生交代不能配西柚，会让血压掉太低", "我")
    # telling a reading shares 血压 with the rule's condition: no occasion for it
    assert not touches("今天量血压一百三，医生讲还可以", pill, telling=True)
    assert touches("今天早上喝了一杯西柚汁", pill, telling=True)
    # a request or plan still hears it by any of its items
    assert touches("帮我买个量血压的仪器", pill)
    assert forbidding("Leo has coeliac disease. No wheat, no barley.") == " No wheat， no barley"


async def test_a_question_for_what_is_so_is_answered_not_warned(read_path: ReadPath) -> None:
    """「妈妈的降压药放哪了」 asks memory where something is: the pill's grapefruit rule stays in
    the group for the model, Hearth says nothing first; asking whether she may is warned."""
    where = await read_path.recall(ZHANG, "妈妈的降压药放哪了？")
    assert where.kind is not None and where.kind.kind.value == "memory_question"
    assert where.applies == ()
    may = await read_path.recall(ZHANG, "妈妈早上能喝杯西柚汁吗？")
    assert [m.text for m in may.applies] == ["妈妈每天早上吃降压药，不能和西柚一起吃"]
