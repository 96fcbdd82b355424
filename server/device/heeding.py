"""What a reply must not recommend once Hearth has said a constraint.

Hearth says the constraints a request concerns first, in its own sentence (``claims.
reminder_sentence``); the model's answer follows. A small model then still proposes the very
thing the constraint forbids (「给女儿做鸡蛋炒饭」 after 「朵朵对鸡蛋过敏」, a chocolate cake after
an egg allergy was named). So each sentence of the answer is held against the said constraints:
one that names a forbidden item without refusing it is not spoken.

A constraint's forbidden items, without an LLM:

- the words of its prohibiting clauses (a clause with 不能/别/不要/禁/忌/避免/过敏…; never one
  with 只能, which names what is allowed), cut by jieba, person words and names left out, and
  common words that name no item (医生, 注意, 自己…) left out;
- what the constraint's family covers (``server.understanding.knowledge``: an egg allergy
  covers 蛋糕, 蛋挞, a gout diet covers 啤酒, 海鲜…).

A sentence names an item when it contains the word; it refuses it when it also carries a
negation or caution (不/别/没/避免/忌/代替/换成…). Both tests are deliberately coarse: a sentence
wrongly held back costs one sentence of advice; one wrongly spoken can cost a child's health.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory import entities
from memory.terms import STOP_WORDS
from server.understanding import knowledge
from server.understanding.words import tagged

_CLAUSES = re.compile(r"[，,。；;！!？?\n]")
_PROHIBITS = re.compile(
    r"不[能可让要许宜得行准]|不适合|别|禁|忌|避免|远离|过敏|少[吃喝碰用]|戒"
    r"|allergic|avoid|never|must not|mustn't|can't|cannot|not allowed|\bno\b",
    re.IGNORECASE,
)
_ALLOWS_ONLY = re.compile(r"只能|只可以|只吃|只喝|只用")
_REFUSES = re.compile(
    r"不|别|没|避免|禁|忌|过敏|小心|注意|代替|替代|换成|改用|而不是|除了|远离|留意|少[吃喝放用]"
    r"|莫(?!名|扎特|斯科)"
    r"|\b(?:not|no|never|avoid|without|instead|allergic|free|skip)\b|n't",
    re.IGNORECASE,
)
# 不 in words that do not refuse anything (「不妨试试蛋挞」 recommends it)
_NOT_REFUSING = re.compile(r"不妨|不错|不如|不少|不仅|不但|不过|不一定|要不|不管")
# words of a prohibiting clause that name no item (how a rule is told, not what it is about)
_NOT_ITEMS = frozenset(
    (
        "医生", "大夫", "医院", "注意", "自己", "一起", "时候", "东西", "任何", "什么", "所有",
        "一点", "一定", "必须", "千万", "绝对", "可以", "能够", "需要", "叮嘱", "交代", "说过",
        "一吃", "一喝", "过敏", "容易", "而且", "但是", "因为", "所以", "现在", "以后", "平时",
        "每天", "最近", "已经", "还是", "还有", "只要", "这个", "那个", "这些", "那些", "不能",
        "不要", "避免", "远离", "禁止", "起疹子", "疹子", "发作", "严重", "症状", "情况",
        "allergic", "avoid", "never", "must", "not", "cannot", "can't", "allowed", "doctor",
        "any", "anything", "food", "foods", "eat", "eats", "drink", "take", "very", "severe",
        "said", "unless", "labelled", "disease", "such", "grandpa", "grandma", "mum", "mom",
        "dad", "father", "mother", "son", "daughter", "wife", "husband", "baby", "has", "free",
    )
)  # fmt: skip
_ITEM_FLAGS = ("n", "v", "a", "x", "eng", "nz", "vn", "an", "ng", "j")


@dataclass(frozen=True)
class Heeded:
    """A constraint Hearth said this turn, and what a reply must not recommend after it."""

    text: str
    items: frozenset[str]


def forbidden_items(
    text: str, names: Iterable[str] = (), knowledge_too: bool = True
) -> frozenset[str]:
    """What the constraint ``text`` forbids, as words a reply would use: the words of its
    prohibiting clauses, and (``knowledge_too``) what its knowledge families cover."""
    people = _people(names)
    items: set[str] = set()
    for clause in _CLAUSES.split(text):
        if not _PROHIBITS.search(clause) or _ALLOWS_ONLY.search(clause):
            continue
        for pair in tagged(clause):
            word = pair.word.strip()
            if len(word) < 2 or word in people or word in _NOT_ITEMS:
                continue
            if _PROHIBITS.fullmatch(word) or not pair.flag.startswith(_ITEM_FLAGS):
                continue
            if pair.flag.startswith("nr"):  # a person's name, not an item
                continue
            if any(word in person or person in word for person in people if len(person) > 1):
                continue
            if word.isascii():
                word = word.lower()
                if len(word) < 4 or word in STOP_WORDS or word in _NOT_ITEMS:
                    continue
                word = word[:5]  # 「walnuts」 meets 「walnut」 (as memory.terms cuts them)
            items.add(word)
    if knowledge_too:
        items |= {w for w in knowledge.covered_by(text) if len(w) > 1}
    return frozenset(items)


def _people(names: Iterable[str]) -> set[str]:
    """Words naming a person, never an item: relation words, the household's names, pronouns."""
    return {*entities.RELATIONS, *(n for n in names if n), "我", "你", "他", "她", "它"}


def heeded(
    texts: Sequence[str], names: Iterable[str] = (), request: str = ""
) -> tuple[Heeded, ...]:
    """The said constraints and what each forbids; with ``request``, the request itself too:
    once a constraint concerns it, a sentence going along with what it asks for (「你可以喂团团
    一小块扑热息痛」 after 「人吃的药一片都不能给它」) names its items without refusing them —
    knowledge the table lacks (扑热息痛 is a human medicine) need not be known to catch it."""
    known = tuple(names)
    said = [Heeded(t, forbidden_items(t, known)) for t in texts]
    if request and said:
        said.append(Heeded(REQUEST, request_items(request, known)))
    return tuple(said)


REQUEST = "the request a said constraint concerns"


def request_items(request: str, names: Iterable[str] = ()) -> frozenset[str]:
    """The request's specific item words: jieba nouns and the like of three characters or more
    (扑热息痛, 晕船贴, 零度可乐 — not the topic a reply repeats, 早饭, 蛋糕), names and person
    words left out."""
    people = _people(names)
    return frozenset(
        p.word.lower()
        for p in tagged(request)
        if len(p.word.strip()) > 2
        and p.flag.startswith(("n", "eng", "nz", "x"))
        and not p.flag.startswith("nr")
        and p.word not in people
        and p.word not in _NOT_ITEMS
        and not any(p.word in person for person in people if len(person) > 1)
    )


def refuses(sentence: str) -> bool:
    """Does ``sentence`` refuse, warn or offer instead (不, 别, 换成, instead…)?"""
    return _REFUSES.search(_NOT_REFUSING.sub("", sentence.lower())) is not None


def recommends_against(sentence: str, said: Sequence[Heeded]) -> Heeded | None:
    """The said constraint whose forbidden item ``sentence`` names without refusing it, if
    any."""
    if refuses(sentence):
        return None
    lowered = _NOT_REFUSING.sub("", sentence.lower())
    for constraint in said:
        if any(_names(lowered, item) for item in constraint.items):
            return constraint
    return None


def _names(sentence: str, item: str) -> bool:
    """Chinese items anywhere (no spaces between words); an English one at a word's start
    (「walnu」 in 「walnut brownies」, never 「tree」 in 「street」)."""
    if not item.isascii():
        return item in sentence
    return re.search(rf"\b{re.escape(item)}", sentence) is not None
