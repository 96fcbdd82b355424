"""``hearth bench kinds``: the utterance-kind classifier (``memory.utterance_kinds``), its lasting
head and the memory safety head (``memory.memory_class``), trained on the labelled training sets
(``bench/data/utterance_kinds/train-*.jsonl``, ``bench/data/memory_classes/``) and scored on sets
they were not trained on — five-fold cross-validation on the training utterances, then every
other labelled set given (the frozen set, the "what is heard" requests), per kind: precision,
recall, and the confusion table; the safety head on the external households' memories.
``--train`` writes the shipped weights (a function of the training files and the embedder: the
same command reproduces them).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from bench import class_heads, slot_heads
from bench.results import Figure
from memory.memory_class import SURE, SafetyHead
from memory.memory_class import WEIGHTS as SAFETY_WEIGHTS
from memory.utterance_kinds import (
    KINDS,
    WEIGHTS,
    KindModel,
    UtteranceKind,
    train,
    train_binary,
    words,
)
from providers.embedder import Embedder

DATA = Path(__file__).parent / "data"
TRAINING = DATA / "utterance_kinds"  # every train-*.jsonl in it
FROZEN = (DATA / "frozen" / "kinds-2026-12-03.jsonl", DATA / "frozen" / "heard-2026-12-03.json")


@dataclass(frozen=True)
class Labelled:
    text: str
    kind: UtteranceKind
    lasting: bool | None = None  # labelled only in the lasting files

    @property
    def lasting_label(self) -> bool | None:
        """Its lasting label; commands and chit-chat are never lasting."""
        if self.lasting is not None:
            return self.lasting
        return False if self.kind in (UtteranceKind.COMMAND, UtteranceKind.CHITCHAT) else None


def load(path: Path) -> list[Labelled]:
    """A JSONL of {text, kind} or a "what is heard" set (its requests' ``utterance_kind``)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        return [Labelled(r["text"], _kind(r["utterance_kind"])) for r in data["requests"]]
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Labelled(r["text"], _kind(r["kind"]), r.get("lasting")) for r in rows]


def _kind(label: str) -> UtteranceKind:
    """A kind as a set spells it (「chit_chat」 and 「chitchat」 are one kind)."""
    return UtteranceKind(label.replace("_", "") if label == "chit_chat" else label)


@dataclass(frozen=True)
class Score:
    name: str
    total: int
    right: int
    confusion: Counter[tuple[UtteranceKind, UtteranceKind]]  # (expected, predicted)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def per_kind(self, kind: UtteranceKind) -> tuple[float, float, int]:
        """(precision, recall, support) of ``kind``."""
        tp = self.confusion[(kind, kind)]
        predicted = sum(n for (_, p), n in self.confusion.items() if p == kind)
        support = sum(n for (e, _), n in self.confusion.items() if e == kind)
        return (tp / predicted if predicted else 0.0, tp / support if support else 0.0, support)

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name, "total": self.total, "accuracy": round(self.accuracy, 4),
            "per_kind": {k.value: dict(zip(("precision", "recall", "support"),
                                           self.per_kind(k), strict=True)) for k in KINDS},
            "confusion": [[e.value, p.value, n] for (e, p), n in sorted(self.confusion.items())],
        }  # fmt: skip


def score(name: str, model: KindModel, items: Sequence[Labelled], vectors: np.ndarray) -> Score:
    confusion: Counter[tuple[UtteranceKind, UtteranceKind]] = Counter()
    for item, vector in zip(items, vectors, strict=True):
        confusion[(item.kind, model.read(vector.tolist()).kind)] += 1
    right = sum(n for (e, p), n in confusion.items() if e == p)
    return Score(name, len(items), right, confusion)


def cross_validate(
    items: Sequence[Labelled], vectors: np.ndarray, embedder: str, folds: int = 5
) -> Score:
    order = np.random.default_rng(7).permutation(len(items))
    confusion: Counter[tuple[UtteranceKind, UtteranceKind]] = Counter()
    for fold in range(folds):
        held = set(order[fold::folds].tolist())
        kept = [i for i in range(len(items)) if i not in held]
        model = train(vectors[kept], [items[i].kind for i in kept], embedder)
        for i in sorted(held):
            confusion[(items[i].kind, model.read(vectors[i].tolist()).kind)] += 1
    right = sum(n for (e, p), n in confusion.items() if e == p)
    return Score(f"{folds}-fold cross-validation", len(items), right, confusion)


@dataclass(frozen=True)
class HeadScore:
    name: str
    total: int
    accuracy: float
    precision: float
    recall: float  # of lasting utterances, at 0.5
    recall_at_low: float  # of lasting utterances, at LOW (what the write path rejects below)

    def as_json(self) -> dict[str, object]:
        return {k: round(v, 4) if isinstance(v, float) else v
                for k, v in dataclasses.asdict(self).items()}  # fmt: skip


LOW = 0.1  # the write path rejects a fact whose utterance reads below this (memory.utterance_kinds)


def lasting_model(
    items: Sequence[Labelled], vectors: np.ndarray
) -> tuple[np.ndarray, HeadScore] | None:
    """The lasting head trained on the labelled items, with its five-fold cross-validation."""
    index = [i for i, item in enumerate(items) if item.lasting_label is not None]
    if not index:
        return None
    x = vectors[index]
    y = np.array([bool(items[i].lasting_label) for i in index])
    return binary_model("lasting", x, y)


ACTING = "acts-*.jsonl"  # {text, kind, acts}: statements and requests labelled for the acts head


def acts_training_set() -> list[tuple[str, bool]]:
    rows = [json.loads(line) for path in sorted(TRAINING.glob(ACTING))
            for line in path.read_text().splitlines() if line.strip()]  # fmt: skip
    return list({r["text"]: bool(r["acts"]) for r in rows}.items())


def acts_model(
    embedder: Embedder, known: dict[str, np.ndarray]
) -> tuple[np.ndarray, HeadScore] | None:
    """The acts head trained on its labelled utterances, with its five-fold cross-validation
    (``known``: vectors embedded already, by text)."""
    items = acts_training_set()
    if not items:
        return None
    texts = [t for t, _ in items]
    new = [t for t in texts if t not in known]
    known = {**known, **dict(zip(new, embed_all(embedder, new), strict=True))} if new else known
    x = np.hstack([np.array([known[t] for t in texts]), np.array([words(t) for t in texts])])
    return binary_model("acts", x, np.array([y for _, y in items]))


def binary_model(name: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, HeadScore]:
    """A binary head trained on (x, y), with its five-fold cross-validation."""
    order = np.random.default_rng(7).permutation(len(y))
    predicted = np.zeros(len(y))
    for fold in range(5):
        held = order[fold::5]
        kept = np.setdiff1d(np.arange(len(y)), held)
        head = train_binary(x[kept], y[kept].tolist())
        predicted[held] = 1 / (1 + np.exp(-(x[held] @ head[:-1] + head[-1])))
    said = predicted >= 0.5
    true_positive = int((said & y).sum())
    score = HeadScore(
        f"{name}, 5-fold cross-validation", len(y), float((said == y).mean()),
        true_positive / max(int(said.sum()), 1), true_positive / max(int(y.sum()), 1),
        float(((predicted >= LOW) & y).sum() / max(int(y.sum()), 1)),
    )  # fmt: skip
    return train_binary(x, y.tolist()), score


def embed_all(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    return np.array(embedder.embed(list(texts)), dtype=np.float64)


def print_score(result: Score, console: Console) -> None:
    table = Table(title=f"{result.name}: {result.right}/{result.total} ({result.accuracy:.1%})")
    for column in ("kind", "precision", "recall", "n", "taken for"):
        table.add_column(column)
    for kind in KINDS:
        precision, recall, support = result.per_kind(kind)
        wrong = Counter({p: n for (e, p), n in result.confusion.items() if e == kind and p != kind})
        table.add_row(kind.value, f"{precision:.2f}", f"{recall:.2f}", str(support),
                      ", ".join(f"{p.value} {n}" for p, n in wrong.most_common()))  # fmt: skip
    console.print(table)


def training_set() -> list[Labelled]:
    return [item for path in sorted(TRAINING.glob("train-*.jsonl")) for item in load(path)]


_SAID = {"memory_question": "memory question", "chitchat": "chit-chat"}


def figures(cross: Score, lasting: HeadScore | None) -> list[Figure]:
    """The results table's row (bench.results): the cross-validation on the training set,
    accuracy and each kind's precision / recall, and the lasting head's. (The frozen sets' first
    look is a row written by hand: it reads the mistakes.)"""
    per_kind = ", ".join(
        f"{_SAID.get(k.value, k.value)} {p:.2f}/{r:.2f}"
        for k in KINDS
        for p, r, _ in [cross.per_kind(k)]
    )
    figure = f"utterance kinds, {cross.name} on the {cross.total:,} training utterances"
    value = f"{cross.right}/{cross.total} ({cross.accuracy:.1%})".replace("%", " %")
    value += f"; precision/recall: {per_kind}"
    if lasting is not None:
        figure += f"; the lasting head on the {lasting.total:,} labelled for it"
        value += (
            f". Lasting: accuracy {lasting.accuracy:.1%}".replace("%", " %")
            + f", precision {lasting.precision:.2f}, recall {lasting.recall:.2f} at 0.5, "
            f"recall {lasting.recall_at_low:.3g} at {LOW}"
        )
    return [Figure(figure, value)]


MEMORY_CLASSES = DATA / "memory_classes"  # every *.jsonl in it: {text, cls}
# labelled memories of read-path sets whose one look is done: more training memories
LOOKED_AT = tuple(
    DATA / "frozen" / name
    for name in ("heard-2026-12-03.json", "recall-2026-12-03.json", "heard-b-2026-12-03.json")
)
EXTERNAL_HOUSEHOLDS = Path(__file__).parents[2] / "shared" / "data" / "external" / "households.json"


def _memories_of(data: object) -> list[tuple[str, bool]]:
    """Every {text, cls} memory in a read-path set, as (text, is a constraint)."""
    found: list[tuple[str, bool]] = []
    if isinstance(data, dict):
        if isinstance(data.get("text"), str) and "cls" in data:
            found.append((data["text"], data["cls"] == "safety"))
        for value in data.values():
            found += _memories_of(value)
    elif isinstance(data, list):
        for value in data:
            found += _memories_of(value)
    return found


def memory_training_set() -> list[tuple[str, bool]]:
    rows = [json.loads(line) for path in sorted(MEMORY_CLASSES.glob("*.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]  # fmt: skip
    found = [(r["text"], r["cls"] == "safety") for r in rows]
    for path in LOOKED_AT:
        if path.is_file():
            found += _memories_of(json.loads(path.read_text()))
    return list(dict(found).items())


@dataclass(frozen=True)
class SafetyScore:
    name: str
    constraints: int
    found: int  # constraints read at or above memory_class.SURE
    others: int
    taken: int  # other memories read at or above SURE

    def as_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def safety_model(
    embedder: Embedder, console: Console, write: bool
) -> tuple[SafetyHead, SafetyScore | None]:
    """The memory safety head trained on the labelled memories; scored on the external
    households' memories (never trained on) when they are beside the checkout."""
    items = memory_training_set()
    head = SafetyHead(embedder.name, train_binary(
        embed_all(embedder, [t for t, _ in items]), [y for _, y in items]
    ))  # fmt: skip
    if write:
        head.save(SAFETY_WEIGHTS)
        console.print(f"weights written: {SAFETY_WEIGHTS} ({SAFETY_WEIGHTS.stat().st_size} bytes)")
    if not EXTERNAL_HOUSEHOLDS.is_file():
        return head, None
    held = _memories_of(json.loads(EXTERNAL_HOUSEHOLDS.read_text()))
    read = [head.read(v) for v in embed_all(embedder, [t for t, _ in held]).tolist()]
    result = SafetyScore(
        f"memory safety head on the {len(held)} external memories (trained on {len(items)})",
        sum(y for _, y in held), sum(y and r >= SURE for (_, y), r in zip(held, read, strict=True)),
        sum(not y for _, y in held),
        sum(not y and r >= SURE for (_, y), r in zip(held, read, strict=True)),
    )  # fmt: skip
    console.print(result.as_json())
    return head, result


def main(
    embedder: Embedder, console: Console, write: bool, sets: Sequence[Path], out: Path | None
) -> tuple[list[Score], HeadScore | None]:
    """The scores: the cross-validation first, then each set's; and the lasting head's."""
    items = training_set()
    vectors = embed_all(embedder, [i.text for i in items])
    results = [cross_validate(items, vectors, embedder.name)]
    model = train(vectors, [i.kind for i in items], embedder.name)
    lasting = lasting_model(items, vectors)
    if lasting is not None:
        model = model.with_lasting(lasting[0])
        console.print(lasting[1].as_json())
    acts = acts_model(embedder, {i.text: v for i, v in zip(items, vectors, strict=True)})
    if acts is not None:
        model = model.with_acts(acts[0])
        console.print(acts[1].as_json())
    if write:
        model.save(WEIGHTS)
        console.print(f"weights written: {WEIGHTS} ({WEIGHTS.stat().st_size} bytes)")
    safety_model(embedder, console, write)
    slot_heads.train(embedder, console, write)
    class_heads.train(embedder, console, write)
    for path in sets:
        held = load(path)
        results.append(score(path.name, model, held, embed_all(embedder, [i.text for i in held])))
    for result in results:
        print_score(result, console)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        rows = [r.as_json() for r in results] + ([lasting[1].as_json()] if lasting else [])
        out.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    return results, (lasting[1] if lasting else None)
