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

from bench import text_heads
from bench.text_heads import held_out, pr, show
from memory import slot_kinds
from memory.slot_heads import ATTRIBUTES, STATES, WEIGHTS
from memory.text_heads import TextHeads
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


def cross_validate(
    x: np.ndarray, labels: Sequence[frozenset[str]], texts: Sequence[str]
) -> list[AttributeScore]:
    scores = []
    for attribute in ATTRIBUTES:
        y = np.array([attribute in k for k in labels])
        heads = held_out(x, y) >= STATES
        patterns = np.array([attribute in patterned(t) for t in texts])
        scores.append(AttributeScore(attribute, int(y.sum()), int((~y).sum()), pr(heads, y),
                                     pr(patterns, y), pr(heads | patterns, y)))  # fmt: skip
    return scores


def fit(embedder: Embedder, x: np.ndarray, labels: Sequence[frozenset[str]]) -> TextHeads:
    """The shipped heads: each attribute's logistic regression on every labelled memory."""
    return text_heads.fit(embedder, ATTRIBUTES, x, [[a in k for k in labels] for a in ATTRIBUTES])


def train(
    embedder: Embedder, console: Console, write: bool
) -> tuple[TextHeads, list[AttributeScore]] | None:
    items = training_set()
    if not items:
        return None
    texts = [t for t, _ in items]
    labels = [k for _, k in items]
    x = text_heads.features(embedder, texts)
    scores = cross_validate(x, labels, texts)
    heads = fit(embedder, x, labels)
    if write:
        heads.save(WEIGHTS)
        console.print(f"weights written: {WEIGHTS} ({WEIGHTS.stat().st_size} bytes)")
    print_scores(scores, len(items), console)
    return heads, scores


def print_scores(scores: Sequence[AttributeScore], total: int, console: Console) -> None:
    table = Table(title=f"slot heads, 5-fold cross-validation on {total} labelled memories")
    for column in ("attribute", "labelled", "heads P / R", "patterns P / R", "union P / R"):
        table.add_column(column)
    for s in scores:
        table.add_row(s.attribute, str(s.labelled), show(s.heads), show(s.patterns),
                      show(s.union))  # fmt: skip
    console.print(table)
