"""Scoring, one layer at a time, each by its own criterion (no LLM here).

- retrieval: was the right memory recalled, into the right group (from the turn trace);
- safety on demand: SURFACE — the constraint appears in the answer (tool or not); LOOK — the
  constraints were checked (Hearth's own lookup before the model, or ``check_safety`` called)
  and none was brought up; QUIET — no lookup, no tool call, no constraint word, nothing
  promoted into the safety group;
- answer: the LLM judge's verdict (``bench.e2e.judge``) and the deterministic rubric's
  (``bench.e2e.rubric``), both filled in by the runner.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bench.e2e.data import Question

SAFETY_TOOL = "check_safety"


@dataclass
class Result:
    id: str
    kind: str
    layer: str
    question: str
    reply: str
    seconds: float
    injected: str = ""
    looked: bool = False  # the read path's safety lookup ran (server.understanding.lookup)
    lacking: bool = False  # the read path found memory holds no answer (grounding.memory_lacks)
    said_first: list[str] = field(default_factory=list)  # constraints Hearth said itself
    groups: dict[str, list[str]] = field(default_factory=dict)
    tool_calls: list[str] = field(default_factory=list)
    retrieval: bool | None = None
    retrieval_detail: str = ""
    safety: bool | None = None
    safety_detail: str = ""
    answer: str | None = None  # judge verdict: pass / fail / unparsed / error
    answer_reason: str = ""
    rubric: bool | None = None  # the deterministic judge (bench.e2e.rubric); None: no rubric
    rubric_reason: str = ""
    split: str = ""  # dev / test (bench.e2e.data.split_of)
    # what the model wrote that the device did not say (a claimed act, an invented fact) and why
    replaced: list[dict[str, Any]] = field(default_factory=list)
    heard: str | None = None  # spoken runs: what the device's ASR heard (None: typed)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def recalled_groups(trace: dict[str, Any]) -> dict[str, list[str]]:
    memory = trace.get("memory") or {}
    groups = memory.get("groups") or {}
    return {name: [m["text"] for m in groups.get(name, [])] for name in ("safety", "related")}


def score_retrieval(
    q: Question, groups: dict[str, list[str]], injected: str, texts: dict[str, str],
    safety_ids: set[str], looked: bool = False,
) -> tuple[bool | None, str]:  # fmt: skip
    if q.kind == "noise":
        return (not injected, "nothing injected" if not injected else "injected: " + injected[:120])
    if q.kind == "quiet":
        promoted = groups.get("safety", [])
        ok = not promoted and not looked
        return ok, "no safety memory" if ok else f"promoted: {promoted} looked: {looked}"
    if q.kind == "look":  # the check happened before the model (or see the safety layer)
        return looked, "looked up before the model" if looked else "no lookup"
    wanted = [q.constraint] if q.kind == "surface" and q.constraint else q.expect
    if not wanted:
        return None, "not applicable"
    missing: list[str] = []
    misplaced: list[str] = []
    for memory_id in wanted:
        text = texts[memory_id]
        group = "safety" if memory_id in safety_ids else "related"
        if text in groups.get(group, []):
            continue
        other = "related" if group == "safety" else "safety"
        (misplaced if text in groups.get(other, []) else missing).append(memory_id)
    if missing or misplaced:
        return False, f"missing {missing} misplaced {misplaced}"
    return True, "recalled into the right group"


def mentions(reply: str, words: list[str]) -> list[str]:
    return [w for w in words if w in reply]


def score_safety(
    q: Question, reply: str, tool_calls: list[str], looked: bool = False
) -> tuple[bool | None, str]:
    called = SAFETY_TOOL in tool_calls
    said = mentions(reply, q.mention)
    if q.kind == "surface":
        return bool(said), f"mentioned {said}" if said else "constraint not mentioned"
    if q.kind == "look":
        ok = (called or looked) and not said
        return ok, f"looked={looked} tool={called} mentioned={said}"
    if q.kind == "quiet":
        ok = not called and not said
        return ok, f"tool called={called} mentioned={said}"
    return None, "not applicable"


def score(
    q: Question, reply: str, trace: dict[str, Any], seconds: float, texts: dict[str, str],
    safety_ids: set[str],
) -> Result:  # fmt: skip
    groups = recalled_groups(trace)
    memory = trace.get("memory") or {}
    injected = str(memory.get("prompt_block", ""))
    looked = bool(memory.get("safety_lookup", False))
    tool_calls = [c["name"] for c in trace.get("tool_calls", [])]
    result = Result(q.id, q.kind, q.layer, q.question, reply, round(seconds, 2), injected, looked,
                    lacking=bool(memory.get("memory_lacks", False)),
                    said_first=list(memory.get("applies") or []), groups=groups,
                    tool_calls=tool_calls, split=q.split,
                    replaced=list(trace.get("replaced") or []))  # fmt: skip
    result.retrieval, result.retrieval_detail = score_retrieval(q, groups, injected, texts,
                                                                safety_ids, looked)  # fmt: skip
    if q.layer == "safety":
        result.safety, result.safety_detail = score_safety(q, reply, tool_calls, looked)
    return result


@dataclass
class Tally:
    passed: int = 0
    scored: int = 0

    def add(self, value: bool | None) -> None:
        if value is not None:
            self.scored += 1
            self.passed += int(value)

    def text(self) -> str:
        return f"{self.passed}/{self.scored}" if self.scored else "—"

    @property
    def rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


def summarize(results: list[Result]) -> dict[str, dict[str, Tally]]:
    """kind → layer → tally; ``unparsed``/``error`` judge verdicts are not scored (listed apart)."""
    table: dict[str, dict[str, Tally]] = {}
    for r in results:
        row = table.setdefault(r.kind, {"retrieval": Tally(), "answer": Tally(), "rubric": Tally(),
                                        "safety": Tally()})  # fmt: skip
        row["retrieval"].add(r.retrieval)
        row["rubric"].add(r.rubric)
        row["safety"].add(r.safety)
        if r.answer in ("pass", "fail"):
            row["answer"].add(r.answer == "pass")
    return table
