"""The shapes of a household member's name, when nothing introduces it with 「叫」."""

from __future__ import annotations

import pytest

from memory import entities, names


@pytest.mark.parametrize(
    ("text", "name"),
    [("朵朵今天没去幼儿园", "朵朵"), ("阿明转去做夜班了", "阿明"), ("老周这人不挑食", "老周"),
     ("杰仔而家读中二", "杰仔"), ("二丫上礼拜发烧", "二丫")],
)  # fmt: skip
def test_nicknames_open_a_clause(text: str, name: str) -> None:
    assert names.name_at(text, 0) == name


@pytest.mark.parametrize(
    "text",
    ["天天都要遛狗", "看看这个怎么弄", "大夫说要多喝水", "阿莫西林不能吃", "小区门口修路",
     "公仔摆在床头", "杨桃一口都不能吃", "唠唠我家那口子"],
)  # fmt: skip
def test_words_of_the_same_shape_are_not_names(text: str) -> None:
    assert names.name_at(text, 0) is None


def test_a_full_name_after_a_relation_word() -> None:
    assert "邱美玲" in entities.names_in("我丈母娘邱美玲血压高")
    assert entities.names_in("我对猫毛过敏") == []


def test_english_names_opening_a_clause() -> None:
    assert names.english_names("Priya can't eat peanuts, and Sam loves them") == ["Priya", "Sam"]
    assert names.english_names("Monday is bin day. The traffic was awful") == []


def test_name_links_tie_a_name_to_its_relation() -> None:
    links = entities.name_links(
        [
            "我大姑子周雪梅有哮喘",
            "儿子叫石头",
            "my mum Hilary lives nearby",
            "Our collie's called Rex",
        ]
    )
    assert links["周雪梅"] == entities.canonical("大姑子")
    assert links["石头"] == "儿子"
    assert links["Hilary"] == "妈妈"
    assert links["Rex"] == "狗"
    assert entities.entities_for("妈妈每天吃阿司匹林", "妈妈", (), links)[:2] == ("妈妈", "Hilary")


def test_the_speaker_framing_what_follows_is_not_its_subject() -> None:
    assert entities.subject_of("往后这些事我就跟你唠了，我大姨有痛风") == entities.canonical("大姨")
    assert entities.subject_of("我跟你说，我对芒果过敏") == "我"
    assert entities.subject_of("上回我讲豆豆读中班，讲错了", ["豆豆"]) == "豆豆"
    assert entities.subject_of("我说话比较直") == "我"


def test_a_member_reporting_what_follows_is_not_its_subject() -> None:
    said = "闺女放假回来跟我说，上回旺财偷吃了她带回来的巧克力"
    assert entities.subject_of(said, ["旺财"]) == "旺财"
    assert entities.subject_of("老公说他明天出差") == "老公"


def test_a_demonstrative_between_the_owner_and_the_relation_keeps_the_relation() -> None:
    assert entities.subject_of("俺那个外孙，大名叫张浩然") == entities.canonical("外孙")
    assert entities.subject_of("我这个人不挑食") == "我"


def test_northwestern_nicknames_are_names_and_the_big_one_is_not() -> None:
    from memory.names import nickname_at

    assert nickname_at("尕桐爱吃酿皮子", 0) == "尕桐"
    assert nickname_at("尕蛋今年六岁", 0) == "尕蛋"
    assert nickname_at("尕娃不听话", 0) is None  # a kid, not a name
    assert nickname_at("大的那个芒果随便吃", 0) is None  # the big one


def test_what_the_family_calls_a_named_member_is_tied_to_the_same_relation() -> None:
    links = entities.name_links(
        [
            "俺外孙，大名叫张浩然，俺都喊他小虎",
            "我女儿叫朵朵，我们都叫她豆豆",
            "我儿子叫乐乐，我叫他起床",
        ]
    )
    assert links["小虎"] == "外孙" and links["豆豆"] == "女儿"
    assert "起床" not in links
