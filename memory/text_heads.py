"""Logistic heads on a memory's sentence vector and its text's hashed character grams.

The slot heads (``memory.slot_heads``) and the class heads (``memory.class_heads``) are the same
kind of model: one logistic regression per label over the shared embedder's vector and
``memory.utterance_kinds.words`` (hashed character uni- and bigrams), shipped as a small weight
file that names its embedder and its labels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory.utterance_kinds import words

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class TextHeads:
    embedder: str
    labels: tuple[str, ...]
    heads: Matrix  # (labels, dim + GRAMS + 1): weights, bias last

    def read(self, vector: Sequence[float], text: str) -> dict[str, float]:
        """Each label's probability for ``text`` (whose ``embedder`` vector this is)."""
        x = np.concatenate([np.asarray(vector, dtype=np.float64), words(text)])
        z = self.heads[:, :-1] @ x + self.heads[:, -1]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return {label: float(v) for label, v in zip(self.labels, p, strict=True)}

    def save(self, path: Path) -> None:
        meta = json.dumps({"embedder": self.embedder, "labels": list(self.labels)})
        np.savez_compressed(path, allow_pickle=False, heads=self.heads.astype(np.float32),
                            meta=np.array(meta))  # fmt: skip

    @classmethod
    def load(cls, path: Path, labels: tuple[str, ...]) -> TextHeads:
        """The heads in ``path``; they must be for ``labels``, in that order."""
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            if tuple(meta["labels"]) != labels:
                raise ValueError(f"{path}: labels {meta['labels']}, not {labels}")
            return cls(meta["embedder"], labels, data["heads"].astype(np.float64))
