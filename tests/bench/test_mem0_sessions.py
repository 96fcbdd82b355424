"""The sessions bench's mem0 baseline (bench.mem0_sessions): its checks on mem0's memories as
plain texts, its ``add`` that never raises, and the mem0 it builds (no model called)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from bench.mem0_sessions import Column, add, asked, build, holds, not_applicable, table
from bench.sessions import summarize, written

SESSION = {
    "id": "s1", "person": "p", "turns": ["我老公叫聂志刚", "我一点葱都不吃"],
    "expect": [
        {"contains_any": ["聂志刚", "志刚"], "cls": "fact", "decay": "volume",
         "subject_any": ["老公"], "language": "zh"},
        {"contains_any": ["葱"], "cls_any": ["preference"], "must_keep_negation": True},
        {"contains_any": ["dentist"], "expires_days_from_now": [3, 9], "language": "en"},
    ],
    "expect_gone": ["黄瓜"],
}  # fmt: skip


def _kinds(checks: list[Any]) -> list[tuple[str, bool]]:
    return [(c.kind, c.ok) for c in checks]


def test_mem0s_texts_are_checked_for_what_a_text_can_answer() -> None:
    texts = ["Husband is named 聂志刚", "喜欢吃葱", "冰箱里还有黄瓜"]
    checks = holds(SESSION, "p", texts)
    assert _kinds(checks) == [("present", True), ("present", True), ("negation", False),
                              ("present", False), ("gone", False)]  # fmt: skip
    assert {c.session for c in checks} == {"s1"}
    assert not_applicable({"sessions": [SESSION]}) == ["cls", "decay", "expiry", "subject"]
    kept = holds(SESSION, "p", ["用户不吃葱", "I see the dentist on Friday"])
    assert _kinds(kept) == [("present", False), ("present", True), ("negation", True),
                            ("present", True), ("language", True), ("gone", True)]  # fmt: skip
    said_in_chinese = holds(SESSION, "p", ["周五去看 dentist 医生"])
    assert ("language", False) in _kinds(said_in_chinese)


def test_a_sessions_adds_are_what_no_new_and_no_duplicate_read() -> None:
    noise = {"id": "s2", "expect_no_new": True, "expect_no_new_duplicate_of": ["葱"]}
    assert _kinds(written(noise, [])) == [("no_new", True), ("no_duplicate", True)]
    assert _kinds(written(noise, ["不吃葱"])) == [("no_new", False), ("no_duplicate", False)]


def test_questions_are_scored_on_the_top_results_without_a_safety_group() -> None:
    question = {"text": "给外公煎牛排", "must_include_any": ["美多芭"], "safety_group": True,
                "must_not_include": ["牛排很好"]}  # fmt: skip
    assert asked(question, ["外公吃美多芭前后不吃高蛋白", "外公爱吃牛排"]).ok
    assert not asked(question, ["外公爱吃牛排"]).ok
    assert not asked(question, ["外公吃美多芭", "牛排很好"]).ok
    empty = {"text": "今天天气怎么样", "must_be_empty": True}
    assert asked(empty, []).ok and not asked(empty, ["外公爱吃牛排"]).ok


class _Store:
    """What ``add`` reads of mem0: ``get_all`` and an ``add`` that fails as told."""

    def __init__(self, fail: str) -> None:
        self.fail = fail
        self.memories: dict[str, str] = {"m0": "我老公叫聂志刚"}

    def get_all(self, user_id: str, limit: int) -> dict[str, Any]:
        return {"results": [{"id": k, "memory": v} for k, v in self.memories.items()]}

    def add(self, messages: list[dict[str, str]], user_id: str) -> dict[str, Any]:
        assert [m["role"] for m in messages] == ["user", "user"]
        self.memories["m1"] = "不吃葱"
        if self.fail == "raise":
            raise ConnectionError("model gone")
        logging.getLogger("mem0.memory.main").error("Invalid JSON response: boom")
        return {"results": [{"event": "ADD", "memory": "不吃葱"},
                            {"event": "UPDATE", "memory": "老公叫聂志刚"}]}  # fmt: skip


def test_add_never_raises_and_keeps_what_mem0_swallowed() -> None:
    raised = add(_Store("raise"), SESSION, "p")
    assert raised.error and "model gone" in raised.error and raised.added == ["不吃葱"]
    logged = add(_Store("log"), SESSION, "p")
    assert logged.error is None and logged.added == ["不吃葱"]
    assert logged.events == [("ADD", "不吃葱"), ("UPDATE", "老公叫聂志刚")]
    assert logged.logged == ["ERROR: Invalid JSON response: boom"]


def test_the_table_shows_both_systems_and_what_mem0_cannot_check() -> None:
    hearth = {"figures": {"cls": [3, 4], "present": [4, 5]},
              "sessions": [{"seconds": 10.0, "error": None}]}  # fmt: skip
    checks = holds(SESSION, "p", ["聂志刚"])
    mem0 = {"figures": summarize(checks), "not_applicable": ["cls"],
            "sessions": [{"seconds": 4.0, "error": "x", "logged": []}]}  # fmt: skip
    console = Console(record=True, width=200)
    table("t", [Column.of("Hearth", hearth), Column.of("mem0", mem0)], console)
    text = console.export_text()
    assert "3/4 (75%)" in text and "n/a" in text and "1/3 (33%)" in text
    assert "top-5" in text


class _Embedder:
    name = "fake"
    dim = 8

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[float(len(t) == i) for i in range(8)] for t in texts]


def test_the_baseline_builds_mem0_on_our_embedder_without_calling_a_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "home"))
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    side = build(_Embedder(), tmp_path, "http://127.0.0.1:9/v1", "local", 1024)

    def no_model(*args: object, **kwargs: object) -> str:
        raise AssertionError("no model call")

    monkeypatch.setattr(side.mem0.llm, "generate_response", no_model)
    try:
        config = side.mem0.llm.config
        assert (config.openai_base_url, config.model, config.temperature, config.max_tokens) == (
            "http://127.0.0.1:9/v1", "local", 0.0, 1024)  # fmt: skip
        assert side.mem0.embedding_model.embed("三个字") == _Embedder().embed(["三个字"])[0]
        side.mem0.add([{"role": "user", "content": "不吃葱"}], user_id="p", infer=False)
        assert side.search("p", "不吃葱") == ["不吃葱"]
    finally:
        side.mem0.close()
