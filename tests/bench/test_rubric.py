"""The deterministic answer judge (issue 19, item 8): facts that must and must not appear,
refusal markers for questions memory cannot answer and actions no tool can do."""

from __future__ import annotations

import pytest

from bench.e2e.data import Question
from bench.e2e.rubric import rubric_verdict


def _q(kind: str, **fields: object) -> Question:
    return Question(id="t", question="q", kind=kind, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ("这个我这里做不到，你可以用手机设个闹钟。", True),
        ("好的，明天早上七点的闹钟已经设置好了。", False),  # the false claim of issue 19
        ("好的，到时提醒你。", False),
        ("我没办法直接设闹钟，不过已经帮你记下了。", False),  # refuses, then claims anyway
        ("", False),
    ],
)
def test_an_unavailable_action_must_be_declined_never_claimed(reply: str, passed: bool) -> None:
    verdict = rubric_verdict(_q("action"), reply)
    assert verdict is not None and verdict[0] is passed, verdict


@pytest.mark.parametrize(
    ("reply", "passed"),
    [("我不知道你儿子叫什么，你没跟我说过。", True), ("你儿子叫张三。", False),
     # the very sentence the prompt's rule teaches (server.memory.render.MEMORY_RULES)
     ("你还没跟我说过他的生日。", True),
     # …and said with 没有 (the local model's wording in the e2e run local-lean, R20)
     ("你还没有跟我说过他的生日。", True), ("我没有办法帮你设闹钟。", True)],
)  # fmt: skip
def test_a_refusal_question_needs_a_refusal(reply: str, passed: bool) -> None:
    verdict = rubric_verdict(_q("refusal"), reply)
    assert verdict is not None and verdict[0] is passed


def test_must_and_must_not_facts() -> None:
    q = _q("update", must=["滨江|滨江区"], must_not=["西湖区"])
    assert rubric_verdict(q, "你们现在住在滨江区。") == (True, "rubric met")
    passed, reason = rubric_verdict(q, "以前住西湖区，现在住滨江。") or (True, "")
    assert not passed and "西湖区" in reason
    assert rubric_verdict(_q("extraction"), "随便什么") is None  # no rubric stated


def test_every_reference_answer_meets_its_own_rubric() -> None:
    """The bench's `must` facts were written from each question's `answer`: a right answer in
    those words passes, so a failing rubric verdict means the reply lacked the fact."""
    import datetime as dt

    from bench.e2e.data import load_questions, render_dates

    ruled = [q for q in load_questions() if q.must]
    assert len(ruled) >= 180
    for q in ruled:
        verdict = rubric_verdict(q, render_dates(q.answer, dt.date(2026, 11, 30)))
        assert verdict == (True, "rubric met"), q.id
