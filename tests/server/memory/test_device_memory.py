"""The read path and check_safety inside real device turns (WebSocket on loopback)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from config.settings import load_settings
from memory.importer import import_file
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.device.session import own_person
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from server.memory.render import NOT_HERE
from tests.conftest import RunningHearth, start_hearth
from tests.memory.conftest import FIXTURES
from tests.support.scripted_llm import Reply, ScriptedLLM

MAC = "aa:bb:cc:00:00:01"
OTHER_MAC = "aa:bb:cc:00:00:02"


@pytest.fixture
async def memory_hearth(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM, embedder: UseEmbedder
) -> AsyncIterator[RunningHearth]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(
        FIXTURES / "household_zhang.jsonl", PersonId(await own_person(MAC)), embedder, store
    )
    import_file(
        FIXTURES / "household_li.jsonl", PersonId(await own_person(OTHER_MAC)), embedder, store
    )
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    async with start_hearth(
        tmp_path, redis_url, scripted_llm.base_url, scripted_llm, memory=engine
    ) as hearth:
        yield hearth
    store.close()


def system_prompt(llm: ScriptedLLM, index: int = -1) -> str:
    """Every system message of a request (static prompt + this turn's memory block)."""
    messages = llm.requests[index]["messages"]
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")


async def _one_turn(hearth: RunningHearth, reply: str, asked: str) -> tuple[str, str]:
    """One utterance on a new connection, the model scripted to ``reply``: what the device
    said and every system message the model was given."""
    hearth.llm.responder = lambda req: Reply(reply)
    device = hearth.device(MAC)
    await device.connect()
    result = await device.ask(asked)
    await device.close()
    return result.text, system_prompt(hearth.llm)


async def test_device_turn_injects_the_safety_group(memory_hearth: RunningHearth) -> None:
    memory_hearth.llm.responder = lambda req: Reply("先提醒一下，你老婆对海鲜过敏。")
    device = memory_hearth.device(MAC)
    await device.connect()
    await device.ask("订个海鲜礼包送我老婆")
    await device.close()
    prompt = system_prompt(memory_hearth.llm)
    assert "[安全约束]" in prompt and "我老婆对海鲜过敏" in prompt
    messages = memory_hearth.llm.requests[-1]["messages"]
    # the static prompt stays first and unchanged; the memory block sits right before the user
    assert "<memory>" not in messages[0]["content"]
    assert messages[-2]["role"] == "system" and messages[-2]["content"].startswith("<memory>")
    assert "<memory_usage>" in prompt and "<must_call>" in prompt
    assert "Only call a tool" not in prompt and "只在明确" not in prompt
    tools = {t["function"]["name"]: t for t in memory_hearth.llm.requests[-1]["tools"]}
    assert "餐厅" in tools["check_safety"]["function"]["description"]


async def test_noise_turn_injects_no_memory(memory_hearth: RunningHearth) -> None:
    memory_hearth.llm.responder = lambda req: Reply("好的。")
    device = memory_hearth.device(MAC)
    await device.connect()
    await device.ask("放首周杰伦的歌")
    await device.close()
    assert "<memory>" not in system_prompt(memory_hearth.llm)


async def test_check_safety_answers_for_the_callers_person_only(
    memory_hearth: RunningHearth,
) -> None:
    replies = iter([
        Reply(tool_calls=[{"name": "check_safety", "arguments": {"topic": "推荐个餐厅"}}]),
        Reply("推荐一家不以海鲜为主的餐厅。"),
    ])  # fmt: skip
    memory_hearth.llm.responder = lambda req: next(replies)
    device = memory_hearth.device(MAC)
    await device.connect()
    result = await device.ask("推荐个餐厅")
    await device.close()
    tool_result = memory_hearth.llm.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool"
    assert "我老婆对海鲜过敏" in tool_result["content"]
    assert "小橙子对花生过敏" in tool_result["content"]
    assert "青霉素" not in tool_result["content"] and "猫毛" not in tool_result["content"]
    assert result.text == "推荐一家不以海鲜为主的餐厅。"


async def test_each_turn_leaves_a_trace_of_recall_tools_and_reply(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    import httpx

    from server.devices import DeviceRegistry
    from server.http_app import HttpServices, build_http_app
    from server.traces import TraceStore

    replies = iter([
        Reply(tool_calls=[{"name": "check_safety", "arguments": {"topic": "海鲜礼包"}}]),
        Reply("提醒一下，你老婆对海鲜过敏。"),
    ])  # fmt: skip
    memory_hearth.llm.responder = lambda req: next(replies)
    device = memory_hearth.device(MAC)
    await device.connect()
    await device.ask("订个海鲜礼包送我老婆")
    await device.close()

    [trace] = await TraceStore(redis, 60).turns(device.session_id)
    assert trace["question"] == "订个海鲜礼包送我老婆"
    assert trace["person"] == await own_person(MAC)
    safety = [m["text"] for m in trace["memory"]["groups"]["safety"]]
    assert any("我老婆对海鲜过敏" in text for text in safety)
    assert "[安全约束]" in trace["memory"]["prompt_block"]
    [call] = trace["tool_calls"]
    assert call["name"] == "check_safety" and call["arguments"] == {"topic": "海鲜礼包"}
    assert "我老婆对海鲜过敏" in call["result"]
    # the constraint the request names is said first, in memory's words; the model's own
    # reminder after it is not said again (however the splitter cut it)
    assert trace["reply"] == "提醒一下：张伟老婆对海鲜过敏，尤其是虾，一吃就起疹子。"
    assert trace["finished"]
    assert [r["said"] for r in trace["replaced"]] == ["提醒一下，", "你老婆对海鲜过敏。"]
    assert {r["why"] for r in trace["replaced"]} == {"reminder repeated"}
    assert len(memory_hearth.llm.requests) == 2  # a repeat is an answer: no extra round

    # the same through the admin API, which needs its token
    services = HttpServices(
        memory_hearth.settings, memory_hearth.authority, DeviceRegistry(redis), "metrics",
        admin_token="admin-secret",
    )  # fmt: skip
    transport = httpx.ASGITransport(app=build_http_app(services))
    async with httpx.AsyncClient(transport=transport, base_url="http://hearth") as client:
        url = f"/admin/sessions/{device.session_id}/turns"
        assert (await client.get(url)).status_code == 401
        answer = await client.get(url, headers={"Authorization": "Bearer admin-secret"})
    assert answer.status_code == 200
    assert answer.json()["turns"] == [trace]


async def _ask_with_replies(hearth: RunningHearth, replies: list[Reply]) -> str:
    scripted = iter(replies)
    hearth.llm.responder = lambda req: next(scripted)
    device = hearth.device(MAC)
    await device.connect()
    result = await device.ask(ASKED)
    await device.close()
    return result.text


def _answer_round_folds_the_result(request: dict[str, object]) -> None:
    """No tools, no tool-role messages: the check_safety result as plain context, once."""
    messages = request["messages"]
    assert isinstance(messages, list)
    assert not request.get("tools")
    assert all(m["role"] != "tool" and not m.get("tool_calls") for m in messages)
    folded = [m["content"] for m in messages if "刚才调用工具" in str(m["content"])]
    assert len(folded) == 1 and "我老婆对海鲜过敏" in folded[0]
    assert messages[-1] == {"role": "user", "content": ASKED}


# a request naming no item a constraint is about: nothing is said before the model's reply
ASKED = "周末请我老婆吃顿好的"
CALL = {"name": "check_safety", "arguments": {"topic": "海鲜礼包"}}
ANSWER = "你老婆对海鲜过敏，换个礼包吧。"


async def test_a_repeated_tool_call_is_not_run_again(memory_hearth: RunningHearth) -> None:
    # what the local 1.5B model did: after check_safety's result it wrote the same call again
    # as fenced JSON text, with the tools still offered
    repeated = '```json\n{"name": "check_safety", "arguments": {"topic":  "海鲜礼包"}}\n```'
    text = await _ask_with_replies(
        memory_hearth, [Reply(tool_calls=[CALL]), Reply(repeated), Reply(ANSWER)]
    )
    first, second, third = memory_hearth.llm.requests
    assert first["tools"] and second["tools"]
    # the tool ran once: the repeat is neither run nor echoed back to the model
    assert [m["role"] for m in second["messages"]].count("tool") == 1
    _answer_round_folds_the_result(third)
    assert text == ANSWER


async def test_nothing_said_after_a_tool_result_gets_one_plain_round(
    memory_hearth: RunningHearth,
) -> None:
    # what the local 1.5B model also did: an empty completion right after the tool message
    text = await _ask_with_replies(
        memory_hearth, [Reply(tool_calls=[CALL]), Reply(""), Reply(ANSWER)]
    )
    assert len(memory_hearth.llm.requests) == 3
    _answer_round_folds_the_result(memory_hearth.llm.requests[2])
    assert text == ANSWER


async def test_the_plain_round_runs_once_then_the_fallback(memory_hearth: RunningHearth) -> None:
    from server.device.reply_checks import ACKNOWLEDGED

    text = await _ask_with_replies(memory_hearth, [Reply(tool_calls=[CALL]), Reply(""), Reply("")])
    assert len(memory_hearth.llm.requests) == 3
    # 「周末请我老婆吃顿好的」 is a plan the person states: acknowledged, not apologised for
    assert text == ACKNOWLEDGED["zh"]


async def test_a_failing_store_costs_the_memory_not_the_turn(
    memory_hearth: RunningHearth, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19, bad input: the read path (with its safety lookup) failing on a store error —
    the turn is answered without memory, the failure logged and counted, never a silent stall."""
    from server import metrics
    from server.memory.readpath import ReadPath

    read_path = memory_hearth.server.services.turn.memory
    assert isinstance(read_path, ReadPath)

    def broken(*args: object) -> object:
        raise ConnectionError("qdrant is down")

    monkeypatch.setattr(read_path.store, "search_batch", broken)
    before = metrics.MEMORY_UNAVAILABLE._value.get()
    memory_hearth.llm.responder = lambda req: Reply("好的，给你推荐一家面馆。")
    device = memory_hearth.device(MAC)
    await device.connect()
    result = await device.ask("推荐个吃饭的地方")
    await device.close()
    assert result.text == "好的，给你推荐一家面馆。"
    assert "<memory>" not in system_prompt(memory_hearth.llm)
    assert metrics.MEMORY_UNAVAILABLE._value.get() == before + 1


async def _ask(hearth: RunningHearth, redis: Redis, *questions: str) -> tuple[str, dict[str, Any]]:
    """Ask on one connection; the last answer and its turn's trace."""
    from server.traces import TraceStore

    device = hearth.device(MAC)
    await device.connect()
    for question in questions:
        result = await device.ask(question)
    await device.close()
    turns = await TraceStore(redis, 60).turns(device.session_id)
    return result.text, turns[-1]


async def test_an_invented_son_is_never_spoken(memory_hearth: RunningHearth, redis: Redis) -> None:
    """Issue 19 item 2: memory holds no son; the model's 「小明」 becomes "I don't know", its
    follow-up is dropped, and the trace says what was replaced and why."""
    memory_hearth.llm.responder = lambda req: Reply("你儿子叫小明。他今年八岁。")
    said, trace = await _ask(memory_hearth, redis, "我儿子叫什么名字？")
    assert said == "这个你还没跟我说过，我不知道。"
    assert [r["said"] for r in trace["replaced"]] == ["你儿子叫小明。", "他今年八岁。"]
    assert "小明" in trace["replaced"][0]["why"]


async def test_a_stray_sentence_is_dropped_and_the_answer_after_it_heard(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    """A sentence about someone else (and a name memory never held) is not spoken; the right
    answer that follows is, with no "I don't know" in the middle of it."""
    memory_hearth.llm.responder = lambda req: Reply("你老婆叫林芳。你女儿叫小橙子。")
    said, trace = await _ask(memory_hearth, redis, "我女儿叫什么名字？")
    assert said == "你女儿叫小橙子。"
    assert [r["said"] for r in trace["replaced"]] == ["你老婆叫林芳。"]


async def test_the_tail_of_a_dropped_sentence_is_not_said_alone(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    """「老婆喜欢看金庸的小说，但不能吃虾。」: the invented clause dropped, its true tail is not
    spoken as half an answer; the device says it was never told."""
    memory_hearth.llm.responder = lambda req: Reply("老婆喜欢看金庸的小说，但不能吃虾。")
    said, trace = await _ask(memory_hearth, redis, "我老婆喜欢看什么书？")
    assert said == "这个你还没跟我说过，我不知道。"
    assert [r["why"] for r in trace["replaced"]][1] == "continues a sentence not spoken"


async def test_a_fact_borrowed_from_someone_else_is_not_spoken(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    """「我们家住在杭州西湖区」 is about us, not about a sister."""
    memory_hearth.llm.responder = lambda req: Reply("你姐姐住在杭州西湖区。")
    said, _ = await _ask(memory_hearth, redis, "我姐姐住在哪？")
    assert said == "这个你还没跟我说过，我不知道。"


@pytest.mark.parametrize(
    ("question", "reply"),
    [("老婆生日是哪天？", "你老婆的生日是3月12号。"),
     ("小橙子今年几岁了？", "小橙子今年五岁，特别喜欢恐龙。"),
     ("我的车停在哪一层？", "你的车停在地下车库B2层。"),
     ("我中午一个人吃点什么好？", "可以吃一碗牛肉面，再来点青菜。")],
)  # fmt: skip
async def test_what_memory_holds_and_advice_are_spoken_as_said(
    memory_hearth: RunningHearth, redis: Redis, question: str, reply: str
) -> None:
    memory_hearth.llm.responder = lambda req: Reply(reply)
    said, trace = await _ask(memory_hearth, redis, question)
    assert said == reply and trace["replaced"] == []


async def test_what_was_said_earlier_in_the_session_grounds_the_answer(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    replies = iter([Reply("好的，记住了。"), Reply("你儿子叫小明。")])
    memory_hearth.llm.responder = lambda req: next(replies)
    said, _ = await _ask(memory_hearth, redis, "我儿子叫小明", "我儿子叫什么名字？")
    assert said == "你儿子叫小明。"


async def test_an_answer_memory_plainly_lacks_starts_with_i_dont_know(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    """Memory holds her age and her dinosaurs, no class teacher: a line of memory told back is
    true and said, the teacher's name the small model made up is not, and "I don't know"
    follows — the block told it so."""
    memory_hearth.llm.responder = lambda req: Reply("小橙子今年五岁，班主任姓王老师。")
    said, trace = await _ask(memory_hearth, redis, "小橙子的班主任姓什么？")
    assert said == "小橙子今年五岁，这个你还没跟我说过，我不知道。"
    assert trace["memory"]["memory_lacks"] is True
    assert NOT_HERE in trace["memory"]["prompt_block"]
    assert [r["why"] for r in trace["replaced"]] == [
        "memory holds no answer, not in memory: ['王老师']"
    ]


async def test_after_saying_it_does_not_know_the_reply_goes_on(
    memory_hearth: RunningHearth, redis: Redis
) -> None:
    reply = "这个你还没跟我说过。你可以告诉我，我帮你记着。"
    memory_hearth.llm.responder = lambda req: Reply(reply)
    said, trace = await _ask(memory_hearth, redis, "豆豆是公的还是母的？")
    assert said == reply and trace["replaced"] == []


async def test_hearth_says_the_constraint_and_never_the_food_it_forbids(
    memory_hearth: RunningHearth,
) -> None:
    memory_hearth.llm.responder = lambda req: Reply(
        "可以做宫保鸡丁，多放点花生更香。再配一碗米饭。"
    )
    device = memory_hearth.device(MAC)
    await device.connect()
    result = await device.ask("晚上给小橙子做个宫保鸡丁吧")
    await device.close()
    assert result.text.startswith("提醒一下：小橙子对花生过敏。")
    assert "多放点花生" not in result.text
    assert "再配一碗米饭" in result.text  # what does not lean on the dropped sentence is said


async def test_a_statement_is_acknowledged_never_apologised_for(
    memory_hearth: RunningHearth,
) -> None:
    from server.device.rules import STATEMENT_NOTE

    said, prompt = await _one_turn(memory_hearth, "", "我姐姐下个月要从成都过来住一阵子")
    assert said == "好的，我知道了。"
    assert STATEMENT_NOTE["zh"] in prompt
    assert "提醒一下" not in said


async def test_chit_chat_reads_no_memory(memory_hearth: RunningHearth) -> None:
    memory_hearth.llm.responder = lambda req: Reply("不客气，随时叫我。")
    device = memory_hearth.device(MAC)
    await device.connect()
    await device.ask("谢谢你啊，辛苦了")
    await device.close()
    assert "<memory>" not in system_prompt(memory_hearth.llm)


async def test_the_present_moment_is_read_from_the_clock(memory_hearth: RunningHearth) -> None:
    """「现在几点了」: the turn tells the model the time and day now; a turn that does not ask
    them has no such note (its prompt is unchanged)."""
    memory_hearth.llm.responder = lambda req: Reply("现在是下午四点。")
    device = memory_hearth.device(MAC)
    await device.connect()
    await device.ask("现在几点了")
    asked = system_prompt(memory_hearth.llm)
    await device.ask("小橙子周六几点上钢琴课？")
    await device.close()
    assert "现在是" in asked and "问到时间或日期，就照这个回答" in asked
    assert "问到时间或日期" not in system_prompt(memory_hearth.llm)


async def test_the_weather_asked_with_no_tool_that_knows_it_is_not_made_up(
    memory_hearth: RunningHearth,
) -> None:
    from server.device.rules import NO_WEATHER_NOTE

    _, prompt = await _one_turn(memory_hearth, "我这里查不到实时天气。", "外头这会儿零下多少度")
    assert NO_WEATHER_NOTE["zh"] in prompt
