"""``hearth bench cues``: are the write path's "when it matters" cues any good, and what do they
unlock on the read path?

1. The write model (the installed local one, or ``--llm-url``) makes cues with the write
   path's own call (``workers.cues``) for every constraint and preference of the labelled set
   (``bench/data/cues/memories.yaml``) and of the e2e bench's snapshot; each call is timed.
   ``--cues FILE`` reuses the cues of an earlier run instead (no model: for choosing read-path
   settings on the same cues).
2. Acceptance: a cue counts as one a person would accept when it names a situation of the
   memory's ``accept`` list (a proxy; the run's JSON keeps every cue for reading by hand).
3. Unlocked: each probe (a request that needs the memory but shares no content word with it)
   goes through the real read path (real embedder, Qdrant Edge) without cues
   (``memory.cue_limit=0``) and with them; a probe counts when the memory is recalled — for a
   constraint, in the safety group. Quiet requests count every memory a cue brought.
4. Everything per split (dev / test, fixed by the CRC-32 of the memory id) and kind, printed and
   written to ``bench/runs/NAME/cues.json`` with the cues, which ``hearth bench e2e --cues``
   loads with its snapshot.
"""

from __future__ import annotations

import os
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.table import Table

from bench.e2e.data import load_snapshot
from config.settings import HearthSettings
from memory import entities
from memory.schema import CUED_CLASSES, Memory, MemoryClass, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import Embedder
from providers.llm import StructuredLLM
from server.memory.readpath import ReadPath
from workers import cues

MAX_ORACLE = 8  # labelled words used as cues (the figures in the README were measured with 8)
DATA = Path(__file__).resolve().parent / "data" / "cues" / "memories.yaml"
Split = Literal["dev", "test"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Probe(_Strict):
    q: str
    kind: str


class LabelledMemory(_Strict):
    id: str
    text: str
    cls: MemoryClass
    subject: str
    accept: list[str]
    probes: list[Probe]

    @property
    def split(self) -> Split:
        return "dev" if zlib.crc32(self.id.encode()) % 2 == 0 else "test"


class CueSet(_Strict):
    person: str
    memories: list[LabelledMemory]
    quiet: list[str]


def load(path: Path = DATA) -> CueSet:
    return CueSet.model_validate(yaml.safe_load(path.read_text()))


@dataclass(frozen=True, slots=True)
class Options:
    name: str
    out: Path
    split: Literal["dev", "test", "all"] = "all"
    llm_url: str | None = None
    model: str = "local"
    cues_file: Path | None = None
    overrides: tuple[str, ...] = ()
    oracle: bool = False  # the labelled ``accept`` words as the cues: an upper bound, no model


@dataclass
class Made:
    """Cues per memory text, and the seconds each call took."""

    cues: dict[str, list[str] | None] = field(default_factory=dict)
    call_seconds: list[float] = field(default_factory=list)


async def make(llm: StructuredLLM, texts: list[str], names: tuple[str, ...]) -> Made:
    made = Made()
    for text in texts:
        started = time.perf_counter()
        made.cues.update(await cues.cue(llm, [text], names))
        made.call_seconds.append(time.perf_counter() - started)
    return made


def accepted(cue: str, accept: list[str]) -> bool:
    return any(word in cue for word in accept)


@dataclass
class ProbeResult:
    memory: str
    split: Split
    kind: str
    question: str
    before: bool
    after: bool
    cue: str | None
    wrong: list[str]  # other memories a cue brought to this request


def _found(recall: Any, memory: Memory) -> tuple[bool, str | None]:
    """Recalled (a constraint: in the safety group), and the cue that brought it."""
    group = recall.safety if memory.cls is MemoryClass.SAFETY else recall.safety + recall.related
    for r in group:
        if r.memory.key == memory.key:
            return True, r.cue
    return False, None


async def score(
    data: CueSet, made: dict[str, list[str] | None], settings: HearthSettings,
    embedder: Embedder, folder: Path,
) -> dict[str, Any]:  # fmt: skip
    """Store the labelled memories with their cues, ask every probe and quiet request twice."""
    person = PersonId(data.person)
    store = EdgeMemoryStore(folder / "store", embedder.dim)
    try:
        memories = {
            m.id: Memory(text=m.text, person=person, cls=m.cls, subject=m.subject,
                         entities=entities.entities_for(m.text, m.subject))
            for m in data.memories
        }  # fmt: skip
        ordered = list(memories.values())
        store.upsert(ordered, embedder.embed([m.text for m in ordered]))
        for memory in ordered:
            found = made.get(memory.text)
            if found:
                store.put_cues(person, memory, found, embedder.embed(found))
        plain = ReadPath(embedder, store, settings.memory.model_copy(update={"cue_limit": 0}))
        cued = ReadPath(embedder, store, settings.memory)
        probes: list[ProbeResult] = []
        for labelled in data.memories:
            memory = memories[labelled.id]
            for probe in labelled.probes:
                before, _ = _found(await plain.recall(person, probe.q), memory)
                recall = await cued.recall(person, probe.q)
                after, cue = _found(recall, memory)
                wrong = [r.memory.text for r in recall.safety + recall.related
                         if r.why == "cue" and r.memory.key != memory.key]  # fmt: skip
                probes.append(ProbeResult(labelled.text, labelled.split, probe.kind, probe.q,
                                          before, after, cue, wrong))  # fmt: skip
        quiet = []
        for question in data.quiet:
            recall = await cued.recall(person, question)
            brought = [r for r in recall.safety + recall.related if r.why == "cue"]
            cued_here = [{"memory": r.memory.text, "cue": r.cue} for r in brought]
            quiet.append({"question": question, "cued": cued_here})
    finally:
        store.close()
    return {"probes": [p.__dict__ for p in probes], "quiet": quiet}


def acceptance(data: CueSet, made: dict[str, list[str] | None]) -> list[dict[str, Any]]:
    rows = []
    for m in data.memories:
        if m.cls not in CUED_CLASSES:
            continue
        found = made.get(m.text) or []
        ok = [c for c in found if accepted(c, m.accept)]
        rows.append({"id": m.id, "split": m.split, "text": m.text, "cues": found,
                     "accepted": ok, "rejected": [c for c in found if c not in ok]})  # fmt: skip
    return rows


def summary(rows: list[dict[str, Any]], scored: dict[str, Any], split: str) -> dict[str, Any]:
    mine = [r for r in rows if split == "all" or r["split"] == split]
    probes = [p for p in scored["probes"] if split == "all" or p["split"] == split]
    cues_made = sum(len(r["cues"]) for r in mine)
    kinds: dict[str, dict[str, int]] = {}
    for p in probes:
        k = kinds.setdefault(p["kind"], {"probes": 0, "before": 0, "after": 0})
        k["probes"] += 1
        k["before"] += p["before"]
        k["after"] += p["after"]
    return {
        "memories": len(mine),
        "with_cues": sum(bool(r["cues"]) for r in mine),
        "cues": cues_made,
        "accepted": sum(len(r["accepted"]) for r in mine),
        "probes": len(probes),
        "before": sum(p["before"] for p in probes),
        "after": sum(p["after"] for p in probes),
        "lost": sum(p["before"] and not p["after"] for p in probes),
        "wrong": sum(len(p["wrong"]) for p in probes),
        "kinds": kinds,
    }


def table(report: dict[str, Any], title: str) -> Table:
    out = Table(title=title)
    for column in ("split", "memories cued", "cues", "accepted", "probes recalled without cues",
                   "with cues", "quiet: memories a cue brought"):  # fmt: skip
        out.add_column(column)
    for split, s in report["splits"].items():
        share = f"{s['accepted']}/{s['cues']} ({s['accepted'] / max(1, s['cues']):.0%})"
        out.add_row(split, f"{s['with_cues']}/{s['memories']}", str(s["cues"]), share,
                    f"{s['before']}/{s['probes']}", f"{s['after']}/{s['probes']}",
                    str(report["quiet_cued"]) if split == "all" else "")  # fmt: skip
    return out


async def main(options: Options, console: Console) -> Path:
    from bench.e2e.hearth import env_overrides
    from bench.write_model import write_model
    from config.settings import load_settings
    from providers.embedder import UseEmbedder

    os.environ.update(env_overrides(list(options.overrides)))
    home = load_settings()
    data = load()
    snapshot = load_snapshot()
    texts = [m.text for m in data.memories if m.cls in CUED_CLASSES]
    e2e = [m.text for m in snapshot.memories if MemoryClass(m.cls) in CUED_CLASSES]
    folder = options.out / options.name
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hearth-bench-cues-") as tmp:
        scratch = Path(tmp)
        settings = load_settings(data_dir=scratch)
        if options.oracle:
            made = Made({m.text: m.accept[:MAX_ORACLE] for m in data.memories
                         if m.cls in CUED_CLASSES}, [])  # fmt: skip
            source = "oracle: the labelled accept words"
        elif options.cues_file is not None:
            earlier = orjson.loads(options.cues_file.read_bytes())
            made = Made({**earlier["cues"]}, [])
            source = str(options.cues_file)
        else:
            async with write_model(options.llm_url, options.model, home, settings, scratch) as llm:
                every = list(dict.fromkeys(texts + e2e))
                names = tuple(entities.household_names(every, []))
                made = await make(llm, every, names)
            source = options.llm_url or str(home.local_llm.model_file)
        embedder = UseEmbedder()
        scored = await score(data, made.cues, settings, embedder, scratch)
    rows = acceptance(data, made.cues)
    quiet_cued = sum(len(q["cued"]) for q in scored["quiet"])
    report = {
        "name": options.name, "at": time.strftime("%Y-%m-%d %H:%M:%S"), "model": source,
        "overrides": list(options.overrides),
        "cue_threshold": settings.memory.cue_threshold, "cue_limit": settings.memory.cue_limit,
        "call_seconds": made.call_seconds,
        "splits": {s: summary(rows, scored, s) for s in ("dev", "test", "all")},
        "quiet_cued": quiet_cued, "memories": rows, **scored,
        "cues": {t: c for t, c in made.cues.items() if c},
    }  # fmt: skip
    (folder / "cues.json").write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    console.print(
        table(report, f"cues — {options.name} (threshold {settings.memory.cue_threshold})")
    )
    for split in ("dev", "test"):
        kinds = report["splits"][split]["kinds"]
        line = ", ".join(f"{k} {v['before']}→{v['after']}/{v['probes']}" for k, v in kinds.items())
        s = report["splits"][split]
        console.print(
            f"{split}: {line}; lost {s['lost']}; other memories a cue brought {s['wrong']}"
        )
    if made.call_seconds:
        per = sum(made.call_seconds) / len(made.call_seconds)
        console.print(f"{len(made.call_seconds)} cue calls, {per:.1f} s each on average")
    console.print(f"run written to {folder}")
    return folder
