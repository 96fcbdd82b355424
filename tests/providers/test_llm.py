"""Tool calls written as text by small local models are recognised, never spoken."""

from __future__ import annotations

import orjson
import pytest

from providers.llm import (
    decide_opening,
    looks_like_tool_call,
    ready_to_decide,
    textual_tool_calls,
)

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
        # seen from the local 1.5B model in the e2e bench: unbalanced template braces
        '{{"name":"check_safety", "arguments": {"topic": "餐厅"}}}}',
        # OpenAI's own wrapper, written out as text
        '{"type": "function", "function": '
        '{"name": "check_safety", "arguments": {"topic": "餐厅"}}}',
        # seen from the local 1.5B model in the 2026-11-30 e2e run (issue 19)
        '<json>{"name": "check_safety","arguments": {"topic": "餐厅"}}</json>',
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


@pytest.mark.parametrize(
    ("text", "tool_shaped"),
    [
        ('<tools>{"type": "function", "function": {"name": "get_gift_book"}}', True),
        ('{"name": "rm_rf", "arguments": {}}', True),
        ("<tool_call>", True),
        ("今天天气不错，适合出门。", False),
        ("{这不是 JSON}", False),
        ('{"answer": 42}', False),
    ],
)
def test_unusable_tool_calls_are_recognised_as_not_speech(text: str, tool_shaped: bool) -> None:
    assert looks_like_tool_call(text) is tool_shaped


def test_a_code_block_is_spoken_as_it_comes_not_held_to_the_end() -> None:
    """A fenced block is decided on its first line: 「```python」 is a code block (not held: it
    used to wait for the whole reply, 8 s); 「```json」 or a bare fence may be a tool call."""
    assert not ready_to_decide("```py")  # the language is not known yet
    assert ready_to_decide("```python\n") and ready_to_decide("好的，我来吧")
    held, _, now = decide_opening("```python\ndef f")
    assert held is None and now == "```python\ndef f"
    for markup in ('```json\n{"na', "```\n{", '```tool_call\n{"'):
        held, _, now = decide_opening(markup)
        assert held == [markup] and now == ""
    held, _, now = decide_opening("好的，我来")
    assert held is None and now == "好的，我来"
