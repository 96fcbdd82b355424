"""A device never speaks its own machinery.

The small local model read parts of its prompt aloud: 「[安全约束]里没有相关的安全约束」,
「我正在检查你的安全约束」, a memory's attribution with the person id the block carried
(「…（device-3c35d28c1af3说）」), a tool's name. The static rule (``server.device.rules``) asks
it not to; this is the guarantee: a sentence naming the prompt's parts, a tool, or an internal
id is not spoken. A safety reminder is never dropped for its wording (「提醒一下，小橙子对花生过敏，
这是安全约束」 is still the warning that matters): only an id in it is cut out.
"""

from __future__ import annotations

import re

from server.device import rules
from server.memory import render

# the prompt's own words: group names, tags, rules, tools
_PARTS = re.compile(
    r"安全约束|相关记忆|记忆块|记忆组|系统提示|提示词|system prompt"
    r"|<\s*/?\s*(memory|request|actions|memory_usage|must_call)"
    r"|check_safety|\bmemory_usage\b|\bmust_call\b|调用工具|工具调用",
    re.IGNORECASE,
)
# ids a person never says: a device's own person id, a UUID, a MAC address
_IDS = re.compile(
    r"device-[0-9a-f]{6,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|(?:[0-9a-f]{2}:){5}[0-9a-f]{2}",
    re.IGNORECASE,
)
# an attribution around an id: 「（device-…说）」
_ID_NOTE = re.compile(r"[（(][^（()）]*?(" + _IDS.pattern + r")[^（()）]*?[)）]", re.IGNORECASE)


# a tool call written as text in the middle of a reply (the opening kind is parsed or held by
# ``providers.llm``): 「…可以这么说：{{"name": "send_message", "arguments": {…}}}}」, or a piece of
# one the sentence splitter cut off
# 「<tools>"单位为元”，"default": 500}</tools>」: a tool schema's pieces, tags and numbers too
_MARKUP = re.compile(
    r"\{+\s*\"\w+\"\s*:|\"\w+\"\s*:\s*[-\d{\"\[]|\}\}"
    r"|<\s*/?\s*(?:tools?|tool_calls?|functions?|function_calls?)\s*>",
    re.IGNORECASE,
)


def without_markup(sentence: str) -> str:
    """``sentence`` up to a tool call written as text in it (all of it when there is none)."""
    found = _MARKUP.search(sentence)
    return sentence if found is None else sentence[: found.start()].rstrip(" ：:，,")


# a memory line's note in the prompt (server.memory.render.describe), copied into a reply:
# 「…在对门龙老师家（关于我）」, 「（关于妈妈，记于2026-11-02）」
_PROMPT_NOTE = re.compile(r"\s*[（(](?:关于|记于|到\d{4}-)[^（）()]{0,40}[）)]")


def without_notes(sentence: str) -> str:
    """``sentence`` with the prompt's memory-line notes cut out."""
    return _PROMPT_NOTE.sub("", sentence)


# the prompt's fixed sentences (its rules and the block's markers), which a reply never copies
# (its own words, ten characters in a row):
# the model read 「…第一句就说你还没跟我说过、不知道，不要拿它们来凑」 back as its answer
_PROMPT_TEXTS = (
    render.SAFETY_RULE, render.MEMORY_RULES, render.LOOKED_NOTHING, render.NO_MEMORY,
    render.ONLY_WHAT_IS_HERE, render.NOT_HERE, rules.ACTION_RULES,
)  # fmt: skip
_COPIED = 10  # characters in a row of a prompt sentence (punctuation aside) that are a copy
_PUNCTUATION = re.compile(r"[\s，。、；：！？,.;:!?（）()「」“”\"'<>/\[\]-]+")


def _windows(text: str) -> frozenset[str]:
    plain = _PUNCTUATION.sub("", text)
    return frozenset(plain[i : i + _COPIED] for i in range(len(plain) - _COPIED + 1))


# what the prompt tells the model to say (“这个我这里做不到”, 「你还没跟我说过、不知道」) is
# the model's to say: no copy is counted across it
_SAYABLE = re.compile(r"“[^”]*”|你还没跟我说过、不知道")
_PROMPT_WINDOWS = frozenset().union(
    *(_windows(part) for text in _PROMPT_TEXTS for part in _SAYABLE.split(text))
)


def machinery_in(sentence: str) -> str | None:
    """The machinery ``sentence`` names (a prompt part, a tool, an id) or copies (a run of the
    prompt's fixed sentences), or None."""
    found = _PARTS.search(sentence) or _IDS.search(sentence)
    if found:
        return found.group(0)
    return next((w for w in _windows(sentence) if w in _PROMPT_WINDOWS), None)


def without_ids(sentence: str) -> str:
    """``sentence`` with internal ids (and a note around one) cut out."""
    return _IDS.sub("", _ID_NOTE.sub("", sentence))
