"""The knowledge tables: well-formed data, and one step of world knowledge used as designed."""

from __future__ import annotations

import re

import pytest

from server.understanding import knowledge

_HAN = re.compile(r"^[\u4e00-\u9fff]$")
# words that would place every constraint in a family, or fire on every request
_GENERIC = frozenset(
    ("过敏", "不能", "医生", "吃药", "买药", "吃饭", "做菜", "零食", "水果", "饮料")
)


def test_every_table_loads_with_words_that_can_match() -> None:
    families = knowledge.families()
    assert families[0].table == knowledge.CORE
    for family in families:
        assert family.marks and family.covers, family.name
        for word in (*family.marks, *family.covers):
            assert word == word.strip() and word, family.name
            if word.isascii():
                assert word == word.lower(), (family.name, word)
        if family.table != knowledge.CORE:  # generated: no single character, no generic word
            words = (*family.marks, *family.covers)
            assert not [w for w in words if _HAN.match(w) or w in _GENERIC], family.name


@pytest.mark.parametrize(
    ("constraint", "asked"),
    [
        ("我对花生过敏", "晚上做个宫保鸡丁"),
        ("爸爸有痛风，不能喝啤酒", "周末吃海鲜火锅"),
        ("我恐高", "去坐摩天轮吧"),
    ],
)
def test_a_family_covers_what_a_request_names(constraint: str, asked: str) -> None:
    assert knowledge.covers(constraint, asked)
    assert knowledge.names_covered(asked)
    assert knowledge.covering(constraint, asked)


def test_latin_words_start_a_word_and_ignore_case() -> None:
    nut = knowledge._pattern(["nut"])
    assert nut.search("Nutella") and nut.search("tree NUTS")
    assert not nut.search("peanut butter") and not nut.search("a donut")


def test_the_recognisers_vocabulary_is_the_core_tables() -> None:
    core = {
        w for f in knowledge.families() if f.table == knowledge.CORE for w in (*f.marks, *f.covers)
    }
    assert knowledge.vocabulary() == core


def test_a_constraint_naming_what_it_forbids_is_of_the_families_covering_that() -> None:
    """Pregnancy marks several families; 「孕期不能喝酒」 names alcohol, so sashimi is not its;
    a constraint naming only the condition is of them all."""
    assert knowledge.covers("孕期不能喝酒", "晚上喝点红酒")
    assert not knowledge.covers("孕期不能喝酒", "晚上点一份三文鱼刺身")
    assert knowledge.covers("老婆怀孕二十二周了", "晚上点一份三文鱼刺身")
    assert knowledge.covers("老婆怀孕二十二周了", "晚上喝点红酒")


def test_a_doubled_character_is_a_person_not_an_item() -> None:
    assert knowledge.covers("我对牛奶过敏", "早上喝杯热奶")
    assert not knowledge.covers("我对牛奶过敏", "周末带奶奶去公园")


def test_a_conditions_name_in_a_request_is_no_item() -> None:
    assert not knowledge.covers("老婆查出妊娠糖尿病，甜食要控制", "老婆的糖耐改到周四上午")
    assert knowledge.covers("老婆查出妊娠糖尿病，甜食要控制", "给老婆买块蛋糕")
    assert knowledge.covers("我对花生过敏", "晚上做个花生酱拌面")
    assert knowledge.covers("我有闭角型青光眼", "坐船前贴个晕船贴")  # 晕船 inside 晕船贴


def test_a_constraint_of_animal_families_only_is_an_animals() -> None:
    # whatever the bird is called, a non-stick pan's fumes are a pet's hazard
    assert knowledge.of_an_animal("不粘锅干烧冒的烟会毒死豆豆，做饭要开窗关好鸟笼那边的门")
    assert not knowledge.of_an_animal("老婆对青霉素过敏")
    assert not knowledge.of_an_animal("我每天早上跑步")  # of no family at all
