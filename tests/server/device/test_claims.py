"""Issue 19, item 2: a device never claims an action it did not take — a sentence claiming one,
in a turn where no tool that acts ran, is replaced before TTS by an honest "I can't do that here".
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from server.device.claims import (
    ACTS,
    claims_action,
    reminder_sentence,
    repeats_reminder,
    requested_act,
    tool_could_do,
)
from tests.conftest import RunningHearth
from tests.server.device.test_device_server import device_tools_known
from tests.support.scripted_llm import Reply


def _tool(name: str, description: str, **properties: str) -> dict[str, object]:
    """A device MCP tool as the firmware describes it."""
    schema = {name: {"type": kind} for name, kind in properties.items()}
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": schema}}  # fmt: skip


async def ask(
    hearth: RunningHearth, question: str, *replies: Reply, tools: Sequence[dict[str, object]] = ()
) -> str:
    """What the device says to ``question`` when the model writes ``replies`` in turn."""
    scripted = iter(replies)
    hearth.llm.responder = lambda req: next(scripted)
    device = hearth.device(mcp_tools=list(tools)) if tools else hearth.device()
    await device.connect()
    if tools:
        await device_tools_known(hearth, device)
    result = await device.ask(question)
    await device.close()
    return result.text


@pytest.mark.parametrize(
    "sentence",
    ["好的，明天早上七点的闹钟已经设置好了。", "好的，我将打开扫地机器人。",
     "好的，我已经把客厅空调调到26度了。", "好的，我帮你把明天的会议加到日历里。",
     "好的，我会帮您预约周六的理发。", "到时候提醒你。", "我会在下午三点提醒你去开会。",
     "好的，我可以帮你叫一辆出租车去火车站。",
     # from the local model in the 2026-11-30 e2e dev runs
     "好的，我已经将明天的会议加到了日历里。", "好的，我正在准备打开扫地机器人。",
     "好的，我将提醒你明天早上6点半起床。", "好的，我帮妈妈买了西柚。",
     "好的，我会给老婆订个海鲜礼包。", "好的，我帮您预订一份海鲜披萨。",
     "好的，我帮你给快递员打个电话。", "倒计时开始。", "好的，计时已经开始了。",
     # 2026-12-01, after the honest sentence: 「这个我这里做不到。提醒已经设置好，时间是下午三点。」
     "提醒已经设置好，时间是下午三点。", "闹钟设好了。"],
)  # fmt: skip
def test_claims_of_acts_are_recognised(sentence: str) -> None:
    assert claims_action(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["这个我这里做不到，可以用手机设个闹钟。", "提醒一下，你老婆对海鲜过敏。",
     "你已经约好了周三下午三点看牙。", "我可以给你讲个笑话。", "我可以帮你打个比方。",
     "好的，你老婆的瑜伽课已经调到周二和周五了。", "我会提醒你老婆对海鲜过敏这件事。",
     "建议你先打个电话问问。", "好的，给你推荐一家面馆。", "我建议你买点苹果。",
     "你可以给老婆订一束向日葵。", "我觉得可以买个芒果以外的蛋糕。"],
)  # fmt: skip
def test_advice_memories_and_reminders_in_speech_are_not_claims(sentence: str) -> None:
    assert not claims_action(sentence)


async def test_a_claimed_alarm_without_an_alarm_tool_is_never_spoken(
    hearth: RunningHearth,
) -> None:
    said = await ask(
        hearth, "帮我定个明天早上七点的闹钟",
        Reply("好的，明天早上七点的闹钟已经设置好了。到时候提醒你。祝你睡个好觉。"),
    )  # fmt: skip
    # a bare 「好的，」 is not said before it (it would sound like a yes); no claim follows
    assert said == "这个我这里做不到。祝你睡个好觉。"


async def test_an_act_a_tool_took_is_spoken_as_said(hearth: RunningHearth) -> None:
    tool = _tool("self.screen.set_brightness", "Set the screen brightness", brightness="integer")
    call = {"name": "self_screen_set_brightness", "arguments": {"brightness": 80}}
    said = await ask(hearth, "把屏幕调亮一点", Reply(tool_calls=[call]),
                     Reply("好的，我已经把屏幕亮度调好了。"), tools=[tool])  # fmt: skip
    assert said == "好的，我已经把屏幕亮度调好了。"


@pytest.mark.parametrize(
    "request_",
    ["帮我定个明天早上七点的闹钟", "明天提醒我带伞", "每天晚上九点提醒我妈吃药",
     "明早六点半叫我起床", "给我妈打个电话", "给老婆发条微信说我晚点回家", "帮我打开客厅的灯",
     "关灯", "把空调调到二十六度",
     "帮我在京东上买一箱纸巾", "帮我把这个月的电费交了", "帮我订一张去北京的机票", "叫个外卖",
     "把明天的会议加到日历里", "把这首歌设成我的手机铃声", "帮我预约周六的理发",
     "放首周杰伦的晴天", "来一首轻音乐", "播放一下早间新闻广播", "给小橙子放首儿歌"],
)  # fmt: skip
def test_requests_to_act_are_recognised(request_: str) -> None:
    assert requested_act(request_) is not None


@pytest.mark.parametrize(
    "text",
    ["给爷爷买箱酸奶", "周末带孩子去哪玩", "帮我想想晚饭吃什么", "背一首李白的诗", "给我讲个故事",
     "来一首诗", "我想放点盐",
     "提醒我一下小橙子对什么过敏", "我明天要去交电费", "闹钟怎么设？", "空调开到几度合适？",
     "记一下，老婆的生日是三月十二号", "我想给妈妈买个按摩椅"],
)  # fmt: skip
def test_plans_questions_and_talk_are_no_requests_to_act(text: str) -> None:
    """Talking a plan over is advice (the static rule says so), a question asks how."""
    assert requested_act(text) is None


def test_a_tool_that_could_do_the_act_is_found_by_its_words() -> None:
    lights = requested_act("帮我打开客厅的灯")
    assert lights is not None and lights in ACTS
    lamp = {
        "type": "function",
        "function": {"name": "self_lamp_turn_on", "description": "Turn on the lamp"},
    }
    lookup = {
        "type": "function",
        "function": {"name": "check_safety", "description": "灯 alarm call"},
    }
    assert tool_could_do(lights, [lamp])
    assert not tool_could_do(lights, [lookup])  # a lookup acts on nothing
    alarm = requested_act("帮我定个七点的闹钟")
    assert alarm is not None and not tool_could_do(alarm, [lamp])


def _turn_notes(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(messages[-2]["content"]) if messages[-2]["role"] == "system" else ""


async def test_an_act_no_tool_does_is_declined_first_whatever_the_model_says(
    hearth: RunningHearth,
) -> None:
    """The local model echoed 「提醒一下，下午三点要去开会。」 as if a reminder were set: the
    device says it cannot, and the model was told so; the echo, the request told back as a
    reminder however the splitter cut it, is not said after it."""
    said = await ask(hearth, "下午三点提醒我去开会", Reply("提醒一下，下午三点要去开会。"))
    assert said == "这个我这里做不到。"
    assert "做不到" in _turn_notes(hearth.llm.requests[-1])


async def test_a_reply_that_says_it_cannot_is_spoken_as_said(hearth: RunningHearth) -> None:
    reply = "抱歉，我没法打电话。你可以用手机直接打给她。"
    assert await ask(hearth, "给我妈打个电话", Reply(reply)) == reply


async def test_an_act_an_offered_tool_could_do_is_left_to_the_model(
    hearth: RunningHearth,
) -> None:
    lamp = _tool("self.lamp.turn_on", "Turn on the lamp")
    assert await ask(hearth, "帮我打开客厅的灯", Reply("好的。"), tools=[lamp]) == "好的。"
    assert "<request>" not in _turn_notes(hearth.llm.requests[-1])


async def test_a_tool_that_acted_ends_the_decline(hearth: RunningHearth) -> None:
    """A tool whose words fit no act still acted: what the model says of it is spoken."""
    gadget = _tool("self.gadget.run", "Run a gadget command", command="string")
    call = {"name": "self_gadget_run", "arguments": {"command": "curtain"}}
    said = await ask(hearth, "帮我把窗帘拉上", Reply(tool_calls=[call]),
                     Reply("好的，窗帘已经拉上了。"), tools=[gadget])  # fmt: skip
    assert said == "好的，窗帘已经拉上了。"


def test_the_reminder_sentence_says_every_constraint_once() -> None:
    said = reminder_sentence(["爸爸有痛风，不能喝啤酒", "爸爸有高血压，饭菜不能太咸"], "zh")
    assert said == "提醒一下：爸爸有痛风，不能喝啤酒；爸爸有高血压，饭菜不能太咸。"
    assert reminder_sentence([], "zh") is None
    assert reminder_sentence(["x"], "en") is None  # no sentence for English yet: the model's


@pytest.mark.parametrize("sentence", ["提醒一下，", "提醒你，别喝酒。", "温馨提示：少吃甜的。"])
def test_a_reminder_of_the_models_own_is_recognised(sentence: str) -> None:
    assert repeats_reminder(sentence)


@pytest.mark.parametrize("sentence", ["不过可以买无醇啤酒。", "注意别太晚睡。", "好的，我记下了。"])
def test_other_sentences_are_not_taken_for_a_reminder(sentence: str) -> None:
    assert not repeats_reminder(sentence)
