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

from bench.slot_heads import features, show
from memory.class_heads import CLASSES, SURE, UNLIKELY, WEIGHTS, ClassHeads
from memory.utterance_kinds import train_binary
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


def _pr(said: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    hit = int((said & truth).sum())
    return round(hit / max(int(said.sum()), 1), 3), round(hit / max(int(truth.sum()), 1), 3)


def _rule(cls: str, text: str) -> bool:
    """What the rules alone say: a liking word; a one-off (not recurring) date."""
    if cls == "preference":
        return bool(tag_rules.LIKING.search(text))
    return not dates.recurring(text) and bool(tag_rules.WHEN.search(text))


def cross_validate(x: np.ndarray, labels: Sequence[str], texts: Sequence[str]) -> list[ClassScore]:
    order = np.random.default_rng(7).permutation(len(labels))
    scores = []
    for cls in CLASSES:
        y = np.array([label == cls for label in labels])
        predicted = np.zeros(len(y))
        for fold in range(5):
            held = order[fold::5]
            kept = np.setdiff1d(order, held)
            head = train_binary(x[kept], y[kept].tolist())
            predicted[held] = 1 / (1 + np.exp(-(x[held] @ head[:-1] + head[-1])))
        rule = np.array([_rule(cls, t) for t in texts])
        denied = float(((predicted < UNLIKELY) & y).sum() / max(int(y.sum()), 1))
        scores.append(ClassScore(cls, int(y.sum()), int((~y).sum()), _pr(predicted >= SURE, y),
                                 round(denied, 3), _pr(rule, y)))  # fmt: skip
    return scores


def train(
    embedder: Embedder, console: Console, write: bool
) -> tuple[ClassHeads, list[ClassScore]] | None:
    items = training_set()
    if not items:
        return None
    texts = [t for t, _ in items]
    labels = [c for _, c in items]
    x = features(embedder, texts)
    scores = cross_validate(x, labels, texts)
    heads = ClassHeads(embedder.name, np.array([
        train_binary(x, [label == cls for label in labels]) for cls in CLASSES
    ]))  # fmt: skip
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
