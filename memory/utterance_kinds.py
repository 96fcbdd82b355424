"""What the person just did, once per utterance: told a fact to remember, asked about memory,
asked for something, commanded the device, or chatted.

One component decides it for the reply (what kind of answer and whether a reminder is due), for
the read path (nothing to recall for a command) and for the write path (only statements become
memory candidates). It is learned, not a word list: a softmax regression on the shared
embedder's sentence vectors (the read path embeds the utterance anyway, so the decision costs a
512×5 product), trained by ``train`` on labelled utterances nobody here wrote
(``bench/data/utterance_kinds/``; ``python -m memory.utterance_kinds train``) and shipped as a
small weight file beside this module. It is scored on a frozen set in the same way
(``hearth bench kinds``).

A second head reads whether the utterance says something *lasting* about the household (a
name, a condition, a habit, a dated plan, a change or a cancellation) as opposed to a passing
remark (「今天开了三个钟头的会」「我去洗个澡」), a request or a question — including a request that
carries a lasting fact (「我老婆怀孕了，晚饭做点啥好」). The write path uses it to decide what may
become a memory; it is trained on the utterances labelled for it
(``train-lasting-*.jsonl``), with commands and chit-chat of the other files as negatives (they
are never lasting).

The weights belong to one embedder: a vector of another (a hosted embeddings endpoint) gets
``None`` — callers then behave as before this component existed.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

WEIGHTS = Path(__file__).with_name("utterance_kinds.npz")
Matrix = npt.NDArray[np.float64]


class UtteranceKind(enum.StrEnum):
    STATEMENT = "statement"  # a fact, plan, change, correction or cancellation to remember
    MEMORY_QUESTION = "memory_question"  # asks what the household told before
    REQUEST = "request"  # advice, plans, look-ups, tasks, reminders, timers
    COMMAND = "command"  # controls the device itself (volume, stop, brightness)
    CHITCHAT = "chitchat"  # greetings, thanks, feelings, small talk, fragments


KINDS: tuple[UtteranceKind, ...] = tuple(UtteranceKind)


@dataclass(frozen=True, slots=True)
class KindReading:
    kind: UtteranceKind
    confidence: float  # the softmax probability of ``kind``
    scores: dict[UtteranceKind, float]
    lasting: float | None = None  # probability it says something lasting (None: no head)

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "confidence": round(self.confidence, 3),
            "scores": {k.value: round(v, 3) for k, v in self.scores.items()},
            "lasting": None if self.lasting is None else round(self.lasting, 3),
        }


@dataclass(frozen=True)
class KindModel:
    """Softmax regression weights for one embedder's vectors."""

    embedder: str
    weights: Matrix  # (dim, kinds)
    bias: Matrix  # (kinds,)
    lasting: Matrix | None = None  # (dim + 1,): the lasting head's weights, bias last

    def read(self, vector: Sequence[float]) -> KindReading:
        x = np.asarray(vector, dtype=np.float64)
        probs = _softmax((x @ self.weights + self.bias)[None, :])[0]
        best = int(np.argmax(probs))
        scores = {kind: float(p) for kind, p in zip(KINDS, probs, strict=True)}
        lasting = None
        if self.lasting is not None:
            lasting = float(_sigmoid(np.array([x @ self.lasting[:-1] + self.lasting[-1]]))[0])
        return KindReading(KINDS[best], float(probs[best]), scores, lasting)

    def with_lasting(self, head: Matrix) -> KindModel:
        return KindModel(self.embedder, self.weights, self.bias, head)

    def save(self, path: Path) -> None:
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "weights": self.weights.astype(np.float32),
            "bias": self.bias.astype(np.float32),
            "meta": np.array(json.dumps({"embedder": self.embedder, "kinds": list(KINDS)})),
        }
        if self.lasting is not None:
            arrays["lasting"] = self.lasting.astype(np.float32)
        np.savez_compressed(path, allow_pickle=False, **arrays)

    @classmethod
    def load(cls, path: Path) -> KindModel:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            if meta["kinds"] != [k.value for k in KINDS]:
                raise ValueError(f"{path}: kinds {meta['kinds']} are not {list(KINDS)}")
            lasting = data["lasting"].astype(np.float64) if "lasting" in data else None
            return cls(meta["embedder"], data["weights"].astype(np.float64),
                       data["bias"].astype(np.float64), lasting)  # fmt: skip


@cache
def shipped() -> KindModel | None:
    """The weights shipped with Hearth (None when the file is absent)."""
    return KindModel.load(WEIGHTS) if WEIGHTS.is_file() else None


def classify(vector: Sequence[float], embedder: str) -> KindReading | None:
    """The kind of the utterance whose ``embedder`` vector this is; None when the shipped
    weights were trained for another embedder (or are absent)."""
    model = shipped()
    if model is None or model.embedder != embedder:
        return None
    return model.read(vector)


def train(
    vectors: Matrix, labels: Sequence[UtteranceKind], embedder: str, l2: float = 1e-4,
    epochs: int = 4000, rate: float = 2.0,
) -> KindModel:  # fmt: skip
    """Full-batch gradient descent on the cross-entropy with an L2 penalty; classes weighted
    by their inverse frequency, so a kind with fewer examples is not drowned."""
    x = np.asarray(vectors, dtype=np.float64)
    y = np.array([KINDS.index(label) for label in labels])
    onehot = np.eye(len(KINDS))[y]
    counts = onehot.sum(axis=0)
    weight = (len(y) / (len(KINDS) * np.maximum(counts, 1)))[y][:, None]
    w = np.zeros((x.shape[1], len(KINDS)))
    b = np.zeros(len(KINDS))
    for _ in range(epochs):
        probs = _softmax(x @ w + b)
        grad = (probs - onehot) * weight / len(y)
        w -= rate * (x.T @ grad + l2 * w)
        b -= rate * grad.sum(axis=0)
    return KindModel(embedder, w, b)


def train_binary(
    vectors: Matrix, lasting: Sequence[bool], l2: float = 1e-4, epochs: int = 3000,
    rate: float = 2.0,
) -> Matrix:  # fmt: skip
    """A binary head (the lasting head; the memory safety head): logistic regression, both
    classes weighted equally."""
    x = np.asarray(vectors, dtype=np.float64)
    y = np.asarray(lasting, dtype=np.float64)
    share = min(max(float(y.mean()), 1e-3), 1 - 1e-3)
    weight = np.where(y == 1, 0.5 / share, 0.5 / (1 - share))
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(epochs):
        grad = (_sigmoid(x @ w + b) - y) * weight / len(y)
        w -= rate * (x.T @ grad + l2 * w)
        b -= rate * float(grad.sum())
    head: Matrix = np.append(w, b)
    return head


def _sigmoid(z: Matrix) -> Matrix:
    result: Matrix = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return result


def _softmax(logits: Matrix) -> Matrix:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    result: Matrix = shifted / shifted.sum(axis=1, keepdims=True)
    return result
