"""Is a memory a liking, or a one-off happening? Learned heads beside the tagging model.

The tagging model (a 1.5B model on two cores) decides a memory's class, and the rules after it
(``workers.tag_rules``) know the usual words (喜欢, 爱吃, 每周). Said another way they miss:
「老刘就好吃口酸菜炖粉条」 and 「朗仔好钟意砌 Lego」 are likings the model called facts,
「每朝早去楼下茶楼饮茶，风雨不改」 is a routine it called an event, 「大涵生日是八月的」 a
birthday it gave an expiry. One logistic regression per class (a liking: ``preference``; a
one-off happening: ``event``) reads the shared embedder's sentence vector and the text's
hashed character uni- and bigrams (``memory.utterance_kinds.words``), trained on memories
labelled outside the project (``bench/data/memory_classes/``), shipped as a small weight file
beside this module and rebuilt by ``hearth bench kinds --train``.

The weights belong to one embedder: another embedder's vector gets ``None`` (the model and the
rules then decide alone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory.utterance_kinds import words

WEIGHTS = Path(__file__).with_name("class_heads.npz")
Matrix = npt.NDArray[np.float64]

CLASSES = ("preference", "event")
SURE = 0.7  # the head decides against the tagging model
UNLIKELY = 0.2  # the head denies what the tagging model said


@dataclass(frozen=True)
class ClassReading:
    """How sure the heads are that a memory is a liking and that it is a one-off happening."""

    preference: float
    event: float


@dataclass(frozen=True)
class ClassHeads:
    embedder: str
    heads: Matrix  # (classes, dim + GRAMS + 1): weights, bias last

    def read(self, vector: Sequence[float], text: str) -> ClassReading:
        x = np.concatenate([np.asarray(vector, dtype=np.float64), words(text)])
        z = self.heads[:, :-1] @ x + self.heads[:, -1]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return ClassReading(*(float(v) for v in p))

    def save(self, path: Path) -> None:
        np.savez_compressed(path, allow_pickle=False, heads=self.heads.astype(np.float32),
                            meta=np.array(json.dumps({"embedder": self.embedder,
                                                      "classes": CLASSES})))  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> ClassHeads:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            if tuple(meta["classes"]) != CLASSES:
                raise ValueError(f"{path}: classes {meta['classes']}, not {CLASSES}")
            return cls(meta["embedder"], data["heads"].astype(np.float64))


@cache
def shipped() -> ClassHeads | None:
    return ClassHeads.load(WEIGHTS) if WEIGHTS.is_file() else None


def read(vector: Sequence[float], embedder: str, text: str) -> ClassReading | None:
    """The heads' reading of the memory ``text`` (whose ``embedder`` vector this is); None when
    the shipped weights belong to another embedder."""
    heads = shipped()
    if heads is None or heads.embedder != embedder:
        return None
    return heads.read(vector, text)
