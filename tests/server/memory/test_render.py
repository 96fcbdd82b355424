"""The memory block's lines: every note earns its tokens (prompt time on a small CPU) — a subject
the text already names is not repeated, one speaker shared by every line is said once."""

from __future__ import annotations

import time

from memory.schema import Memory, MemoryClass, PersonId
from server.memory.render import SAFETY_GROUP, describe, render_block

P = PersonId("p1")
NOW = time.time()


def memory(text: str, subject: str | None = None, speaker: str | None = None) -> Memory:
    return Memory(text, P, MemoryClass.FACT, subject=subject, speaker=speaker, created_at=NOW)


def test_a_subject_the_text_names_is_not_repeated() -> None:
    assert describe(memory("女儿对芒果过敏", subject="女儿"), NOW) == "- 女儿对芒果过敏"
    assert describe(memory("她在上幼儿园", subject="小橙子"), NOW) == "- 她在上幼儿园（关于小橙子）"


def test_one_speaker_for_every_line_is_said_once() -> None:
    lines = [memory("我老婆叫林芳", "老婆", "老张"), memory("女儿叫小橙子", "女儿", "老张")]
    block = render_block([], lines, NOW)
    assert block.splitlines()[0] == "<memory>（以下都是老张说的）"
    assert "老张说）" not in block and "- 我老婆叫林芳\n" in block


def test_mixed_speakers_keep_their_own_notes() -> None:
    safety = [memory("我老婆对海鲜过敏", "老婆", "老张")]
    related = [memory("我周三去游泳", speaker="林芳"), memory("我爱喝茶", speaker="me")]
    block = render_block(safety, related, NOW)
    assert block.splitlines()[0] == "<memory>"
    assert "- 我老婆对海鲜过敏（老张说）" in block and SAFETY_GROUP in block
    assert "- 我周三去游泳（林芳说）" in block and "- 我爱喝茶（你自己说过）" in block


def test_a_persons_own_words_carry_no_attribution() -> None:
    own = [memory("我爱喝茶", speaker=P), memory("我住在滨江区", speaker=P)]
    block = render_block([], own, NOW)
    assert block.splitlines()[0] == "<memory>" and "说" not in block


def test_one_line_keeps_its_note_inline() -> None:
    block = render_block([], [memory("我爱喝茶", speaker="me")], NOW)
    assert "- 我爱喝茶（你自己说过）" in block and block.splitlines()[0] == "<memory>"


def test_the_group_rules_can_be_left_to_the_static_prompt() -> None:
    from server.memory.render import MEMORY_RULES, ONLY_WHAT_IS_HERE, SAFETY_RULE

    safety, related = [memory("我老婆对海鲜过敏", "老婆")], [memory("我爱喝茶")]
    inline = render_block(safety, related, NOW, personal=True, inline_rules=True)
    assert SAFETY_RULE in inline and ONLY_WHAT_IS_HERE in inline
    lean = render_block(safety, related, NOW, personal=True)
    assert SAFETY_RULE not in lean and ONLY_WHAT_IS_HERE not in lean
    assert "- 我老婆对海鲜过敏" in lean and "- 我爱喝茶" in lean
    assert SAFETY_RULE in MEMORY_RULES  # still said, once, in the cached system prompt
