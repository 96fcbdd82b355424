"""The cue call: "when does this memory matter?" — one LLM call for a few memories → for each,
a handful of short everyday requests and situations in which it should come up, though they
need not share a word with it (a mango allergy → 「来杯芒果冰沙」「做个水果拼盘」; fear of heights →
「去走玻璃栈道」). The read path searches them as extra vectors (``memory.schema.CUE``); a hit
renders the memory, never the cue.

Cues are made for the classes where a missed memory costs most: safety constraints and
preferences (``memory.schema.CUED_CLASSES``). Results are aligned by the echoed memory text, as the tagging
call is; a cue is kept only if it is a short phrase of its own (not the memory, not a copy of
another memory, no prompt words), at most ``MAX_CUES`` per memory. A reply that is empty, cut
off or not JSON leaves its memories without cues — stored and recalled as before — and they
wait in the person's cue set for the next try.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import structlog

from providers.llm import StructuredLLM
from workers.mem0_stages import GarbageReply, parse_reply
from workers.tagging import align_key

log = structlog.get_logger(__name__)

MAX_CUES = 8
CUE_BATCH = 4  # memories per call: a small model's JSON for 4 × 8 cues fits max_tokens
MIN_CHARS, MAX_CHARS = 2, 16
CUES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "cues": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["text", "cues"],
            },
        }
    },
    "required": ["items"],
}

# The worked examples are not bench items (bench/data/e2e, bench/data/cues): no example may
# come from a memory or question we measure on.
PROMPT = """你在帮一个家庭语音助手判断：每条记忆在什么时候应该被想起来。
对下面每一条记忆，写 5 到 8 条「线索」：家里人以后可能对助手说的一句简短请求或提到的场合，
这时助手必须想起这条记忆——哪怕这句话里一个字也没有提到记忆本身。
线索要具体：菜名、零食、饮料、药名、活动、地方、礼物、出行方式，一条线索 4 到 12 个字。
想一想常识：哪些菜里常有这种食材，哪些活动会碰到这种害怕的事，哪些东西对这种病不好。

例子：
- 记忆「儿子对牛奶过敏」→ ["给孩子买杯奶茶", "做个奶油蛋糕", "点一份芝士焗饭", "冲杯热可可", "买点冰淇淋", "早餐吃面包配酸奶"]
- 记忆「我怕水，不会游泳」→ ["去海边玩", "报个游泳班", "坐船游湖", "周末去漂流", "去水上乐园", "订个带泳池的酒店"]
- 记忆「我不吃香菜」→ ["点碗牛肉面", "吃火锅调蘸料", "买份凉拌菜", "点越南河粉"]

text：原样抄写记忆原文，一个字都不要改（我们靠原文对齐结果）。
只返回 JSON：{{"items": [{{"text": "...", "cues": ["...", "..."]}}]}}，每条记忆一个对象。

记忆：
{memories}"""

_EDGES = re.compile(
    r"^[\s\-–—•·*\d.、:：「」『』\"'“”‘’()（）\[\]]+|[\s。．.!！?？，,；;、\"'“”‘’]+$"
)
_PROMPT_WORDS = ("线索", "记忆", "助手", "原文", "例子")


def messages(texts: list[str]) -> list[dict[str, str]]:
    listed = "\n".join(f"- {text}" for text in texts)
    return [{"role": "user", "content": PROMPT.format(memories=listed)}]


def batches(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + CUE_BATCH] for i in range(0, len(texts), CUE_BATCH)]


def tidy(raw: Any, memory: str, others: set[str]) -> str | None:
    """One cue as the model gave it → the cue kept, or None (why: in the docstring above)."""
    if not isinstance(raw, str):
        return None
    cue = _EDGES.sub("", unicodedata.normalize("NFKC", raw).strip())
    if not MIN_CHARS <= len(cue) <= MAX_CHARS:
        return None
    key = align_key(cue)
    if key == align_key(memory) or key in others or cue in memory:
        return None  # the memory itself (or part of it): its own vector already finds that
    if any(word in cue for word in _PROMPT_WORDS) or "..." in cue or "…" in cue:
        return None
    return cue


def align(texts: list[str], reply: str) -> dict[str, list[str] | None]:
    """Cues per memory text (None: the reply says nothing usable about it → it waits)."""
    parsed = parse_reply("cues", reply)
    items = parsed.get("items")
    if not isinstance(items, list):
        raise GarbageReply("cues", reply)
    by_key = {align_key(text): text for text in texts}
    others = set(by_key)
    result: dict[str, list[str] | None] = dict.fromkeys(texts)
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("cues"), list):
            continue
        text = by_key.get(align_key(str(item.get("text", ""))))
        if text is None or result[text] is not None:
            continue
        kept: list[str] = []
        for raw in item["cues"]:
            cue = tidy(raw, text, others)
            if cue is not None and cue not in kept:
                kept.append(cue)
        result[text] = kept[:MAX_CUES] or None
    return result


async def cue(llm: StructuredLLM, texts: list[str]) -> dict[str, list[str] | None]:
    """Cues for each text, CUE_BATCH texts per call; a batch whose reply is unreadable leaves
    only its own texts without cues (None)."""
    result: dict[str, list[str] | None] = {}
    for batch in batches(texts):
        reply = await llm.complete_json(messages(batch), CUES_SCHEMA, "cues")
        try:
            result.update(align(batch, reply))
        except GarbageReply as exc:
            log.warning("cues.batch_unreadable", texts=len(batch), error=str(exc)[:200])
            result.update(dict.fromkeys(batch))
    return result
