"""A reply that only gives the question back is no answer.

The small local model sometimes answers with the question itself, turned to the listener
(「我是什么血型？」 → 「你是什么血型？」, 「我最近什么时候要去医院？」 → 「你最近什么时候要去医
院？」), or a piece of it (「…滨江区的房子多大面积？」), or repeats a request as if it were the
reply (「放首周杰伦的晴天。」). Spoken, that sounds like a parrot. A sentence is such an echo when,
with punctuation, person words (我, 你, 您: 「我是什么血型？」 given back as 「你是什么血型？」) and
filler left out:

- it is the question, whatever its end mark (a request read back); or
- it asks something (ends in ？) and every character of it is the question's (a fragment or the
  question reworded with 是/的 only) — at least half the question's length.

A statement repeating a yes/no question without its 吗 (「车位还在B1吗？」 → 「车位还在B1。」) is an
answer, not an echo. Only Chinese is read; other languages never match.
"""

from __future__ import annotations

import re
from collections import Counter

_MARKS = re.compile(r"[\s，,。．.！!？?、；;：:…~～“”\"'‘’（）()【】《》]+")
_PERSON = str.maketrans("", "", "我你您")
_FILLER = frozenset("是的了呢啊呀吧")
_ASKS = re.compile(r"[？?]\s*$")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _plain(text: str) -> str:
    return _MARKS.sub("", text).translate(_PERSON)


def echoes(sentence: str, question: str) -> bool:
    """Does ``sentence`` only give ``question`` back (the whole of it, or a part asked again)?"""
    said, asked = _plain(sentence), _plain(question)
    if len(said) < 3 or not _HAN.search(said) or not asked:
        return False
    if said == asked:
        return True
    if not _ASKS.search(sentence.strip()) or len(said) * 2 < len(asked):
        return False
    left = Counter(asked)
    for char in said:
        if left[char] > 0:
            left[char] -= 1
        elif char not in _FILLER:
            return False
    return True
