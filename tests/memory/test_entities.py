from __future__ import annotations

import pytest

from memory.entities import (
    call_names,
    entities_for,
    mentions,
    names_in,
    names_said,
    opening_nickname,
    opening_word,
    personally_anchored,
    relations_in,
    said_itself,
)


@pytest.mark.parametrize(
    ("text", "names"),
    [("女儿叫小橙子，今年五岁", ["小橙子"]), ("我女儿叫小橙子", ["小橙子"]),
     ("小橙子是我女儿", ["小橙子"]), ("老婆叫林晓", ["林晓"]), ("我对猫毛过敏", []),
     ("明天早上七点叫我起床", []), ("妈妈让我叫她外婆", [])],
)  # fmt: skip
def test_names_introduced_in_a_memory(text: str, names: list[str]) -> None:
    assert names_in(text) == names


def test_family_words_mean_every_relation() -> None:
    assert "老婆" in relations_in("周末带家里人出去吃饭要注意什么")
    assert relations_in("订个海鲜礼包送我老婆") == ["老婆", "妻子", "媳妇", "爱人"]
    assert relations_in("我女朋友喜欢什么") == ["女朋友"]


def test_spoken_forms_and_synonyms_reach_the_same_person() -> None:
    assert relations_in("买点西柚带给我妈") == ["妈妈", "母亲", "老妈"]
    assert relations_in("给我爸做红烧肉") == ["爸爸", "父亲", "老爸"]
    assert relations_in("我妈妈住哪") == ["妈妈", "母亲", "老妈"]
    assert personally_anchored("买点西柚带给我妈")  # 「给我」 is an idiom, 「我妈」 is not


@pytest.mark.parametrize(
    ("question", "anchored"),
    [("我住在哪里", True), ("我老婆生日是哪天", True), ("周末带家里人出去吃饭", True),
     ("帮我写个Python排序函数", False), ("给我放首歌", False), ("明天会下雨吗", False),
     ("北京到上海多远", False), ("晚上给我自己下碗面条", False)],
)  # fmt: skip
def test_personal_anchor(question: str, anchored: bool) -> None:
    assert personally_anchored(question) is anchored


def test_mentions_needs_the_literal_subject_or_name() -> None:
    assert mentions("王磊能吃海鲜吗", "王磊", ())
    assert not mentions("明天会下雨吗", "王雨", ("王雨",))
    assert mentions("小橙子喜欢什么", "女儿", ("女儿", "小橙子"))


def test_entities_cover_subject_names_and_known_names() -> None:
    assert entities_for("女儿叫小橙子，今年五岁", "女儿") == ("女儿", "小橙子")
    assert entities_for("带小橙子去打疫苗", None, ["小橙子"]) == ("小橙子",)


def test_a_question_word_is_not_a_name() -> None:
    assert names_in("你还记得我儿子小名叫啥吗") == []
    assert names_in("我儿子小名叫豆豆") == ["豆豆"]


def test_a_relative_named_from_the_childs_side_is_the_speakers() -> None:
    found = relations_in("孩子奶奶腰疼，给她贴张膏药")
    assert "婆婆" in found and "妈妈" in found
    assert "孩子" not in found  # the child owns the word; the request is not about the child
    assert "公公" in relations_in("娃他爷爷明天过来")


def test_a_grandparent_no_one_owns_is_also_the_childrens() -> None:
    assert "公公" in relations_in("让爷爷去接一下")
    assert relations_in("我爷爷明天来") == ["爷爷"]  # the speaker's own


def test_english_kinship_words_are_the_households_relations() -> None:
    from memory.entities import relations_in

    assert "老婆" in relations_in("Could you suggest something sweet for my wife tonight?")
    assert relations_in("Can my son eat peanuts?") == ["儿子"]
    assert relations_in("What should I cook tonight?") == []


def test_a_full_name_is_also_known_by_its_given_name() -> None:
    from memory.entities import household_names

    assert household_names(["我外甥叫邹明远"]) == ["邹明远", "明远"]
    assert household_names(["小女儿叫小豆芽"]) == ["小豆芽"]


def test_what_a_thing_is_called_is_not_a_name() -> None:
    assert names_in("医生又给开了一种胃药，叫奥美拉唑") == []
    assert names_in("孩子上的幼儿园叫春苗") == []
    assert names_in("我家兔子叫团团") == ["团团"]


def test_the_subject_of_an_owned_relation_is_the_owned_one() -> None:
    from memory.entities import subject_of

    assert subject_of("我老公的妈妈每天打胰岛素") == "婆婆"
    assert subject_of("豆豆的外婆周末过来", ["豆豆"]) == "外婆"
    assert subject_of("老伴去年做了搭桥手术") == "老婆"
    assert subject_of("每年带它去小区门口的宠物医院打疫苗") is None


def test_english_memories_have_their_subject_too() -> None:
    from memory.entities import subject_of

    assert subject_of("My husband can't eat shellfish") == "老公"
    assert subject_of("Oh, and my son's allergic to kiwi") == "儿子"
    assert subject_of("I take metformin twice a day") == "我"
    assert subject_of("We've got a cat, Pepper", ["Pepper"]) == "猫"
    assert names_in("Our daughter Nora starts school in March") == ["Nora"]


def test_a_doubled_character_opening_a_memory_is_its_subjects_nickname() -> None:
    assert opening_nickname("蕾蕾怀孕了，酒一口都不能沾") == ["蕾蕾"]
    assert opening_nickname("圆圆是蚕豆病") == ["圆圆"]
    # relation words and adverbs are not nicknames
    assert opening_nickname("奶奶有高血压") == []
    assert opening_nickname("天天吃降压药") == []
    assert opening_nickname("我女儿蕾蕾对鸡蛋过敏") == []
    assert "蕾蕾" in entities_for("蕾蕾怀孕了，酒一口都不能沾", "老婆")


def test_a_name_owning_a_relative_says_the_relative_not_the_named_one() -> None:
    assert not said_itself("蕾蕾她爸早上想喝点果汁", "蕾蕾")
    assert not said_itself("Leo's mum is coming over", "Leo")
    assert said_itself("妞妞同学约她周五晚上去玩", "妞妞")
    assert said_itself("蕾蕾她爸说蕾蕾不能喝酒", "蕾蕾")  # said for herself later
    assert names_said("蕾蕾她爸想喝果汁", "老婆", ("蕾蕾",)) == []
    assert not mentions("蕾蕾她爸想喝果汁", "老婆", ("蕾蕾",))


def test_a_relative_the_speaker_owns_in_dialect_is_a_relation() -> None:
    assert "爸爸" in relations_in("我老汉儿腰杆痛，医生喊他去拍个核磁共振")
    # a spouse word that says no gender is either spouse
    assert {"老公", "老婆"} <= set(relations_in("我家那口子周五加班"))
    assert "老公" in relations_in("我先生明天出差")
    # a kinship word said by itself, not owned, is not read
    assert relations_in("那位先生明天出差") == []


@pytest.mark.parametrize(
    ("text", "opening"),
    [("强子有痛风，去年脚肿得下不了床", "强子"), ("老爷子有房颤，天天吃华法林", "老爷子"),
     ("我肾功能不全", None), ("他对青霉素过敏", None), ("Sarah has coeliac disease", None)],
)  # fmt: skip
def test_the_word_a_memory_opens_with_may_be_whom_it_is_about(
    text: str, opening: str | None
) -> None:
    assert opening_word(text) == opening


def test_a_full_name_is_called_as_families_call_people() -> None:
    """顾一诺 is 一诺, 诺诺, 小诺 or 阿诺 at home, 老顾 by the surname; a nickname has none."""
    assert set(call_names("顾一诺")) == {"一诺", "诺诺", "小诺", "阿诺", "老顾"}
    assert call_names("小橙子") == () and call_names("豆豆") == ()
    assert mentions("诺诺有点咳嗽，给她舀一勺枇杷膏", "顾一诺", ["顾一诺"])
    assert mentions("老顾今晚去喝酒", "顾晓峰", [])
    assert not mentions("给鸣鸣买点零食", "顾一诺", ["顾一诺"])
