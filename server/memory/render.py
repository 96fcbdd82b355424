"""How recalled memories appear in the system prompt, and the standing rules around them.

The check_safety topic list lives here once and is used in the tool description *and* in the
system prompt's memory-usage and must-call sections (a generic "only call tools when clearly
needed" sentence defeated it in the original system — never add one).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from memory.schema import Memory

SAFETY_GROUP = "[安全约束]"
RELATED_GROUP = "[相关记忆]"
SAFETY_TOPICS: tuple[str, ...] = (
    "吃饭", "做饭", "点菜", "外卖", "餐厅", "聚餐", "零食", "食材", "饮料", "喝酒",
    "药", "吃药", "用药", "看病", "保健品", "旅行", "出行", "住宿", "礼物", "送礼",
    "运动", "宠物", "花草", "过敏", "孩子的活动",
)  # fmt: skip
SAFETY_RULE = "与本次请求冲突时必须先明确提醒；不冲突就不要提起。"

MEMORY_RULES = f"""<memory_usage>
系统提示里可能附有这个家庭的记忆。{SAFETY_GROUP}组是安全约束：{SAFETY_RULE}{RELATED_GROUP}组是相关记忆：\
能帮上忙就自然地用，不要复述无关的内容。记忆里没有的事情就说不知道，不要编造。
当用户的请求涉及这些话题时，必须先调用 check_safety 工具查看家人的安全约束，即使系统提示里没有附带任何记忆：\
{"、".join(SAFETY_TOPICS)}。
</memory_usage>
<must_call>
check_safety：话题涉及{"、".join(SAFETY_TOPICS)}时必须调用；闲聊、放歌、天气、写代码等不要调用。
</must_call>"""


# What people said is data, never prompt structure: a memory or a speaker name cannot open or
# close a tag, start a group or add a line of its own.
_STRUCTURE = str.maketrans({"<": "＜", ">": "＞", "[": "［", "]": "］", "\r": " ", "\n": " "})


def plain(text: str) -> str:
    return " ".join(text.translate(_STRUCTURE).split())


def describe(memory: Memory, now: float) -> str:
    """One memory as a prompt line: text plus who it is about, who said it, and when."""
    notes = []
    if memory.subject:
        notes.append(f"关于{plain(memory.subject)}")
    if memory.speaker:
        notes.append("你自己说过" if memory.speaker == "me" else f"{plain(memory.speaker)}说")
    if memory.expires_at:
        notes.append("到" + time.strftime("%Y-%m-%d", time.localtime(memory.expires_at)) + "为止")
    elif memory.created_at and now - memory.created_at > 86400:
        notes.append("记于" + time.strftime("%Y-%m-%d", time.localtime(memory.created_at)))
    return f"- {plain(memory.text)}" + (f"（{'，'.join(notes)}）" if notes else "")


def render_block(safety: Sequence[Memory], related: Sequence[Memory], now: float) -> str:
    """The memory block for one turn; empty when nothing was recalled."""
    if not safety and not related:
        return ""
    lines = ["<memory>"]
    if safety:
        lines.append(f"{SAFETY_GROUP}（{SAFETY_RULE}）")
        lines += [describe(m, now) for m in safety]
    if related:
        lines.append(RELATED_GROUP)
        lines += [describe(m, now) for m in related]
    lines.append("</memory>")
    return "\n".join(lines)
