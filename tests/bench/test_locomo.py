"""``hearth bench locomo`` on a two-conversation file in LoCoMo's own format (the real suite is
not ours to commit): real embedder, real Qdrant Edge shard, the real read path and mem0's search."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.locomo import _merged, load, run
from config.settings import load_settings


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
