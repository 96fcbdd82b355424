"""Issue 19, item 2: a device never claims an action it did not take — a sentence claiming one,
in a turn where no tool that acts ran, is replaced before TTS by an honest "I can't do that here".
"""

from __future__ import annotations

import pytest

from server.device.claims import claims_action
from tests.conftest import RunningHearth
from tests.server.device.test_device_server import device_tools_known
from tests.support.scripted_llm import Reply


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
     "好的，我帮你给快递员打个电话。", "倒计时开始。", "好的，计时已经开始了。"],
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
    hearth.llm.responder = lambda req: Reply(
        "好的，明天早上七点的闹钟已经设置好了。到时候提醒你。祝你睡个好觉。"
    )
    device = hearth.device()
    await device.connect()
    result = await device.ask("帮我定个明天早上七点的闹钟")
    await device.close()
    # 「好的，」 went out on its own (the first clause is spoken at once); no claim follows it
    assert result.text == "好的，这个我这里做不到。祝你睡个好觉。"


async def test_an_act_a_tool_took_is_spoken_as_said(hearth: RunningHearth) -> None:
    tool = {
        "name": "self.screen.set_brightness",
        "description": "Set the screen brightness",
        "inputSchema": {"type": "object", "properties": {"brightness": {"type": "integer"}}},
    }
    calls = iter([
        Reply(tool_calls=[{"name": "self_screen_set_brightness", "arguments": {"brightness": 80}}]),
        Reply("好的，我已经把屏幕亮度调好了。"),
    ])  # fmt: skip
    hearth.llm.responder = lambda req: next(calls)
    device = hearth.device(mcp_tools=[tool])
    await device.connect()
    await device_tools_known(hearth, device)
    result = await device.ask("把屏幕调亮一点")
    await device.close()
    assert result.text == "好的，我已经把屏幕亮度调好了。"
