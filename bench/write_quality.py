"""``hearth bench writequality``: what the write path *writes*, scored per item on whole sessions.

Each labelled session (``bench/data/writepath/sessions.yaml``) is replayed through the real write
path (extract → merge → tag, the embedded store, the real embedder, a private Redis) for a fresh
person whose store holds only the session's ``known`` memories. Afterwards the person's memories
are read and scored:

- **present**: an expected memory exists with its meaning (every group of ``all`` in its text);
- **tags**: of those present, class, subject and expiry window right (decay follows: an expiry
  is decay ``time``);
- **gone**: an updated value is in no live memory, and is kept in some memory's history;
- **nothing / never**: noise sessions add nothing; the assistant's claims are never stored;
- **extra**: new memories no expectation accounts for (reported).

Dev and test are fixed per session: tune on dev, report test.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.table import Table

from bench.results import Figure
from memory.schema import Decay, Memory, MemoryClass, MemoryId, PersonId
from workers.writepath import WritePath

DATA = Path(__file__).with_name("data") / "writepath" / "sessions.yaml"
Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")
Groups = list[list[str]]
RESULTS = "writequality.jsonl"
SUMMARY = "writequality.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Line(_Strict):
    u: str | None = None
    a: str | None = None


class Known(_Strict):
    text: str
    cls: MemoryClass = MemoryClass.FACT
    subject: str | None = None
    expires: dt.date | None = None


class Expected(_Strict):
    all: Groups
    cls: list[MemoryClass]
    subject: list[str]
    # [first, last] day of the expiry; "never": must not expire; "any": not scored
    expires: tuple[dt.date, dt.date] | Literal["never", "any"] = "any"
    optional: bool = False


class LabelledSession(_Strict):
    id: str
    split: Split
    kind: str
    said: list[Line]
    known: list[Known] = Field(default_factory=list)
    expect: list[Expected] = Field(default_factory=list)
    gone: list[Groups] = Field(default_factory=list)
    never: list[Groups] = Field(default_factory=list)
    nothing: bool = False
    at_most: int | None = None


class SessionSet(_Strict):
    day: str
    sessions: list[LabelledSession]

    @property
    def ended_at(self) -> float:
        return dt.datetime.strptime(self.day, "%Y-%m-%d %H:%M").timestamp()


def load(path: Path = DATA) -> SessionSet:
    return SessionSet.model_validate(yaml.safe_load(path.read_text()))


def means(text: str, groups: Groups) -> bool:
    """Every group has one of its alternatives in ``text``."""
    return all(any(term in text for term in group) for group in groups)


def record(session: LabelledSession, ended_at: float) -> dict[str, Any]:
    """The session as the device server hands it to the write path."""
    start = ended_at - 10 * len(session.said)
    transcript = []
    for i, line in enumerate(session.said):
        role = "user" if line.u is not None else "assistant"
        text = line.u if line.u is not None else line.a
        transcript.append({"role": role, "text": text, "at": start + 10 * i})
    return {
        "session_id": f"wq-{session.id}",
        "person": person_of(session),
        "device_id": "bench",
        "source": "device",
        "ended_at": ended_at,
        "transcript": transcript,
    }


def person_of(session: LabelledSession) -> PersonId:
    return PersonId(f"wq-{session.id}")


# ---- scoring -------------------------------------------------------------------------------


@dataclass
class ItemScore:
    """One expectation, gone value or never value of one session."""

    kind: Literal["present", "tags", "gone", "history", "nothing", "never", "at_most"]
    ok: bool
    detail: str


@dataclass
class SessionScore:
    id: str
    split: str
    kind: str
    seconds: float
    items: list[ItemScore] = field(default_factory=list)
    memories: list[dict[str, Any]] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    llm_calls: int = 0
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _expiry(memory: Memory) -> dt.date | None:
    if memory.decay is not Decay.TIME or memory.expires_at is None:
        return None
    return dt.datetime.fromtimestamp(memory.expires_at).date()


def _shown(memory: Memory) -> dict[str, Any]:
    expiry = _expiry(memory)
    return {
        "text": memory.text, "cls": memory.cls.value, "subject": memory.subject,
        "decay": memory.decay.value, "expires": expiry.isoformat() if expiry else None,
        "history": [text for text, _ in memory.history], "pending": memory.tags_pending,
    }  # fmt: skip


def _tags_right(memory: Memory, want: Expected) -> tuple[bool, str]:
    wrong = []
    if memory.cls not in want.cls:
        wrong.append(f"cls {memory.cls.value}")
    if (memory.subject or "") not in want.subject:
        wrong.append(f"subject {memory.subject}")
    expiry = _expiry(memory)
    if want.expires == "never" and expiry is not None:
        wrong.append(f"expires {expiry} (should not)")
    if isinstance(want.expires, tuple) and not (
        expiry is not None and want.expires[0] <= expiry <= want.expires[1]
    ):
        wrong.append(f"expires {expiry} not in {want.expires[0]}..{want.expires[1]}")
    return not wrong, "; ".join(wrong) or "right"


def score(
    session: LabelledSession, memories: Sequence[Memory], known: set[MemoryId]
) -> list[ItemScore]:
    """Every labelled item of one session against the person's memories afterwards."""
    items: list[ItemScore] = []
    accounted: set[MemoryId] = set()
    for want in session.expect:
        matching = [m for m in memories if means(m.text, want.all)]
        accounted.update(m.key for m in matching)
        label = "+".join("/".join(g) for g in want.all)
        if not matching:
            if not want.optional:
                items.append(ItemScore("present", False, f"{label}: missing"))
            continue
        items.append(ItemScore("present", True, f"{label}: {matching[0].text}"))
        verdicts = [_tags_right(m, want) for m in matching]
        ok = any(v[0] for v in verdicts)
        items.append(ItemScore("tags", ok, f"{label}: {verdicts[0][1]}"))
        if session.at_most is not None and want is session.expect[0]:
            items.append(
                ItemScore("at_most", len(matching) <= session.at_most, f"{len(matching)} stored")
            )
    for groups in session.gone:
        label = "+".join("/".join(g) for g in groups)
        live = [m.text for m in memories if means(m.text, groups)]
        items.append(ItemScore("gone", not live, f"{label}: {live or 'gone'}"))
        if session.expect:  # replaced, not retracted: the old value stays in the history
            kept = any(means(text, groups) for m in memories for text, _ in m.history)
            verdict = "kept" if kept else "no history"
            items.append(ItemScore("history", kept, f"{label}: {verdict}"))
    for groups in session.never:
        label = "+".join("/".join(g) for g in groups)
        stored = [m.text for m in memories if means(m.text, groups)]
        items.append(ItemScore("never", not stored, f"{label}: {stored or 'not stored'}"))
    if session.nothing:
        new = [m.text for m in memories if m.key not in known]
        items.append(ItemScore("nothing", not new, f"new: {new}"))
    return items


def extras(session: LabelledSession, memories: Sequence[Memory], known: set[MemoryId]) -> list[str]:
    """New memories no expectation accounts for."""
    return [
        m.text
        for m in memories
        if m.key not in known and not any(means(m.text, w.all) for w in session.expect)
    ]


# ---- running --------------------------------------------------------------------------------


async def seed(write_path: WritePath, session: LabelledSession, now: float) -> set[MemoryId]:
    """The session's known memories, tagged, as an earlier job would have left them."""
    person = person_of(session)
    memories = []
    for n, k in enumerate(session.known):
        expires = (
            None if k.expires is None
            else dt.datetime.combine(k.expires, dt.time(23, 59, 59)).timestamp()
        )  # fmt: skip
        memories.append(
            Memory(
                text=k.text,
                person=person,
                cls=k.cls,
                subject=k.subject,
                decay=Decay.TIME if expires else Decay.VOLUME,
                expires_at=expires,
                source="device",
                created_at=now - 86400 * 7,
                id=MemoryId(_seed_id(session, n)),
                origin="wq-earlier",
            )
        )
    if memories:
        vectors = write_path.embedder.embed([m.text for m in memories])
        write_path.store.upsert(memories, vectors)
    return {m.key for m in memories}


def _seed_id(session: LabelledSession, n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"hearth-wq/{session.id}/{n}"))


async def run_session(
    write_path: WritePath, session: LabelledSession, ended_at: float
) -> SessionScore:
    person = person_of(session)
    write_path.clock = lambda: ended_at  # the job runs as the session ends (expiry, searches)
    known = await seed(write_path, session, ended_at)
    began = time.perf_counter()
    result = SessionScore(session.id, session.split, session.kind, 0.0)
    try:
        outcome = await write_path.remember(record(session, ended_at))
        result.llm_calls = outcome.llm_calls
    except Exception as exc:  # a failed job is scored as what it left behind
        result.error = repr(exc)[:300]
    result.seconds = round(time.perf_counter() - began, 2)
    memories = write_path.store.scroll(person).memories
    result.items = score(session, memories, known)
    result.memories = [_shown(m) for m in memories]
    result.extra = extras(session, memories, known)
    return result


async def run(
    write_path: WritePath,
    sessions: SessionSet,
    chosen: Callable[[LabelledSession], bool],
    progress: Callable[[SessionScore], None] | None = None,
) -> list[SessionScore]:
    results = []
    for session in sessions.sessions:
        if not chosen(session):
            continue
        result = await run_session(write_path, session, sessions.ended_at)
        results.append(result)
        if progress is not None:
            progress(result)
    return results


# ---- reporting ------------------------------------------------------------------------------

FIGURES = ("present", "tags", "gone", "history", "nothing", "never", "at_most")


def tally(results: Sequence[SessionScore], split: str) -> dict[str, dict[str, int]]:
    out = {name: {"passed": 0, "scored": 0} for name in FIGURES}
    for r in results:
        if r.split != split:
            continue
        for item in r.items:
            out[item.kind]["scored"] += 1
            out[item.kind]["passed"] += item.ok
    return out


def summary(results: Sequence[SessionScore], meta: dict[str, Any]) -> dict[str, Any]:
    seconds = {s: [r.seconds for r in results if r.split == s] for s in SPLITS}
    return {
        "meta": meta,
        "splits": {s: tally(results, s) for s in SPLITS},
        "seconds": {s: _mean(v) for s, v in seconds.items()},
        "extra": {s: sum(len(r.extra) for r in results if r.split == s) for s in SPLITS},
        "errors": [r.id for r in results if r.error],
    }


def recorded(summary: dict[str, Any]) -> list[Figure]:
    """The results table's rows (bench.results) from a run's summary, one per split scored:
    expected memories present / tagged right, failed noise and claim items (memories stored
    that should not be), updated values gone, seconds per session."""
    rows = []
    for split in SPLITS:
        t = summary["splits"][split]
        if not t["present"]["scored"]:
            continue
        stored = sum(t[k]["scored"] - t[k]["passed"] for k in ("nothing", "never"))
        rows.append(Figure(
            f"{split} split: expected memories present / tagged right",
            f"{t['present']['passed']}/{t['present']['scored']} / "
            f"{t['tags']['passed']}/{t['tags']['scored']}; noise and the assistant's claims "
            f"{stored} memories; updated values gone {t['gone']['passed']}/{t['gone']['scored']}; "
            f"{summary['seconds'][split]} s per session",
        ))  # fmt: skip
    return rows


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def write_run(folder: Path, results: Sequence[SessionScore], meta: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / RESULTS).open("wb") as out:
        for r in results:
            out.write(orjson.dumps(r.as_json()) + b"\n")
    data = orjson.dumps(summary(results, meta), option=orjson.OPT_INDENT_2)
    (folder / SUMMARY).write_bytes(data)


def _cell(t: dict[str, int]) -> str:
    if not t["scored"]:
        return "—"
    return f"{t['passed']}/{t['scored']} ({100 * t['passed'] / t['scored']:.0f} %)"


def table(results: Sequence[SessionScore], title: str) -> Table:
    out = Table(title=title)
    out.add_column("figure")
    for split in SPLITS:
        out.add_column(split, justify="right")
    tallies = {s: tally(results, s) for s in SPLITS}
    for name in FIGURES:
        out.add_row(name, *(_cell(tallies[s][name]) for s in SPLITS))
    extra = [str(sum(len(r.extra) for r in results if r.split == s)) for s in SPLITS]
    out.add_row("extra memories", *extra)
    out.add_row(
        "seconds per session (mean)",
        *(str(_mean([r.seconds for r in results if r.split == s])) for s in SPLITS),
    )
    return out


def failures(results: Sequence[SessionScore]) -> Table:
    out = Table(title="items that failed")
    for column in ("session", "split", "item", "detail"):
        out.add_column(column)
    for r in results:
        if r.error:
            out.add_row(r.id, r.split, "error", r.error)
        for item in r.items:
            if not item.ok:
                out.add_row(r.id, r.split, item.kind, item.detail)
        for text in r.extra:
            out.add_row(r.id, r.split, "extra", text)
    return out


def is_run(folder: Path) -> bool:
    return (folder / SUMMARY).exists()


def compare(a: Path, b: Path, console: Console) -> None:
    """Figure by figure and split by split, then every item whose verdict changed."""
    sa = orjson.loads((a / SUMMARY).read_bytes())
    sb = orjson.loads((b / SUMMARY).read_bytes())
    out = Table(title=f"write quality: {a.name} → {b.name}")
    out.add_column("figure")
    for split in SPLITS:
        out.add_column(split, justify="right")
    for name in FIGURES:
        cells = []
        for split in SPLITS:
            x, y = sa["splits"][split][name], sb["splits"][split][name]
            delta = y["passed"] - x["passed"]
            cells.append(f"{_cell(x)} → {_cell(y)} {delta:+d}")
        out.add_row(name, *cells)
    out.add_row("extra memories", *(f"{sa['extra'][s]} → {sb['extra'][s]}" for s in SPLITS))
    out.add_row("seconds / session", *(f"{sa['seconds'][s]} → {sb['seconds'][s]}" for s in SPLITS))
    console.print(out)
    before = {r["id"]: r for r in _results(a)}
    changed = Table(title="items whose verdict changed")
    for column in ("session", "item", "A", "B"):
        changed.add_column(column)
    for r in _results(b):
        old = before.get(r["id"])
        if old is None:
            continue
        was = {(i["kind"], n): i for n, i in enumerate(old["items"])}
        for n, item in enumerate(r["items"]):
            prior = was.get((item["kind"], n))
            if prior is not None and prior["ok"] != item["ok"]:
                changed.add_row(r["id"], item["kind"], prior["detail"], item["detail"])
    console.print(changed)


def _results(folder: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (folder / RESULTS).read_bytes().splitlines() if line]


# ---- the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    name: str
    out: Path
    split: str = "all"
    only: tuple[str, ...] = ()
    llm_url: str | None = None
    model: str = "local"
    overrides: tuple[str, ...] = ()


async def main(options: Options, console: Console) -> Path:
    """Replay the chosen sessions on the local model (or ``--llm-url``) and write the run."""
    import os

    from bench.e2e.hearth import env_overrides
    from bench.write_model import write_rig
    from config.settings import load_settings

    os.environ.update(env_overrides(list(options.overrides)))
    home = load_settings()
    sessions = load()

    def chosen(s: LabelledSession) -> bool:
        if options.only:
            return s.id in options.only
        return options.split == "all" or s.split == options.split

    folder = options.out / options.name
    async with write_rig(options.llm_url, options.model, home, "hearth-bench-wq-") as rig:
        write_path, _ = rig

        def show(r: SessionScore) -> None:
            bad = sum(not i.ok for i in r.items)
            passed = f"{len(r.items) - bad}/{len(r.items)} items"
            console.print(
                f"{r.id:8} {r.split:4} {r.seconds:6.1f} s  {passed}  extra {len(r.extra)}"
            )

        results = await run(write_path, sessions, chosen, show)
    meta = {
        "name": options.name, "split": options.split, "only": list(options.only),
        "llm": options.llm_url or str(home.local_llm.model_file), "model": options.model,
        "overrides": list(options.overrides), "at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }  # fmt: skip
    write_run(folder, results, meta)
    console.print(failures(results))
    console.print(table(results, f"write quality — {options.name}"))
    console.print(f"run written to {folder}")
    return folder
