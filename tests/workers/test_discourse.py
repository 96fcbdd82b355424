"""Who each utterance is about: pronouns and elided subjects resolve to the member spoken of."""

from __future__ import annotations

from memory import entities
from workers import discourse


def _topics(utterances: list[str], names: tuple[str, ...] = ()) -> list[str | None]:
    return [c.topic.who if c.topic else None for c in discourse.read(utterances, names)]


def test_a_pronoun_chain_keeps_the_relative_as_topic() -> None:
    said = ["我姥爷今年八十五了", "他有高血压好多年了", "每天早上吃一片降压药"]
    assert _topics(said) == ["外公", "外公", "外公"]


def test_the_first_person_ends_the_topic() -> None:
    said = ["我闺女在读初二", "我自己在医院当护士"]
    assert _topics(said) == ["女儿", None]


def test_pronoun_gender_picks_the_right_member() -> None:
    said = ["我老公和我婆婆下周去杭州", "她腿脚不好，得坐轮椅"]
    contexts = discourse.read(said)
    assert contexts[1].topic is not None and contexts[1].topic.who == "婆婆"


def test_it_is_a_pet() -> None:
    said = ["我们家有只橘猫叫大福", "它不能吃洋葱"]
    assert _topics(said) == ["猫", "大福"]


def test_a_name_from_earlier_memories_keeps_its_kind() -> None:
    contexts = discourse.read(["它最近老掉毛"], remembered=["我家有条狗叫旺财"])
    assert contexts[0].topic is not None and contexts[0].topic.who == "旺财"


def test_resolve_names_the_pronoun_and_the_elided_subject() -> None:
    said = ["我外婆住在苏州", "她对青霉素过敏", "上个月刚做了白内障手术"]
    contexts = discourse.read(said)
    assert discourse.resolve("她对青霉素过敏", contexts[1]) == "我外婆对青霉素过敏"
    assert (
        discourse.resolve("上个月刚做了白内障手术", contexts[2]) == "我外婆，上个月刚做了白内障手术"
    )
    assert discourse.resolve("我在家办公", contexts[2]) == "我在家办公"  # says who: left alone


def test_an_unresolvable_pronoun_stays_as_said() -> None:
    contexts = discourse.read(["他说明天降温"])
    assert discourse.resolve("他说明天降温", contexts[0]) == "他说明天降温"


def test_a_three_character_name_is_known_by_its_given_name() -> None:
    said = ["我老公叫郑海涛", "海涛他不吃辣"]
    contexts = discourse.read(said)
    assert contexts[1].topic is not None and contexts[1].topic.gender == "m"


def test_other_words_with_the_pronoun_character_are_not_pronouns() -> None:
    contexts = discourse.read(["我女儿学吉他", "其他的都还好"])
    assert discourse.resolve("其他的都还好", contexts[1]) == "我女儿，其他的都还好"
    said = ["俺爹有痛风", "每天早上吃一片非布司他", "还有阿托伐他汀，流感了就吃奥司他韦"]
    contexts = discourse.read(said)
    assert discourse.resolve(said[1], contexts[1]) == "俺爹，每天早上吃一片非布司他"
    assert discourse.resolve(said[2], contexts[2]) == "俺爹，还有阿托伐他汀，流感了就吃奥司他韦"
    assert discourse.resolve("医生说他吃药前后别吃肉", contexts[2]) == "医生说俺爹吃药前后别吃肉"


def test_a_pronoun_nothing_in_the_session_fits_goes_to_the_memory_talked_about() -> None:
    remembered = ["我爷爷每天早上吃一片华法林", "我女儿叫安安"]
    contexts = discourse.read(["华法林那个药的事", "别给他吃柚子"], remembered=remembered)
    assert discourse.resolve("别给他吃柚子", contexts[1]) == "别给我爷爷吃柚子"


def test_a_fact_naming_a_member_gets_no_topic_in_front() -> None:
    contexts = discourse.read(["我儿子叫豆豆，在学游泳", "每周六上午上课"], names=("豆豆",))
    assert discourse.resolve("接送是豆豆姥姥的事", contexts[1]) == "接送是豆豆姥姥的事"
    assert discourse.resolve("每周六上午上课", contexts[1]) == "我儿子，每周六上午上课"
    assert discourse.resolve("他爸负责接送", contexts[1]) == "我儿子的爸负责接送"


def test_another_language_gets_no_chinese_topic_in_front() -> None:
    contexts = discourse.read(["我老婆叫Anna", "Turn off the hallway light"])
    assert discourse.resolve("Turn off the hallway light", contexts[1]) == (
        "Turn off the hallway light"
    )


def test_a_member_a_verb_acts_on_is_not_the_topic() -> None:
    said = ["下班回来先喂了豆豆", "家住在滨江区那边"]
    assert _topics(said, ("豆豆",)) == [None, None]


def test_a_bare_kinship_word_opening_a_turn_is_the_topic() -> None:
    said = ["老伴上个月装了心脏支架", "她现在每天吃氯吡格雷"]
    contexts = discourse.read(said)
    assert [c.topic.who if c.topic else None for c in contexts] == ["老婆", "老婆"]
    assert discourse.resolve(said[1], contexts[1]).startswith("老伴现在")


def test_a_place_named_after_pets_is_not_the_pet() -> None:
    said = ["我们家有只猫叫可乐", "下个月带它去宠物医院绝育"]
    contexts = discourse.read(said)
    resolved = discourse.resolve(said[1], contexts[1])
    assert "带宠物" not in resolved and ("带猫" in resolved or "带可乐" in resolved)


def test_english_pronouns_name_the_member_spoken_of() -> None:
    said = ["Nora, our daughter, is in Year 2 now", "She can't have sesame at all"]
    contexts = discourse.read(said, ("Nora",))
    assert discourse.resolve(said[1], contexts[1]) in (
        "Nora can't have sesame at all",
        "My daughter can't have sesame at all",
    )
    pet = ["We've got a dog, Biscuit", "He is scared of fireworks"]
    contexts = discourse.read(pet, ("Biscuit",))
    assert discourse.resolve(pet[1], contexts[1]) == "Biscuit is scared of fireworks"


def test_a_name_in_apposition_carries_the_relation() -> None:
    said = ["我大姑子周雪梅下个月来住", "她有哮喘，家里别点蚊香"]
    contexts = discourse.read(said)
    assert contexts[0].topic is not None and contexts[0].topic.who == "周雪梅"
    assert contexts[0].topic.kin == "大姑子" or contexts[0].topic.gender == "f"
    assert discourse.resolve(said[1], contexts[1]).startswith(("周雪梅有哮喘", "雪梅有哮喘"))


def test_dialect_pronouns_resolve_like_mandarin_ones() -> None:
    cantonese = ["我家公叫何伯坚", "佢有痛风，唔食得海鲜"]
    contexts = discourse.read(cantonese)
    assert discourse.resolve(cantonese[1], contexts[1]).startswith(("何伯坚有痛风", "伯坚有痛风"))
    wu = ["阿拉屋里还养了一只兔子，叫团团", "伊不好吃生菜的"]
    contexts = discourse.read(wu)
    assert "伊" not in discourse.resolve(wu[1], contexts[1])
    assert discourse.resolve("我想去伊朗旅游", contexts[1]) == "我想去伊朗旅游"


def test_the_child_said_like_a_pronoun_is_the_child_spoken_of() -> None:
    said = ["我小儿子叫石头，刚满三岁", "这孩子对牛奶蛋白过敏"]
    contexts = discourse.read(said)
    assert discourse.resolve(said[1], contexts[1]) == "石头对牛奶蛋白过敏"


def test_the_speaker_as_an_object_does_not_end_the_topic() -> None:
    said = ["我表妹上周搬家了", "搬到城西去了，离我们远了"]
    cousin = entities.canonical("表妹")
    assert _topics(said) == [cousin, cousin]


def test_an_english_fact_after_a_time_phrase_or_with_no_subject_names_its_member() -> None:
    said = ["Our terrier's called Pip", "Last summer he ate a whole bar of chocolate"]
    contexts = discourse.read(said, ("Pip",))
    assert discourse.resolve(said[1], contexts[1]).startswith("Last summer Pip ate")
    wife = ["My wife Sanne is expecting in May", "No soft cheese, and coffee only once a day"]
    contexts = discourse.read(wife, ("Sanne",))
    assert discourse.resolve(wife[1], contexts[1]).startswith("Sanne: ")
    mixed = ["Our son Felix is nine", "He does 游泳 every Sunday morning"]
    contexts = discourse.read(mixed, ("Felix",))
    assert discourse.resolve(mixed[1], contexts[1]).startswith("Felix does 游泳")


def test_a_relative_owned_through_a_demonstrative_is_the_topic_of_what_follows() -> None:
    from workers import discourse

    people = ["俺那个外孙，大名叫张浩然，俺都喊他小虎。", "打小就对虾过敏，吃一口浑身起红疙瘩。"]
    contexts = discourse.read(people, (), ())
    assert all(c is not None and c.topic is not None and c.topic.who == "外孙" for c in contexts)
