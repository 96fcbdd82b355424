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

from collections.abc import Sequence

from memory import entities
from memory.schema import Memory
from memory.terms import any_of, terms
from server.memory import knowledge, lookup

# A shared character pair says an item only when neither character is a function word or a verb
# every request has: 「过敏」「不能」「能吃」「要少」「一吃」 are in every second constraint.
_FUNCTION = frozenset(
    "对不能要会就了的是有一个只也都在和把给很太吃喝去做买带点想多少起着过这那些么什还再又最"
    "我你您他她它们家让被从到说用种类样些次天每早晚上下午中里外前后时候可以别得地"
)
_PERSON_WORDS = any_of((*entities.RELATIONS, "我", "你", "自己"))


def _items(text: str, names: Sequence[str]) -> set[str]:
    """Character pairs of ``text`` that can name an item: person words and names cut out."""
    for name in names:
        if name:
            text = text.replace(name, "，")
    return {
        pair
        for pair in terms(_PERSON_WORDS.sub("，", text))
        if len(pair) == 2 and not (set(pair) & _FUNCTION)
    }


def touches(question: str, memory: Memory, cue: str | None = None) -> bool:
    """Does the request name what this constraint is about (an item, one step of knowledge, or
    a cue's item)?"""
    names = [n for n in (memory.subject, *memory.entities) if n]
    asked = _items(question, names)
    if asked & _items(memory.text, names) or knowledge.covers(memory.text, question):
        return True
    return cue is not None and bool(asked & _items(cue, names))


def applying(
    question: str, constraints: Sequence[tuple[Memory, str | None]], aliases: Sequence[str] = ()
) -> list[Memory]:
    """The constraints (with the cue that brought each, if one did) that the request plainly
    touches, in the order given: those of whoever the request names (小橙子, or a word memory
    links to that name: ``aliases``, 女儿), else of whoever ``lookup.Scope`` says it is about;
    none for a request only for people outside the household."""
    if lookup.for_outsiders(question):
        return []
    named = [
        (m, cue)
        for m, cue in constraints
        if entities.mentions(question, m.subject, m.entities) or _about(m, aliases)
    ]
    scope = lookup.scope_of(question)
    pool = named or [(m, cue) for m, cue in constraints if scope.covers(question, m)]
    return [m for m, cue in pool if touches(question, m, cue)]


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
