"""``hearth bench sessions``: the write path on session sets written outside the project.

A set (``../shared/data/external/sessions.json``, the frozen ``bench/data/frozen/sessions-*``)
holds persons and their sessions (what the person said, turn by turn) with what memory must
hold afterwards. Each person's sessions are replayed in order through the real write path
(extract → merge → tag; the embedded store, the real embedder, a private Redis and the local
model unless ``--llm-url``), one job per session, each finished before the next; the session
ends an hour after the previous one. Only the person's turns are replayed (no assistant
replies). Then, per person:

- *present*: each ``expect`` entry's memory (the first containing one of ``contains_any``)
  exists; *class*, *decay*, *subject* (one of ``subject_any`` in its subject or text's subject),
  *negation* kept (Chinese or English), *expiry* inside ``expires_days_from_now``, *language*
  (en: English, with at most the Chinese words a code-mixed speaker said) — each counted over
  the present ones;
- *gone*: no live memory contains an ``expect_gone`` string;
- *no new*: an ``expect_no_new`` session added no memory; *no duplicate*: no memory added by the
  session contains an ``expect_no_new_duplicate_of`` word;
- *questions*: ``questions_after`` through the read path (``must_include_any`` recalled, in the
  safety group when ``safety_group``; ``must_not_include`` and ``must_be_empty`` respected);
- per-session write time.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.results import Figure
from memory.schema import Memory, PersonId
from server.memory.readpath import ReadPath
from workers import sources

DAY = 86400.0
# a negation in Chinese (dialect forms too: 莫, 唔, 冇, 覅, 甭) or in English
_NEGATION = re.compile(
    r"不|没|别|莫|唔|冇|覅|甭|\b(?:no|not|never|none|without|avoid)\b|n't\b", re.IGNORECASE
)


@dataclass
class Check:
    kind: str  # present, cls, decay, subject, negation, expiry, language, gone, no_new, ...
    ok: bool
    what: str
    session: str = ""


@dataclass
class SessionRun:
    id: str
    person: str
    seconds: float
    added: list[str] = field(default_factory=list)
    error: str | None = None


def load_set(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def record(session: dict[str, Any], person: str, ended_at: float) -> dict[str, Any]:
    """The session as the device server hands it to the write path (the person's turns)."""
    turns = session["turns"]
    start = ended_at - 20 * len(turns)
    return {
        "session_id": f"sx-{session['id']}", "person": person, "device_id": "bench",
        "source": "device", "ended_at": ended_at,
        "transcript": [{"role": "user", "text": t, "at": start + 20 * i}
                       for i, t in enumerate(turns)],
    }  # fmt: skip


def _first(memories: Sequence[Memory], words: Sequence[str]) -> Memory | None:
    return next((m for m in memories if any(w.lower() in m.text.lower() for w in words)), None)


def check_expect(entry: dict[str, Any], memories: Sequence[Memory], now: float) -> list[Check]:
    words = entry["contains_any"]
    found = _first(memories, words)
    label = "/".join(words)
    if found is None:
        return [Check("present", False, label)]
    checks = [Check("present", True, label)]
    wanted = entry.get("cls_any") or ([entry["cls"]] if entry.get("cls") else [])
    if wanted:
        checks.append(Check("cls", found.cls.value in wanted, f"{label}: {found.cls.value}"))
    if entry.get("decay"):
        checks.append(Check("decay", found.decay.value == entry["decay"],
                            f"{label}: {found.decay.value}"))  # fmt: skip
    if entry.get("subject_any"):
        about = " ".join(x for x in (found.subject or "", *found.entities) if x)
        ok = any(s in about for s in entry["subject_any"])
        checks.append(Check("subject", ok, f"{label}: subject {found.subject!r}"))
    if entry.get("must_keep_negation"):
        checks.append(Check("negation", bool(_NEGATION.search(found.text)), found.text))
    window = entry.get("expires_days_from_now")
    if window:
        days = None if found.expires_at is None else (found.expires_at - now) / DAY
        ok = days is not None and window[0] - 1 <= days <= window[1] + 1
        checks.append(Check("expiry", ok, f"{label}: {days and round(days, 1)} days"))
    if entry.get("language") == "en":  # English, keeping the Chinese words the person said in it
        checks.append(Check("language", sources.mostly_english(found.text), found.text))
    return checks


async def ask(read_path: ReadPath, person: str, question: dict[str, Any], now: float) -> Check:
    recall = await read_path.recall(PersonId(person), question["text"], now=now)
    safety = [r.memory.text for r in recall.safety]
    return judge(question, safety, safety + [r.memory.text for r in recall.related])


def judge(question: dict[str, Any], safety: Sequence[str], texts: Sequence[str]) -> Check:
    """A question's check on what came back: ``safety`` the safety group, ``texts`` everything
    (the safety group first)."""
    ok = True
    if question.get("must_be_empty"):
        ok = not texts
    include = question.get("must_include_any") or []
    if include:
        pool = safety if question.get("safety_group") else texts
        ok = ok and any(w in t for t in pool for w in include)
    ok = ok and not any(w in t for t in texts for w in question.get("must_not_include") or [])
    return Check("question", ok, f"{question['text']} → {list(texts[:4])}")


def _expects(session: dict[str, Any]) -> list[dict[str, Any]]:
    return list(session.get("expect") or [])


def written(session: dict[str, Any], added: Sequence[str]) -> list[Check]:
    """The session's own checks on what its write added: *no new*, *no duplicate*."""
    checks = []
    if session.get("expect_no_new"):
        checks.append(Check("no_new", not added, "; ".join(added), session["id"]))
    for word in session.get("expect_no_new_duplicate_of") or []:
        dup = [t for t in added if word in t]
        checks.append(Check("no_duplicate", not dup, f"{word}: {dup}", session["id"]))
    return checks


def held(session: dict[str, Any], live: Sequence[Memory], now: float) -> list[Check]:
    """The session's checks on what memory holds at the end: its ``expect`` entries and *gone*."""
    checks = []
    for entry in _expects(session):
        for c in check_expect(entry, live, now):
            c.session = session["id"]
            checks.append(c)
    for gone in session.get("expect_gone") or []:
        left = [m.text for m in live if gone in m.text]
        checks.append(Check("gone", not left, f"{gone}: {left}", session["id"]))
    return checks


def summarize(checks: Sequence[Check]) -> dict[str, tuple[int, int]]:
    totals: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for c in checks:
        totals[c.kind] += 1
        right[c.kind] += c.ok
    return {k: (right[k], totals[k]) for k in sorted(totals)}


async def replay(
    write_path: Any, read_path: ReadPath, data: dict[str, Any], console: Console
) -> tuple[list[Check], list[SessionRun]]:
    """Every person's sessions in order, then their checks."""
    checks: list[Check] = []
    runs: list[SessionRun] = []
    now = time.time() - 3600 * len(data["sessions"])
    for person in data["persons"]:
        mine = [s for s in data["sessions"] if s["person"] == person]
        for session in mine:
            now += 3600
            write_path.clock = lambda at=now: at
            before = {m.key for m in write_path.store.scroll(PersonId(person)).memories}
            began = time.perf_counter()
            run = SessionRun(session["id"], person, 0.0)
            try:
                await write_path.remember(record(session, person, now))
            except Exception as exc:  # a failed job is scored as what it left behind
                run.error = repr(exc)[:300]
            run.seconds = round(time.perf_counter() - began, 2)
            after = write_path.store.scroll(PersonId(person)).memories
            run.added = [m.text for m in after if m.key not in before]
            runs.append(run)
            console.print(f"{session['id']:8} {run.seconds:6.1f} s  +{len(run.added)}"
                          f"  {' | '.join(run.added)[:110]}")  # fmt: skip
            checks += written(session, run.added)
        live = write_path.store.scroll(PersonId(person)).memories
        live = [m for m in live if m.expires_at is None or m.expires_at > now]
        for session in mine:
            checks += held(session, live, now)
            for question in session.get("questions_after") or []:
                c = await ask(read_path, person, {**question, "person": person}, now)
                c.session = session["id"]
                checks.append(c)
        for question in data.get("questions_after") or []:
            if question["person"] == person:
                checks.append(await ask(read_path, person, question, now))
    return checks, runs


def report(name: str, checks: Sequence[Check], runs: Sequence[SessionRun],
           console: Console) -> dict[str, tuple[int, int]]:  # fmt: skip
    figures = summarize(checks)
    table = Table(title=f"hearth bench sessions — {name}")
    table.add_column("check")
    table.add_column("right")
    for kind, (ok, total) in figures.items():
        table.add_row(kind, f"{ok}/{total} ({ok / total:.0%})")
    seconds = sorted(r.seconds for r in runs)
    if seconds:
        table.add_row("write time per session", f"p50 {seconds[len(seconds) // 2]:.1f} s, "
                      f"max {seconds[-1]:.1f} s")  # fmt: skip
    console.print(table)
    for c in checks:
        if not c.ok:
            console.print(f"  ✗ {c.session} {c.kind}: {c.what}"[:200])
    return figures


async def main(
    path: Path, llm_url: str | None, model: str, out: Path, console: Console
) -> dict[str, tuple[int, int]]:
    from bench.write_model import write_rig
    from config.settings import load_settings

    data = await asyncio.to_thread(load_set, path)
    async with write_rig(llm_url, model, load_settings(), "hearth-bench-sessions-") as rig:
        write_path, settings = rig
        read_path = ReadPath(write_path.embedder, write_path.store, settings.memory)
        checks, runs = await replay(write_path, read_path, data, console)
    figures = report(path.name, checks, runs, console)
    results = {
        "set": path.name, "llm": llm_url or "local", "date": time.strftime("%Y-%m-%d"),
        "figures": figures, "checks": [c.__dict__ for c in checks],
        "sessions": [r.__dict__ for r in runs],
    }  # fmt: skip
    await asyncio.to_thread(_write, out / "results.json", json.dumps(results, ensure_ascii=False,
                                                                     indent=1))  # fmt: skip
    return figures


# each check as the results table names it, in its order
_RECORDED = (
    ("present", "present"), ("subject", "subject"), ("cls", "class"), ("decay", "decay"),
    ("expiry", "expiry"), ("negation", "negation"), ("language", "language"),
    ("gone", "old values gone"), ("no_new", "noise sessions storing nothing"),
    ("no_duplicate", "no duplicate"), ("question", "read-path questions afterwards"),
)  # fmt: skip


def recorded(results: dict[str, Any], persons: int) -> list[Figure]:
    """The results table's row (bench.results) from a run's ``results.json``: every check's
    right / total and the write time per session (p50, max)."""
    found = {kind: tuple(pair) for kind, pair in results["figures"].items()}
    parts = []
    for kind, label in _RECORDED:
        if kind in found:
            ok, total = found[kind]
            share = f" ({ok / total:.0%})".replace("%", " %") if kind == "present" and total else ""
            parts.append(f"{label} {ok}/{total}{share}")
    seconds = sorted(run["seconds"] for run in results["sessions"])
    if seconds:
        parts.append(f"write time p50 {seconds[len(seconds) // 2]:.0f} s, max {seconds[-1]:.0f} s")
    model = "local model" if results["llm"] == "local" else results["llm"]
    what = (f"external sessions ({persons} persons, {len(results['sessions'])} sessions, dev), "
            f"{model}, only the person's turns replayed")  # fmt: skip
    return [Figure(what, "; ".join(parts))]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
