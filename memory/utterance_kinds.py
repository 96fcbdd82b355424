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

A third head reads whether the utterance *acts*: announces or asks for something someone at home
is still to do — a plan (「礼拜天带我妈去爬山」), an errand or an instruction (「切一片给鹦鹉」), an
intention or a proposal — as opposed to a fact, a past event, a habit, a change or a look-up.
Plans are statements to the write path and actions to the reply: a constraint that concerns one
is due before it happens. The sentence vector hardly tells 「上周带老婆去海边玩了」 from 「周末带
老婆去海边」, so this head also reads the words: the utterance's character unigrams and bigrams,
hashed into ``GRAMS`` buckets (five-fold accuracy 86 % → 90 %, precision 0.70 → 0.77).
Trained on the statements and requests of the training files labelled
for it (``acts-*.jsonl``, labelled outside the project).

The weights belong to one embedder: a vector of another (a hosted embeddings endpoint) gets
``None`` — callers then behave as before this component existed.
"""

from __future__ import annotations

import enum
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
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
# a statement the acts head reads at or above this announces an action (five-fold cross-validation
# on the 2,290 labelled utterances: precision 0.77, recall 0.86; ``hearth bench kinds``)
ACTS = 0.5
GRAMS = 2048  # hashed character uni- and bigrams the acts head reads beside the vector


@dataclass(frozen=True, slots=True)
class KindReading:
    kind: UtteranceKind
    confidence: float  # the softmax probability of ``kind``
    scores: dict[UtteranceKind, float]
    lasting: float | None = None  # probability it says something lasting (None: no head)
    acts: float | None = None  # probability it announces or asks for an action to come

    @property
    def plans(self) -> bool:
        """A request, or a statement announcing an action to come (a plan, an errand, an
        intention), as the acts head reads it at ``ACTS``."""
        if self.kind is UtteranceKind.REQUEST:
            return True
        return self.kind is UtteranceKind.STATEMENT and (self.acts or 0.0) >= ACTS

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "confidence": round(self.confidence, 3),
            "scores": {k.value: round(v, 3) for k, v in self.scores.items()},
            "lasting": None if self.lasting is None else round(self.lasting, 3),
            "acts": None if self.acts is None else round(self.acts, 3),
        }


@dataclass(frozen=True)
class KindModel:
    """Softmax regression weights for one embedder's vectors."""

    embedder: str
    weights: Matrix  # (dim, kinds)
    bias: Matrix  # (kinds,)
    lasting: Matrix | None = None  # (dim + 1,): the lasting head's weights, bias last
    acts: Matrix | None = None  # (dim + GRAMS + 1,): the acts head's weights, bias last

    def read(self, vector: Sequence[float], text: str | None = None) -> KindReading:
        """The reading of an utterance's vector; the acts head needs its ``text`` too."""
        x = np.asarray(vector, dtype=np.float64)
        probs = _softmax((x @ self.weights + self.bias)[None, :])[0]
        best = int(np.argmax(probs))
        scores = {kind: float(p) for kind, p in zip(KINDS, probs, strict=True)}
        acts = None if text is None else _binary(self.acts, np.concatenate([x, words(text)]))
        return KindReading(KINDS[best], float(probs[best]), scores, _binary(self.lasting, x), acts)

    def with_lasting(self, head: Matrix) -> KindModel:
        return replace(self, lasting=head)

    def with_acts(self, head: Matrix) -> KindModel:
        return replace(self, acts=head)

    def save(self, path: Path) -> None:
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "weights": self.weights.astype(np.float32),
            "bias": self.bias.astype(np.float32),
            "meta": np.array(json.dumps({"embedder": self.embedder, "kinds": list(KINDS)})),
        }
        if self.lasting is not None:
            arrays["lasting"] = self.lasting.astype(np.float32)
        if self.acts is not None:
            arrays["acts"] = self.acts.astype(np.float32)
        np.savez_compressed(path, allow_pickle=False, **arrays)

    @classmethod
    def load(cls, path: Path) -> KindModel:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            if meta["kinds"] != [k.value for k in KINDS]:
                raise ValueError(f"{path}: kinds {meta['kinds']} are not {list(KINDS)}")
            lasting = data["lasting"].astype(np.float64) if "lasting" in data else None
            acts = data["acts"].astype(np.float64) if "acts" in data else None
            return cls(meta["embedder"], data["weights"].astype(np.float64),
                       data["bias"].astype(np.float64), lasting, acts)  # fmt: skip


@cache
def shipped() -> KindModel | None:
    """The weights shipped with Hearth (None when the file is absent)."""
    return KindModel.load(WEIGHTS) if WEIGHTS.is_file() else None


def classify(vector: Sequence[float], embedder: str, text: str | None = None) -> KindReading | None:
    """The kind of the utterance whose ``embedder`` vector this is (and whether it acts, given
    its ``text``); None when the shipped weights were trained for another embedder (or are
    absent)."""
    model = shipped()
    if model is None or model.embedder != embedder:
        return None
    return model.read(vector, text)


def words(text: str) -> Matrix:
    """The utterance's character unigrams and bigrams (its start and end marked), counted into
    ``GRAMS`` buckets by CRC-32 (stable across machines and runs), L2-normalised."""
    counts = np.zeros(GRAMS)
    marked = f"^{text.strip().lower()}$"
    for n in (1, 2):
        for i in range(len(marked) - n + 1):
            counts[zlib.crc32(marked[i : i + n].encode()) % GRAMS] += 1.0
    norm = float(np.linalg.norm(counts))
    result: Matrix = counts / norm if norm else counts
    return result


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
    """A binary head (the lasting and acts heads; the memory safety head): logistic regression,
    both classes weighted equally."""
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


def _binary(head: Matrix | None, x: Matrix) -> float | None:
    if head is None:
        return None
    return float(_sigmoid(np.array([x @ head[:-1] + head[-1]]))[0])


def _sigmoid(z: Matrix) -> Matrix:
    result: Matrix = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return result


def _softmax(logits: Matrix) -> Matrix:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    result: Matrix = shifted / shifted.sum(axis=1, keepdims=True)
    return result
