"""The latency bench's question choice and arithmetic (the turns themselves run against
``hearth up`` in the bench; the stage marks are tested in tests/server/device)."""

from __future__ import annotations

from bench.device import pct
from bench.latency import questions, split_ms, summarize


def test_questions_are_plain_and_memory_from_the_dev_split() -> None:
    asks = questions(12)
    assert [a.kind for a in asks].count("plain") == 12
    assert [a.kind for a in asks].count("memory") == 12
    assert len({a.id for a in asks}) == 24


def test_stage_split_of_a_spoken_and_a_typed_turn() -> None:
    marks = {"utterance_end": 550.0, "asr_start": 551.0, "asr_done": 900.0, "prompt_ready": 904.0,
             "llm_first_token": 2000.0, "first_sentence": 2100.0, "first_tts": 2150.0,
             "first_audio": 2152.0}  # fmt: skip
    spoken = split_ms(marks, spoken=True)
    assert spoken["VAD wait"] == 550 and spoken["ASR"] == 350 and spoken["read path"] == 4
    assert sum(spoken.values()) == 2152  # the stages add up to the whole wait
    typed = split_ms({k: v - 900 for k, v in marks.items() if k not in
                      ("utterance_end", "asr_start", "asr_done")}, spoken=False)  # fmt: skip
    assert typed["VAD wait"] == 0 and typed["ASR"] == 0 and typed["read path"] == 4


def test_summary_groups_by_intent_and_by_what_was_injected() -> None:
    def row(kind: str, injected: int, ms: int) -> dict[str, object]:
        return {"mode": "typed", "kind": kind, "injected": injected, "first_audio_ms": ms,
                "stt_ms": None, "split": {"LLM first token": ms - 50}}  # fmt: skip

    rows = [row("plain", 0, 500), row("plain", 3, 2500), row("memory", 5, 3000)]
    lines = {(x["mode"], x["kind"]): x for x in summarize(rows)}
    assert lines[("typed", "plain")]["n"] == 2 and lines[("typed", "memory")]["n"] == 1
    assert lines[("typed", "injected")]["n"] == 2 and lines[("typed", "none")]["p50_ms"] == 500
    assert lines[("typed", "injected")]["split_p50_ms"]["LLM first token"] == pct([2450, 2950], 0.5)
