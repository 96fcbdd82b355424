"""LoCoMo's answer layer, in the form published figures use: an answering model reads the memories
a system recalled and answers in a few words; a judge model compares that answer with LoCoMo's
gold answer and says CORRECT or WRONG (the "J score" is the share judged CORRECT).

Both systems' memories are shown to the answering model the same way — one line each, dated by
its session — so the score compares what was recalled, not how it was worded. Questions are
sampled by a fixed rule (the CRC-32 of conversation and question index, lowest first, per
split and category), so every run asks the same ones. The models are whatever is configured
(`--answer-url`, `--judge-url`); the local default is named in the output, because a J score
means little without its models.
"""

from __future__ import annotations

import datetime as dt
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

from bench.e2e.judge import json_objects
from memory.schema import Memory
from providers.llm import JsonLLM, openai_client

ANSWER_SYSTEM = (
    "You answer questions about two people from memories of their conversations. Use only the "
    "memories given; each starts with the date of the conversation it comes from, so resolve "
    "'yesterday', 'last week' and the like against that date. Answer with a short phrase "
    "(a name, a date, a few words), no explanation. If the memories do not tell, answer "
    "'unknown'."
)
JUDGE_PROMPT = """Grade an answer to a question about a conversation against the gold answer.
CORRECT: the answer states the gold answer's fact, in any wording; a date or time is correct
when it names the same day, month, year or period as the gold answer, in any format; extra
detail is fine as long as the gold fact is there.
WRONG: the answer misses or contradicts the gold fact, or says it does not know.
Question: {question}
Gold answer: {gold}
Answer: {answer}
Reply with JSON only: {{"verdict": "CORRECT" or "WRONG"}}"""
SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
    "required": ["verdict"],
}


def sample_key(sample_id: str, index: int) -> int:
    """The fixed order questions are sampled in."""
    return zlib.crc32(f"{sample_id}/{index}".encode())


def memory_lines(memories: list[Memory]) -> str:
    lines = []
    for memory in memories:
        when = dt.datetime.fromtimestamp(memory.created_at, dt.UTC).strftime("%d %B %Y")
        lines.append(f"[{when}] {memory.text}")
    return "\n".join(lines) or "(no memories)"


def parse_verdict(reply: str) -> bool | None:
    """The judge's reply → True (CORRECT), False (WRONG) or None (unreadable)."""
    for obj in json_objects(reply):
        verdict = str(obj.get("verdict", "")).strip().upper()
        if verdict in ("CORRECT", "WRONG"):
            return verdict == "CORRECT"
    words = set(re.findall(r"[A-Z]+", reply.upper()))
    if ("CORRECT" in words) != ("WRONG" in words):
        return "CORRECT" in words
    return None


@dataclass
class JScore:
    questions: int = 0
    correct: int = 0
    unparsed: int = 0  # the judge said nothing readable: counted as not correct, listed apart
    errors: int = 0


@dataclass
class AnswerLayer:
    """Answers from recalled memories and judges them; one per run."""

    answer_url: str
    answer_model: str
    judge_url: str
    judge_model: str
    api_key: str = ""
    judge_key: str = ""
    samples: list[dict[str, object]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._answer = openai_client(self.answer_url, self.api_key, 600)
        style = "json_object" if self.judge_url == self.answer_url else "json_schema"
        self._judge = JsonLLM(
            base_url=self.judge_url, model=self.judge_model, api_key=self.judge_key,
            timeout_s=600, max_tokens=20, style=style,  # type: ignore[arg-type]
        )  # fmt: skip

    async def answer(self, question: str, memories: list[Memory]) -> str:
        messages: list[Any] = [
            {"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Memories:\n{memory_lines(memories)}\n\n"
                                        f"Question: {question}"},
        ]  # fmt: skip
        response = await self._answer.chat.completions.create(
            model=self.answer_model,
            messages=messages,
            temperature=0,
            max_tokens=48,
        )
        return (response.choices[0].message.content or "").strip() if response.choices else ""

    async def score(
        self, score: JScore, system: str, question: str, gold: str, memories: list[Memory]
    ) -> None:
        score.questions += 1
        try:
            answer = await self.answer(question, memories)
            prompt = JUDGE_PROMPT.format(question=question, gold=gold, answer=answer or "(none)")
            reply = await self._judge.complete_json(
                [{"role": "user", "content": prompt}], SCHEMA, "verdict"
            )
        except Exception as exc:  # a dead model or a garbled reply is counted, never a pass
            score.errors += 1
            self.samples.append({"system": system, "question": question, "error": repr(exc)})
            return
        verdict = parse_verdict(reply)
        score.correct += verdict is True
        score.unparsed += verdict is None
        self.samples.append(
            {"system": system, "question": question, "gold": gold, "answer": answer,
             "verdict": verdict, "memories": len(memories)}
        )  # fmt: skip
