"""A scripted write-path LLM: answers extraction, merge and tagging the way a good model would
for the conversations a test declares, and checks what it is asked — a prompt missing the
conversation, the facts, the stored memories, the date or the echo rule is answered with HTTP
400, so a broken prompt fails the job (and the test)."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.scripted_llm import Reply
from workers import cues

TagSpec = tuple[str, str, str | None, str | None]  # cls, decay, expires_at, subject


@dataclass
class WriteScript:
    facts: dict[str, list[str]] = field(default_factory=dict)  # utterance substring -> facts
    updates: dict[str, str] = field(default_factory=dict)  # new fact -> stored text it replaces
    tags: dict[str, TagSpec] = field(default_factory=dict)  # memory text -> tags
    day: str | None = None  # the conversation date every prompt must carry
    shuffle_tags: bool = False
    mangle_tag_texts: set[str] = field(default_factory=set)  # echoed wrongly on purpose
    fail_next: list[Reply] = field(default_factory=list)  # replies served before the script
    hang_tagging: asyncio.Event | None = None
    merge_drops: set[str] = field(default_factory=set)  # facts the merge reply leaves out
    cues: dict[str, list[str]] = field(default_factory=dict)  # memory text -> its cues
    garbage_cues: int = 0  # this many cue calls answer with text that is not JSON
    cue_prompts: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # "extract" / "merge" / "tag" / "chat"
    merge_prompts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    chat: Callable[[dict[str, Any]], Reply] = lambda body: Reply("好的，记住了。")

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body.get("stream"):
            self.calls.append("chat")
            return self.chat(body)
        if self.fail_next:
            self.calls.append("failed")
            return self.fail_next.pop(0)
        messages = body["messages"]
        text = "\n".join(str(m["content"]) for m in messages)
        if "整理一个家庭语音助手的长期记忆" in text:
            return self._extract(body, text)
        if "smart memory manager" in text:
            return self._merge(body, text)
        if "记忆打标签" in text:
            return self._tag(body, text)
        if "只写名字" in text:
            return self._cue(body, text)
        return self._refuse(f"unknown write-path prompt: {text[:120]!r}")

    def _refuse(self, problem: str) -> Reply:
        self.problems.append(problem)
        return Reply(json.dumps({"error": problem}), status=400)

    def _format_ok(self, body: dict[str, Any], key: str) -> bool:
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or fmt.get("json_schema", {}).get("schema") or {}
        return key in schema.get("properties", {})

    def _extract(self, body: dict[str, Any], text: str) -> Reply:
        self.calls.append("extract")
        if not self._format_ok(body, "facts"):
            return self._refuse("extraction without the facts JSON schema")
        if self.day and f"对话日期：{self.day}" not in text:
            return self._refuse("extraction prompt lacks the conversation date")
        if "只从「用户」的话里取" not in text or "\n用户：" not in text:
            return self._refuse("extraction prompt lacks the household rules or the conversation")
        conversation = text.split("\n对话：\n", 1)[-1]
        facts: list[str] = []
        for said, extracted in self.facts.items():
            if f"用户：{said}" in conversation or said in conversation:
                facts += extracted
        return Reply(json.dumps({"facts": facts}, ensure_ascii=False))

    def _merge(self, body: dict[str, Any], text: str) -> Reply:
        self.calls.append("merge")
        self.merge_prompts.append(text)
        if not self._format_ok(body, "memory"):
            return self._refuse("merge without the memory JSON schema")
        shown = {m["text"]: m["id"] for m in _stored(text)}
        ops = []
        for fact in _facts(text):
            if fact in self.merge_drops:
                continue
            replaced = self.updates.get(fact)
            if replaced is not None and replaced in shown:
                ops.append(
                    {"id": shown[replaced], "text": fact, "event": "UPDATE", "old_memory": replaced}
                )
            elif fact in shown:
                ops.append({"id": shown[fact], "text": fact, "event": "NONE"})
            else:
                ops.append({"id": str(len(shown) + len(ops)), "text": fact, "event": "ADD"})
        return Reply(json.dumps({"memory": ops}, ensure_ascii=False))

    def _tag(self, body: dict[str, Any], text: str) -> Reply:
        self.calls.append("tag")
        if not self._format_ok(body, "items"):
            return self._refuse("tagging without the items JSON schema")
        if self.day and f"对话日期：{self.day}" not in text:
            return self._refuse("tagging prompt lacks the conversation date")
        if "原样抄写" not in text:
            return self._refuse("tagging prompt does not ask for the original text back")
        listed = re.findall(r"^- (.+)$", text.split("记忆：", 1)[-1], flags=re.MULTILINE)
        items = []
        for memory in listed:
            cls, decay, expires, subject = self.tags.get(memory, ("fact", "volume", None, None))
            echoed = memory + "（改）" if memory in self.mangle_tag_texts else memory + "。"
            items.append(
                {
                    "text": echoed,
                    "cls": cls,
                    "decay": decay,
                    "expires_at": expires,
                    "subject": subject,
                }
            )
        if self.shuffle_tags:
            random.Random(3).shuffle(items)
            items.reverse()
        reply = Reply(json.dumps({"items": items}, ensure_ascii=False))
        if self.hang_tagging is not None:
            reply.hang = self.hang_tagging
        return reply

    def _cue(self, body: dict[str, Any], text: str) -> Reply:
        self.calls.append("cue")
        self.cue_prompts.append(text)
        if not self._format_ok(body, "items"):
            return self._refuse("cues without the items JSON schema")
        if self.garbage_cues:
            self.garbage_cues -= 1
            return Reply("好的，这些记忆在吃饭的时候要想起来。")
        asked = next((m for m in self.cues if cues.question(m) in text), None)
        found = self.cues[asked] if asked else ["周末带家人出去玩", "买点零食"]
        return Reply(json.dumps({"items": found}, ensure_ascii=False))


def _stored(prompt: str) -> list[dict[str, str]]:
    """The stored memories mem0's merge prompt shows (a Python list repr of dicts)."""
    if "current content of my memory" not in prompt:
        return []  # "Current memory is empty."
    match = re.search(r"```\s*(\[.*?\])\s*```", prompt, flags=re.DOTALL)
    if not match:
        return []
    import ast

    return list(ast.literal_eval(match.group(1)))


def _facts(prompt: str) -> list[str]:
    blocks = re.findall(r"```\s*(\[.*?\])\s*```", prompt, flags=re.DOTALL)
    if not blocks:
        return []
    import ast

    return [str(f) for f in ast.literal_eval(blocks[-1])]
