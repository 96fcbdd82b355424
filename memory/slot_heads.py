"""Which one-valued attributes a memory states — where someone lives, works or studies, a name,
an age, a hometown — read by learned heads beside the statement patterns.

The patterns (``memory.slot_kinds``) know the usual words (住在, 上班, 年级, 叫, 岁); said
another way they miss: 「俺现在在物流园给人家看大门」 and 「俺在国棉五厂当机修工，三班倒」 name no
pattern word, so the write path could not see that the first replaces the second. One logistic
regression per attribute reads the shared embedder's sentence vector and the text's hashed
character uni- and bigrams (``memory.utterance_kinds.words``), trained on memories labelled
outside the project (``bench/data/slot_kinds/``), shipped as a small weight file beside this
module and rebuilt by ``hearth bench kinds --train``.

The weights belong to one embedder: another embedder's vector gets nothing (the patterns then
decide alone).
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

WEIGHTS = Path(__file__).with_name("slot_heads.npz")
Matrix = npt.NDArray[np.float64]

# the attributes the heads read (rows of the weight file; ``stated`` orders them surest first)
ATTRIBUTES = ("residence", "work", "school", "name", "age", "hometown")
# a head at or above this: the memory states the attribute. Above 0.5 because a slot's new value
# replaces the old one: a misread (「我有慢阻肺…」 read as work at 0.79 beside its constraint) costs
# a memory; five-fold cross-validation at 0.7 in ``hearth bench kinds``
STATES = 0.7


@dataclass(frozen=True)
class SlotHeads:
    embedder: str
    heads: Matrix  # (attributes, dim + GRAMS + 1): weights, bias last

    def read(self, vector: Sequence[float], text: str) -> dict[str, float]:
        x = np.concatenate([np.asarray(vector, dtype=np.float64), words(text)])
        z = self.heads[:, :-1] @ x + self.heads[:, -1]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return {a: float(v) for a, v in zip(ATTRIBUTES, p, strict=True)}

    def save(self, path: Path) -> None:
        np.savez_compressed(path, allow_pickle=False, heads=self.heads.astype(np.float32),
                            meta=np.array(json.dumps({"embedder": self.embedder,
                                                      "attributes": ATTRIBUTES})))  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> SlotHeads:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            if tuple(meta["attributes"]) != ATTRIBUTES:
                raise ValueError(f"{path}: attributes {meta['attributes']}, not {ATTRIBUTES}")
            return cls(meta["embedder"], data["heads"].astype(np.float64))


@cache
def shipped() -> SlotHeads | None:
    return SlotHeads.load(WEIGHTS) if WEIGHTS.is_file() else None


def stated(vector: Sequence[float], embedder: str, text: str) -> tuple[str, ...] | None:
    """The attributes the memory ``text`` (whose ``embedder`` vector this is) states, the
    surest first; None when the shipped weights belong to another embedder."""
    heads = shipped()
    if heads is None or heads.embedder != embedder:
        return None
    read = heads.read(vector, text)
    return tuple(sorted((a for a in ATTRIBUTES if read[a] >= STATES), key=read.__getitem__,
                        reverse=True))  # fmt: skip
