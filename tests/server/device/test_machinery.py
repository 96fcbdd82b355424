"""Issue 19: a device never speaks its own machinery — prompt parts, tools, internal ids."""

from __future__ import annotations

import pytest

from server.device.machinery import machinery_in, without_ids, without_markup
from tests.conftest import RunningHearth
from tests.server.device.test_claims import ask
from tests.support.scripted_llm import Reply


@pytest.mark.parametrize(
    "sentence",
    ["[安全约束]里没有相关的安全约束，", "我正在检查你的安全约束。", "我先调用 check_safety 看看。",
     "你们住进了滨江区（device-3c35d28c1af3说）。", "根据系统提示，", "相关记忆里没有写。"],
)  # fmt: skip
def test_machinery_is_found(sentence: str) -> None:
    assert machinery_in(sentence) is not None


@pytest.mark.parametrize(
    "sentence",
    ["提醒一下，你老婆对海鲜过敏。", "小橙子的钢琴课在周六上午十点。", "这个我这里做不到。",
     "你可以用手机设个闹钟。", "安全第一，开车慢点。"],
)  # fmt: skip
def test_plain_speech_is_no_machinery(sentence: str) -> None:
    assert machinery_in(sentence) is None


def test_an_id_and_its_note_are_cut_out() -> None:
    assert (
        without_ids("提醒一下，老婆对海鲜过敏（device-3c35d28c1af3说）。")
        == "提醒一下，老婆对海鲜过敏。"
    )


async def test_machinery_is_not_spoken_and_a_reminder_keeps_its_warning(
    hearth: RunningHearth,
) -> None:
    reply = Reply("我正在检查你的安全约束。提醒一下，这和安全约束有关，别买虾。可以买点水果。")
    said = await ask(hearth, "今晚吃点什么好", reply)
    assert said == "提醒一下，这和安全约束有关，别买虾。可以买点水果。"


def test_a_tool_call_written_mid_reply_is_cut_off() -> None:
    """The local model's form (e2e X4, 2026-12-01)."""
    said = (
        "给老婆发条微信说我晚点回家，可以这么说："
        '{{"name": "send_message", "arguments": {"content": "晚点回家了"}}}}'
    )
    assert without_markup(said) == "给老婆发条微信说我晚点回家，可以这么说"
    assert without_markup('"arguments": {"content": "晚点回家了"}}}}') == ""
    assert without_markup("小橙子喜欢恐龙。") == "小橙子喜欢恐龙。"


def test_a_tool_schema_written_as_text_is_not_spoken() -> None:
    """What the local model wrote after a decline (e2e run local-all-said-first, S5)."""
    garbage = '<tools>"单位为元”，"default": 500"单位为元”，"default": 100}</tools>不要'
    assert without_markup(garbage) == ""
    assert without_markup('看看价格"price": 300') == "看看价格"
    assert without_markup("温度调到26度：舒适。") == "温度调到26度：舒适。"


@pytest.mark.parametrize(
    "sentence",
    ["我的记忆里没有这个问题的答案：第一句就说你还没跟我说过、不知道，不要拿它们来凑。",
     "记忆里没有的事情就说不知道，不要编造，也不要拿别人的记忆来凑。",
     "与本次请求冲突时必须先明确提醒。"],
)  # fmt: skip
def test_a_copy_of_the_prompts_own_sentences_is_machinery(sentence: str) -> None:
    assert machinery_in(sentence) is not None


@pytest.mark.parametrize(
    "sentence",
    ["你还没跟我说过、不知道。", "这个你还没跟我说过，我不知道。", "提醒一下，爷爷对牛奶过敏。",
     "这个我这里做不到，可以用手机定个闹钟。"],
)  # fmt: skip
def test_what_the_prompt_tells_the_model_to_say_is_not_a_copy(sentence: str) -> None:
    assert machinery_in(sentence) is None
