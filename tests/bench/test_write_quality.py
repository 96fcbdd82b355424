"""The write-quality bench's data and scoring: every labelled item is scored as the README says,
and a run can be written and compared."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from rich.console import Console

from bench import write_quality
from bench.write_quality import SessionScore, load, score
from memory.schema import Decay, Memory, MemoryClass, MemoryId, PersonId


def test_the_set_is_large_enough_and_split() -> None:
    sessions = load().sessions
    assert len(sessions) >= 40
    assert len({s.id for s in sessions}) == len(sessions)
    kinds = Counter((s.kind, s.split) for s in sessions)
    for kind in {s.kind for s in sessions}:
        assert kinds[kind, "dev"] and kinds[kind, "test"], kind  # every kind on both splits
    assert any(s.nothing for s in sessions) and any(s.gone for s in sessions)


def _memory(text: str, cls: MemoryClass, subject: str, expires: str | None = None,
            history: tuple[tuple[str, float], ...] = ()) -> Memory:  # fmt: skip
    at = None
    if expires:
        at = dt.datetime.combine(dt.date.fromisoformat(expires), dt.time(23)).timestamp()
    return Memory(text=text, person=PersonId("p"), cls=cls, subject=subject,
                  decay=Decay.TIME if at else Decay.VOLUME, expires_at=at,
                  id=MemoryId(text), history=history)  # fmt: skip


def _session(session_id: str) -> write_quality.LabelledSession:
    return next(s for s in load().sessions if s.id == session_id)


def test_meaning_tags_and_gone_values_are_scored() -> None:
    move = _session("upd-1")
    right = _memory("我们家上个月搬到滨江区了", MemoryClass.FACT, "我",
                    history=(("我们家住在杭州西湖区", 1.0),))  # fmt: skip
    items = score(move, [right], set())
    assert [(i.kind, i.ok) for i in items] == [
        ("present", True), ("tags", True), ("gone", True), ("history", True)
    ]  # fmt: skip
    both = [right, _memory("我们家住在杭州西湖区", MemoryClass.FACT, "我")]
    assert ("gone", False) in [(i.kind, i.ok) for i in score(move, both, set())]


def test_a_bare_noun_does_not_pass_for_a_negated_preference() -> None:
    coriander = _session("neg-1")
    items = score(coriander, [_memory("香菜", MemoryClass.PREFERENCE, "我")], set())
    assert [(i.kind, i.ok) for i in items] == [("present", False)]


def test_wrong_expiry_and_stored_noise_fail() -> None:
    vaccine = _session("date-1")
    wrong = _memory("下周三带小橙子去打疫苗", MemoryClass.EVENT, "小橙子", "2026-11-26")
    [present, tags] = score(vaccine, [wrong], set())
    assert present.ok and not tags.ok and "expires" in tags.detail
    noise = _session("noise-1")
    [nothing] = score(noise, [_memory("现在几点了", MemoryClass.FACT, "我")], set())
    assert not nothing.ok


def test_a_run_is_written_and_compared(tmp_path: Path) -> None:
    def run(ok: bool) -> list[SessionScore]:
        result = SessionScore("noise-1", "dev", "noise", 1.5)
        result.items = [write_quality.ItemScore("nothing", ok, "")]
        return [result]

    write_quality.write_run(tmp_path / "a", run(False), {"name": "a"})
    write_quality.write_run(tmp_path / "b", run(True), {"name": "b"})
    assert write_quality.is_run(tmp_path / "a")
    console = Console(record=True, width=200)
    write_quality.compare(tmp_path / "a", tmp_path / "b", console)
    shown = console.export_text()
    assert "0/1 (0 %) → 1/1 (100 %) +1" in shown and "noise-1" in shown
