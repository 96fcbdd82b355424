"""The class heads (``memory.class_heads``): trained on memories labelled outside the project
(``bench/data/memory_classes/*.jsonl``: {text, cls}), scored by five-fold cross-validation per
class beside the liking pattern the tag rules use (``workers.tag_rules.LIKING``) and the
recurring-schedule rule (``workers.dates.recurring``) on the same memories — neither was written
from them. Run by ``hearth bench kinds``; ``--train`` writes the shipped weights.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from bench import text_heads
from bench.text_heads import held_out, pr, show
from memory.class_heads import CLASSES, SURE, UNLIKELY, WEIGHTS
from memory.text_heads import TextHeads
from providers.embedder import Embedder
from workers import dates, tag_rules

LABELLED = Path(__file__).parent / "data" / "memory_classes"


def training_set() -> list[tuple[str, str]]:
    rows = [json.loads(line) for path in sorted(LABELLED.glob("*.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]  # fmt: skip
    return list({str(r["text"]): str(r["cls"]) for r in rows}.items())


@dataclass(frozen=True)
class ClassScore:
    cls: str
    labelled: int
    others: int
    heads: tuple[float, float]  # precision, recall at SURE (cross-validated)
    denied: float  # share of this class the head reads below UNLIKELY (wrongly denied)
    rule: tuple[float, float]  # the rule's precision, recall on the same memories

    def as_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _rule(cls: str, text: str) -> bool:
    """What the rules alone say: a liking word; a one-off (not recurring) date."""
    if cls == "preference":
        return bool(tag_rules.LIKING.search(text))
    return not dates.recurring(text) and bool(tag_rules.WHEN.search(text))


def cross_validate(x: np.ndarray, labels: Sequence[str], texts: Sequence[str]) -> list[ClassScore]:
    scores = []
    for cls in CLASSES:
        y = np.array([label == cls for label in labels])
        predicted = held_out(x, y)
        rule = np.array([_rule(cls, t) for t in texts])
        denied = float(((predicted < UNLIKELY) & y).sum() / max(int(y.sum()), 1))
        scores.append(ClassScore(cls, int(y.sum()), int((~y).sum()), pr(predicted >= SURE, y),
                                 round(denied, 3), pr(rule, y)))  # fmt: skip
    return scores


def train(
    embedder: Embedder, console: Console, write: bool
) -> tuple[TextHeads, list[ClassScore]] | None:
    items = training_set()
    if not items:
        return None
    texts = [t for t, _ in items]
    labels = [c for _, c in items]
    x = text_heads.features(embedder, texts)
    scores = cross_validate(x, labels, texts)
    heads = text_heads.fit(embedder, CLASSES, x, [[lb == cls for lb in labels] for cls in CLASSES])
    if write:
        heads.save(WEIGHTS)
        console.print(f"weights written: {WEIGHTS} ({WEIGHTS.stat().st_size} bytes)")
    table = Table(title=f"class heads, 5-fold cross-validation on {len(items)} labelled memories")
    for column in ("class", "labelled", f"heads P / R at {SURE}", f"denied < {UNLIKELY}",
                   "rule P / R"):  # fmt: skip
        table.add_column(column)
    for s in scores:
        table.add_row(s.cls, str(s.labelled), show(s.heads), f"{s.denied:.2f}", show(s.rule))
    console.print(table)
    return heads, scores
