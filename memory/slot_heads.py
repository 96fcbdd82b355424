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

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from memory.text_heads import TextHeads

WEIGHTS = Path(__file__).with_name("slot_heads.npz")

# the attributes the heads read (rows of the weight file; ``stated`` orders them surest first)
ATTRIBUTES = ("residence", "work", "school", "name", "age", "hometown")
# a head at or above this: the memory states the attribute. Above 0.5 because a slot's new value
# replaces the old one: a misread (「我有慢阻肺…」 read as work at 0.79 beside its constraint) costs
# a memory; five-fold cross-validation at 0.7 in ``hearth bench kinds``
STATES = 0.7


@cache
def shipped() -> TextHeads | None:
    return TextHeads.load(WEIGHTS, ATTRIBUTES) if WEIGHTS.is_file() else None


def stated(vector: Sequence[float], embedder: str, text: str) -> tuple[str, ...] | None:
    """The attributes the memory ``text`` (whose ``embedder`` vector this is) states, the
    surest first; None when the shipped weights belong to another embedder."""
    heads = shipped()
    if heads is None or heads.embedder != embedder:
        return None
    read = heads.read(vector, text)
    return tuple(sorted((a for a in ATTRIBUTES if read[a] >= STATES), key=read.__getitem__,
                        reverse=True))  # fmt: skip
