"""Who each utterance of a session is about: the person or pet the conversation is on.

People speak of a relative in one turn and go on with a pronoun or with no subject at all:
「我外公今年八十一了」「他得帕金森有五六年了」「现在一天吃三回美多芭」. A fact drawn from the third
turn is about the grandfather, not the speaker. Chinese keeps the topic of a chain of clauses
until a new one is named (topic continuation), so the reading here is structural, not a list of
sentences:

- a turn that names a household member (a relation word, a known name, a name it introduces)
  as its subject makes that member the topic; one in the first person makes the speaker the
  topic (no third party);
- 他 / 她 / 它 resolve to the most recent member whose gender fits (它: a pet), within the turn
  first, then in earlier turns;
- a turn with no subject of its own continues the previous turn's topic.

``resolve`` writes a fact in the household's terms: its pronouns replaced by the member they
stand for and, when it names nobody, the topic put in front (「我外公，现在一天吃三回美多芭」), so
the memory's subject is right wherever it is read. A pronoun nothing fits stays as said (the
speaker's subject then applies, and it is logged).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import jieba
import jieba.posseg
import structlog

from memory import entities, kinship
from memory import names as names_module
from workers import sources

log = structlog.get_logger(__name__)
jieba.setLogLevel(60)  # its dictionary-loading chatter is not ours to print

Gender = str  # "m", "f", "pet"; "" when unknown

# not a pronoun: 其他, 吉他, and the 他 of drug names jieba does not know (非布司他, 奥司他韦;
# the statins: 阿托伐他汀; the gliptins: 西他列汀)
_PRONOUN = re.compile(
    r"((?<![其吉司])[他她它](?![们人汀]|列汀)"
    # dialect third persons, any gender: Cantonese 佢 (not 佢哋, they), Wu and Minnan 伊 (not
    # 伊拉, they; not 伊朗, 伊利, 伊犁, 伊斯兰, 伊面, 伊春, 伊甸, 木乃伊)
    r"|佢(?!哋)|(?<!木乃)伊(?![拉朗利犁斯面春甸豆始]))"
)
_NEUTRAL = frozenset("佢伊")
# the owner right before a relation word, or with a demonstrative between (「俺那个外孙」)
_DEMONSTRATIVES = "(?:那个|这个|那位|这位)"
_OWNER = re.compile(entities.OWNER + _DEMONSTRATIVES + "?$")
_DEMONSTRATIVE = re.compile(_DEMONSTRATIVES + "$")
# a relation word followed by the name it introduces: 「土狗叫二黑」「老公叫聂志刚」
_INTRODUCED = re.compile(r"(?:叫|名叫|小名叫|小名|大名叫|大名)([\u4e00-\u9fff]{2,3})")
_FEMALE_END = set("女妈婆姐妹娘奶姥嫂姨姑媳妻")
_MALE_END = set("公爸爷哥弟夫爹叔伯舅父")


@dataclass(frozen=True)
class Member:
    """A household member as the session speaks of them."""

    said: str  # as said, owner included: 我外公, 俺媳妇, 毛毛
    who: str  # the canonical word or the name: 外公, 老婆, 毛毛
    gender: Gender
    kin: str = ""  # for a name, the relation it stands for when known: 毛毛 → 女儿


@dataclass(frozen=True)
class Context:
    """What one utterance is about, and who was spoken of up to its end (latest first)."""

    topic: Member | None  # None: the speaker, or nobody
    salient: tuple[Member, ...] = field(default_factory=tuple)


def gender_of(word: str) -> Gender:
    """A relation word's gender (kinship table first; else its last character); pets apart."""
    if word in entities.PETS or any(word.endswith(p) for p in ("狗", "猫", "兔", "鼠", "鹦鹉")):
        return "pet"
    known = kinship.gender(word)
    if known in ("m", "f"):
        return str(known)
    if word[-1:] in _FEMALE_END:
        return "f"
    if word[-1:] in _MALE_END or word in ("儿子", "孙子"):
        return "m"
    return ""


def _relation_at(text: str, start: int) -> str | None:
    """The relation word starting at ``start`` (the longest one): the project's own relation
    words anywhere, any kinship term right after an owner (「俺娘」「我小姑子」) or opening a
    clause (「老伴前年换了瓣膜」; the kinship table also holds words like 大家 or 先生, so a bare
    one is not taken elsewhere); never the first word of a place (宠物医院)."""
    found = [w for w in entities.RELATIONS if text.startswith(w, start)]
    term = kinship.longest_at(text, start)
    if term is not None and term not in entities.NOT_KIN:
        opens = start == 0 or text[start - 1] in _CLAUSE_END
        if _OWNER.search(text[:start]) or (opens and len(term) > 1):
            found.append(term)
    word = max(found, key=len, default=None)
    if word is not None and entities.PLACE_AFTER.match(text, start + len(word)):
        return None
    return word


_CLAUSE_END = frozenset("，。！？；,.!?; ")


def members_in(
    text: str, names: Iterable[str], known: dict[str, Member],
    links: Mapping[str, str] | None = None,
) -> list[tuple[int, Member]]:  # fmt: skip
    """Household members the text mentions, by position. A name introduced right after a
    relation (「土狗叫二黑」「老公叫聂志刚」「我婆婆孙秀兰」) takes that relation's gender;
    ``known`` collects the names the session introduced (a three-character name also by its
    given name, 志刚); ``links``: the relation each known name stands for."""
    links = links or {}
    text = entities.in_chinese(text)  # 「our daughter」 is 我女儿
    found: list[tuple[int, Member]] = []
    i = 0
    while i < len(text):
        word = _relation_at(text, i)
        if word is None or _CHILD_REF.match(text, max(i - 2, 0)) or _CHILD_REF.match(text, i - 1):
            i += len(word) if word else 1  # 「这孩子」 points at a child, like a pronoun
            continue
        owner = _OWNER.search(text[:i])
        said = _DEMONSTRATIVE.sub("", owner.group(0)) if owner else ""  # 「俺那个外孙」 → 俺外孙
        member = Member(said + word, entities.canonical(word), gender_of(word))
        found.append((i, member))
        i += len(word)
        after = i + (text[i : i + 1] in ("，", ","))
        named = _INTRODUCED.match(text, after)
        if named is not None:
            _introduce(entities.trim_name(named.group(1)), member, known)
        else:
            apposed = names_module.name_at(text, after, after_relation=True)
            if apposed is not None:
                _introduce(apposed, member, known)
    for name in dict.fromkeys([*names, *known]):
        for match in re.finditer(re.escape(name), text):
            kin = links.get(name, "")
            member = known.get(name) or Member(name, name, gender_of(kin) if kin else "", kin)
            found.append((match.start(), member))
    found.sort(key=lambda spot: spot[0])
    return found


def _introduce(name: str, relation: Member, known: dict[str, Member]) -> None:
    if not name or name in entities.RELATIONS:
        return
    known[name] = Member(name, name, relation.gender, relation.who)
    given = entities.given_name(name)
    if given is not None:
        known[given] = Member(given, name, relation.gender, relation.who)  # 聂志刚 → 志刚


def learn(texts: Iterable[str]) -> dict[str, Member]:
    """The names earlier memories introduced, with what they are (「咱家有条土狗叫二黑」 makes
    二黑 a pet): background for a session that only says 二黑 or 它."""
    known: dict[str, Member] = {}
    for text in texts:
        members_in(text, (), known)
    return known


def _fits(member: Member, pronoun: str) -> bool:
    if pronoun in _NEUTRAL:
        return True
    if pronoun == "它":
        return member.gender == "pet"
    if member.gender == "pet":
        return False
    wanted = "m" if pronoun == "他" else "f"
    return member.gender in (wanted, "")


# 「这孩子」「那娃儿」: the child the talk is about, said like a pronoun
_CHILD_REF = re.compile(r"[这那]个?(?:孩子|娃儿|娃娃|娃|小孩儿?|小家伙|丫头|小子|伢)")
_CHILDREN = frozenset(("儿子", "女儿", "孙子", "孙女", "外孙", "外孙女", "孩子", "宝宝"))


def _child(salient: Sequence[Member]) -> Member | None:
    """The most recent child the talk spoke of."""
    known = next((m for m in salient if (m.kin or m.who) in _CHILDREN and m.who != "孩子"), None)
    if known is not None:
        return known
    # else a name whose relation is not known (「朵朵」), never an adult's relation word or a pet
    return next((m for m in salient if not m.kin and m.who not in entities.RELATIONS
                 and kinship.canonical(m.who) is None and m.gender != "pet"), None)  # fmt: skip


def _resolved(pronoun: str, salient: Sequence[Member]) -> Member | None:
    return next((m for m in salient if _fits(m, pronoun)), None)


def read(
    utterances: Sequence[str], names: Iterable[str] = (), remembered: Iterable[str] = ()
) -> list[Context]:
    """Each utterance's context, in order. ``names``: the household's names; ``remembered``:
    texts already remembered (what they introduce is known before the session starts, and a
    pronoun nothing in the session fits goes to the member of the memory the talk is about)."""
    names = [n for n in names if len(n) >= 2]
    remembered = list(remembered)
    known = learn(remembered)
    links = entities.name_links([*remembered, *utterances])
    background = list({m.who: m for m in known.values()}.values())  # one per member
    salient: list[Member] = []  # latest first
    topic: Member | None = None
    contexts: list[Context] = []
    for i, text in enumerate(utterances):
        spots = members_in(text, names, known, links)
        for match in _PRONOUN.finditer(text):
            if _resolved(match.group(1), [*(m for _, m in spots), *salient]) is None:
                recent = " ".join(utterances[max(i - 1, 0) : i + 1])
                found = _only(match.group(1), background) or _by_memory(
                    match.group(1), recent, remembered, known
                )
                if found is not None:
                    salient = [found, *(m for m in salient if m.who != found.who)]
        topic = _topic(text, spots, salient, topic, [*names, *known])
        for _, member in spots:
            salient = [member, *(m for m in salient if m.who != member.who)]
        if topic is not None and all(m.who != topic.who for _, m in spots):
            salient = [topic, *(m for m in salient if m.who != topic.who)]
        contexts.append(Context(topic, tuple(salient)))
    return contexts


def _topic(
    text: str, spots: Sequence[tuple[int, Member]], salient: Sequence[Member],
    topic: Member | None, names: Sequence[str],
) -> Member | None:  # fmt: skip
    """The utterance's topic: a leading pronoun's member, none for the first person, the member
    it names as its subject, else the previous topic (continued)."""
    pronoun = _PRONOUN.search(text) or _ENGLISH_PRONOUN.search(text)
    subject = entities.subject_of(text, names)
    child = _CHILD_REF.match(text)
    if child is not None:
        return _child([*(m for _, m in spots), *salient]) or topic
    if pronoun is not None and _leads(pronoun) and not _names_first(spots, _span(pronoun)[0]):
        candidates = [*(m for _, m in reversed(spots)), *salient]
        if _PRONOUN.fullmatch(pronoun.group(0)):
            return _resolved(pronoun.group(1), candidates)
        return _resolved_english(_word(pronoun), candidates)
    if subject is not None and entities.canonical(subject) == "我":
        if _speaker_opens(text) or not _HAN.search(text):
            return None
        return topic  # 「…离我们远了」: the speaker is what a word acts on, not the subject
    if spots and subject is not None:
        member = _member_for(subject, spots) or spots[0][1]
        at = next((p for p, m in spots if m is member), spots[0][0])
        if _subject_position(text, at) or entities.introduces(text):
            return member
    return topic


# verbs that frame what follows rather than act on it: 「听说老伴…」「跟你说，朵朵…」, and
# those that introduce a member (「我们家有只橘猫」「家里养了条狗」)
_FRAMING = frozenset(
    ("说", "听说", "告诉", "记得", "知道", "就是", "是", "觉得", "发现", "有", "养", "还有")
)


def _subject_position(text: str, at: int) -> bool:
    """Does the member mentioned at ``at`` open its clause as its subject (only time words,
    adverbs, fillers or an owner before it), rather than being what a verb acts on
    (「早上起来先遛虎子」)?"""
    start = max((i + 1 for i, ch in enumerate(text[:at]) if ch in _CLAUSE_END), default=0)
    before = text[start:at]
    return not any(
        pair.flag.startswith("v") and pair.word not in _FRAMING for pair in _tagged(before)
    )


# what may come before the speaker as a clause's subject: adverbs, time and place words,
# conjunctions, interjections, measure words (「上趟我讲…」「对了，我…」)
_BEFORE_SUBJECT = ("d", "t", "c", "y", "e", "f", "q", "m", "x", "o", "s")


def _speaker_opens(text: str) -> bool:
    """Does the speaker open a clause of the text as its subject (「我对芒果过敏」「上回我说」),
    rather than stand after a verb or a preposition (「离我们远了」「给我推荐」)?"""
    for match in entities.SELF_AT.finditer(text):
        start = max((i + 1 for i, ch in enumerate(text[: match.start()]) if ch in _CLAUSE_END),
                    default=0)  # fmt: skip
        if all(p.flag.startswith(_BEFORE_SUBJECT) for p in _tagged(text[start : match.start()])):
            return True
    return False


@lru_cache(maxsize=4096)
def _tagged(text: str) -> tuple[jieba.posseg.pair, ...]:
    return tuple(jieba.posseg.lcut(text)) if text else ()


_HAN = re.compile(r"[\u4e00-\u9fff]")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


def _by_memory(
    pronoun: str, recent: str, remembered: Sequence[str], known: dict[str, Member]
) -> Member | None:
    """The member of the remembered text the recent talk shares most wording with (two
    character pairs at least: 「美多芭的事…别给他吃肉蛋奶」 → the memory 「我外公一天吃三回美多芭」
    → 外公), when that text names one that fits the pronoun."""
    pairs = {run[j : j + 2] for run in _CJK_RUN.findall(recent) for j in range(len(run) - 1)}
    pairs = {p for p in pairs if not set(p) & set("他她它我你的了是")}
    best, best_score = None, 1
    for text in remembered:
        score = sum(p in text for p in pairs)
        if score > best_score:
            best, best_score = text, score
    if best is None:
        return None
    return _resolved(pronoun, [m for _, m in members_in(best, (), dict(known))])


def _only(pronoun: str, members: Sequence[Member]) -> Member | None:
    """The one member the household is known to have that fits (「它」 in a home with one
    pet); None when none or several do."""
    fitting = [m for m in members if _fits(m, pronoun)]
    return fitting[0] if len(fitting) == 1 else None


def _names_first(spots: Sequence[tuple[int, Member]], at: int) -> bool:
    return any(position < at for position, _ in spots)


def _member_for(subject: str, spots: Sequence[tuple[int, Member]]) -> Member | None:
    who = entities.canonical(subject)
    return next((m for _, m in spots if m.who == who or m.said.endswith(subject)), None)


# an English subject pronoun opening a clause: 「She has violin on Thursdays」「Oh, and she's…」
_ENGLISH_PRONOUN = re.compile(
    r"(?:^|(?<=[,;.!?—]\s)|(?<=\band\s))(she|he|it)\b"
    # he / she after a leading time phrase: 「Last year he got into a bag of raisins」
    r"|^(?:[A-Za-z]{3,9}\s){2}(she|he)\b",
    re.IGNORECASE,
)
# a person's pronoun elsewhere in an English fact: 「none of it anywhere near him」
_ENGLISH_PERSON = re.compile(r"\b(he|she|him|his)\b|\b(her)\b(?=\s*(?:[,.!?;]|$|to\b|and\b))")
_ENGLISH_POSSESSIVE = frozenset(("his",))
_ENGLISH_LEAD = 12  # characters of fillers before a leading English pronoun (「Oh, and she…」)


def _as_chinese(pronoun: str) -> str:
    return {"she": "她", "he": "他", "it": "它"}.get(pronoun.lower(), pronoun)


def _resolved_english(pronoun: str, salient: Sequence[Member]) -> Member | None:
    """English calls a pet he or she as often as it: a pet fits any pronoun."""
    said = _as_chinese(pronoun)
    return next((m for m in salient if m.gender == "pet" or _fits(m, said)), None)


def _leads(pronoun: re.Match[str]) -> bool:
    limit = 1 if _PRONOUN.fullmatch(pronoun.group(0)) else _ENGLISH_LEAD
    return _span(pronoun)[0] <= limit


def _in_english(member: Member) -> str | None:
    """How an English fact names ``member``: its name, or 「my」 and the kinship word."""
    if member.who.isascii():
        return member.who
    word = entities.in_english(member.who)
    return f"my {word}" if word else None


def _english_named(fact: str, context: Context, names: Iterable[str] = ()) -> str:
    """An English fact's subject pronouns named (「she's allergic」 → 「Maeve's allergic」);
    when it names nobody, its first person pronoun (「none of it anywhere near him」 → 「…near
    Biscuit」), else the member the talk is on in front (「Jiayi: no raw fish, no sushi」)."""
    text = fact
    for match in reversed(list(_ENGLISH_PRONOUN.finditer(fact))):
        text = _english_replaced(text, fact, match, context)
    if text != fact:
        return text
    who = entities.subject_of(fact, names)
    if who in (None, "我"):
        person = _ENGLISH_PERSON.search(fact)
        if person is not None:
            return _english_replaced(text, fact, person, context)
    if who is None and context.topic is not None and not _IMPERATIVE.match(fact):
        topic = context.topic
        named = next((m for m in context.salient if m.kin and m.kin == topic.who), topic)
        said = _in_english(named)
        if said is not None and not any(m.who in fact for m in context.salient):
            return f"{said[0].upper()}{said[1:]}: {fact}"
    return text


# an English request or command (「Turn off the hallway light」) is not a fact about anyone
_IMPERATIVE = re.compile(
    r"(?i)^(?:please\s+)?(?:turn|set|play|call|remind|tell|put|give|open|close|stop|start|check|"
    r"look|find|book|order|add|remove|switch|text|send|show|read|make|let|help|get|buy|pay)\b"
)


def _word(match: re.Match[str]) -> str:
    """The pronoun a match found (whichever alternative matched)."""
    return next(g for g in match.groups() if g)


def _span(match: re.Match[str]) -> tuple[int, int]:
    index = next(i for i, g in enumerate(match.groups(), 1) if g)
    return match.start(index), match.end(index)


def _english_replaced(text: str, fact: str, match: re.Match[str], context: Context) -> str:
    pronoun = _word(match)
    start, end = _span(match)
    member = _resolved_english({"him": "he", "his": "he", "her": "she"}.get(
        pronoun.lower(), pronoun), context.salient)  # fmt: skip
    said = _in_english(member) if member is not None else None
    if said is None:
        log.info("discourse.unresolved", fact=fact, pronoun=pronoun)
        return text
    if pronoun.lower() in _ENGLISH_POSSESSIVE:
        said += "'s"
    if start == 0 or said[0].isupper():
        said = said[0].upper() + said[1:]
    return text[:start] + said + text[end:]


def resolve(fact: str, context: Context | None, names: Iterable[str] = ()) -> str:
    """``fact`` with its pronouns named and, when it names nobody and the conversation is on a
    member, that member in front."""
    if context is None:
        return fact
    if not _HAN.search(fact) or sources.mostly_english(fact):
        return _english_named(fact, context, names)
    text = fact
    child = _child(context.salient)
    if child is not None and child.who != "孩子":
        text = _CHILD_REF.sub(child.said, text)
    fact_as_said = fact
    fact = text
    for match in reversed(list(_PRONOUN.finditer(fact))):
        member = _resolved(match.group(1), context.salient)
        if member is None:
            log.info("discourse.unresolved", fact=fact, pronoun=match.group(1))
            continue
        owns = _relation_at(text, match.end()) is not None or kinship.longest_at(text, match.end())
        # a name by its full form (「秀兰」 → 孙秀兰), a relation as said: 「他爸」 → 「我儿子的爸」
        said = (member.who if member.kin else member.said) + ("的" if owns else "")
        text = text[: match.start()] + said + text[match.end() :]
    if text != fact_as_said or context.topic is None or entities.subject_of(fact, names):
        return text
    if not _HAN.search(fact):
        return text  # the topic-comment form is Chinese; another language keeps its own words
    if any(m.who in fact or m.said in fact for m in context.salient):
        return text  # 「接送是志刚的事」 names its member already
    return f"{context.topic.said}，{fact}"
