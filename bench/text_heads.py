"""What the slot heads and the class heads share in training (``memory.text_heads``): their
features, five-fold cross-validated probabilities, precision / recall, and the fit of the
shipped heads."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.text_heads import TextHeads
from memory.utterance_kinds import train_binary, words
from providers.embedder import Embedder


def features(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    vectors = np.array(embedder.embed(list(texts)), dtype=np.float64)
    return np.hstack([vectors, np.array([words(t) for t in texts])])


def held_out(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each example's probability from the head trained on the other four folds."""
    order = np.random.default_rng(7).permutation(len(y))
    predicted = np.zeros(len(y))
    for fold in range(5):
        held = order[fold::5]
        kept = np.setdiff1d(order, held)
        head = train_binary(x[kept], y[kept].tolist())
        predicted[held] = 1 / (1 + np.exp(-(x[held] @ head[:-1] + head[-1])))
    return predicted


def pr(said: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    hit = int((said & truth).sum())
    return round(hit / max(int(said.sum()), 1), 3), round(hit / max(int(truth.sum()), 1), 3)


def fit(embedder: Embedder, labels: tuple[str, ...], x: np.ndarray,
        truths: Sequence[Sequence[bool]]) -> TextHeads:  # fmt: skip
    """The shipped heads: each label's logistic regression on every labelled memory
    (``truths``: one row per label)."""
    return TextHeads(embedder.name, labels, np.array([train_binary(x, list(t)) for t in truths]))


def show(pr: tuple[float, float]) -> str:
    return f"{pr[0]:.2f} / {pr[1]:.2f}"
