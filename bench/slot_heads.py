"""The slot heads (``memory.slot_heads``): trained on memories labelled outside the project
(``bench/data/slot_kinds/*.jsonl``: {text, kinds}), scored by five-fold cross-validation per
attribute beside the statement patterns (``memory.slot_kinds``) on the same memories — the
patterns were not written from them — and the union of the two. Run by ``hearth bench kinds``;
``--train`` writes the shipped weights.
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

from memory import slot_kinds
from memory.slot_heads import ATTRIBUTES, STATES, WEIGHTS, SlotHeads
from memory.utterance_kinds import train_binary, words
from providers.embedder import Embedder

LABELLED = Path(__file__).parent / "data" / "slot_kinds"


def training_set() -> list[tuple[str, frozenset[str]]]:
    rows = [json.loads(line) for path in sorted(LABELLED.glob("*.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]  # fmt: skip
    found = {str(r["text"]): frozenset(r["kinds"]) & set(ATTRIBUTES) for r in rows}
    return list(found.items())


def patterned(text: str) -> frozenset[str]:
    """The attributes the statement patterns find in ``text``."""
    return frozenset(slot_kinds.kinds_of(text)) & set(ATTRIBUTES)


@dataclass(frozen=True)
class AttributeScore:
    attribute: str
    labelled: int  # memories labelled with it
    others: int
    heads: tuple[float, float]  # precision, recall (cross-validated)
    patterns: tuple[float, float]
    union: tuple[float, float]

    def as_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _pr(said: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    hit = int((said & truth).sum())
    return round(hit / max(int(said.sum()), 1), 3), round(hit / max(int(truth.sum()), 1), 3)


def features(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    vectors = np.array(embedder.embed(list(texts)), dtype=np.float64)
    return np.hstack([vectors, np.array([words(t) for t in texts])])


def cross_validate(
    x: np.ndarray, labels: Sequence[frozenset[str]], texts: Sequence[str]
) -> list[AttributeScore]:
    order = np.random.default_rng(7).permutation(len(labels))
    scores = []
    for attribute in ATTRIBUTES:
        y = np.array([attribute in k for k in labels])
        predicted = np.zeros(len(y))
        for fold in range(5):
            held = order[fold::5]
            kept = np.setdiff1d(order, held)
            head = train_binary(x[kept], y[kept].tolist())
            predicted[held] = 1 / (1 + np.exp(-(x[held] @ head[:-1] + head[-1])))
        heads = predicted >= STATES
        patterns = np.array([attribute in patterned(t) for t in texts])
        scores.append(AttributeScore(attribute, int(y.sum()), int((~y).sum()), _pr(heads, y),
                                     _pr(patterns, y), _pr(heads | patterns, y)))  # fmt: skip
    return scores


def fit(embedder: Embedder, x: np.ndarray, labels: Sequence[frozenset[str]]) -> SlotHeads:
    """The shipped heads: each attribute's logistic regression on every labelled memory."""
    return SlotHeads(embedder.name, np.array([
        train_binary(x, [a in k for k in labels]) for a in ATTRIBUTES
    ]))  # fmt: skip


def train(
    embedder: Embedder, console: Console, write: bool
) -> tuple[SlotHeads, list[AttributeScore]] | None:
    items = training_set()
    if not items:
        return None
    texts = [t for t, _ in items]
    labels = [k for _, k in items]
    x = features(embedder, texts)
    scores = cross_validate(x, labels, texts)
    heads = fit(embedder, x, labels)
    if write:
        heads.save(WEIGHTS)
        console.print(f"weights written: {WEIGHTS} ({WEIGHTS.stat().st_size} bytes)")
    print_scores(scores, len(items), console)
    return heads, scores


def show(pr: tuple[float, float]) -> str:
    return f"{pr[0]:.2f} / {pr[1]:.2f}"


def print_scores(scores: Sequence[AttributeScore], total: int, console: Console) -> None:
    table = Table(title=f"slot heads, 5-fold cross-validation on {total} labelled memories")
    for column in ("attribute", "labelled", "heads P / R", "patterns P / R", "union P / R"):
        table.add_column(column)
    for s in scores:
        table.add_row(s.attribute, str(s.labelled), show(s.heads), show(s.patterns),
                      show(s.union))  # fmt: skip
    console.print(table)
