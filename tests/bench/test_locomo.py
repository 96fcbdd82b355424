"""``hearth bench locomo`` on a two-conversation file in LoCoMo's own format (the real suite is
not ours to commit): real embedder, real Qdrant Edge shard, the real read path and mem0's search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.locomo import Answering, _merged, load, run
from bench.locomo_answer import AnswerLayer, parse_verdict
from config.settings import load_settings
from tests.support.scripted_llm import Reply, ScriptedLLM


def _sample(n: int, name: str, other: str) -> dict[str, object]:
    return {
        "sample_id": f"conv-{n}",
        "conversation": {
            "speaker_a": name,
            "speaker_b": other,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": name, "dia_id": "D1:1", "text": "I adopted a puppy called Biscuit."},
                {
                    "speaker": other,
                    "dia_id": "D1:2",
                    "text": "Lovely! What breed is it?",
                    "blip_caption": "a photo of a small dog on a sofa",
                },
                {"speaker": name, "dia_id": "D1:3", "text": "A corgi. He hates thunderstorms."},
            ],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [
                {
                    "speaker": name,
                    "dia_id": "D2:1",
                    "text": "I started pottery classes on Mondays.",
                },
                {"speaker": other, "dia_id": "D2:2", "text": "My sister is visiting next week."},
            ],
        },
        "qa": [
            {
                "question": f"What is the name of {name}'s puppy?",
                "answer": "Biscuit",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": f"When does {name} go to pottery classes?",
                "answer": "Mondays",
                "evidence": ["D2:1; D1:3"],
                "category": 2,
            },
            {
                "question": f"What did {other} adopt?",
                "evidence": ["D1:1"],
                "category": 5,
                "adversarial_answer": "a puppy",
            },
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo10.json"
    path.write_bytes(orjson.dumps([_sample(0, "Anna", "Ben"), _sample(1, "Chloe", "Dev")]))
    return path


def test_load_keeps_turns_dates_evidence_and_a_fixed_split(locomo_file: Path) -> None:
    first, second = load(locomo_file)
    assert (first.split, second.split) == ("dev", "test")
    assert [t.dia_id for t in first.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert first.turns[1].text.endswith("[shares a photo: a photo of a small dog on a sofa]")
    assert first.turns[0].text.startswith("Anna: ")
    assert first.turns[0].at < first.turns[3].at  # each session dated
    assert first.questions[1].evidence == frozenset({"D2:1", "D1:3"})  # 「D2:1; D1:3」 split


async def test_every_question_is_scored_for_hearth_top5_and_mem0(
    locomo_file: Path, tmp_path: Path
) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    results = await run(settings, locomo_file, ["dev", "test"], with_mem0=True)
    for system in ("hearth", "top5", "mem0"):
        for split in ("dev", "test"):
            assert _merged(results, system, split, 0).questions == 2  # categories 1–4
            assert _merged(results, system, split, 5).questions == 1
    # five memories per person: a top-5 holds all of them, so it finds every evidence turn
    top5 = _merged(results, "top5", "test", 0)
    assert top5.evidence_recall == 2 and top5.injected == 10
    mem0 = _merged(results, "mem0", "test", 0)
    assert mem0.evidence_recall == 2 and mem0.injected == 10
    # the read path injects what it finds, at most its limit; the puppy's name is found
    hearth = _merged(results, "hearth", "dev", 4)
    assert hearth.questions == 1 and hearth.any_evidence == 1
    assert hearth.injected <= settings.memory.limit + 2 * settings.memory.entity_limit


def test_the_judges_verdict_is_read_strictly() -> None:
    assert parse_verdict('{"verdict": "CORRECT"}') is True
    assert parse_verdict('Sure. {"verdict": "WRONG"}') is False
    assert parse_verdict("CORRECT") is True
    assert parse_verdict("CORRECT or WRONG?") is None  # both words: unreadable, never a pass
    assert parse_verdict("") is None


async def test_the_answer_layer_answers_from_each_systems_memories_and_is_judged(
    locomo_file: Path, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    """A scripted model stands in for the hosted answerer and judge: it answers from the
    memories it was shown, and the judge's verdict compares with the gold answer."""

    def respond(request: dict[str, Any]) -> Reply:
        prompt = request["messages"][-1]["content"]
        if "Gold answer:" in prompt:  # the judge: correct when the answer holds the gold
            gold = prompt.split("Gold answer: ")[1].split("\n")[0]
            answer = prompt.split("\nAnswer: ")[1].split("\n")[0]
            return Reply('{"verdict": "%s"}' % ("CORRECT" if gold in answer else "WRONG"))
        memories, question = prompt.split("\n\nQuestion: ")  # the answerer: from memories only
        if "puppy" in question and "Biscuit" in memories:
            return Reply("Biscuit")
        if "pottery" in question and "Mondays" in memories:
            return Reply("on Mondays")
        return Reply("unknown")

    scripted_llm.responder = respond
    layer = AnswerLayer(scripted_llm.base_url, "m", scripted_llm.base_url, "j")
    settings = load_settings(data_dir=tmp_path / "data")
    results = await run(settings, locomo_file, ["dev", "test"], False, Answering(layer, 5))
    for split in ("dev", "test"):
        for system in ("hearth", "top5"):
            scores = [v for (n, s, _c), v in results.j.items() if n == system and s == split]
            assert sum(v.questions for v in scores) == 2  # categories 1–4 only, all sampled
            assert sum(v.unparsed + v.errors for v in scores) == 0
    # the top-5 holds every memory of these five-turn conversations: both answers right
    assert results.jscore("top5", "test", 4).correct == 1
    assert results.jscore("top5", "test", 2).correct == 1
    # each answer request carried that system's memories, dated by session
    shown = [r["messages"][-1]["content"] for r in scripted_llm.requests if r["model"] == "m"]
    assert len(shown) == 8 and all("May 2023]" in text for text in shown if "(no" not in text)
    assert {s["system"] for s in layer.samples} == {"hearth", "top5"}
    # a sample of one per category asks one question per split and category
    assert len(Answering(layer, 1).chosen(load(locomo_file))) == 4
