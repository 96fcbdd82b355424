"""The sessions bench's checks on what the write path left (bench.sessions)."""

from __future__ import annotations

from bench.sessions import DAY, check_expect, record, summarize
from memory.schema import Decay, Memory, MemoryClass, PersonId

NOW = 1_800_000_000.0
P = PersonId("p")


def _kinds(checks: list[object]) -> dict[str, bool]:
    return {c.kind: c.ok for c in checks}  # type: ignore[attr-defined]


def test_a_memory_with_the_right_meaning_and_tags_passes_every_check() -> None:
    memory = Memory("外公吃美多芭前后一个钟头不能吃高蛋白的", P, cls=MemoryClass.SAFETY,
                    subject="外公")  # fmt: skip
    entry = {"contains_any": ["美多芭"], "cls": "safety", "decay": "volume",
             "subject_any": ["外公", "姥爷"], "must_keep_negation": True,
             "language": "zh"}  # fmt: skip
    assert _kinds(check_expect(entry, [memory], NOW)) == {
        "present": True, "cls": True, "decay": True, "subject": True, "negation": True
    }  # fmt: skip


def test_a_wrong_subject_a_lost_negation_an_expiry_and_a_translation_fail() -> None:
    memory = Memory("I see the dentist next Wednesday", P, cls=MemoryClass.EVENT,
                    decay=Decay.TIME, expires_at=NOW + 40 * DAY, subject="我")  # fmt: skip
    entry = {"contains_any": ["dentist"], "subject_any": ["儿子"], "must_keep_negation": True,
             "expires_days_from_now": [3, 9], "language": "en"}  # fmt: skip
    checks = _kinds(check_expect(entry, [memory], NOW))
    assert checks == {"present": True, "subject": False, "negation": False, "expiry": False,
                      "language": True}  # fmt: skip
    missing = check_expect({"contains_any": ["牙医"]}, [memory], NOW)
    assert [(c.kind, c.ok) for c in missing] == [("present", False)]
    assert summarize(missing) == {"present": (0, 1)}


def test_a_session_is_replayed_as_the_persons_turns() -> None:
    job = record({"id": "s1", "turns": ["我外公八十一了", "他有帕金森"]}, "p", NOW)
    assert [t["role"] for t in job["transcript"]] == ["user", "user"]
    assert job["ended_at"] == NOW and job["person"] == "p"


def test_english_said_with_chinese_words_and_an_english_negation_pass() -> None:
    memory = Memory("My grandma's not allowed ginseng, 人参, because of the warfarin", P,
                    cls=MemoryClass.SAFETY, subject="奶奶")  # fmt: skip
    entry = {"contains_any": ["ginseng"], "must_keep_negation": True, "language": "en"}
    assert _kinds(check_expect(entry, [memory], NOW)) == {
        "present": True, "negation": True, "language": True
    }  # fmt: skip
    chinese = Memory("奶奶吃华法林，不能吃人参", P, cls=MemoryClass.SAFETY, subject="奶奶")
    entry = {"contains_any": ["人参"], "language": "en"}
    assert _kinds(check_expect(entry, [chinese], NOW))["language"] is False
