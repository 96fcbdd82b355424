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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from memory.text_heads import TextHeads

WEIGHTS = Path(__file__).with_name("class_heads.npz")

CLASSES = ("preference", "event")
SURE = 0.7  # the head decides against the tagging model
UNLIKELY = 0.2  # the head denies what the tagging model said


@dataclass(frozen=True)
class ClassReading:
    """How sure the heads are that a memory is a liking and that it is a one-off happening."""

    preference: float
    event: float


@cache
def shipped() -> TextHeads | None:
    return TextHeads.load(WEIGHTS, CLASSES) if WEIGHTS.is_file() else None


def read(vector: Sequence[float], embedder: str, text: str) -> ClassReading | None:
    """The heads' reading of the memory ``text`` (whose ``embedder`` vector this is); None when
    the shipped weights belong to another embedder."""
    heads = shipped()
    if heads is None or heads.embedder != embedder:
        return None
    read = heads.read(vector, text)
    return ClassReading(read["preference"], read["event"])
