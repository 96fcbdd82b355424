"""``hearth bench readpath``: latency of the whole read path and of each step, recall@5, noise
cleanliness, and the same queries through mem0's own ``Memory.search`` on the same data.

Stores: N persons × M memories sampled from a pool of unique synthetic household memories
(bench/corpus.py). Pool vectors are embedded once and cached under data_dir/bench; every *query*
is embedded for real on every call, as on a device turn.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.corpus import NOISE, Item, unique_items
from bench.mem0_side import Mem0Side
from bench.results import Figure
from config.settings import HearthSettings
from memory import entities
from memory.importer import MemoryLine
from memory.schema import CUED_CLASSES, Memory, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath

console = Console()
POOL = 30000
STEPS = ("embed", "round1", "round2", "render", "total")


def pool_vectors(settings: HearthSettings, embedder: UseEmbedder, items: list[Item]) -> np.ndarray:
    folder = settings.data_dir / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1("\n".join(str(i.memory["text"]) for i in items).encode()).hexdigest()[:12]
    path = folder / f"pool-{embedder.name}-{digest}.npy"
    if path.exists():
        loaded: np.ndarray = np.load(path)
        return loaded
    vectors = np.zeros((len(items), embedder.dim), dtype=np.float32)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("embedding the memory pool (cached afterwards)", total=len(items))
        for start in range(0, len(items), 256):
            chunk = items[start : start + 256]
            vectors[start : start + len(chunk)] = embedder.embed(
                [str(i.memory["text"]) for i in chunk]
            )
            progress.advance(task, len(chunk))
    np.save(path, vectors)
    return vectors


@dataclass
class Dataset:
    persons: list[PersonId]
    members: dict[PersonId, list[int]]  # pool indexes per person


def build_store(store: EdgeMemoryStore, items: list[Item], vectors: np.ndarray, persons: int,
                per_person: int, rng: random.Random, cues: int = 0) -> Dataset:  # fmt: skip
    """``cues``: that many "when it matters" cues for each constraint and preference, as the
    write path stores them — each another pool item's question with that item's vector (real
    household sentences in the embedder's space, no embedding needed)."""
    data = Dataset([PersonId(f"person-{n:02d}") for n in range(persons)], {})
    by_slot: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        by_slot.setdefault(item.slot, []).append(index)
    slots = list(by_slot)
    if per_person > len(slots):
        raise ValueError(
            f"the pool has only {len(slots)} slots for {per_person} memories per person"
        )
    for person in data.persons:
        chosen = [rng.choice(by_slot[slot]) for slot in rng.sample(slots, per_person)]
        data.members[person] = chosen
        for start in range(0, per_person, 512):
            batch = chosen[start : start + 512]
            memories = [_memory(items[i], person) for i in batch]
            store.upsert(memories, [vectors[i].tolist() for i in batch])
            for memory in memories if cues else ():
                if memory.cls in CUED_CLASSES:
                    picked = rng.sample(range(len(items)), cues)
                    store.put_cues(person, memory, [items[i].question for i in picked],
                                   [vectors[i].tolist() for i in picked])  # fmt: skip
    return data


def _memory(item: Item, person: PersonId) -> Memory:
    return MemoryLine.model_validate(item.memory).to_memory(
        person, entities.names_in(str(item.memory["text"]))
    )


def make_queries(items: list[Item], data: Dataset, count: int, rng: random.Random
                 ) -> list[tuple[PersonId, str, str | None]]:  # fmt: skip
    queries: list[tuple[PersonId, str, str | None]] = []
    for n in range(count):
        person = rng.choice(data.persons)
        if n % 7 == 6:
            queries.append((person, rng.choice(NOISE), None))
            continue
        target = items[rng.choice(data.members[person])]
        queries.append((person, target.question, target.slot))
    return queries


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_hearth(read_path: ReadPath, queries: list[tuple[PersonId, str, str | None]],
                     slot_of: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    steps: dict[str, list[float]] = {s: [] for s in STEPS}
    hits = labelled = noisy = noise = 0
    trips: list[int] = []
    for person, question, target in queries:
        recall = await read_path.recall(person, question)
        for step in STEPS:
            steps[step].append(recall.timings_ms.get(step, 0.0))
        trips.append(recall.round_trips)
        recalled = [r.memory.text for r in recall.safety + recall.related]
        ranked = sorted(recall.safety + recall.related, key=lambda r: r.score, reverse=True)
        if target is None:
            noise += 1
            noisy += bool(recalled)
        else:
            labelled += 1
            hits += target in [slot_of.get(r.memory.text) for r in ranked[:5]]
    return {"steps": steps, "recall5": hits / max(labelled, 1), "labelled": labelled,
            "noise_clean": 1 - noisy / max(noise, 1), "noise": noise,
            "max_round_trips": max(trips)}  # fmt: skip


def run_mem0(embedder: UseEmbedder, items: list[Item], vectors: np.ndarray, data: Dataset,
             queries: list[tuple[PersonId, str, str | None]], folder: Path,
             slot_of: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    """mem0 1.0.x on the same memories (loaded without an LLM) and the same queries."""
    mem0 = Mem0Side(embedder, folder)
    for person, members in data.members.items():
        mem0.insert(person, [str(items[i].memory["text"]) for i in members], vectors[members])
    latencies: list[float] = []
    hits = labelled = 0
    for person, question, target in queries:
        started = time.perf_counter()
        found = mem0.search(person, question, limit=5)
        latencies.append((time.perf_counter() - started) * 1000)
        if target is not None:
            labelled += 1
            hits += target in [slot_of.get(text) for text in found]
    return {"latencies": latencies, "recall5": hits / max(labelled, 1)}


async def main(settings: HearthSettings, scales: list[int], persons: int, queries: int,
               mem0_queries: int, seed: int, cues: int = 0) -> list[Figure]:  # fmt: skip
    embedder = UseEmbedder(settings.memory.embedder_threads, settings.memory.embedder_precision)
    items = unique_items(POOL, seed)
    slot_of = {str(i.memory["text"]): i.slot for i in items}  # memory text → fact slot
    vectors = pool_vectors(settings, embedder, items)
    rows = []
    for per_person in scales:
        rng = random.Random(seed + per_person)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            store = EdgeMemoryStore(folder / "edge", embedder.dim)
            started = time.perf_counter()
            data = build_store(store, items, vectors, persons, per_person, rng, cues)
            points = store._shard.info().points_count
            load_s = time.perf_counter() - started
            # what `hearth up` does at start-up with the embedded store (memory.index_min_points)
            indexed = store.index(settings.memory.index_min_points)
            qs = make_queries(items, data, queries, rng)
            read_path = ReadPath(embedder, store, settings.memory)
            await read_path.recall(data.persons[0], "预热")
            ours = await run_hearth(read_path, qs, slot_of)
            ours["index_s"] = indexed[1] if indexed else None
            ours["points"] = int(points)
            store.close()
            theirs = (await asyncio.to_thread(run_mem0, embedder, items, vectors, data,
                                              qs[:mem0_queries], folder, slot_of)) if mem0_queries else None  # fmt: skip
        rows.append((per_person, load_s, ours, theirs))
    _report(rows, persons, queries, mem0_queries)
    for per_person, _load, ours, _theirs in rows:
        console.print(f"{persons}×{per_person}: {ours['points']} points in the store "
                      f"({cues} cues per constraint and preference)")  # fmt: skip
    return figures(rows, persons, mem0_queries, cues)


def figures(rows: list[tuple[int, float, dict[str, Any], dict[str, Any] | None]], persons: int,
            mem0_queries: int, cues: int) -> list[Figure]:  # fmt: skip
    """The results table's rows (bench.results): latency, recall and noise per scale, and the
    speed-up over mem0 where it ran."""
    found: list[Figure] = []
    with_cues = f"{cues} cues" if cues else "no cues"
    for per_person, _load, ours, theirs in rows:
        total = ours["steps"]["total"]
        noise = ours["noise_clean"]
        clean = "noise turns clean" if noise == 1 else f"noise turns {noise:.3f} clean"
        found.append(Figure(
            f"read path at {persons} persons × {per_person:,} memories with {with_cues} per "
            f"constraint and preference ({ours['points']:,} points), p50 / p99",
            f"{pct(total, .5):.2f} ms / {pct(total, .99):.1f} ms; recall@5 "
            f"{ours['recall5']:.3f}, {clean}",
        ))  # fmt: skip
        if theirs:
            ours_p50, mem0_p50 = pct(total[:mem0_queries], 0.5), pct(theirs["latencies"], 0.5)
            found.append(Figure(
                f"speed-up over mem0's search on the same data and vectors "
                f"({persons}×{per_person:,})",
                f"{mem0_p50 / ours_p50:.0f}× (mem0 {mem0_p50:,.0f} ms p50); recall@5 "
                f"{ours['recall5']:.3f} vs {theirs['recall5']:.3f}",
            ))  # fmt: skip
    return found


def _report(rows: list[tuple[int, float, dict[str, Any], dict[str, Any] | None]], persons: int,
            queries: int, mem0_queries: int) -> None:  # fmt: skip
    table = Table(
        title=f"hearth bench readpath — {persons} persons, {queries} queries, USE + Qdrant Edge"
    )
    table.add_column("memories")
    table.add_column("step")
    for col in ("p50 ms", "p95 ms", "p99 ms", "mean ms"):
        table.add_column(col, justify="right")
    for per_person, _load, ours, _theirs in rows:
        for step in STEPS:
            values = ours["steps"][step]
            table.add_row(f"{persons}×{per_person}", step, f"{pct(values, .5):.3f}",
                          f"{pct(values, .95):.3f}", f"{pct(values, .99):.3f}",
                          f"{statistics.fmean(values):.3f}")  # fmt: skip
    console.print(table)
    quality = Table(
        title="quality and comparison with mem0 Memory.search (same data, same queries)"
    )
    for col in ("memories", "index s", "recall@5 (labelled)", "noise turns clean", "max round trips",
                "mem0 p50 ms", "mem0 recall@5", "Hearth p50 ms (same queries)", "speed-up"):  # fmt: skip
        quality.add_column(col, justify="right")
    for per_person, _load, ours, theirs in rows:
        total = ours["steps"]["total"]
        if theirs:
            ours_p50 = pct(total[:mem0_queries], 0.5)
            mem0_p50 = pct(theirs["latencies"], 0.5)
            extra = [f"{mem0_p50:.2f}", f"{theirs['recall5']:.3f}", f"{ours_p50:.2f}",
                     f"{mem0_p50 / ours_p50:.1f}×"]  # fmt: skip
        else:
            extra = ["-", "-", "-", "-"]
        index = "-" if ours["index_s"] is None else f"{ours['index_s']:.1f}"
        quality.add_row(f"{persons}×{per_person}", index, f"{ours['recall5']:.3f} ({ours['labelled']})",
                        f"{ours['noise_clean']:.3f} ({ours['noise']})", str(ours["max_round_trips"]),
                        *extra)  # fmt: skip
    console.print(quality)
