"""Tool calls written as text by small local models are recognised, never spoken."""

from __future__ import annotations

import orjson
import pytest

from providers.llm import textual_tool_calls

NAMES = {"check_safety", "self_audio_speaker_set_volume"}


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "check_safety", "arguments": {"topic": "餐厅"}}',
        '<tool_call>\n{"name": "check_safety", "arguments": {"topic": "餐厅"}}\n</tool_call>',
        '{{"name":"check_safety", "arguments": {"topic": "餐厅"}}}',
        '```json\n{"name": "check_safety", "arguments": {"topic": "餐厅"}}\n```',
        '[{"name": "check_safety", "arguments": {"topic": "餐厅"}}]',
        '<tools>{"name": "check_safety", "arguments": {"topic": "餐厅"}}</tools>',
        '<function_call>{"name": "check_safety", "arguments": {"topic": "餐厅"}}</function_call>',
    ],
)
def test_textual_tool_call_forms(text: str) -> None:
    [call] = textual_tool_calls(text, NAMES) or []
    assert call.name == "check_safety"
    assert orjson.loads(call.arguments) == {"topic": "餐厅"}


def test_several_calls_on_separate_lines() -> None:
    first = '{"name": "check_safety", "arguments": {"topic": "a"}}'
    second = '{"name": "self_audio_speaker_set_volume", "arguments": {"volume": 3}}'
    text = f"<tool_call>{first}</tool_call>\n<tool_call>{second}</tool_call>"
    calls = textual_tool_calls(text, NAMES) or []
    assert [c.name for c in calls] == ["check_safety", "self_audio_speaker_set_volume"]
    assert len({c.id for c in calls}) == 2


@pytest.mark.parametrize(
    "text",
    ['{"name": "rm_rf", "arguments": {}}', "{这不是 JSON}", '{"answer": 42}', "[1, 2]"],
)
def test_anything_else_is_not_a_call(text: str) -> None:
    assert textual_tool_calls(text, NAMES) is None
