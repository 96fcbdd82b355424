"""``hearth bench sessions --baseline mem0``: the same sessions through mem0 1.0.x's own write.

Each person's sessions go through ``Memory.add(messages, user_id=person)``, one ``add`` per
session with the session's turns as user messages in order: mem0's own prompts, fact extraction
and ADD/UPDATE/DELETE, on the same model as Hearth's write path (its OpenAI provider pointed at
the local server, temperature 0, Hearth's write ``max_tokens``) and the same embedder
(``bench.mem0_side``: its Qdrant in local mode). What mem0 holds afterwards is scored with the
set's labels where they apply, by the sessions bench's own checks (``bench.sessions``):

- *present*, and *negation* and *language* on the memory found; class, decay, subject and
  expiry do not exist in a mem0 memory: "n/a";
- *gone*; *no new* (the session's ``add`` returned no ADD event); *no duplicate* (on its ADDs);
- *questions*: mem0's search, top 5. mem0 has no safety group: ``must_include_any`` is counted
  on the 5 results, and ``must_be_empty`` holds only when the search returns nothing;
- per-session add time; an ``add`` that raised is counted as an error (what it left is still
  scored), and what mem0 logged and swallowed inside ``add`` is kept beside the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from bench.mem0_side import Mem0Side
from bench.sessions import Check, SessionRun, held, judge, load_set, summarize, written
from memory.schema import Memory, PersonId

if TYPE_CHECKING:
    from config.settings import HearthSettings
    from providers.embedder import Embedder

# the set's labels a mem0 memory has nothing to check against (it is text and a vector)
NOT_IN_MEM0 = ("cls", "decay", "expiry", "subject")
_LABELS = {"cls": ("cls", "cls_any"), "decay": ("decay",), "expiry": ("expires_days_from_now",),
           "subject": ("subject_any",)}  # fmt: skip
TOP = 5
QUESTIONS_NOTE = (f"mem0: questions scored on its top-{TOP} search (no safety group; "
                  "must_be_empty only when the search returns nothing)")  # fmt: skip


@dataclass
class Mem0Run(SessionRun):
    events: list[tuple[str, str]] = field(default_factory=list)  # (ADD/UPDATE/DELETE, text)
    logged: list[str] = field(default_factory=list)  # what mem0 logged and swallowed in add


def build(
    embedder: Embedder, folder: Path, base_url: str, model: str, max_tokens: int,
    api_key: str = "local",
) -> Mem0Side:  # fmt: skip
    """``bench.mem0_side``'s mem0 (local Qdrant, our embedder) with its LLM on ``base_url``.
    Builds only: no model is called."""
    side = Mem0Side(embedder, folder, "sessions")  # first: it sets mem0's environment (telemetry)
    from mem0.llms.configs import LlmConfig
    from mem0.utils.factory import LlmFactory

    llm = {"model": model, "openai_base_url": base_url, "api_key": api_key or "local",
           "temperature": 0.0, "max_tokens": max_tokens}  # fmt: skip
    side.mem0.config.llm = LlmConfig(provider="openai", config=llm)
    side.mem0.llm = LlmFactory.create("openai", llm)
    return side


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}"[:300])


@contextlib.contextmanager
def _logged() -> Iterator[list[str]]:
    """mem0's warnings and errors while the block runs (add's own threads included)."""
    handler = _Kept()
    logger = logging.getLogger("mem0")
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)


def _live(mem0: Any, person: str) -> dict[str, str]:
    result: dict[str, Any] = mem0.get_all(user_id=person, limit=100_000)
    return {str(r["id"]): str(r["memory"]) for r in result["results"]}


def add(mem0: Any, session: dict[str, Any], person: str) -> Mem0Run:
    """One session through ``Memory.add``; never raises."""
    run = Mem0Run(session["id"], person, 0.0)
    messages = [{"role": "user", "content": turn} for turn in session["turns"]]
    before = _live(mem0, person)
    began = time.perf_counter()
    with _logged() as lines:
        try:
            result: dict[str, Any] = mem0.add(messages, user_id=person)
            run.events = [(str(e.get("event")), str(e.get("memory"))) for e in result["results"]]
        except Exception as exc:  # scored as what it left behind
            run.error = repr(exc)[:300]
    run.seconds = round(time.perf_counter() - began, 2)
    run.logged = list(lines)
    if run.error is None:
        run.added = [text for event, text in run.events if event == "ADD"]
    else:
        with contextlib.suppress(Exception):  # mem0's store unreadable too: nothing added
            run.added = [t for key, t in _live(mem0, person).items() if key not in before]
    return run


def holds(session: dict[str, Any], person: str, texts: Sequence[str]) -> list[Check]:
    """``held``'s checks on mem0's memories (plain texts), those a text can answer."""
    memories = [Memory(t, PersonId(person)) for t in texts]
    return [c for c in held(session, memories, time.time()) if c.kind not in NOT_IN_MEM0]


def asked(question: dict[str, Any], found: Sequence[str]) -> Check:
    """A question on mem0's top results: no safety group, so the results stand for it."""
    return judge(question, found, found)


def _ask(side: Mem0Side, person: str, question: dict[str, Any]) -> Check:
    try:
        found = side.search(person, question["text"], TOP)
    except Exception as exc:  # a failed search answers nothing right
        return Check("question", False, f"{question['text']} → search raised {exc!r}"[:300])
    return asked(question, found)


def replay(side: Mem0Side, data: dict[str, Any], console: Console
           ) -> tuple[list[Check], list[Mem0Run]]:  # fmt: skip
    """Every person's sessions in order through ``add``, then their checks."""
    checks: list[Check] = []
    runs: list[Mem0Run] = []
    for person in data["persons"]:
        mine = [s for s in data["sessions"] if s["person"] == person]
        for session in mine:
            run = add(side.mem0, session, person)
            runs.append(run)
            counts = " ".join(f"{e}:{sum(x == e for x, _ in run.events)}"
                              for e in ("ADD", "UPDATE", "DELETE"))  # fmt: skip
            trouble = f"  ✗ {run.error}" if run.error else ""
            if run.logged:
                trouble += f"  [{len(run.logged)} logged: {run.logged[0][:80]}]"
            console.print(f"{session['id']:8} {run.seconds:6.1f} s  {counts}{trouble}"
                          f"  {' | '.join(run.added)[:100]}")  # fmt: skip
            checks += written(session, run.added)
        texts = list(_live(side.mem0, person).values())
        for session in mine:
            checks += holds(session, person, texts)
            for question in session.get("questions_after") or []:
                c = _ask(side, person, question)
                c.session = session["id"]
                checks.append(c)
        for question in data.get("questions_after") or []:
            if question["person"] == person:
                checks.append(_ask(side, person, question))
    return checks, runs


def not_applicable(data: dict[str, Any]) -> list[str]:
    """The checks the set labels that a mem0 memory cannot answer."""
    entries = [e for s in data["sessions"] for e in s.get("expect") or []]
    return [k for k in NOT_IN_MEM0 if any(e.get(f) for e in entries for f in _LABELS[k])]


@dataclass
class Column:
    """One system's figures as a table shows them."""

    name: str
    figures: dict[str, tuple[int, int]]
    seconds: list[float]
    errors: int
    na: list[str] = field(default_factory=list)
    logged: int | None = None  # sessions whose write logged errors it swallowed (mem0)

    @classmethod
    def of(cls, name: str, results: dict[str, Any]) -> Column:
        runs = results["sessions"]
        logged = sum(bool(r["logged"]) for r in runs) if runs and "logged" in runs[0] else None
        return cls(name, {k: (int(v[0]), int(v[1])) for k, v in results["figures"].items()},
                   [float(r["seconds"]) for r in runs], sum(bool(r.get("error")) for r in runs),
                   list(results.get("not_applicable") or []), logged)  # fmt: skip

    def cell(self, kind: str) -> str:
        if kind in self.figures:
            ok, total = self.figures[kind]
            return f"{ok}/{total} ({ok / total:.0%})" if total else "0/0"
        return "n/a" if kind in self.na else ""

    def time(self) -> str:
        s = sorted(self.seconds)
        return f"p50 {s[len(s) // 2]:.1f} s, max {s[-1]:.1f} s" if s else ""


def table(title: str, columns: Sequence[Column], console: Console) -> None:
    """The sessions bench's table, one column per system."""
    grid = Table(title=title)
    grid.add_column("check")
    for column in columns:
        grid.add_column(column.name if len(columns) > 1 else "right")
    kinds = sorted({k for c in columns for k in (*c.figures, *c.na)})
    for kind in kinds:
        grid.add_row(kind, *(c.cell(kind) for c in columns))
    grid.add_row("write time per session", *(c.time() for c in columns))
    grid.add_row("sessions whose write raised", *(f"{c.errors}/{len(c.seconds)}" for c in columns))
    if any(c.logged is not None for c in columns):
        grid.add_row("sessions with errors logged inside add",
                     *("" if c.logged is None else f"{c.logged}/{len(c.seconds)}"
                       for c in columns))  # fmt: skip
    console.print(grid)
    console.print(f"  {QUESTIONS_NOTE}")


@contextlib.asynccontextmanager
async def _model(llm_url: str | None, home: HearthSettings, settings: HearthSettings,
                 scratch: Path) -> AsyncIterator[str]:  # fmt: skip
    """The model's base URL: ``llm_url``, or the installed local model started for the run."""
    if llm_url is not None:
        yield llm_url
        return
    from providers.processes import LocalLLMServer, free_port

    weights = home.resolve(home.local_llm.model_file).resolve()
    server = LocalLLMServer(settings.local_llm.model_copy(update={"port": free_port()}), weights,
                            scratch)  # fmt: skip
    await server.start()
    try:
        yield server.base_url
    finally:
        server.stop()


async def main(
    path: Path, llm_url: str | None, model: str, out: Path, console: Console,
    hearth: dict[str, Any] | None = None,
) -> dict[str, tuple[int, int]]:  # fmt: skip
    """mem0's run: its table, ``results-mem0.json`` in ``out``, and beside Hearth's run
    (``hearth``: its ``results.json``) one table with both."""
    from importlib.metadata import version

    from config.settings import load_settings
    from memory.engine import build_embedder

    data = await asyncio.to_thread(load_set, path)
    home = load_settings()
    with tempfile.TemporaryDirectory(prefix="hearth-bench-mem0-sessions-") as tmp:
        scratch = Path(tmp)
        settings = load_settings(data_dir=scratch)
        embedder = build_embedder(settings)
        async with _model(llm_url, home, settings, scratch) as base_url:
            side = build(embedder, scratch, base_url, model, settings.write.max_tokens,
                         os.environ.get("HEARTH_BENCH_LLM_KEY", ""))  # fmt: skip
            try:
                checks, runs = await asyncio.to_thread(replay, side, data, console)
            finally:
                side.mem0.close()
    system = f"mem0 {version('mem0ai')}"
    results = {
        "system": system, "set": path.name, "llm": llm_url or "local",
        "date": time.strftime("%Y-%m-%d"), "figures": summarize(checks),
        "not_applicable": not_applicable(data), "note": QUESTIONS_NOTE,
        "checks": [c.__dict__ for c in checks], "sessions": [r.__dict__ for r in runs],
    }  # fmt: skip
    text = json.dumps(results, ensure_ascii=False, indent=1)
    await asyncio.to_thread(_write, out / "results-mem0.json", text)
    mine = Column.of(system, results)
    table(f"hearth bench sessions — {path.name}, {system}", [mine], console)
    for c in checks:
        if not c.ok:
            console.print(f"  ✗ {c.session} {c.kind}: {c.what}"[:200])
    if hearth is not None:
        table(f"hearth bench sessions — {path.name}: Hearth and {system}",
              [Column.of("Hearth", hearth), mine], console)  # fmt: skip
    return mine.figures


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
