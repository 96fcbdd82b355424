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
answer, not an echo. A statement giving back a question for a value without its question word
(「小橙子在哪个幼儿园？」 → 「小橙子在幼儿园。」, 「我爸一般去哪儿钓鱼？」 → 「我爸一般去钓鱼。」)
names no value: an echo, unless the question offers the values itself (「…猫还是狗？」). Only
Chinese is read; other languages never match.
"""

from __future__ import annotations

import re
from collections import Counter

_MARKS = re.compile(r"[\s，,。．.！!？?、；;：:…~～“”\"'‘’（）()【】《》]+")
_PERSON = str.maketrans("", "", "我你您")
_FILLER = frozenset("是的了呢啊呀吧")
_ASKS = re.compile(r"[？?]\s*$")
_HAN = re.compile(r"[\u4e00-\u9fff]")
# the words a question for a value asks with (what, which, where, who, how many, how)
_ASKS_VALUE = re.compile(
    r"什么|啥|哪(?:个|种|类|家|位|所|里|儿|一?年|一?天)?|谁|几(?:个|种|位|点|号|岁|口)?|多少|多大"
)
_OFFERS_VALUES = re.compile(r"还是|或者|或是")
# why and how are answered by a reason or a way, often after the fact restated (「天空是蓝色的，
# 是因为…」)
_ASKS_WHY = re.compile(r"为什么|为啥|怎么|如何")
# a clause before a comma may restate what the next one explains: only whole sentences count
_CLAUSE = re.compile(r"[，,；;：:、]\s*$")


def _plain(text: str) -> str:
    return _MARKS.sub("", text).translate(_PERSON)


def echoes(sentence: str, question: str) -> bool:
    """Does ``sentence`` only give ``question`` back (the whole of it, or a part asked again)?"""
    said, asked = _plain(sentence), _plain(question)
    if len(said) < 3 or not _HAN.search(said) or not asked:
        return False
    if said == asked:
        return True
    if not _ASKS.search(sentence.strip()):
        if _CLAUSE.search(sentence) or not _ASKS_VALUE.search(question):
            return False  # a yes/no question restated is an answer
        if _OFFERS_VALUES.search(question) or _ASKS_WHY.search(question):
            return False  # a value the question offers; a reason or a way comes after
        asked = _plain(_ASKS_VALUE.sub("", question))  # 「小橙子在幼儿园。」 names no value
    return len(said) * 2 >= len(asked) and _only_from(said, asked)


def _only_from(said: str, asked: str) -> bool:
    """Is every character of ``said`` one of ``asked``'s (each used once), filler aside?"""
    left = Counter(asked)
    for char in said:
        if left[char] > 0:
            left[char] -= 1
        elif char not in _FILLER:
            return False
    return True
