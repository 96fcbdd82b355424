"""What a reply must not recommend once Hearth said a constraint (server.device.heeding)."""

from __future__ import annotations

from server.device.heeding import forbidden_items, heeded, recommends_against


def test_an_allergy_forbids_its_item_and_what_its_family_covers() -> None:
    items = forbidden_items("朵朵对鸡蛋过敏", ["朵朵"])
    assert "鸡蛋" in items
    assert "蛋糕" in items  # the egg family: a cake holds eggs
    assert "朵朵" not in items


def test_a_rule_of_what_is_allowed_forbids_nothing_it_names() -> None:
    assert "处方猫粮" not in forbidden_items("年糕肾不好，只能吃处方猫粮", ["年糕"])


def test_the_words_of_how_a_rule_was_told_are_not_items() -> None:
    items = forbidden_items("我有痛风，医生不让喝啤酒", [])
    assert "啤酒" in items
    assert "医生" not in items


def test_a_sentence_proposing_the_forbidden_food_is_caught() -> None:
    said = heeded(["朵朵对鸡蛋过敏"], ["朵朵"])
    assert recommends_against("给女儿做鸡蛋炒饭，搭配蔬菜和牛奶。", said) is not None
    assert recommends_against("可以做个巧克力蛋糕。", said) is not None
    assert recommends_against("不妨试试蛋挞。", said) is not None  # 不妨 refuses nothing


def test_a_sentence_refusing_it_or_about_something_else_passes() -> None:
    said = heeded(["朵朵对鸡蛋过敏"], ["朵朵"])
    assert recommends_against("做的时候别放鸡蛋。", said) is None
    assert recommends_against("可以煮个小米粥，配点青菜。", said) is None
    assert recommends_against("鸡蛋可以换成香蕉泥。", said) is None


def test_an_english_constraint_forbids_its_items_by_word() -> None:
    said = heeded(["Grandpa is allergic to tree nuts such as walnuts and cashews"])
    assert recommends_against("You could bake walnut brownies.", said) is not None
    assert recommends_against("Bake them without walnuts.", said) is None
    assert recommends_against("Take a walk down the street.", said) is None


def test_once_a_constraint_concerns_a_request_going_along_with_it_is_not_spoken() -> None:
    request = "团团蔫蔫的像是发烧了，掰一小块扑热息痛喂它"
    said = heeded(["兽医说团团只能用猫专用的药，人吃的药一片都不能给它"], ["团团"], request)
    assert recommends_against("你可以喂团团一小块扑热息痛。", said) is not None
    assert recommends_against("先别喂扑热息痛，带它去宠物医院。", said) is None
    # the topic a reply repeats is no item: 「早饭」 of a breakfast request
    breakfast = heeded(["朵朵对鸡蛋过敏"], ["朵朵"], "明天早上给朵朵做什么早饭好")
    assert recommends_against("早饭可以煮个小米粥。", breakfast) is None


def test_every_way_of_saying_no_makes_a_clause_prohibiting() -> None:
    said = heeded(["番薯闻不得精油，茶树油尤其不行"], ["番薯"])
    assert recommends_against("建议使用茶树油，闻起来比较香。", said) is not None
