"""A text is cut into words once: the same words and flags as jieba's own cut, and the second
ask of the same text is served from the cache."""

from __future__ import annotations

import jieba.posseg

from server.understanding.words import tagged, warm


def test_the_cut_is_jiebas_and_is_made_once() -> None:
    warm()
    text = "我老婆在市一医院当护士"
    first = tagged(text)
    assert [(p.word, p.flag) for p in first] == [(p.word, p.flag) for p in jieba.posseg.lcut(text)]
    hits = tagged.cache_info().hits
    assert tagged(text) is first
    assert tagged.cache_info().hits == hits + 1
