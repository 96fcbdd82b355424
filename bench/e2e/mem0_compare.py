"""The same questions through mem0 1.0.11's own ``search(limit=5)`` on the same snapshot and the
same vectors (``bench.mem0_side``), scored like Hearth's retrieval layer where it applies: the
expected memories among the five returned (mem0 has no safety group, so the group is not
checked — Hearth's score is the stricter one), a noise question passes only if nothing came back,
a QUIET question only if no safety constraint came back. Reported for the test split."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from bench.e2e.data import Question, Snapshot
from bench.e2e.scoring import Tally
from bench.mem0_side import Mem0Side
from config.settings import HearthSettings
from providers.embedder import UseEmbedder

LIMIT = 5


def mem0_retrieval(
    settings: HearthSettings, snapshot: Snapshot, questions: list[Question], today: dt.date
) -> dict[str, Tally]:
    """kind → tally of mem0's retrieval on ``questions``."""
    embedder = UseEmbedder(settings.memory.embedder_threads, settings.memory.embedder_precision)
    texts = snapshot.texts(today)
    live = {m.id for m in snapshot.memories if m.expires_in_days is None or m.expires_in_days > 0}
    stored = [texts[i] for i in texts if i in live]  # what Hearth would still recall
    safety = {texts[m.id] for m in snapshot.memories if m.cls == "safety"}
    tallies: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory(prefix="hearth-mem0-") as tmp:
        mem0 = Mem0Side(embedder, Path(tmp), "e2e")
        mem0.insert(snapshot.person, stored, embedder.embed(stored))
        for q in questions:
            found = mem0.search(snapshot.person, q.question, LIMIT)
            tallies.setdefault(q.kind, Tally()).add(_passed(q, found, texts, safety))
    return tallies


def _passed(q: Question, found: list[str], texts: dict[str, str], safety: set[str]) -> bool | None:
    if q.kind == "noise":
        return not found
    if q.kind == "quiet":
        return not any(t in safety for t in found)
    wanted = [q.constraint] if q.kind == "surface" and q.constraint else q.expect
    if not wanted:
        return None
    return all(texts[w] in found for w in wanted)
