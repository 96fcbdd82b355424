"""``hearth bench voices``: enrolment (three sentences each) → who is speaking, per member and
overall; unknown voices accepted as a member; the added time per 3 s utterance; voice data per
household.

Two sets. **Real recordings**: nine speakers of the council-meeting clips that ship in the
speakerbox wheel (``bench.voice_recordings``); every household of four of them (126), enrolled
from one meeting and tested on 3 s utterances from other meetings, the other five as unknown
voices. **Synthetic voices** (``bench.voice_set``): a household of four espeak-ng voices, six
other espeak-ng voices and one natural voice as unknowns, test utterances made harder (pitch,
tempo, noise, a far microphone). Enrolment and identification are the product's own functions
(``server.voices``), with its threshold.
"""

from __future__ import annotations

import itertools
import json
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.results import Figure
from bench.voice_recordings import Speaker
from memory.schema import PersonId
from server.voices.checks import Refusal, check_agreement, check_sentence
from server.voices.embedder import VoiceEmbedder
from server.voices.enrol import voiceprints
from server.voices.identify import identify
from server.voices.store import Voice, encode

HOUSEHOLD = 4


@dataclass
class MemberScore:
    tests: int = 0
    right: int = 0
    wrong: int = 0  # named as another member
    unknown: int = 0  # not named (the device's default person)


@dataclass
class SetScore:
    name: str
    voices: str  # "real recordings" or "synthetic voices"
    households: int
    members: dict[str, MemberScore] = field(default_factory=dict)
    unknown_tests: int = 0
    false_accepts: int = 0
    refused_enrolments: list[str] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    household_bytes: list[int] = field(default_factory=list)

    def totals(self) -> MemberScore:
        out = MemberScore()
        for m in self.members.values():
            out.tests, out.right = out.tests + m.tests, out.right + m.right
            out.wrong, out.unknown = out.wrong + m.wrong, out.unknown + m.unknown
        return out

    def summary(self) -> dict[str, Any]:
        t = self.totals()
        lat = np.array(self.latency_ms or [0.0])
        return {
            "set": self.name,
            "voices": self.voices,
            "households": self.households,
            "identification": t.right / t.tests if t.tests else 0.0,
            "wrong_member": t.wrong / t.tests if t.tests else 0.0,
            "member_tests": t.tests,
            "false_accept": self.false_accepts / self.unknown_tests if self.unknown_tests else 0.0,
            "unknown_tests": self.unknown_tests,
            "added_ms_p50": float(np.percentile(lat, 50)),
            "added_ms_p99": float(np.percentile(lat, 99)),
            "household_bytes_max": max(self.household_bytes or [0]),
            "refused_enrolments": self.refused_enrolments,
            "per_member": {
                k: {**asdict(m), "identification": m.right / m.tests if m.tests else 0.0}
                for k, m in self.members.items()
            },
        }


def enrol_voice(embedder: VoiceEmbedder, name: str, sentences: Sequence[np.ndarray]) -> Voice:
    """What ``server.voices.enrol`` stores, without Redis: checks, then voiceprints."""
    check_agreement([check_sentence(w, embedder, n) for n, w in enumerate(sentences)])
    return Voice(PersonId(name), name, voiceprints(embedder, sentences), 0.0)


def score_households(
    embedder: VoiceEmbedder,
    name: str,
    kind: str,
    households: Sequence[tuple[dict[str, Voice], dict[str, list[np.ndarray]], list[np.ndarray]]],
    threshold: float,
) -> SetScore:
    """``households``: (enrolled voices by member, member test utterances, unknown utterances)."""
    score = SetScore(name, kind, len(households))
    cache: dict[int, np.ndarray] = {}
    for voices_by_member, tests, unknown in households:
        voices = list(voices_by_member.values())
        score.household_bytes.append(sum(len(v.member) + len(encode(v)) for v in voices))
        for member, wavs in tests.items():
            m = score.members.setdefault(member, MemberScore())
            for wav in wavs:
                found = _identify_cached(embedder, wav, voices, threshold, cache, score)
                m.tests += 1
                m.right += found == member
                m.wrong += found is not None and found != member
                m.unknown += found is None
        for wav in unknown:
            score.unknown_tests += 1
            found = _identify_cached(embedder, wav, voices, threshold, cache, score)
            score.false_accepts += found is not None
    return score


def _identify_cached(
    embedder: VoiceEmbedder,
    wav: np.ndarray,
    voices: list[Voice],
    threshold: float,
    cache: dict[int, np.ndarray],
    score: SetScore,
) -> str | None:
    """Identify; the embedding is timed once per utterance (then reused across households)."""
    key = id(wav)
    if key not in cache:
        start = time.perf_counter()
        cache[key] = embedder.embed_wave(wav)
        identify(cache[key], voices, threshold)
        score.latency_ms.append((time.perf_counter() - start) * 1000)
    return identify(cache[key], voices, threshold).member


def real_households(
    embedder: VoiceEmbedder, speakers: list[Speaker], score_refusals: list[str]
) -> list[tuple[dict[str, Voice], dict[str, list[np.ndarray]], list[np.ndarray]]]:
    enrolled: dict[str, Voice] = {}
    for s in speakers:
        try:
            enrolled[s.name] = enrol_voice(embedder, s.name, s.enrol)
        except Refusal as exc:
            score_refusals.append(f"{s.name}: {exc.reason}")
    names = sorted(enrolled)
    out = []
    for members in itertools.combinations(names, HOUSEHOLD):
        tests = {s.name: s.tests for s in speakers if s.name in members}
        unknown = [w for s in speakers if s.name not in members for w in s.tests]
        out.append(({n: enrolled[n] for n in members}, tests, unknown))
    return out


def synthetic_household(
    embedder: VoiceEmbedder, natural: list[bytes], refusals: list[str]
) -> list[tuple[dict[str, Voice], dict[str, list[np.ndarray]], list[np.ndarray]]]:
    from bench.voice_set import build, to_wave

    voice_set = build(natural=natural)
    enrolled = {}
    for name, sentences in voice_set.enrol.items():
        try:
            enrolled[name] = enrol_voice(embedder, name, [to_wave(p) for p in sentences])
        except Refusal as exc:
            refusals.append(f"{name}: {exc.reason}")
    tests: dict[str, list[np.ndarray]] = {}
    unknown: list[np.ndarray] = []
    for who, pcm in voice_set.tests:
        (tests.setdefault(who, []) if who else unknown).append(to_wave(pcm))
    return [(enrolled, {k: v for k, v in tests.items() if k in enrolled}, unknown)]


def render(console: Console, scores: list[SetScore], threshold: float) -> None:
    table = Table(title=f"hearth bench voices (threshold {threshold:.2f})")
    for column in ("voices", "member", "tests", "named right", "wrong member", "not named"):
        table.add_column(column)
    for s in scores:
        for member, m in sorted(s.members.items()):
            table.add_row(s.voices, member, str(m.tests), f"{m.right / m.tests:.1%}",
                          f"{m.wrong / m.tests:.1%}", f"{m.unknown / m.tests:.1%}")  # fmt: skip
        t = s.totals()
        table.add_row(s.voices, "[b]all members[/b]", str(t.tests),
                      f"[b]{t.right / t.tests:.1%}[/b]", f"{t.wrong / t.tests:.1%}",
                      f"{t.unknown / t.tests:.1%}", end_section=True)  # fmt: skip
    console.print(table)
    for s in scores:
        summary = s.summary()
        console.print(
            f"{s.voices}: unknown voices accepted as a member "
            f"{summary['false_accept']:.1%} of {s.unknown_tests}; added per 3 s utterance "
            f"p50 {summary['added_ms_p50']:.1f} ms, p99 {summary['added_ms_p99']:.1f} ms; "
            f"voice data per household ≤ {summary['household_bytes_max']:,} bytes"
            + (f"; enrolments refused: {s.refused_enrolments}" if s.refused_enrolments else "")
        )


def main(
    embedder: VoiceEmbedder,
    speakers: list[Speaker] | None,
    natural: list[bytes] | None,
    threshold: float,
    console: Console,
    out: Path | None,
) -> list[dict[str, Any]]:
    scores = []
    if speakers is not None:
        refusals: list[str] = []
        households = real_households(embedder, speakers, refusals)
        scores.append(score_households(embedder, "real", "real recordings", households, threshold))
        scores[-1].refused_enrolments = refusals
    if natural is not None:
        refusals = []
        households = synthetic_household(embedder, natural, refusals)
        scores.append(
            score_households(embedder, "synthetic", "synthetic voices", households, threshold)
        )
        scores[-1].refused_enrolments = refusals
    render(console, scores, threshold)
    report = [s.summary() for s in scores]
    if out is not None:
        meta = {"threshold": threshold, "machine": platform.processor() or platform.machine(),
                "date": time.strftime("%Y-%m-%d")}  # fmt: skip
        out.write_text(json.dumps({**meta, "sets": report}, ensure_ascii=False, indent=1))
        console.print(f"written: {out}")
    return report


def figures(report: list[dict[str, Any]], beside: dict[str, float] | None) -> list[Figure]:
    """The rows ``--record`` writes to the results table."""
    out = []
    for s in report:
        real = s["set"] == "real"
        label = (
            f"real recordings ({len(s['per_member'])} speakers, {s['households']} households of "
            "four, 3 s utterances from other meetings)"
            if real
            else "synthetic voices (4 espeak-ng members; 6 espeak-ng + 1 natural unknown voices; "
            "pitch, tempo, noise, far microphone)"
        )
        tag = "" if real else " — synthetic voices"
        unknown = 1 - s["identification"] - s["wrong_member"]
        out += [
            Figure(f"{label}: members named right / named as another member",
                   f"{s['identification']:.1%} / {s['wrong_member']:.1%} ({unknown:.1%} left "
                   f"unknown: the device's person){tag}"),
            Figure(f"{'real recordings' if real else 'synthetic voices'}: unknown voices "
                   "accepted as a member",
                   f"{s['false_accept']:.1%} of {s['unknown_tests']:,}{tag}"),
        ]  # fmt: skip
    if report:
        first = report[0]
        out += [
            Figure("added per 3 s utterance (embedding + identification, one thread), p50 / p99",
                   f"{first['added_ms_p50']:.1f} / {first['added_ms_p99']:.1f} ms"),
            Figure("voice data per household of four (three voiceprints each)",
                   f"{first['household_bytes_max']:,} bytes"),
        ]  # fmt: skip
    if beside is not None:
        out.append(Figure(
            "a spoken turn's wait with identification beside ASR (3 s utterance), medians",
            f"{beside['added_ms_p50']:+.0f} ms (ASR alone {beside['asr_ms_p50']:.0f} ms)",
        ))  # fmt: skip
    return out
