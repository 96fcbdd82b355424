"""Which recalled constraints a request plainly touches, so that Hearth says them itself, first,
in the words memory holds them — a safety constraint must not depend on a small model deciding
to mention it (measured: the local 1.5B model left the constraint out of a third of the replies
that needed it, and garbled others: 「爸爸对啤酒过敏」 for 「爸爸有痛风，不能喝啤酒」).

No LLM. A constraint applies when it is about whoever the request is about (a name it says, else
``lookup.Scope``) and the request names what the constraint is about:

- *the same item*: an item word both share (「海鲜」「啤酒」「花生」「青霉素」), two adjacent
  characters neither of which is a function word — 「过敏」「不能」「能吃」 say nothing;
- *one step of world knowledge* (``knowledge``): a request word for something the constraint
  covers — a dish that usually holds the allergen (宫保鸡丁 → 花生), a medicine of the family
  (阿莫西林 → 青霉素), what is salty for a no-salt diet (酱油, 咸菜), a place up high for a fear
  of heights (顶楼, 三十楼, 栈道), a closed space for claustrophobia (电梯, 隧道);
- *a cue of the write path's* (``Recalled.cue``) that shares an item word with the request.

A constraint that applies to nothing in the request (a penicillin allergy and 「我下班想去跑个
步」) is never said: it stays in the prompt's safety group for the model, which must not bring it
up (the LOOK rule).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from memory import entities, kinship
from memory.schema import Memory
from memory.terms import any_of, terms
from memory.utterance_kinds import UtteranceKind
from server.understanding import knowledge
from server.understanding.question import Question

# A shared character pair says an item only when neither character is a function word or a verb
# every request has: 「过敏」「不能」「能吃」「要少」「一吃」 are in every second constraint.
_FUNCTION = frozenset(
    "对不能要会就了的是有一个只也都在和把给很太吃喝去做买带点想多少起着过这那些么什还再又最"
    "我你您他她它们家让被从到说用种类样些次天每早晚上下午中里外前后时候可以别得地"
)
# how a constraint is told (restated): what it forbids or what the person cannot take
_FORBIDS = re.compile(
    r"过敏|不能|不可以|不让|不要|不许|不准|别|忌|禁|不宜|只能|受不了|勿|莫|唔(?:好|可以|得|准)|"
    r"allerg|\bno\b|\bnever\b|\bavoid|must not|mustn't|can't|cannot|don't|not allowed",
    re.IGNORECASE,
)
# closest(): how near the best score another constraint must be to be said too, and how many
CLOSE_MARGIN = 0.03
SAID_AT_MOST = 2
# applying(): how far below the closest of the same member's applying constraints another may
# be and still be said (the two of a warfarin patient — painkillers, blood-thinning herbs — both
# of the family that covers 芬必得; the painkiller one is the request's by meaning)
SIBLING_MARGIN = 0.12
# people are not items: relation words, the roles who give advice or care (「医生说…」 in a
# request and in a constraint says nothing about what either names)
_ROLES = ("医生", "大夫", "兽医", "护士", "老师", "同学", "朋友", "同事", "邻居", "阿姨", "保姆")
_PERSON_WORDS = any_of((*entities.RELATIONS, *_ROLES, "我", "你", "自己"))


def item_words(text: str, names: Sequence[str]) -> set[str]:
    """Character pairs of ``text`` that can name an item: person words and names cut out, and
    a doubled character (蕾蕾, 豆豆, 圆圆), a household's nickname far more often than an
    item."""
    for name in names:
        if name:
            text = text.replace(name, "，")
    text = kinship.without_terms(text)  # 那口子, 老汉儿: the person, not 口子
    return {
        pair
        for pair in terms(_PERSON_WORDS.sub("，", text))
        if len(pair) == 2 and not (set(pair) & _FUNCTION) and pair[0] != pair[1]
    }


def touches(question: str, memory: Memory, cue: str | None = None, telling: bool = False) -> bool:
    """Does the request name what this constraint is about (an item, one step of knowledge, or
    a cue's item)? ``telling``: the person states a fact rather than asks or plans — then only
    an item of what the constraint forbids counts, not its condition (「今天量血压一百三」 shares
    血压 with a blood-pressure pill's grapefruit rule and is no occasion for it)."""
    names = [n for n in (memory.subject, *memory.entities) if n]
    asked = item_words(question, names)
    held = forbidding(memory.text) if telling else memory.text
    if asked & item_words(held, names):
        return True
    # whom it is about is no item either: a budgie called Kiwi is no kiwi fruit
    proper = [n for n in names if n not in entities.RELATIONS and n not in entities.SELF_WORDS]
    if knowledge.covers(_without(memory.text, proper), _without(question, proper)):
        return True
    return cue is not None and bool(asked & item_words(cue, names))


_CLAUSE = re.compile(r"[^，。,.;；:：!！?？]+")


def forbidding(text: str) -> str:
    """The clauses of a constraint that say what it forbids (``_FORBIDS``), or all of it."""
    said = [c for c in _CLAUSE.findall(text) if _FORBIDS.search(c)]
    return "，".join(said) if said else text


def applying(
    question: str | Question,
    constraints: Sequence[tuple[Memory, str | None]],
    aliases: Sequence[str] = (),
) -> list[Memory]:
    """The constraints (with the cue that brought each, if one did) that the request plainly
    touches, in the order given: those of whoever the request names (小橙子, or a word memory
    links to that name: ``aliases``, 女儿), else of whoever ``lookup.Scope`` says it is about;
    none for a request only for people outside the household."""
    asked = _understood(question)
    scoped = _in_scope(asked, constraints, aliases)
    if asked.scope.me:
        # the speaker is in it too (「阿兰煮一碗汤圆给我呷」, 「我跟阿兰去呷杨枝甘露」): their own
        # constraints are in scope beside the named member's — said only when the request names
        # what one is about, never the closest by meaning
        keys = {m.key for m, _ in scoped}
        scoped += [(m, cue) for m, cue in constraints
                   if m.key not in keys and (m.subject or "我") in entities.SELF_WORDS]  # fmt: skip
    kind = asked.kind
    telling = kind is not None and kind.kind is UtteranceKind.STATEMENT and not kind.plans
    return [m for m, cue in scoped if touches(asked.text, m, cue, telling)]


def nearest_of_each(said: Sequence[Memory], scores: dict[str, float]) -> list[Memory]:
    """Of several constraints of one member that apply to a request, those within
    ``SIBLING_MARGIN`` of the closest in meaning (``scores``: by memory key; one without a
    score is kept): a request for 芬必得 hears the warfarin patient's painkiller rule, not also
    her rule on blood-thinning herbs, which the same knowledge family covers. Measured on the
    development sets (four sets, 170 requests concerning a constraint): a constraint said
    beside the concerned ones 30 → 22, every concerned one said 122 → 121."""
    best: dict[str, float] = {}
    for m in said:
        if m.key in scores:
            who = m.subject or ""
            best[who] = max(best.get(who, -1.0), scores[m.key])
    return [
        m for m in said
        if m.key not in scores or scores[m.key] >= best[m.subject or ""] - SIBLING_MARGIN
    ]  # fmt: skip


def closest(
    question: str | Question,
    found: Sequence[tuple[Memory, float]],
    aliases: Sequence[str] = (),
    judged: Collection[str] = (),
) -> list[Memory]:
    """When no constraint plainly applies: the one the read path found closest in meaning to
    the request (``found``: constraints a search by meaning brought, with their scores), and any
    within ``CLOSE_MARGIN`` of it — at most ``SAID_AT_MOST`` — of whoever the request is about.

    Measured on households written outside the project: a request rarely names what its
    constraint is about (「外婆给糯米织了身羊毛小衣裤」 for an eczema rule), yet the constraint it
    concerns is the closest of that person's in 11 of 18 requests and within the margin in 3
    more; a constraint the lookup only scanned (no meaning in common) is never said this way
    (「帮我买点洗衣液」 against a penicillin allergy). Whose constraints they are is read on
    all of ``found``; then those the knowledge table has ruled out (``judged``: keys) leave."""
    scored = {m.key: score for m, score in found}
    scoped = _in_scope(_understood(question), [(m, None) for m, _ in found], aliases)
    pool = [m for m, _ in scoped if m.key not in judged]
    if not pool:
        return []
    best = max(scored[m.key] for m in pool)
    near = sorted((m for m in pool if scored[m.key] >= best - CLOSE_MARGIN),
                  key=lambda m: -scored[m.key])  # fmt: skip
    return near[:SAID_AT_MOST]


def restated(utterance: str, memory: Memory) -> bool:
    """Does ``utterance`` tell the constraint itself (「朵朵对鸡蛋过敏，你记着」) — most of its
    item words?"""
    if _FORBIDS.search(utterance) is None:  # 「开点青霉素类的消炎药」 tells no constraint
        return False
    names = [n for n in (memory.subject, *memory.entities) if n]
    items = item_words(memory.text, names)
    return bool(items) and len(items & item_words(utterance, names)) * 2 >= len(items)


def _without(text: str, names: Sequence[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name), "，", text, flags=re.IGNORECASE)
    return text


def _understood(question: str | Question) -> Question:
    return question if isinstance(question, Question) else Question(question)


def _in_scope(
    question: Question, constraints: Sequence[tuple[Memory, str | None]], aliases: Sequence[str]
) -> list[tuple[Memory, str | None]]:
    """Those of whoever the request names (小橙子, or a word memory links to that name:
    ``aliases``, 女儿), else of whoever ``lookup.Scope`` says it is about; none for a request
    only for people outside the household (one naming a member too is for that member: 「Leo
    同学过生日，…让他吃一小块」)."""
    named = [(m, cue) for m, cue in constraints if _names(question.text, m, aliases)]
    if named:
        return named
    if question.outsiders:
        return []
    # the home is the pets' too (a lily on the sill, a non-stick pan on the fire), but what
    # someone eats or drinks, no pet named, is not (「蕾蕾想喝碗甜白酒煮鸡蛋」 and a cockatiel
    # that must have no alcohol)
    home = not question.about_eating or "pet" in question.topics
    return [
        (m, cue)
        for m, cue in constraints
        if (home or not _a_pets(m))
        and (question.scope.covers(question.text, m) or (home and _a_pets(m)))
    ]


def _a_pets(memory: Memory) -> bool:
    return entities.about_a_pet(
        memory.text, memory.subject, memory.entities
    ) or knowledge.of_an_animal(memory.text)


def _names(request: str, memory: Memory, aliases: Sequence[str] = ()) -> bool:
    """Does the request name whom the memory is about (小橙子, or a word memory links to that
    name: ``aliases``, 女儿)?"""
    return entities.mentions(request, memory.subject, memory.entities) or _about(memory, aliases)


def _about(memory: Memory, words: Sequence[str]) -> bool:
    return memory.subject in words or bool(set(memory.entities) & set(words))


def spoken(memory: Memory) -> str:
    """The constraint as the device says it to whoever asks: the speaker's own 「我」 becomes
    「你」 when they said it themselves, their name when someone else did (the device cannot tell
    who is listening)."""
    text = memory.text.strip().rstrip("。！!.")
    speaker = memory.speaker
    own = not speaker or speaker == "me" or speaker == memory.person
    return text.replace("我", "你" if own else speaker or "你")
