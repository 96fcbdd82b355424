"""The hotwords' false-positive check: correctly written text stays as it is."""

from __future__ import annotations

from bench.asr import household_names
from bench.hotword_checks import changes, household_sentences, word_salad


def test_household_sentences_written_right_are_left_alone() -> None:
    sentences = household_sentences()
    assert len(sentences) > 40_000
    assert "女儿对芒果过敏" in sentences or any("芒果" in s for s in sentences)
    assert changes(sentences[::8], household_names(12)) == {}


def test_word_salad_is_fixed_by_its_seed() -> None:
    first = word_salad(200)
    assert first == word_salad(200) and len(set(first)) == 200
    assert all(len(s) >= 6 for s in first)
