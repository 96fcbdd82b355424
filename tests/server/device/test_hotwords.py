"""The household's words put back where the recogniser heard their sounds (sans-I/O)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.device.hotwords import correct
from server.device.voice_input import with_hotwords

WORDS = ["芒果", "青霉素", "阿司匹林", "胰岛素", "周杰伦", "甜的", "小橙子", "栈道", "宫保"]


@pytest.mark.parametrize(
    ("heard", "meant"),
    [
        ("女儿对盲国过敏", "女儿对芒果过敏"),  # two characters, one of them rare
        ("周末去走玻璃站道", "周末去走玻璃栈道"),  # two common characters with the word's tones
        ("晚上做各公宝基丁", "晚上做各宫保基丁"),  # the same, inside a longer unknown run
        ("我对青梅素过敏", "我对青霉素过敏"),  # over a dictionary word (青梅)
        ("爸爸每天早上吃一片阿斯皮灵", "爸爸每天早上吃一片阿司匹林"),
        ("爷爷饭前要打一岛树", "爷爷饭前要打胰岛素"),
        ("播放一首周结轮的歌", "播放一首周杰伦的歌"),
        ("小城子想吃冰淇淋", "小橙子想吃冰淇淋"),  # ch/c, -ng/-n blurred in a long word
    ],
)
def test_a_word_heard_as_other_characters_of_its_sound_is_put_back(heard: str, meant: str) -> None:
    fixed, replaced = correct(heard, WORDS)
    assert fixed == meant and replaced


@pytest.mark.parametrize(
    "heard",
    [
        "今天的天气怎么样",  # 天的 sounds like 甜的 but straddles two words
        "我今天忙过了",  # 忙过 sounds like 芒果, but both characters are common, other tones
        "我喜欢吃芒果",  # already right
        "play some music",
    ],
)
def test_what_was_said_right_or_by_chance_alike_stays(heard: str) -> None:
    assert correct(heard, WORDS) == (heard, [])


def test_a_device_turn_corrects_with_the_names_and_the_safety_vocabulary() -> None:
    assert with_hotwords("我对青梅素过敏", ()) == "我对青霉素过敏"  # the vocabulary's
    assert with_hotwords("年高今天吃了吗", ("年糕",)) == "年糕今天吃了吗"  # the name's tones
    assert with_hotwords("今年高了吗", ("年糕",)) == "今年高了吗"  # 今年 is a word: 年 taken
    assert with_hotwords("给豆逗买狗粮", ("豆豆",)) == "给豆豆买狗粮"


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from("盲国芒果青梅素霉阿斯皮灵司匹林今天的忙过 ab1，。"), max_size=24
    )
)
def test_a_correction_only_ever_swaps_a_heard_run_for_a_word_of_its_length(heard: str) -> None:
    fixed, replaced = correct(heard, WORDS)
    assert len(fixed) == len(heard)
    assert [i for i, ch in enumerate(heard) if not "\u4e00" <= ch <= "\u9fff"] == [
        i for i, ch in enumerate(fixed) if not "\u4e00" <= ch <= "\u9fff"
    ]
    assert all(word in WORDS and len(run) == len(word) for run, word in replaced)
    assert (fixed == heard) == (not replaced)


def test_a_word_of_the_household_heard_right_is_never_swapped_for_another() -> None:
    """柯基 (the dog) sounds like 科技 (the job) to the two-character rule: both are the
    household's words, so what was heard stands."""
    assert correct("我们家的狗是柯基", ["科技"])[0] == "我们家的狗是科技"  # 柯 is rare
    assert correct("我们家的狗是柯基", ["科技", "柯基"]) == ("我们家的狗是柯基", [])


PHRASES = [("打疫苗", "疫苗"), ("的瑜伽课", "瑜伽"), ("瑜伽课", "瑜伽"), ("老婆在", "老婆"),
           ("琴老师", "老师")]  # fmt: skip


@pytest.mark.parametrize(
    ("heard", "meant"),
    [
        ("打一秒是上午还是下午", "打疫苗是上午还是下午"),  # 一秒 alone is a word; 打一秒 is not
        ("老婆的余家客改到周二了", "老婆的瑜伽课改到周二了"),  # the longest phrase first
    ],
)
def test_a_household_word_heard_as_a_dictionary_word_is_put_back_by_its_neighbour(
    heard: str, meant: str
) -> None:
    fixed, replaced = correct(heard, [], PHRASES)
    assert fixed == meant and replaced


@pytest.mark.parametrize(
    "heard",
    [
        "我老婆再说一遍",  # 老婆 heard right: its neighbour is not the phrase's business
        "钢琴老实现什么",  # 琴老实 would start inside 钢琴: a phrase, too, covers whole words
        "我在等一秒",  # the word alone, without the phrase's neighbour
        "我们去打疫苗",  # already right
    ],
)
def test_a_phrase_changes_nothing_else(heard: str) -> None:
    assert correct(heard, [], PHRASES) == (heard, [])


def test_a_device_turn_corrects_with_the_households_phrases() -> None:
    assert with_hotwords("明天打一秒", (), (("打疫苗", "疫苗"),)) == "明天打疫苗"
