"""The deterministic answer judge — the offline default beside the LLM judge (which, on the
embedded defaults, is the same 1.5B model that answers). Per question, what its rubric states:

- ``must``: facts that must appear — every item, each item a ``|``-separated list of accepted
  spellings (「三月十二|3月12」);
- ``must_not``: facts that must not appear (an old value, an invented name);
- refusal markers, for the kinds where the right answer is not to answer: ``refusal`` (memory
  holds nothing: say so, never invent) and ``action`` (no offered tool can do it: say so, never
  claim it is done).

A question with none of these has no rubric verdict (None): only the LLM judge reads it.
"""

from __future__ import annotations

from bench.e2e.data import Question

REFUSED = (
    "不知道", "不清楚", "不太清楚", "没听说", "没听你说", "没有记录", "没记录", "不记得", "没提过",
    "没告诉过", "没说过", "没跟我说过", "没跟我提过", "没听你提过",
    "没有相关", "没有关于", "还不知道", "不确定", "记不得", "没有这方面",
)  # fmt: skip
CANNOT = (
    "做不到", "没法", "没办法", "无法", "不能帮", "帮不了", "不支持", "还不能", "暂时不能",
    "不能直接", "没有这个功能", "没有相关功能", "不具备", "做不了", "不会", "不能设置", "不能打",
    "不能控制", "不能替你", "不能为你",
)  # fmt: skip
CLAIMED_DONE = (
    "已经设置", "设置好了", "设好了", "已设置", "已为你", "已经为你", "已帮你", "已经帮你", "搞定",
    "已打开", "已经打开", "打开了", "已关闭", "已经关闭", "已发送", "发好了", "已经发", "叫好了",
    "已拨打", "正在拨打", "已添加", "加好了", "已提醒", "会提醒你", "到时提醒你", "已下单",
    "交好了", "已缴", "调好了", "已调",
)  # fmt: skip
REFUSING_KINDS = ("refusal", "action")


def _says(text: str, markers: tuple[str, ...]) -> bool:
    """A marker in the reply, also with 没有 said for 没 (「你还没有跟我说过他的生日」)."""
    spoken = (text, text.replace("没有", "没"))
    return any(marker in said for said in spoken for marker in markers)


def _present(reply: str, item: str) -> bool:
    return any(spelling and spelling in reply for spelling in item.split("|"))


def rubric_verdict(q: Question, reply: str) -> tuple[bool, str] | None:
    """(passed, reason), or None when the question states no rubric."""
    if not q.must and not q.must_not and q.kind not in REFUSING_KINDS:
        return None
    text = reply.strip()
    if not text:
        return False, "no reply"
    missing = [item for item in q.must if not _present(text, item)]
    forbidden = [item for item in q.must_not if _present(text, item)]
    problems = []
    if missing:
        problems.append(f"missing {missing}")
    if forbidden:
        problems.append(f"said {forbidden}")
    if q.kind == "refusal" and not _says(text, (*REFUSED, *CANNOT)):
        problems.append("did not say it does not know")
    if q.kind == "action":
        claimed = [m for m in CLAIMED_DONE if m in text]
        if claimed:
            problems.append(f"claimed it was done {claimed}")
        if not _says(text, CANNOT):
            problems.append("did not say it cannot")
    return (not problems), "; ".join(problems) or "rubric met"
