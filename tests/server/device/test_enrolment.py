"""Enrolment by voice as a state machine: what it hears (text, the utterance's audio, the time)
and what it answers, without a socket, a model or Redis."""

from __future__ import annotations

import pytest

from server.device.enrolment import IDLE_S, Enrol, GuidedEnrolment, Say, Stage
from server.device.enrolment_words import (
    SENTENCES,
    EnrolmentRequest,
    answered_name,
    enrolment_request,
    is_cancel,
)

AUDIO = [b"\x01\x00" * 100, b"\x02\x00" * 100, b"\x03\x00" * 100]


@pytest.mark.parametrize(
    ("said", "language", "name"),
    [
        ("记住我的声音，我是妈妈。", "zh", "妈妈"),
        ("我是奶奶，你记住我的声音吧", "zh", "奶奶"),
        ("小智，请记住我的声音", "zh", None),
        ("帮我录入一下我的声纹，我叫小明呀", "zh", "小明"),
        ("Remember my voice, I'm Mum.", "en", "Mum"),
        ("please learn my voice, this is the dad", "en", "dad"),
        ("Enroll my voice", "en", None),
    ],
)
def test_a_request_to_remember_the_voice_is_heard_with_its_name(
    said: str, language: str, name: str | None
) -> None:
    assert enrolment_request(said) == EnrolmentRequest(language, name)


@pytest.mark.parametrize(
    "said",
    [
        "记住我的生日是五月三号",
        "别记住我的声音",
        "不要记录我的声音",
        "怎么让你记住我的声音",
        "你会不会记住我的声音",
        "我的声音好听吗",
        "记住我说的话",
        "I love the sound of my voice",
        "don't remember my voice",
        "how do you remember my voice?",
        "remember my birthday",
    ],
)
def test_other_sentences_about_voices_are_ordinary_turns(said: str) -> None:
    assert enrolment_request(said) is None


def test_cancel_words_are_short_and_in_either_language() -> None:
    assert is_cancel("取消。") and is_cancel("算了算了") and is_cancel("Cancel.")
    assert not is_cancel("今天天气很好，我们一起去公园散步吧。")
    assert not is_cancel("我昨天取消了去北京的机票，因为下雨了")  # a sentence, not a cancel


def test_an_answer_to_who_are_you_is_a_name() -> None:
    assert answered_name("我是爸爸。", "zh") == "爸爸"
    assert answered_name("爷爷", "zh") == "爷爷"
    assert answered_name("我想问一下明天会不会下雨呢", "zh") is None  # not a name
    assert answered_name("It's Grandpa Joe.", "en") == "Grandpa Joe"


def _reads_three(flow: GuidedEnrolment) -> Enrol:
    first = flow.heard(SENTENCES["zh"][0], AUDIO[0], 1.0)
    assert isinstance(first, Say) and SENTENCES["zh"][1] in first.text
    second = flow.heard(SENTENCES["zh"][1], AUDIO[1], 2.0)
    assert isinstance(second, Say) and SENTENCES["zh"][2] in second.text
    third = flow.heard(SENTENCES["zh"][2], AUDIO[2], 3.0)
    assert isinstance(third, Enrol)
    return third


def test_a_named_request_reads_three_sentences_then_enrols_them() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("zh", "妈妈"), now=0.0)
    start = flow.start()
    assert "妈妈" in start.text and SENTENCES["zh"][0] in start.text and not start.done
    enrol = _reads_three(flow)
    assert enrol == Enrol("妈妈", tuple(AUDIO))
    assert flow.stage is Stage.CHECKING and not flow.expired(now=1000.0)
    assert flow.heard("好了吗", AUDIO[0], 4.0) is None  # still checking: nothing to say
    done = flow.enrolled(again=False)
    assert done.done and "记住了，妈妈" in done.text and flow.done


def test_without_a_name_it_asks_who_is_speaking_first() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("zh", None), now=0.0)
    assert "你是谁" in flow.start().text
    unclear = flow.heard("我想问一下明天会不会下雨呢", b"...", 1.0)
    assert isinstance(unclear, Say) and "你是谁" in unclear.text  # asked again
    named = flow.heard("我是外婆", b"...", 2.0)
    assert isinstance(named, Say) and "外婆" in named.text and SENTENCES["zh"][0] in named.text
    assert _reads_three(flow).speaker == "外婆"


def test_cancel_ends_the_flow_even_while_the_sentences_are_checked() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("en", "Mum"), now=0.0)
    flow.start()
    for n, audio in enumerate(AUDIO):
        flow.heard(SENTENCES["en"][n], audio, float(n))
    assert flow.stage is Stage.CHECKING
    cancelled = Say("OK, cancelled. Your voice was not saved.", done=True)
    assert flow.heard("never mind", b"", 5.0) == cancelled


def test_cancel_ends_the_flow_at_any_step() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("zh", "爸爸"), now=0.0)
    flow.start()
    flow.heard(SENTENCES["zh"][0], AUDIO[0], 1.0)
    cancelled = flow.heard("算了", AUDIO[1], 2.0)
    assert cancelled == Say("好的，取消了，没有记录你的声音。", done=True) and flow.done
    with pytest.raises(RuntimeError):
        flow.heard("第二句", AUDIO[1], 3.0)


def test_an_answer_without_audio_is_asked_for_again() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("zh", "爸爸"), now=0.0)
    flow.start()
    typed = flow.heard("今天天气很好", b"", 1.0)
    assert isinstance(typed, Say) and SENTENCES["zh"][0] in typed.text
    assert flow.sentences == [None, None, None]


def test_a_refused_sentence_is_read_again_once_then_the_flow_gives_up() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("zh", "奶奶"), now=0.0)
    flow.start()
    _reads_three(flow)
    again = flow.refused("too_short", sentence=1)
    assert "第二句太短了" in again.text and SENTENCES["zh"][1] in again.text and not again.done
    redo = flow.heard(SENTENCES["zh"][1], b"\x09\x00" * 100, 4.0)
    assert redo == Enrol("奶奶", (AUDIO[0], b"\x09\x00" * 100, AUDIO[2]))
    final = flow.refused("two_voices", sentence=1)
    assert final.done and "两个人的声音" in final.text and "记住我的声音" in final.text


def test_a_voice_enrolled_under_another_name_ends_the_flow_with_that_name() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("zh", "妈妈"), now=0.0)
    flow.start()
    _reads_three(flow)
    said = flow.refused("same_voice", other="奶奶")
    assert said.done and "已经登记成奶奶了" in said.text
    taken = GuidedEnrolment(EnrolmentRequest("en", "Mum"), now=0.0)
    taken.start()
    assert "Mum is already enrolled" in taken.refused("name_taken").text


def test_a_flow_left_without_an_answer_expires() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("en", "Mum"), now=0.0)
    assert flow.start().text.startswith("OK Mum, let me learn your voice.")
    assert not flow.expired(now=IDLE_S - 1)
    assert flow.expired(now=IDLE_S + 1)


def test_english_prompts_read_english_sentences() -> None:
    flow = GuidedEnrolment(EnrolmentRequest("en", "Mum"), now=0.0)
    assert flow.start().text.endswith("First: " + SENTENCES["en"][0])
    next_one = flow.heard("the weather is lovely", AUDIO[0], 1.0)
    assert next_one == Say("Second: " + SENTENCES["en"][1])
    assert flow.unavailable() == Say("Sorry, this device can't learn voices right now.", True)
