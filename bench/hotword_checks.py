"""How often the hotwords (``server.device.hotwords``) change text that was heard right: the
false-positive side of ``hearth bench asr``.

Two sets, each correctly written, so every change is a false positive: every household sentence
the benches hold (the read-path pool's memories and questions, the e2e and ASR sets), and strings
of six random dictionary words (jieba's words seen at least 2,000 times, fixed seed) — word
salad, the worst case for two single-character words meeting by chance.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import jieba
import yaml

from bench.corpus import unique_items
from server.device.voice_input import corrected

DATA = Path(__file__).parent / "data"
_HAN = re.compile(r"[\u4e00-\u9fff]")
_HAN_WORD = re.compile(r"[\u4e00-\u9fff]+")


def household_sentences(pool: int = 30000, seed: int = 0) -> list[str]:
    found: set[str] = set()
    for item in unique_items(pool, seed):
        found.update((str(item.memory["text"]), item.question))
    for path in sorted(DATA.rglob("*.yaml")):
        _strings(yaml.safe_load(path.read_text(encoding="utf-8")), found)
    return sorted(found)


def _strings(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if _HAN.search(value):
            found.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, found)
    elif isinstance(value, list):
        for item in value:
            _strings(item, found)


def word_salad(count: int = 100_000, words: int = 6, seed: int = 1) -> list[str]:
    jieba.initialize()
    common = sorted(w for w, f in jieba.dt.FREQ.items() if f >= 2000 and _HAN_WORD.fullmatch(w))
    rng = random.Random(seed)
    return ["".join(rng.choice(common) for _ in range(words)) for _ in range(count)]


def changes(
    texts: list[str], names: tuple[str, ...], phrases: tuple[tuple[str, str], ...] = ()
) -> Counter[tuple[str, str]]:
    """(heard, word) → how many times the hotwords replaced it in ``texts``."""
    replaced: Counter[tuple[str, str]] = Counter()
    for text in texts:
        replaced.update(corrected(text, names, phrases)[1])
    return replaced


def report(names: tuple[str, ...], phrases: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, texts in (("household", household_sentences()), ("word_salad", word_salad())):
        found = changes(texts, names, phrases)
        out[label] = {"texts": len(texts), "changed": sum(found.values()),
                      "examples": [f"{a}→{b}" for (a, b), _ in found.most_common(8)]}  # fmt: skip
    return out
