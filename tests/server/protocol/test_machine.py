"""DeviceProtocol without sockets: bytes/JSON in, events and frames out, time passed in."""

from __future__ import annotations

import orjson
import pytest

from server.protocol import framing
from server.protocol.errors import (
    BadHello,
    CloseCode,
    HelloExpected,
    HelloTimeout,
    TooManyMalformed,
)
from server.protocol.machine import DeviceProtocol, Phase
from server.protocol.messages import (
    TYPE_SAMPLE,
    AbortRequested,
    AudioParams,
    AudioReceived,
    HelloReceived,
    IgnoredMessage,
    ListenDetected,
    ListenStarted,
    ListenStopped,
    MalformedMessage,
    McpReceived,
    PingReceived,
)

HELLO = orjson.dumps({
    "type": "hello", "version": 1, "transport": "websocket", "features": {"mcp": True},
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}).decode()  # fmt: skip


def machine(version: int = 1, now: float = 0.0) -> DeviceProtocol:
    return DeviceProtocol(
        "sid-1",
        version=version,
        downlink=AudioParams(sample_rate=24000),
        now=now,
        hello_timeout_s=10,
        idle_timeout_s=120,
        max_malformed=3,
    )


def sent_json(p: DeviceProtocol) -> list[dict[str, object]]:
    return [orjson.loads(f) for f in p.data_to_send() if isinstance(f, str)]


def opened(version: int = 1) -> DeviceProtocol:
    p = machine(version)
    p.receive_text(HELLO, 0.0)
    p.data_to_send()
    return p


def test_hello_is_answered_with_session_id_and_our_real_downlink_params() -> None:
    p = machine()
    [event] = p.receive_text(HELLO, 0.5)
    assert isinstance(event, HelloReceived) and event.features == {"mcp": True}
    [reply] = sent_json(p)
    params = {"format": "opus", "sample_rate": 24000, "channels": 1, "frame_duration": 60}
    assert reply == {
        "type": "hello", "version": 1, "transport": "websocket", "session_id": "sid-1",
        "audio_params": params,
    }  # fmt: skip
    assert p.phase is Phase.OPEN


def test_anything_before_hello_is_a_protocol_error() -> None:
    with pytest.raises(HelloExpected) as info:
        machine().receive_binary(b"\x00\x01", 0.0)
    assert info.value.close_code is CloseCode.PROTOCOL_ERROR
    with pytest.raises(HelloExpected):
        machine().receive_text('{"type":"listen","state":"start"}', 0.0)


def test_other_transport_is_refused() -> None:
    with pytest.raises(BadHello):
        machine().receive_text('{"type":"hello","transport":"mqtt"}', 0.0)


def test_hello_timeout_is_enforced_with_time_passed_in() -> None:
    p = machine(now=100.0)
    assert p.next_deadline() == 110.0
    assert p.check_timeouts(109.9) is False
    with pytest.raises(HelloTimeout) as info:
        p.check_timeouts(110.0)
    assert info.value.close_code is CloseCode.POLICY_VIOLATION


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type":"listen","state":"start","mode":"manual"}', ListenStarted("manual")),
        ('{"type":"listen","state":"stop"}', ListenStopped()),
        ('{"type":"listen","state":"detect","text":" 今天天气 "}', ListenDetected("今天天气")),
        ('{"type":"abort","reason":"wake_word_detected"}', AbortRequested("wake_word_detected")),
        ('{"type":"abort"}', AbortRequested(None)),
        (
            '{"type":"mcp","payload":{"jsonrpc":"2.0","id":1}}',
            McpReceived({"jsonrpc": "2.0", "id": 1}),
        ),
        ('{"type":"ping"}', PingReceived()),
        ('{"type":"iot","update":true}', IgnoredMessage("iot")),
        ('{"type":"goodbye"}', IgnoredMessage("goodbye")),
    ],
)
def test_client_messages_become_events(text: str, expected: object) -> None:
    p = opened()
    assert p.receive_text(text, 1.0) == [expected]


def test_listen_state_is_tracked() -> None:
    p = opened()
    p.receive_text('{"type":"listen","state":"start","mode":"realtime"}', 1.0)
    assert p.listening and p.listen_mode == "realtime"
    p.receive_text('{"type":"listen","state":"stop"}', 1.0)
    assert not p.listening


@pytest.mark.parametrize(
    "text",
    ["{nope", "[1]", '{"no":"type"}', '{"type":3}', '{"type":"listen","state":"x"}',
     '{"type":"listen","state":"start","mode":"loud"}', '{"type":"mcp","payload":[]}',
     '{"type":"listen","state":"detect"}'],
)  # fmt: skip
def test_malformed_messages_are_events_not_crashes(text: str) -> None:
    [event] = opened().receive_text(text, 1.0)
    assert isinstance(event, MalformedMessage) and event.reason


def test_too_many_malformed_messages_end_the_session() -> None:
    p = opened()
    for _ in range(3):
        p.receive_text("{bad", 1.0)
    with pytest.raises(TooManyMalformed):
        p.receive_text("{bad", 1.0)


def test_idle_clock_rearmed_by_text_and_outgoing_audio_not_by_control() -> None:
    p = opened()
    assert p.next_deadline() == 120.0
    p.receive_text('{"type":"listen","state":"start","mode":"auto"}', 50.0)
    assert p.next_deadline() == 120.0  # control messages are not activity
    p.receive_text('{"type":"listen","state":"detect","text":"hi"}', 60.0)
    assert p.next_deadline() == 180.0
    p.send_tts_start()
    p.send_audio(b"\x01", 0, 70.0)
    assert p.next_deadline() == 190.0
    assert p.check_timeouts(500.0) is False  # never idle while speaking
    p.send_tts_stop()
    assert p.check_timeouts(190.0) is True


def test_audio_requires_tts_start_first() -> None:
    p = opened()
    with pytest.raises(RuntimeError):
        p.send_audio(b"\x01", 0, 1.0)


def test_turn_messages_carry_session_id_in_order() -> None:
    p = opened()
    p.send_stt("你好")
    p.send_tts_start()
    p.send_emotion("😎", "cool")
    p.send_sentence_start("你好呀")
    p.send_audio(b"opus", 0, 1.0)
    p.send_tts_stop()
    frames = p.data_to_send()
    assert frames[4] == b"opus"
    kinds = [orjson.loads(f) for f in frames if isinstance(f, str)]
    assert [(k["type"], k.get("state")) for k in kinds] == [
        ("stt", None), ("tts", "start"), ("llm", None), ("tts", "sentence_start"), ("tts", "stop"),
    ]  # fmt: skip
    assert all(k["session_id"] == "sid-1" for k in kinds)


@pytest.mark.parametrize("version", [2, 3])
def test_binary_framing_v2_v3_both_ways(version: int) -> None:
    p = opened(version)
    [event] = p.receive_binary(framing.encode(version, b"opus-in", 120), 1.0)
    assert isinstance(event, AudioReceived) and event.opus == b"opus-in"
    p.send_tts_start()
    p.send_audio(b"opus-out", 60, 1.0)
    out = [f for f in p.data_to_send() if isinstance(f, bytes)]
    assert framing.decode(version, out[0]).payload == b"opus-out"


def test_bad_v3_header_is_malformed_not_fatal() -> None:
    p = opened(3)
    [event] = p.receive_binary(b"\x00\x00\x00\x09abc", 1.0)
    assert isinstance(event, MalformedMessage) and "payload_size" in event.reason


def test_unknown_protocol_version_falls_back_to_v1() -> None:
    p = machine(version=7)
    assert p.version == 1


def test_undefined_message_types_count_toward_the_limit_legacy_ones_do_not() -> None:
    p = opened()
    for _ in range(10):  # legacy iot and MQTT goodbye: ignored, never counted
        [event] = p.receive_text('{"type": "iot", "states": []}', 1.0)
        assert isinstance(event, IgnoredMessage) and event.known
    long_type = "x" * 10_000
    for _ in range(3):
        [event] = p.receive_text(orjson.dumps({"type": long_type}).decode(), 1.0)
        assert isinstance(event, IgnoredMessage) and not event.known
        assert len(event.type) == TYPE_SAMPLE  # what reaches the log is bounded
    with pytest.raises(TooManyMalformed):
        p.receive_text('{"type": "made-up"}', 1.0)
