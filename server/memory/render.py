"""How recalled memories appear in the system prompt, and the standing rules around them.

No example refusal in the rules: the local 1.5B model said the old one (「你还没跟我说过他的
生日」) word for word to a dozen questions memory answered — 「老婆生日是哪天？」 among them
(`local-grounded-all`). A question memory plainly cannot answer gets its own line in the block
(``NOT_HERE``).

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
系统提示里可能附有这个家庭的记忆。{SAFETY_GROUP}组是安全约束：{SAFETY_RULE}\
例如约束是“爷爷对牛奶过敏”，用户说“给爷爷买箱酸奶”，第一句就要说“提醒一下，爷爷对牛奶过敏”，再给别的建议。\
{RELATED_GROUP}组是相关记忆：\
问到的事记忆里有，就照记忆直接回答；能帮上忙就自然地用，不要复述无关的内容。\
记忆里没有的事情就说不知道，不要编造，也不要拿别人的记忆来凑。
请求涉及{"、".join(SAFETY_TOPICS)}时，系统通常已经替你查过家人的安全约束，结果就在记忆的\
{SAFETY_GROUP}组里；记忆里没有{SAFETY_GROUP}组时，必须先调用 check_safety 工具查看。
</memory_usage>
<must_call>
check_safety：话题涉及{"、".join(SAFETY_TOPICS)}、而记忆里没有{SAFETY_GROUP}组时必须调用；\
闲聊、放歌、天气、写代码等不要调用。
</must_call>"""


# What people said is data, never prompt structure: a memory or a speaker name cannot open or
# close a tag, start a group or add a line of its own.
_STRUCTURE = str.maketrans({"<": "＜", ">": "＞", "[": "［", "]": "］", "\r": " ", "\n": " "})


def plain(text: str) -> str:
    return " ".join(text.translate(_STRUCTURE).split())


def said_by(memory: Memory) -> str | None:
    """Who said it, as the prompt puts it; None for a person's own words (no note)."""
    if not memory.speaker or memory.speaker == memory.person:
        return None
    return "你自己说过" if memory.speaker == "me" else f"{plain(memory.speaker)}说"


def shared_speaker(memories: Sequence[Memory]) -> str | None:
    """The attribution every one of ``memories`` shares, said once for the block instead of on
    every line (two or more lines): each line's tokens are prompt time on a small CPU."""
    said = {said_by(m) for m in memories}
    if len(memories) < 2 or len(said) != 1:
        return None
    return next(iter(said))


def describe(memory: Memory, now: float, speaker_said: bool = False) -> str:
    """One memory as a prompt line: text plus who it is about (unless the text names them), who
    said it (unless the block said it once: ``speaker_said``), and when."""
    notes = []
    subject = plain(memory.subject) if memory.subject else ""
    if subject and subject not in memory.text:
        notes.append(f"关于{subject}")
    said = None if speaker_said else said_by(memory)
    if said:
        notes.append(said)
    if memory.expires_at:
        notes.append("到" + time.strftime("%Y-%m-%d", time.localtime(memory.expires_at)) + "为止")
    elif memory.created_at and now - memory.created_at > 86400:
        notes.append("记于" + time.strftime("%Y-%m-%d", time.localtime(memory.created_at)))
    return f"- {plain(memory.text)}" + (f"（{'，'.join(notes)}）" if notes else "")


LOOKED_NOTHING = "已查过：这次请求不涉及记录的安全约束。"
NO_MEMORY = "没有关于这件事的记忆。不知道就直说不知道，不要猜，不要编。"
ONLY_WHAT_IS_HERE = "（这里没写到的事就是不知道，直说不知道，不要编。）"
# the read path found the question's answer in none of these (``grounding.memory_lacks``)
NOT_HERE = "（这些记忆里没有这个问题的答案：第一句就说你还没跟我说过、不知道，不要拿它们来凑。）"


def render_block(
    safety: Sequence[Memory], related: Sequence[Memory], now: float, *, looked: bool = False,
    personal: bool = False, inline_rules: bool = False, lacking: bool = False,
) -> str:  # fmt: skip
    """The memory block for one turn. Empty when nothing was recalled — unless the request was
    looked up for safety constraints (it then says none applies) or is a personal question (it
    then says memory holds nothing about it, so even a small model refuses instead of
    inventing). The group rules are left to the static system prompt (``MEMORY_RULES`` says
    both): every token of the block is read by the model on each turn, the cached prompt once
    (``inline_rules=True`` repeats them here; measured in the README). ``lacking``: the
    question asks a fact none of these memories holds — the block says so."""
    if not safety and not related and not looked and not personal and not lacking:
        return ""
    shared = shared_speaker([*safety, *related])
    lines = [f"<memory>（以下都是{shared}的）" if shared else "<memory>"]
    if safety:
        lines.append(f"{SAFETY_GROUP}（{SAFETY_RULE}）" if inline_rules else SAFETY_GROUP)
        lines += [describe(m, now, shared is not None) for m in safety]
    elif looked:
        lines.append(f"{SAFETY_GROUP}{LOOKED_NOTHING}")
    if related:
        lines.append(RELATED_GROUP)
        lines += [describe(m, now, shared is not None) for m in related]
        if lacking:
            lines.append(NOT_HERE)
        elif personal and inline_rules:
            lines.append(ONLY_WHAT_IS_HERE)
    elif personal or lacking:
        lines.append(f"{RELATED_GROUP}{NO_MEMORY}")
    lines.append("</memory>")
    return "\n".join(lines)
