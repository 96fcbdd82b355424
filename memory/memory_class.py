"""Does a memory state a safety constraint? A learned reading of the memory's text.

The tagging model and the constraint pattern (``workers.tag_rules.CONSTRAINT``) decide a
memory's class; the pattern knows the usual words (过敏, 不能吃, 药), and on memories written
outside the project it found 6 of 23 constraints (「老婆怀二胎四个多月了」, 「百合花对猫有毒」,
「婆婆早饭莫吃稀饭」 say none of them). This head reads the sentence vector the write path has
anyway: a logistic regression on the shared embedder's vectors, trained on labelled memories
nobody here wrote (``bench/data/memory_classes/`` and the memories of the frozen read-path sets,
whose looks are done), shipped as a small weight file beside this module and rebuilt by
``hearth bench kinds --train``. Held out on the external households' 68 memories: 22 of 23
constraints read above 0.7, and 6 of 45 other memories.

The weights belong to one embedder: another embedder's vector gets ``None`` (the pattern and the
tagging model then decide alone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

WEIGHTS = Path(__file__).with_name("memory_class.npz")
Matrix = npt.NDArray[np.float64]

SURE = 0.7  # a constraint whatever the tagging model said
LIKELY = 0.3  # a constraint when the tagging model said so too


@dataclass(frozen=True)
class SafetyHead:
    embedder: str
    head: Matrix  # (dim + 1,): weights, bias last

    def read(self, vector: Sequence[float]) -> float:
        x = np.asarray(vector, dtype=np.float64)
        z = float(x @ self.head[:-1] + self.head[-1])
        return float(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))))

    def save(self, path: Path) -> None:
        np.savez_compressed(path, allow_pickle=False, head=self.head.astype(np.float32),
                            meta=np.array(json.dumps({"embedder": self.embedder})))  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> SafetyHead:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            return cls(meta["embedder"], data["head"].astype(np.float64))


@cache
def shipped() -> SafetyHead | None:
    return SafetyHead.load(WEIGHTS) if WEIGHTS.is_file() else None


def safety(vector: Sequence[float], embedder: str) -> float | None:
    """The probability that the memory whose ``embedder`` vector this is states a constraint;
    None when the shipped weights belong to another embedder (or are absent)."""
    head = shipped()
    if head is None or head.embedder != embedder:
        return None
    return head.read(vector)
