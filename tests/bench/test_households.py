"""The households bench on a tiny set, in-process with the real embedder and store."""

from __future__ import annotations

import json
from pathlib import Path

from bench.households import load_set, run_set, summarize
from config.settings import load_settings
from providers.embedder import UseEmbedder


async def test_recall_noise_forbidden_and_the_baseline_are_scored(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    path = tmp_path / "h.json"
    path.write_text(json.dumps({
        "persons": {
            "a": [{"id": "a1", "text": "女儿朵朵对鸡蛋过敏", "cls": "safety", "subject": "女儿"},
                  {"id": "a2", "text": "上周二带朵朵去打了疫苗", "cls": "event",
                   "subject": "朵朵", "expires_in_days": -3}],
            "b": {"memories": [{"id": "b1", "text": "我老婆叫王芳", "cls": "fact",
                                "subject": "老婆"}]},
        },
        "questions": [
            {"id": "q1", "person": "a", "kind": "implicit_safety", "text": "给女儿做个鸡蛋羹",
             "expect_safety": ["a1"]},
            {"id": "q2", "person": "a", "kind": "noise", "text": "谢谢你啊，辛苦了",
             "expect_empty": True},
            {"id": "q3", "person": "a", "kind": "isolation", "text": "我老婆叫什么",
             "forbid": ["b1", "a2"]},
        ],
    }, ensure_ascii=False))  # fmt: skip
    outcomes = await run_set(load_settings(), embedder, load_set(path))
    summary = summarize(outcomes)
    assert summary.recall == (1, 1) and summary.safety == (1, 1)
    assert summary.clean == (1, 1)
    assert summary.forbidden == 0 and summary.leaks == 0
    assert outcomes[0].baseline[0] == "a1"
    # Hearth says the egg allergy itself for the egg custard, and nothing for the thanks
    assert summary.said == (1, 1) and summary.said_beside == 0
    assert summary.said_unwanted == (0, 2)


def test_a_class_hearth_does_not_have_is_read_as_a_lasting_fact() -> None:
    from bench.households import hearths_class

    assert hearths_class("routine") == "fact"
    assert hearths_class("safety") == "safety"
    assert hearths_class(None) is None


def test_a_households_member_list_is_read_as_the_name_statements_it_stands_for() -> None:
    from bench.households import introductions

    rows = introductions(
        "sz",
        [
            "沈佳怡(说话人)",
            "女儿 顾一诺(诺诺、囡囡；10个月大)",
            "丈夫 顾晓峰（老顾、阿峰）",
            "一句说明",
        ],
    )
    assert [(r["text"], r["subject"]) for r in rows] == [
        ("我叫沈佳怡", "我"),
        ("我女儿叫顾一诺，小名叫诺诺、囡囡", "女儿"),
        ("我丈夫叫顾晓峰，小名叫老顾、阿峰", "丈夫"),
    ]
    assert len({r["id"] for r in rows}) == 3
