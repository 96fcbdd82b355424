"""The device server on loopback: real WebSockets, real Opus, real Redis, espeak-ng TTS."""

from __future__ import annotations

import asyncio
import time

import opuslib_next
import orjson
import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.device_client import DeviceClient
from server import metrics
from server.device.turn import LLM_FAILED, LLM_UNAVAILABLE
from tests.conftest import RunningHearth
from tests.support.scripted_llm import Reply
from tests.support.waiting import wait_until
from workers.codec import job_pool
from workers.contract import REMEMBER_SESSION


async def device_tools_known(hearth: RunningHearth, device: DeviceClient) -> None:
    """The MCP handshake runs in the background and the client answers MCP requests only while
    it reads: read (bounded) until the server knows the device's tools."""
    async with asyncio.timeout(5):
        while not any(s.mcp and s.mcp.tools for s in hearth.server.sessions):
            await device.send_json({"type": "ping"})
            await device.recv_json()


async def test_text_turn_streams_sentences_as_decodable_opus(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply("😎今天天气不错，适合出去走走。记得带水！")
    device = hearth.device()
    await device.connect()
    params = device.server_hello["audio_params"]
    assert device.server_hello["transport"] == "websocket"
    assert params["sample_rate"] == 24000 and params["frame_duration"] == 60
    result = await device.ask("今天天气怎么样")
    await device.close()

    assert result.stt == "今天天气怎么样"
    assert result.emotion == "cool"
    # first segment is cut at the first comma, for speed
    assert result.sentences[0] == "😎今天天气不错，"
    assert "".join(result.sentences) == "😎今天天气不错，适合出去走走。记得带水！"
    assert len(result.frames) > 10
    decoder = opuslib_next.Decoder(24000, 1)
    pcm = b"".join(decoder.decode(frame, 1440) for frame in result.frames)
    assert len(pcm) == len(result.frames) * 1440 * 2
    assert hearth.llm.last_user_text() == "今天天气怎么样"


async def test_audio_is_paced_in_real_time_after_a_head_start(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply(
        "这是一句比较长的回答，用来检查音频发送的节奏是否接近实时。"
    )
    device = hearth.device()
    await device.connect()
    result = await device.ask("说一句长的")
    await device.close()
    times = result.frame_times
    n = len(times)
    assert n > 20
    head = hearth.settings.audio.head_start_frames
    # the first frames arrive at once; the rest take about real time
    assert times[head - 1] - times[0] < 0.05
    span = times[-1] - times[head]
    expected = (n - 1 - head) * 0.060
    assert expected * 0.8 < span < expected * 1.3 + 0.3


async def test_short_term_context_is_kept_within_a_session(hearth: RunningHearth) -> None:
    replies = iter(["好的，记住了。", "你叫小明。"])
    hearth.llm.responder = lambda req: Reply(next(replies))
    device = hearth.device()
    await device.connect()
    await device.ask("我叫小明")
    await device.ask("我叫什么")
    await device.close()
    messages = hearth.llm.requests[-1]["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "我叫小明"
    assert messages[2]["content"] == "好的，记住了。"


async def test_device_mcp_tools_are_offered_and_called(hearth: RunningHearth) -> None:
    tool = {
        "name": "self.audio_speaker.set_volume",
        "description": "Set the speaker volume",
        "inputSchema": {"type": "object", "properties": {"volume": {"type": "integer"}}},
    }
    calls = iter([
        Reply(tool_calls=[{"name": "self_audio_speaker_set_volume", "arguments": {"volume": 60}}]),
        Reply("音量已经调到六十。"),
    ])  # fmt: skip
    hearth.llm.responder = lambda req: next(calls)
    device = hearth.device(mcp_tools=[tool])
    await device.connect()
    await device_tools_known(hearth, device)
    result = await device.ask("把音量调到60")
    await device.close()
    assert device.mcp_calls == [
        {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 60}}
    ]
    functions = [f["function"]["name"] for f in hearth.llm.requests[0]["tools"]]
    assert "self_audio_speaker_set_volume" in functions
    tool_message = hearth.llm.requests[1]["messages"][-1]
    assert tool_message == {"role": "tool", "tool_call_id": "call_0", "content": "true"}
    assert result.text == "音量已经调到六十。"


async def test_abort_stops_the_reply_at_once(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply("这是一个很长的故事。" * 20)
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "detect", "text": "讲个故事"})
    assert device.ws is not None
    frames = 0
    async with asyncio.timeout(10):
        while frames < 3:
            if isinstance(await device.ws.recv(), bytes):
                frames += 1
    aborted_at = time.perf_counter()
    await device.send_json({"type": "abort", "reason": "wake_word_detected"})
    async with asyncio.timeout(2):
        while True:
            raw = await device.ws.recv()
            if isinstance(raw, str) and orjson.loads(raw).get("state") == "stop":
                break
    assert time.perf_counter() - aborted_at < 0.5
    # the session goes on: a new turn works
    hearth.llm.responder = lambda req: Reply("好的。")
    result = await device.ask("算了")
    assert result.text == "好的。"
    await device.close()


async def test_an_aborted_turn_leaves_its_trace(hearth: RunningHearth, redis: Redis) -> None:
    """What was said before the abort, marked unfinished, with its timing: debugging a turn a
    person cut off starts from the same trace as any other."""
    from server.traces import TraceStore

    hearth.llm.responder = lambda req: Reply("这是一个很长的故事。" * 20)
    device = hearth.device()
    await device.connect()
    result = await device.ask("讲个故事", within_s=10, abort=True)
    await device.close()
    assert result.first_frame_at is not None and result.stopped_at is not None

    async def traced() -> bool:
        return bool(await TraceStore(redis, 60).turns(device.session_id))

    await wait_until(traced, within_s=5)
    [trace] = await TraceStore(redis, 60).turns(device.session_id)
    assert trace["question"] == "讲个故事" and trace["finished"] is False
    assert trace["reply"].startswith("这是一个很长的故事。")
    assert "first_audio" in trace["timing"]


async def test_session_end_enqueues_transcript_once(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply("收到。")
    device = hearth.device()
    await device.connect()
    await device.ask("我老婆对海鲜过敏")
    session_id = device.session_id
    await device.close()
    await hearth.ended.wait_for(session_id)
    queued = await job_pool(hearth.arq).queued_jobs(queue_name="hearth:queue")
    mine = [j for j in queued if j.job_id == session_id]
    assert len(mine) == 1 and mine[0].function == REMEMBER_SESSION
    record = mine[0].args[0]
    assert [u["role"] for u in record["transcript"]] == ["user", "assistant"]
    assert record["transcript"][0]["text"] == "我老婆对海鲜过敏"
    assert record["device_id"] == device.device_id


# ---- authentication at the handshake ------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda h: h.pop("Authorization"), "missing Authorization"),
        (lambda h: h.update(Authorization="Bearer nonsense"), "malformed token"),
        (lambda h: h.update({"Client-Id": "someone-else"}), "not valid for this device"),
        (lambda h: h.pop("Device-Id"), "missing Device-Id"),
        (lambda h: h.update({"Device-Id": "not-a-mac"}), "MAC address"),
    ],
)
async def test_bad_credentials_are_refused_with_a_reason(
    hearth: RunningHearth, mutate: object, reason: str
) -> None:
    device = hearth.device()
    headers = device.headers()
    mutate(headers)  # type: ignore[operator]
    with pytest.raises(InvalidStatus) as info:
        await connect(hearth.url, additional_headers=headers, open_timeout=5)
    assert info.value.response.status_code == 401
    assert reason in info.value.response.body.decode()


async def test_expired_token_is_refused(hearth: RunningHearth) -> None:
    device = hearth.device()
    old = time.time() - 31 * 86400
    device.token = hearth.authority.mint(device.device_id, device.client_id, old)
    with pytest.raises(InvalidStatus) as info:
        await connect(hearth.url, additional_headers=device.headers(), open_timeout=5)
    assert "expired" in info.value.response.body.decode()


async def test_query_string_credentials_work_for_browsers(hearth: RunningHearth) -> None:
    device = hearth.device()
    url = (f"{hearth.url}?device-id={device.device_id}&client-id={device.client_id}"
           f"&authorization=Bearer%20{device.token}")  # fmt: skip
    async with connect(url, open_timeout=5) as ws:
        await ws.send(orjson.dumps({"type": "hello", "transport": "websocket"}).decode())
        reply = orjson.loads(await ws.recv())
        assert reply["type"] == "hello" and reply["session_id"]


async def test_plain_http_get_says_server_is_running(hearth: RunningHearth) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", hearth.port)
    writer.write(b"GET /xiaozhi/v1/ HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    data = await asyncio.wait_for(reader.read(1000), 5)
    writer.close()
    assert data.startswith(b"HTTP/1.1 200") and b"Server is running" in data


# ---- bad input ------------------------------------------------------------------------------


async def test_malformed_messages_are_ignored_and_the_session_goes_on(
    hearth: RunningHearth,
) -> None:
    hearth.llm.responder = lambda req: Reply("还在。")
    device = hearth.device()
    await device.connect()
    assert device.ws is not None
    for bad in ["{not json", '{"no_type": 1}', '{"type": "unknown_kind"}', "[1,2]",
                '{"type": "listen", "state": "sideways"}']:  # fmt: skip
        await device.ws.send(bad)
    result = await device.ask("你还在吗")
    assert result.text == "还在。"
    await device.close()


async def test_binary_before_hello_closes_with_protocol_error(hearth: RunningHearth) -> None:
    device = hearth.device()
    async with connect(hearth.url, additional_headers=device.headers(), open_timeout=5) as ws:
        await ws.send(b"\x01\x02\x03")
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 5)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1002


@pytest.mark.parametrize("hearth_overrides", [{"server": {"hello_timeout_s": 0.3}}])
async def test_hello_that_never_comes_closes_the_socket(hearth: RunningHearth) -> None:
    device = hearth.device()
    async with connect(hearth.url, additional_headers=device.headers(), open_timeout=5) as ws:
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 5)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1008


@pytest.mark.parametrize("hearth_overrides", [{"server": {"max_message_bytes": 4096}}])
async def test_oversized_frame_closes_only_that_device(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply("好。")
    good = hearth.device()
    await good.connect()
    bad = hearth.device()
    await bad.connect()
    assert bad.ws is not None
    await bad.ws.send("x" * 10000)
    with pytest.raises(ConnectionClosed) as info:
        async with asyncio.timeout(5):
            while True:  # MCP initialize may arrive before the close
                await bad.ws.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009
    assert (await good.ask("还好吗")).text == "好。"
    await good.close()


@pytest.mark.parametrize("hearth_overrides", [{"server": {"idle_timeout_s": 0.3}}])
async def test_idle_session_is_closed(hearth: RunningHearth) -> None:
    device = hearth.device()
    await device.connect()
    assert device.ws is not None
    with pytest.raises(ConnectionClosed) as info:
        async with asyncio.timeout(5):
            while True:  # MCP requests arrive (and are answered) before the close
                await device.recv_json()
    assert info.value.rcvd is not None and info.value.rcvd.code == 4000


async def test_device_vanishing_mid_reply_does_not_disturb_others(hearth: RunningHearth) -> None:
    hearth.llm.responder = lambda req: Reply("这是一段很长的回答。" * 10)
    leaver = hearth.device()
    await leaver.connect()
    await leaver.send_json({"type": "listen", "state": "detect", "text": "讲讲"})
    assert leaver.ws is not None
    async with asyncio.timeout(5):
        while not isinstance(await leaver.ws.recv(), bytes):
            pass
    leaver.ws.transport.abort()  # vanish without a close frame
    hearth.llm.responder = lambda req: Reply("在的。")
    other = hearth.device()
    await other.connect()
    assert (await other.ask("在吗")).text == "在的。"
    await other.close()
    # the vanished session still handed its transcript over
    record = await hearth.ended.wait_for(leaver.session_id)
    assert record.end_reason in {"connection_lost", "closed_by_device"}
    assert await hearth.arq.exists(f"arq:job:{leaver.session_id}")


def _failures(cause: str) -> float:
    return metrics.TURN_FAILURES.labels(cause=cause)._value.get()


async def test_llm_down_says_the_model_is_unavailable(hearth: RunningHearth) -> None:
    await hearth.llm.stop()  # nothing listens on that port any more
    before = _failures("llm_unavailable")
    device = hearth.device()
    await device.connect()
    result = await device.ask("你好")
    await device.close()
    assert result.text == LLM_UNAVAILABLE["zh"]  # true, not "I can't recall"
    assert len(result.frames) > 0
    assert _failures("llm_unavailable") == before + 1


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        (Reply(garbage=True), "llm_failed"),
        (Reply(status=500), "llm_unavailable"),
        (Reply(status=400), "llm_failed"),
    ],
)
async def test_llm_garbage_or_errors_say_what_happened(
    hearth: RunningHearth, reply: Reply, cause: str
) -> None:
    hearth.llm.responder = lambda req: reply
    before = _failures(cause)
    device = hearth.device()
    await device.connect()
    result = await device.ask("你好")
    await device.close()
    expected = LLM_FAILED if cause == "llm_failed" else LLM_UNAVAILABLE
    assert result.text == expected["zh"]
    assert _failures(cause) == before + 1


@pytest.mark.parametrize(
    "reply",
    [Reply(""), Reply("🙂**"), Reply('<tools>{"type": "function", "function": {"name": "nope"}}')],
)
async def test_a_reply_with_nothing_speakable_is_never_silence(
    hearth: RunningHearth, reply: Reply
) -> None:
    from server.device.reply_checks import APOLOGY_EMPTY

    hearth.llm.responder = lambda req: reply
    device = hearth.device()
    await device.connect()
    result = await device.ask("你是什么模型")
    await device.close()
    assert result.text.endswith(APOLOGY_EMPTY["zh"])
    assert len(result.frames) > 0


async def test_tool_call_written_as_text_is_executed_not_spoken(hearth: RunningHearth) -> None:
    schema = {"type": "object", "properties": {"volume": {"type": "integer"}}}
    tool = {
        "name": "self.audio_speaker.set_volume",
        "description": "Set the volume",
        "inputSchema": schema,
    }
    replies = iter([
        Reply('{{"name": "self_audio_speaker_set_volume", "arguments": {"volume": 30}}}'),
        Reply("调好了。"),
    ])  # fmt: skip
    hearth.llm.responder = lambda req: next(replies)
    device = hearth.device(mcp_tools=[tool])
    await device.connect()
    await device_tools_known(hearth, device)
    result = await device.ask("音量调到30")
    await device.close()
    assert device.mcp_calls == [
        {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 30}}
    ]
    assert result.text == "调好了。"  # the JSON was never sent as a subtitle or spoken


async def test_more_than_the_malformed_limit_closes_that_session_only(
    hearth: RunningHearth,
) -> None:
    flooder, bystander = hearth.device(), hearth.device()
    await flooder.connect()
    await bystander.connect()
    assert flooder.ws is not None
    for _ in range(hearth.settings.server.max_malformed_messages + 1):
        await flooder.ws.send("{not json")
    with pytest.raises(ConnectionClosed):
        async with asyncio.timeout(5):
            while True:
                await flooder.ws.recv()
    assert flooder.ws.close_code == 1008
    hearth.llm.responder = lambda req: Reply("在。")
    assert (await bystander.ask("在吗")).text == "在。"
    await bystander.close()
