"""Stage 1's guards around the model: no call for noise, the assistant's claims and prompt
fragments rejected, meaning kept, dates resolved — with a scripted extraction reply."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from providers.llm import Message
from workers import extraction
from workers.extraction import keep_meaning, rejected, tidy
from workers.mem0_stages import Utterance

DAY = dt.date(2026, 11, 25)


class Replies:
    def __init__(self, facts: list[Any]) -> None:
        self.facts = facts
        self.prompts: list[str] = []

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], name: str
    ) -> str:
        self.prompts.append(str(messages[-1]["content"]))
        return "好的，结果如下：" + json.dumps({"facts": self.facts}, ensure_ascii=False)


def said(*lines: tuple[str, str]) -> list[Utterance]:
    return [Utterance("user" if who == "u" else "assistant", who, text) for who, text in lines]


async def test_a_noise_session_makes_no_call() -> None:
    llm = Replies(["现在几点了"])
    found = await extraction.extract(llm, said(("u", "现在几点了"), ("a", "八点。")), DAY)
    assert found.facts == [] and found.calls == 0 and llm.prompts == []


async def test_the_assistants_claims_and_prompt_fragments_are_rejected() -> None:
    llm = Replies(
        ["我女儿叫小橙子", "小橙子上小学二年级", "说话人自己写「我」", "她几岁？", "你好小智"]
    )
    found = await extraction.extract(
        llm,
        said(
            ("u", "你好小智"),
            ("u", "我女儿叫小橙子"),
            ("a", "小橙子今年上小学二年级了吧"),
            ("u", "她才五岁"),
        ),
        DAY,
    )
    # 「她才五岁」, which the model left out, is kept in the person's words, 她 named
    assert found.facts == ["我女儿叫小橙子", "小橙子才五岁"] and found.recovered == ["小橙子才五岁"]
    reasons = {r["fact"]: r["reason"] for r in found.rejected}
    assert "assistant" in reasons["小橙子上小学二年级"]
    assert reasons["说话人自己写「我」"].startswith("prompt fragment")
    assert reasons["她几岁？"] == "a question"
    assert reasons["你好小智"].startswith("not a memory")
    prompt = llm.prompts[0]
    assert "用户：我女儿叫小橙子" in prompt and "助手：小橙子今年上小学二年级了吧" in prompt
    assert "对话日期：2026-11-25" in prompt


async def test_meaning_and_dates_are_kept() -> None:
    llm = Replies(["香菜", {"fact": "下周三下午我要带小橙子去打疫苗"}])
    found = await extraction.extract(
        llm, said(("u", "我不吃香菜，一点都不能放"), ("u", "下周三下午我要带小橙子去打疫苗")), DAY
    )
    assert found.facts == ["我不吃香菜，一点都不能放", "下周三（12月2日）下午我要带小橙子去打疫苗"]


def test_keep_meaning_restores_a_dropped_negation_from_its_clause() -> None:
    assert (
        keep_meaning("我老婆喜欢吃辣", "我老婆不喜欢吃辣的，微辣都受不了") == "我老婆不喜欢吃辣的"
    )
    corrected = "我之前说错了，小橙子不是对芒果过敏，是对猕猴桃过敏"
    assert keep_meaning("小橙子对猕猴桃过敏", corrected) == "小橙子对猕猴桃过敏"
    assert rejected("我喜欢喝绿茶") is None


async def test_what_is_taken_back_is_not_stored_and_a_correction_keeps_the_new_value() -> None:
    llm = Replies(["我想下周去学游泳", "我之前说错了，小橙子不是对芒果过敏，是对猕猴桃过敏"])
    found = await extraction.extract(
        llm,
        said(("u", "我想下周去学游泳"), ("u", "算了，还是不去了"),
             ("u", "我之前说错了，小橙子不是对芒果过敏，是对猕猴桃过敏")),
        DAY,
    )  # fmt: skip
    assert found.facts == ["小橙子对猕猴桃过敏"]
    assert found.rejected == [
        {"fact": "我想下周去学游泳", "reason": "retracted later in the session"}
    ]


def test_asking_to_remember_is_not_part_of_the_fact() -> None:
    assert tidy("我老婆猫毛过敏，你记住啊") == "我老婆猫毛过敏"
    assert tidy("帮我记一下，我女儿对鸡蛋过敏") == "我女儿对鸡蛋过敏"
    assert tidy("不对，是后天下午去银行") == "后天下午去银行"
