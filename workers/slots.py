"""Deterministic merge rules: a new value replaces the old one, a retraction removes it, a
restatement adds nothing — decided before (and instead of) the merge model where the rule is sure.

mem0's merge stage asks the model for ADD / UPDATE / DELETE / NONE. The 1.5B local model never
chose anything but ADD: a move was added next to the old district, a changed class day next to
the old day. So the write path reads a *slot* off each text — whose fact it is and what kind
(where they live, where they work or study, a name, an age, the schedule of one class) — and:

- a new fact in the slot of a stored one supersedes it (UPDATE: the old text stays in history);
- a spoken correction (「不是…是…」「说错了」) supersedes the closest memory of the same kind,
  even when the subject changed (「对青霉素过敏的是我妈，不是我爸」);
- a cancellation (「取消了」「不去了」) deletes the closest memory it shares words with, and is
  itself not a memory;
- a restatement of a known constraint (nothing new in it) adds nothing.

Safety constraints are many-valued: a new allergy never replaces another one, only a
correction does. Anything the rules are not sure about goes to the merge model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import jieba.posseg

from memory import entities, kinship, slot_kinds
from workers import dates, other_one, sources, values
from workers.tag_rules import CONSTRAINT
from workers.tagging import align_key

Kind = str
CORRECTION = re.compile(sources.CORRECTED + r"|其实|更正|纠正|口误", re.I)
CHANGE = re.compile(
    r"改到|改成|改为|换成|换到|调到|调成|搬到|搬去|搬家|跳槽|换了|现在|已经|不再|以后"
)
RETRACTION = sources.CANCELLED
# a constraint taken back or lifted: 「搞错了，他不过敏」「医生说现在可以吃鸡蛋了」「Tom's not
# allergic to anything」「she came off warfarin」 (a lasting constraint is deleted, not kept negated)
LIFTED = re.compile(
    r"不过敏|没(?:有)?(?:什么)?过敏|冇过敏|唔敏感|(?:已经|现在|而家)(?:可以|能)(?:吃|喝|食)|停药了|"
    r"\b(?:isn't|is not|wasn't|was not|not|never been|no longer) allergic|no allergies|"
    r"\b(?:stopped taking|came off|is off|no longer (?:takes|on))\b|"
    r"(?:came back|tested|test(?:s|ed)? (?:was|were|is|are)) negative|(?:结果|化验|检查)[^，,。]{0,4}阴性",
    re.I,
)
_EVERYTHING = re.compile(r"什么都|啥都|任何|都不过敏|anything|any\b", re.I)
OTHER_ONE_SIMILARITY = 0.3  # the correction's own words name the memory (芒果过敏)
LIFTED_SIMILARITY = 0.3  # the same subject and the constraint's own words are the evidence
RESTATING = re.compile(r"还是|依然|照常|照旧|仍然|再说一遍|我说过|说过了|记住啊")
_KINDS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("constraint", CONSTRAINT),  # the one constraint pattern the tags use too
    *slot_kinds.STATEMENTS,  # where they live, work, study; a name, an age
)
_SLOTS = frozenset(kind for kind, _ in _KINDS)
_CLASS = re.compile(r"([\u4e00-\u9fff]{1,3}课)")
# words a restatement may use freely: who, the constraint's verbs, emphasis
_RESTATE_FILLER = re.compile(
    "|".join(
        sorted(
            (*entities.RELATIONS, *(w for g in entities.SYNONYMS for w in g)), key=len, reverse=True
        )
    )
    + r"|再说一遍|我说过|记住|你|我们|我|对|过敏|不能|不要|千万|别|吃|喝|碰|绝对|一定|尤其是|尤其|"
    r"特别|会|就|都|也|还|是|有|一口|一点|啊|呀|了|的|嘛|吧|和"
)
_PUNCT = re.compile(r"[，,。.！!？?；;、\s]+")
SUPERSEDE_SIMILARITY = 0.25  # same subject and slot is the evidence; a job change scores ~0.35
CORRECTION_SIMILARITY = 0.6  # a correction of someone else's fact: 「我妈…」 vs 「我爸…」 ~0.87
RETRACTION_SIMILARITY = 0.45  # 「打疫苗的事取消了」 vs the planned vaccination: ~0.51
RETRACTED_EVENT_SIMILARITY = 0.3  # a planned event the cancellation names by its words
# …or that the person's own words name twice: 「算了，上海不去了，出差取消了」 names 上海 and 出差
# of 「后天去上海出差」, though the model's fact 「我出差取消了」 is only ~0.27 similar to it
RETRACTED_EVENT_FLOOR = 0.15
CHANGE_SIMILARITY = 0.4  # 「体检改到下周六了」 vs 「周六带我妈去体检」, both naming 体检
RESTATEMENT_SIMILARITY = 0.6  # every object must also be in the stored text
SAME_VALUE_SIMILARITY = 0.95  # 「女儿叫小橙子。」 again; a changed name scores ~0.89


@dataclass(frozen=True, slots=True)
class Slot:
    subject: str
    kind: Kind

    @property
    def single(self) -> bool:
        """One value at a time (a home, a job, an age); constraints accumulate."""
        return self.kind != "constraint"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory (stored, or written earlier in this job) a new fact may act on."""

    key: str
    text: str
    subject: str | None
    score: float
    event: bool = False  # a one-off plan (what a cancellation usually takes back)


@dataclass(frozen=True, slots=True)
class Decision:
    event: Literal["UPDATE", "DELETE", "NONE"]
    target: Candidate | None
    rule: str
    # an UPDATE's new text when the change names its value: the target's wording with the
    # value swapped (``workers.values``); None: the fact as said
    text: str | None = None


def slot_of(
    text: str,
    names: Iterable[str] = (),
    subject: str | None = None,
    learned: Sequence[str] | None = None,
) -> Slot | None:
    """Whose fact ``text`` is and which slot it fills; ``learned``: the attributes the slot
    heads read in it (``memory.slot_heads``), which decide in place of the statement patterns
    (cross-validated on 1,500 memories labelled outside the project, the heads find 76 % of
    jobs at precision 0.90 at their 0.7, the patterns 24 % at 0.73); None: the patterns alone."""
    who = entities.canonical(subject or entities.subject_of(text, names) or "我")
    lesson = _CLASS.search(text)
    if lesson is not None and not _KINDS[0][1].search(text):
        return Slot(who, f"schedule:{lesson.group(1)[-3:]}")
    if learned is None:
        kind = next((k for k, pattern in _KINDS if pattern.search(text)), None)
    elif _KINDS[0][1].search(text) or _KINDS[0][0] in learned:
        kind = _KINDS[0][0]  # a constraint: many-valued, whatever else it says
    else:
        kind = next((k for k in learned if k in _SLOTS), None)  # the surest first
    return None if kind is None else Slot(who, kind)


def objects(text: str) -> list[str]:
    """What a constraint is about once who, verbs and emphasis are removed (「虾」「海鲜」)."""
    return [p for p in _PUNCT.split(_RESTATE_FILLER.sub(" ", text)) if p.strip()]


def decide(
    fact: str,
    source: str | None,
    candidates: Sequence[Candidate],
    names: Iterable[str] = (),
    learned: Mapping[str, Sequence[str]] | None = None,
    links: Mapping[str, str] | None = None,
) -> Decision | None:
    """What the rules are sure of for ``fact`` (None: let the merge model decide);
    ``learned``: the attributes the slot heads read, by text (the fact's and the
    candidates'); ``links``: the relation each household name stands for."""
    names = list(names)
    learned = learned or {}
    said = source or fact
    ranked = sorted(candidates, key=lambda c: c.score, reverse=True)
    if RETRACTION.search(fact) or (RETRACTION.search(said) and len(fact) <= len(said)):
        # 「scrap what I said about Ollie and sesame — the allergy test came back negative」
        if LIFTED.search(said) and (lifted := _lifted(fact, ranked, names, learned)):
            return Decision("DELETE", lifted, "constraint lifted")
        events = [c for c in ranked if c.event]
        target = (
            _named_by(fact, events, RETRACTED_EVENT_SIMILARITY, names)
            or _named_twice(said, events, RETRACTED_EVENT_FLOOR, names)
            or _named_by(fact, ranked, RETRACTION_SIMILARITY, names)
        )
        return Decision("DELETE" if target else "NONE", target, "retraction")
    if links and CORRECTION.search(said) and other_one.said_of_another(said):
        moved = _to_the_other_one(said, ranked, names, links)
        if moved is not None:
            return moved
    if LIFTED.search(fact):
        target = _lifted(fact, ranked, names, learned)
        if target is not None:
            return Decision("DELETE", target, "constraint lifted")
    mine = slot_of(fact, names, learned=learned.get(fact))
    if mine is None:
        if CORRECTION.search(said) or CHANGE.search(fact):
            # 「体检改到下周六了」 after 「周六带我妈去体检」: the closest memory it names
            target = _named_by(fact, ranked, CHANGE_SIMILARITY)
            if target is not None:
                return Decision("UPDATE", target, "correction", values.swapped(target.text, said))
        changed = _new_value(fact, said, ranked, names)
        return changed or _restatement(fact, ranked, names)
    same_kind = [c for c in ranked if _kind(c, names, learned.get(c.text)) == mine.kind]
    if CORRECTION.search(said):
        target = next((c for c in same_kind if c.score >= CORRECTION_SIMILARITY), None)
        target = target or _slot_mate(mine, same_kind, names)
        if target is not None:
            return Decision("UPDATE", target, "correction", values.swapped(target.text, said))
    if not mine.single and (changed := _new_value(fact, said, ranked, names)) is not None:
        return changed
    if mine.single:
        target = _slot_mate(mine, same_kind, names)
        if target is not None:
            if _an_instance(fact, said, target.text):
                return Decision("NONE", target, "instance of a schedule")
            if target.score >= SAME_VALUE_SIMILARITY or align_key(fact) == align_key(target.text):
                return Decision("NONE", target, "same value")
            return Decision("UPDATE", target, "same slot", values.swapped(target.text, said))
    return _restatement(fact, ranked, names, mine)


def _new_value(
    fact: str, said: str, ranked: Sequence[Candidate], names: Sequence[str]
) -> Decision | None:
    """「医生把硝苯地平加到一天两颗了」: a change verb and a new value of what a stored memory
    names by its words (not by a household name alone) — that memory with the value swapped
    (``values.swapped``); None when no memory holds a value of that shape."""
    if not (CHANGE.search(said) or values.changes(said)):
        return None
    target = _named_by(fact, ranked, CHANGE_SIMILARITY, names)
    swapped = values.swapped(target.text, said) if target is not None else None
    if target is None or swapped is None:
        return None
    return Decision("UPDATE", target, "change", swapped)


def _to_the_other_one(
    said: str, ranked: Sequence[Candidate], names: Sequence[str], links: Mapping[str, str]
) -> Decision | None:
    """「不是那个娃儿，是另外一个」: the closest memory the correction names by its words, moved
    to the one other member of its subject's kind (``workers.other_one``)."""
    for c in ranked:
        if c.score < OTHER_ONE_SIMILARITY or not _shares_words(said, c.text):
            continue
        member = c.subject or entities.subject_of(c.text, names) or ""
        other = other_one.other_member(member, links) if member else None
        if other is not None:
            return Decision("UPDATE", c, "correction: the other one",
                            other_one.moved(c.text, member, other))  # fmt: skip
    return None


def _lifted(
    fact: str, ranked: Sequence[Candidate], names: Sequence[str],
    learned: Mapping[str, Sequence[str]],
) -> Candidate | None:  # fmt: skip
    """The constraint a lifting or a denial takes back: the closest one of the same subject
    that shares its words (「搞错了，他对猫毛不过敏」 → 「…对猫毛过敏」), or any of the same
    subject for a denial of everything (「Tom's not allergic to anything」)."""
    who = entities.canonical(entities.subject_of(fact, names) or "我")
    constraints = [
        c for c in ranked
        if _kind(c, names, learned.get(c.text)) == "constraint" and _subject(c, names) == who
    ]  # fmt: skip
    named = _named_by(fact, constraints, LIFTED_SIMILARITY)
    if named is not None or not _EVERYTHING.search(fact):
        return named
    return next((c for c in constraints if c.score >= LIFTED_SIMILARITY), None)


def _named_by(
    fact: str, ranked: Sequence[Candidate], floor: float, names: Sequence[str] = ()
) -> Candidate | None:
    """The closest memory at least ``floor`` similar that the fact names by its words
    (``names``: household names, which say whom, not what: 「Ollie's fine with it」 names none
    of Ollie's plans)."""
    return next(
        (c for c in ranked if c.score >= floor and _common_words(fact, c.text, names)), None
    )


def _named_twice(
    said: str, events: Sequence[Candidate], floor: float, names: Sequence[str] = ()
) -> Candidate | None:
    """The closest planned event sharing two content words with what the person said."""
    return next(
        (c for c in events
         if c.score >= floor and len(_common_words(said, c.text, names)) >= 2),
        None,
    )  # fmt: skip


def _slot_mate(
    mine: Slot, same_kind: Sequence[Candidate], names: Sequence[str]
) -> Candidate | None:
    """The closest memory of the same subject and kind (its value is what changes)."""
    return next(
        (c for c in same_kind
         if c.score >= SUPERSEDE_SIMILARITY and _subject(c, names) == mine.subject),
        None,
    )  # fmt: skip


def _restatement(
    fact: str, ranked: Sequence[Candidate], names: Sequence[str], mine: Slot | None = None
) -> Decision | None:
    subject = mine.subject if mine else entities.canonical(entities.subject_of(fact, names) or "我")
    wanted = objects(fact)
    nouns = content_nouns(fact, names)
    for c in ranked:
        if c.score < RESTATEMENT_SIMILARITY or _subject(c, names) != subject:
            continue
        if wanted and all(o in c.text for o in wanted):
            return Decision("NONE", c, "restatement")
        # said again in other words: every thing it names is in the stored text
        # (「阿拉囡囡碰不得花生的，一吃就过敏」 after 「囡囡花生过敏的」)
        both_rules = bool(CONSTRAINT.search(fact) and CONSTRAINT.search(c.text))
        same_sense = both_rules or sources.negated(fact) == sources.negated(c.text)
        if nouns and same_sense and all(n.lower() in c.text.lower() for n in nouns):
            return Decision("NONE", c, "restatement")
    return None


# the nouns of a text that name things (jieba's parts of speech), members and names apart
_THING_FLAGS = ("n", "nz", "ng", "vn", "ns", "nt", "eng")
_NUMERALS = frozenset("零〇一二三四五六七八九十百千两半")
_NOT_THINGS = frozenset(("东西", "时候", "事儿", "事情", "样子", "意思", "地方", "一下", "那些"))


def content_nouns(text: str, names: Sequence[str] = ()) -> list[str]:
    """What a text names — foods, drugs, places, objects, and its numbers — without who it is
    about: the words a restatement in other words must share with the stored memory."""
    found: list[str] = []
    for pair in jieba.posseg.lcut(text):
        word, flag = str(pair.word), str(pair.flag)
        if flag == "eng":
            if len(word) < 4 or word.lower() in _PLAIN_EN or word in names:
                continue
        elif flag.startswith("m") and (
            any(ch.isdigit() for ch in word) or (len(word) > 1 and set(word) & _NUMERALS)
        ):
            pass  # a number names which one (「第12个抽屉」 is not 「第13个抽屉」)
        elif len(word) < 2 or not flag.startswith((*_THING_FLAGS, "nr")):
            continue  # (jieba tags many drug names as person names: 华法林)
        who = entities.canonical(word)
        if word in names or word in _NOT_THINGS or who in entities.RELATIONS or who == "我":
            continue
        if kinship.canonical(word) is not None or _RESTATE_FILLER.fullmatch(word):
            continue
        found.append(word)
    return list(dict.fromkeys(found))


def _an_instance(fact: str, said: str, old: str) -> bool:
    """「明天周四，晚上还是七点的吉他课」 is one lesson of 「每周四晚上七点有吉他课」, not a change."""
    if CHANGE.search(said) or CORRECTION.search(said):
        return False
    return dates.recurring(old) and (
        not dates.recurring(fact) or RESTATING.search(said) is not None
    )


def _kind(
    candidate: Candidate, names: Sequence[str], learned: Sequence[str] | None = None
) -> Kind | None:
    slot = slot_of(candidate.text, names, candidate.subject, learned)
    return slot.kind if slot else None


def _subject(candidate: Candidate, names: Sequence[str]) -> str:
    return entities.canonical(
        candidate.subject or entities.subject_of(candidate.text, names) or "我"
    )


_ANNOTATION = re.compile(r"（[^）]*）")
# times of day and days of the week name no topic: 「早上六点…打太极」 and 「早八点到晚六点」 (a
# new job's hours) share 六点, not a subject
_TIMES = re.compile(
    r"[\d零〇一二三四五六七八九十两半]+(?:点钟|点|时|号|日|月|分)|(?:周|星期|礼拜)[一二三四五六日天末]"
)
_PLAIN = frozenset({"的事", "那个", "这个", "还是", "我要", "我们", "下午", "上午", "晚上", "早上"})
# English words every sentence has (words of three letters or fewer never count)
_PLAIN_EN = frozenset(
    ("this", "that", "with", "have", "been", "from", "they", "them", "there", "what", "when",
     "will", "would", "about", "just", "really", "going", "week", "after", "before", "your",
     "were", "into", "then", "than", "some", "also", "only", "very", "told", "said", "think",
     "thinking", "actually", "sorry", "isn't", "wasn't", "anything", "something", "else",
     "must", "never", "should", "always", "every", "because", "still", "please", "near")
)  # fmt: skip


def _shares_words(fact: str, text: str) -> bool:
    """A retraction or change names what it is about (「打疫苗的事取消了」 → 疫苗); dates written
    in by the write path and words every plan has do not count."""

    return bool(_common_words(fact, text))


def _common_words(said: str, text: str, names: Sequence[str] = ()) -> set[str]:
    """Content words (bigrams) of ``said`` — its retraction and change words out, and the
    words of ``names`` — in ``text``."""
    of_names = {w for n in names for w in sources.bigrams(n)}

    def words(t: str) -> set[str]:
        found = sources.bigrams(_TIMES.sub(" ", _ANNOTATION.sub(" ", t))) - _PLAIN - of_names
        return {w for w in found if not w.isascii() or (len(w) > 3 and w not in _PLAIN_EN)}

    return words(RETRACTION.sub(" ", CHANGE.sub(" ", said))) & words(text)
