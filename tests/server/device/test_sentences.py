"""Cutting a reply into speakable segments, and what of it is read aloud."""

from __future__ import annotations

from server.device.sentences import CodeBlocks, SentenceSplitter
from tests.conftest import RunningHearth
from tests.support.scripted_llm import Reply

FENCE = "`" * 3
REPLY = (
    f"好的，下面是冒泡排序：\n{FENCE}python\ndef bubble(a):\n    for i in range(len(a)):\n"
    f"        pass\n{FENCE}\n这个函数把列表从小到大排好。"
)


def test_the_first_segment_is_cut_at_the_first_comma() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("好的，我想想。然后") == ["好的，", "我想想。"]
    assert splitter.flush() == "然后"


def test_a_code_block_becomes_one_note() -> None:
    code = CodeBlocks("zh")
    segments = [*SentenceSplitter().feed(REPLY + "\n")]
    spoken = [s for s in (code.filter(seg) for seg in segments) if s is not None]
    assert spoken == [
        "好的，",
        "下面是冒泡排序：",
        "代码我就不念了。",
        "这个函数把列表从小到大排好。",
    ]


def test_a_second_block_is_skipped_without_another_note() -> None:
    code = CodeBlocks("en-US")
    lines = [f"{FENCE}python", "x = 1", FENCE, "Then:", FENCE, "y = 2", FENCE, "Done."]
    spoken = [s for s in (code.filter(line) for line in lines) if s is not None]
    assert spoken == ["I won't read the code aloud.", "Then:", "Done."]


async def test_a_device_never_hears_code_read_aloud(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply(REPLY)
    device = hearth.device()
    await device.connect()
    result = await device.ask("用Python写个冒泡排序")
    await device.close()
    assert result.text == "好的，下面是冒泡排序：代码我就不念了。这个函数把列表从小到大排好。"


def test_a_segment_cut_at_a_comma_does_not_end_a_sentence() -> None:
    from server.device.sentences import ends_sentence

    assert not ends_sentence("提醒一下，")
    assert ends_sentence("你老婆对海鲜过敏。") and ends_sentence("真的吗？ ")
