"""Is a fact a passing remark — what happened at some moment of today or yesterday, with nothing
about later days in it (「中午跟同事去吃了牛肉火锅」「下午好困，喝了两杯美式」)?

Read off the grammar of the sentence, not its words: a *deictic moment* (今天, 中午, 刚才, 昨晚,
this morning…), a *completed* aspect (了, 过, 完; an English past tense) and no sign of anything
that lasts or comes later — a future or recurring time (明天, 下周, 每…), an intention or a
change (要, 打算, 改, 搬, 取消), a correction (说错, 不是), a constraint. Alone it is a cue, not a
verdict: the write path drops a fact on it only when the learned lasting head
(``memory.utterance_kinds``) also reads the fact as more passing than lasting.

Measured on the 921 statements labelled lasting / passing in ``bench/data/utterance_kinds/``
(five-fold held-out readings of the head): the cue alone catches 219 of 408 passing remarks and
takes 2 of 513 lasting facts; with the head below 0.5 beside it, 201 and none. (The head alone
below 0.05, the write path's other test, catches 181 and takes none.)
"""

from __future__ import annotations

import re

from workers.tag_rules import CONSTRAINT

_MOMENT = re.compile(
    r"今天|今儿|今早|今晚|今个|中午|下午|早上|上午|晚上|刚才|刚刚|刚|这会儿|昨天|昨晚|昨儿|前天|"
    r"\b(?:this morning|this afternoon|today|tonight|yesterday|just now)\b",
    re.IGNORECASE,
)
_COMPLETED = re.compile(r"了|过|完|\b(?:\w+ed|was|were|had|got|went|ate|took|made)\b", re.I)
_LATER_OR_LASTING = re.compile(
    r"明天|后天|下周|下个|下礼拜|下星期|周[一二三四五六日天]|星期|礼拜|[号日]|月底|以后|往后|从今|每|"
    r"打算|准备|要|会|将|开始|改|换|搬|取消|不去|算了|说错|搞错|不是|其实|一直|总是|老是|"
    r"\b(?:tomorrow|next|will|going to|every|always|from now|cancel\w*|moved|changed|start\w*)\b",
    re.IGNORECASE,
)
HEAD_BELOW = 0.5  # the lasting head must also read the fact as more passing than lasting


# the date the write path writes beside a relative day (「今天（12月3日）」): not the speaker's
_RESOLVED_DATE = re.compile(r"[（(][^）)]{0,12}[日号][）)]")


def narrates_a_moment(text: str) -> bool:
    """Does ``text`` tell what happened at a moment just past, and nothing that lasts?"""
    text = _RESOLVED_DATE.sub("", text)
    return (
        _MOMENT.search(text) is not None
        and _COMPLETED.search(text) is not None
        and _LATER_OR_LASTING.search(text) is None
        and CONSTRAINT.search(text) is None
    )


def passing(text: str, lasting: float | None) -> bool:
    """A passing remark by both readings: the grammar's cue and the lasting head."""
    return lasting is not None and lasting < HEAD_BELOW and narrates_a_moment(text)
