"""Relation words and proper names, for same-entity completion without an LLM.

Extraction may store a memory under a name (「小橙子对花生过敏」) while the question uses a relation
(「我女儿能吃花生酱吗」), or the other way round (「女儿对芒果过敏」, asked
「小橙子能喝芒果冰沙吗」).
The read path bridges the two, both ways: relation words in the question select memories
*about* that relation, and names pulled out of those hits (「女儿叫小橙子」 → 小橙子) select
memories about the name in a second round; a recalled memory that names what the question names
(「女儿叫小橙子」 for a question about 小橙子) brings in its relation words (女儿) and other names
(a nickname) for that same second round. Pets are relations too (「我家猫叫年糕」).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from memory import kinship
from memory import names as _names

_FAMILY: tuple[str, ...] = (
    "老婆", "妻子", "媳妇", "爱人", "老公", "丈夫", "女儿", "闺女", "儿子", "孩子", "宝宝",
    "妈妈", "母亲", "老妈", "爸爸", "父亲", "老爸", "爷爷", "奶奶", "外公", "外婆", "姥姥",
    "姥爷", "哥哥", "姐姐", "弟弟", "妹妹", "女朋友", "男朋友", "对象", "婆婆", "公公",
    "岳母", "岳父", "丈母娘", "孙子", "孙女",
)  # fmt: skip
# Pets are household members too: 「我家猫叫年糕」 makes 猫 ↔ 年糕 like 女儿 ↔ 小橙子.
PETS: tuple[str, ...] = (
    "猫咪", "小猫", "狗狗", "小狗", "宠物", "兔子", "仓鼠", "鹦鹉", "乌龟", "猫", "狗",
    # breeds and the birds and small animals homes keep, said for the animal itself
    "金毛", "柯基", "泰迪", "哈士奇", "柴犬", "边牧", "比熊", "拉布拉多", "画眉", "八哥",
    "金鱼", "豚鼠", "荷兰猪", "龙猫",
)  # fmt: skip
# …and what only an animal has (a vet): a memory naming one is about a pet, whatever its name
_ANIMAL_WORDS = frozenset((*PETS, "兽医", "宠物医院"))
# Relation words: who a memory is about, by role rather than by name.
RELATIONS: tuple[str, ...] = _FAMILY + PETS
# One person, many words: a question in any of them reaches memories stored under any other
# (「买点西柚带给我妈」 must reach 「妈妈每天早上吃降压药…」). Spoken forms like 我妈 / 我爸 are
# not relation words of their own (「妈」 alone is too short to match safely).
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("妈妈", "母亲", "老妈", "我妈", "咱妈"),
    ("爸爸", "父亲", "老爸", "我爸", "咱爸"),
    ("老婆", "妻子", "媳妇", "爱人", "太太"),
    ("老公", "丈夫"),
    ("女儿", "闺女"),
    ("外婆", "姥姥"),
    ("外公", "姥爷"),
    ("岳母", "丈母娘"),
    ("猫", "猫咪", "小猫"),
    ("狗", "狗狗", "小狗"),
)
_GROUP = {word: group for group in SYNONYMS for word in group}
# Words that mean "the whole family": every relation applies.
FAMILY_WORDS: tuple[str, ...] = ("家里人", "家人", "全家", "一家人", "家里")
SELF_WORDS = frozenset({"我", "自己", "本人", "用户"})

_NAME = r"([\u4e00-\u9fff]{2,4}|[A-Za-z][A-Za-z\-]{1,20})"
_NAME_PATTERNS = (
    re.compile(r"(?:叫|名叫|名字是|小名是|小名叫|大名是|大名叫|小名|大名|乳名|外号)" + _NAME),
    re.compile(_NAME + r"是我的?(?:" + "|".join(RELATIONS) + ")"),
)
_PRONOUNS = ("我", "你", "您", "他", "她", "它", "咱", "俺", "佢", "伊", "侬", "恁")
_ASKING = ("啥", "什么", "谁", "哪", "几", "多少")
_NOT_NAMES = frozenset({"什么", "啥子", "一下", "我们", "他们", "她们", "自己", "这个", "那个"})


# English kinship words as the household's Chinese ones (a bilingual home: 「my wife」 is 我老婆)
_ENGLISH_KIN = {
    "wife": "老婆", "husband": "老公", "son": "儿子", "daughter": "女儿", "child": "孩子",
    "kid": "孩子", "children": "孩子", "kids": "孩子", "baby": "宝宝", "mum": "妈妈",
    "mom": "妈妈", "mother": "妈妈", "dad": "爸爸", "father": "爸爸", "grandma": "奶奶",
    "grandmother": "奶奶", "grandpa": "爷爷", "grandfather": "爷爷", "brother": "哥哥",
    "sister": "姐姐", "dog": "狗", "cat": "猫", "parrot": "鹦鹉", "rabbit": "兔子",
    "mother-in-law": "婆婆", "father-in-law": "公公", "puppy": "狗", "kitten": "猫",
    "beagle": "狗", "retriever": "狗", "labrador": "狗", "poodle": "狗", "corgi": "狗",
    "husky": "狗", "terrier": "狗", "spaniel": "狗", "collie": "狗", "hamster": "仓鼠",
    "bunny": "兔子", "tortoise": "乌龟", "turtle": "乌龟", "budgie": "鹦鹉",
}  # fmt: skip
_ENGLISH_KIN_WORDS = re.compile(
    r"\b(my |our )?("
    + "|".join(sorted((re.escape(w) for w in _ENGLISH_KIN), key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


_KIN_ALTERNATION = "|".join(sorted((re.escape(w) for w in _ENGLISH_KIN), key=len, reverse=True))
# a name introduced in English: 「my daughter Maeve」「Maeve, our daughter」「Rusty is our dog」
_ENGLISH_NAMES = (
    re.compile(rf"\b(?:[Mm]y|[Oo]ur) (?:{_KIN_ALTERNATION}),? ([A-Z][a-z]{{1,20}})\b"),
    re.compile(rf"\b([A-Z][a-z]{{1,20}}),? (?:is )?(?:my|our) (?:{_KIN_ALTERNATION})\b"),
    re.compile(r"\b(?:named|called) ([A-Z][a-z]{1,20})\b"),
    re.compile(rf"\b(?:a|an) (?:{_KIN_ALTERNATION}), ([A-Z][a-z]{{1,20}})\b"),
)
_NOT_ENGLISH_NAMES = frozenset(
    ("Oh", "And", "Also", "So", "Well", "Yes", "No", "Hi", "Hey", "Okay")
)


def in_english(word: str) -> str | None:
    """The English kinship word for a Chinese one (女儿 → daughter), the first the table lists."""
    return next((en for en, zh in _ENGLISH_KIN.items() if zh == word), None)


def in_chinese(text: str) -> str:
    """English kinship words in their Chinese form, 「my」 as the speaker owning them."""
    if not text.isascii() and not re.search(r"[A-Za-z]", text):
        return text
    return _ENGLISH_KIN_WORDS.sub(
        lambda m: ("我" if m.group(1) else "") + _ENGLISH_KIN[m.group(2).lower()], text
    )


def relations_in(text: str) -> list[str]:
    """Relation words a question is about; family words expand to every relation. A relative
    named from the child's side (孩子奶奶, 娃他姥爷) is the speaker's relative of that person,
    either parent speaking (``kinship.from_childs_side``: 妈妈 / 婆婆 …). English kinship words
    count as their Chinese forms (「my wife」: 老婆)."""
    text = in_chinese(text)
    if any(word in text for word in FAMILY_WORDS):
        return list(RELATIONS)
    text, childs = _childs_side(text)
    found = [word for word in (*RELATIONS, *_GROUP) if word in text]
    found += [w for w in _owned_kin(text) if w not in found]
    # drop shorter words inside longer hits (女朋友 is not 朋友; 我妈妈 is one mention)
    found = [w for w in found if not any(w != o and w in o for o in found)]
    expanded: list[str] = []
    for word in found:
        for same in _GROUP.get(word, (word,)):
            if same in RELATIONS and same not in expanded:
                expanded.append(same)
    # a grandparent no one owns in the request is the children's (从儿称: 「让爷爷来接」 is the
    # speaker's father or father-in-law), beside the speaker's own grandparent
    for word in [w for w in found if kinship.generation(w) == 2 and _unowned(text, w)]:
        childs += [t for t in kinship.from_childs_side(word) if t not in childs]
    for word in childs:
        for same in _GROUP.get(word, (word,)):
            if same not in expanded:
                expanded.append(same)
    return expanded


# the speaker as the owner of a kinship term in any dialect (我老汉儿, 我家那口子, 俺娘)
_SPEAKER_OWNS = re.compile(r"(?:我|俺|咱)(?:们)?(?:家)?(?:的)?")


def _owned_kin(text: str) -> list[str]:
    """Relation words for the kinship terms (the ``kinship`` table: dialect and formal) the
    speaker says as their own, right after 我/俺/咱 (「我老汉儿腰杆痛」 → 爸爸, 「我家那口子」 →
    爱人); a term said by itself (先生, 太太, 大爷) is not read."""
    found: list[str] = []
    for match in _SPEAKER_OWNS.finditer(text):
        term = kinship.longest_at(text, match.end(), single_char=False)
        if term is None or term in RELATIONS or term in _GROUP:
            continue  # read by relations_in itself
        same = kinship.canonical(term)
        if same is None or not (same in RELATIONS or same in _GROUP):
            continue
        # a spouse word that says no gender (那口子, 另一半) is either spouse
        spouses = ("老公", "老婆") if same == "爱人" and kinship.gender(term) is None else (same,)
        found += [w for w in spouses if w not in found]
    return found


# the speaker's child as the owner of a kinship term (孩子奶奶, 娃的姥爷, 宝宝他外公)
_CHILD_OWNER = re.compile(r"(?:孩子|小孩|娃娃|娃|宝宝)(?:的|他|她|们的)?")


def _unowned(text: str, word: str) -> bool:
    """Does ``word`` occur in ``text`` once at least without the speaker owning it (我爷爷)?"""
    return any(
        not re.search(OWNER + "$", text[: found.start()])
        for found in re.finditer(re.escape(word), text)
    )


def _childs_side(text: str) -> tuple[str, list[str]]:
    """The text without its relatives named from the child's side, and the speaker's terms
    for them."""
    terms: list[str] = []
    kept, at = [], 0
    for owner in _CHILD_OWNER.finditer(text):
        if owner.start() < at:
            continue
        term = kinship.longest_at(text, owner.end(), single_char=False)
        speaker_side = kinship.from_childs_side(term) if term else ()
        if not speaker_side:
            continue
        assert term is not None
        terms += [t for t in speaker_side if t not in terms]
        kept.append(text[at : owner.start()])
        at = owner.end() + len(term)
    return "".join(kept) + text[at:], terms


def linked_to(question: str, subject: str | None, about: Iterable[str]) -> list[str]:
    """What a memory links to the question: if the memory is about a name the question says
    (「女儿叫小橙子」, asked about 小橙子), every other name and relation word it is about,
    relation words with their synonyms (女儿 → 女儿, 闺女)."""
    words = [w for w in (subject, *about) if w and w not in SELF_WORDS]
    named = names_said(question, subject, about)
    if not named:
        return []
    linked: list[str] = []
    for word in words:
        for same in relations_in(word) if word in RELATIONS else [word]:
            if same not in named and same not in linked:
                linked.append(same)
    return linked


# a name followed by a relative of theirs says that relative, not the named one (「蕾蕾她爸」 is
# the speaker's father-in-law; 「妞妞同学约她」 still says 妞妞)
_OWNED_AFTER = re.compile(
    r"^(?:的|她|他|它|家)?(?:爸|妈|爷|奶|外公|外婆|姥|老公|老婆|对象|哥|姐|弟|妹|儿子|女儿|闺女|"
    r"孩子|'s (?:mum|mom|dad|father|mother|brother|sister|husband|wife))"
)


@lru_cache(maxsize=4096)
def opening_word(text: str) -> str | None:
    """The word a Chinese memory's text opens with when it is a subject that can be someone's
    name or title (「强子有痛风」 → 强子, 「老爷子有房颤」 → 老爷子): two to four characters, not
    the speaker, a pronoun or a relation word the relation readers already know (those are
    matched as relations)."""
    word = _names.first_word(text)
    if not 2 <= len(word) <= 4 or not _HAN_ONLY.fullmatch(word):
        return None
    if word.startswith(_PRONOUNS) or word in SELF_WORDS or word in RELATIONS:
        return None
    return word


def said_itself(question: str, name: str) -> bool:
    """Does ``question`` say ``name`` for that one, not only as the owner of a relation
    (「蕾蕾她爸」, 「Leo's friend」)?"""
    start = question.find(name)
    while start >= 0:
        if _OWNED_AFTER.match(question[start + len(name) :]) is None:
            return True
        start = question.find(name, start + 1)
    return False


def names_said(question: str, subject: str | None, about: Iterable[str]) -> list[str]:
    """The names (not relation words, not 我) of what a memory is about that the question says
    for themselves (not 「蕾蕾她爸」)."""
    words = (subject, *about)
    return [
        w
        for w in words
        if w and w not in SELF_WORDS and w not in RELATIONS and len(w) >= 2
        and said_itself(question, w)
    ]  # fmt: skip


# what a thing is called, not a person (「降压药又加了一种，叫氨氯地平」「那个吸入剂叫舒利迭」
# 「小区叫阳光花园」): a word for a kind of thing shortly before 「叫」, no member word after it
_THING = re.compile(
    r"药|剂|片|胶囊|粮|牌子|牌|医院|诊所|学校|幼儿园|小学|中学|大学|店|馆|小区|公司|单位|软件|"
    r"游戏|节目|歌|书|电影|车|菜|病|症|(?i:app|brand|medicine|drug|pill|inhaler)"
)
_THING_WINDOW = 10


def _names_a_thing(text: str, at: int) -> bool:
    """Is the name that starts at ``at`` what a thing is called (a medicine, a school, a
    shop), rather than a person or a pet?"""
    window = text[max(0, at - _THING_WINDOW) : at]
    things = [m.end() for m in _THING.finditer(window)]
    if not things:
        return False
    members = [window.rfind(word) + len(word) for word in RELATIONS if word in window]
    return max(things) > max(members, default=-1)


def given_name(name: str) -> str | None:
    """The given name of a three-character full name (罗小满 → 小满, 何子航 → 子航), by which the
    family calls them; None for other names (a nickname like 小橙子 or 阿宝 has no surname)."""
    if len(name) == 3 and _HAN_ONLY.fullmatch(name) and name[0] not in "小老阿大":
        return name[1:]
    return None


_HAN_ONLY = re.compile(r"[\u4e00-\u9fff]+")


def call_names(name: str) -> tuple[str, ...]:
    """What a family calls a member a three-character full name names, by the common patterns
    of Chinese address: the given name (顾一诺 → 一诺), its last character doubled (诺诺) or
    after 小 or 阿 (小诺, 阿诺), and 老 before the surname (老顾). None for other names."""
    given = given_name(name)
    if given is None:
        return ()
    last = given[-1]
    forms = (given, last * 2, "小" + last, "阿" + last, "老" + name[0])
    return tuple(f for f in forms if f not in RELATIONS)


def names_in(text: str) -> list[str]:
    """Proper names introduced in a memory's text (「女儿叫小橙子」 → 小橙子); not what a thing
    is called (「那个药叫氨氯地平」)."""
    names: list[str] = []
    for pattern in _NAME_PATTERNS:
        for match in pattern.finditer(text):
            if _names_a_thing(text, match.start(1)):
                continue
            name = trim_name(match.group(1))
            if name.startswith(_PRONOUNS):  # 「叫我起床」: a request, not a name
                continue
            if name.startswith(_ASKING):  # 「小名叫啥来着」: a question, not a name
                continue
            if name and name not in _NOT_NAMES and name not in RELATIONS and name not in names:
                names.append(name)
    for pattern in _ENGLISH_NAMES:
        for match in pattern.finditer(text):
            name = match.group(1)
            if name not in _NOT_ENGLISH_NAMES and name not in names:
                names.append(name)
    for name in (*_named_without_introduction(text), *_names.english_names(text)):
        if name not in names and name not in RELATIONS and canonical(name) == name:
            names.append(name)
    return names


def _named_without_introduction(text: str) -> list[str]:
    """Names said in apposition to a relation word (「我婆婆孙秀兰」「阿拉老头子徐国平」) or
    opening a clause as its subject (「文涛倒是不爱吃甜的」「朗仔而家读 P3」): the shapes
    ``memory.names`` knows."""
    found: list[str] = []
    starts = set(_clause_starts(text)) | {0}
    for owned in _OWNED.finditer(text):
        starts.add(owned.end())
    for at in range(len(text)):
        term = kinship.longest_at(text, at, single_char=False)
        relation = max((w for w in RELATIONS if text.startswith(w, at)), key=len, default=None)
        word = max((w for w in (term, relation) if w and w not in NOT_KIN), key=len, default=None)
        if word is not None:
            after = at + len(word)
            name = _names.name_at(text, after, after_relation=True)
            if name is not None and not _names_a_thing(text, after):
                found.append(name)
            starts.add(after)  # 「我家姑娘然然」: a name may follow
        elif at in starts:
            name = _names.name_at(text, at)
            if name is not None and not _names_a_thing(text, at):
                found.append(name)
    return [n for n in dict.fromkeys(found) if not kinship.longest_at(n, 0, single_char=False)]


def trim_name(name: str) -> str:
    # 「叫小橙子，今年五岁」: the CJK run may swallow following words; cut at common particles.
    for stop in ("今年", "现在", "已经", "特别", "非常", "很", "也", "和", "的", "对", "在", "是"):
        index = name.find(stop, 1)
        if index > 0:
            name = name[:index]
    return name if len(name) >= 2 or name.isascii() else ""


def entities_for(
    text: str, subject: str | None, known_names: Iterable[str] = (),
    links: Mapping[str, str] | None = None,
) -> tuple[str, ...]:  # fmt: skip
    """What a memory is about, for indexing: its subject, names it introduces, known names and
    relation words it mentions; with ``links`` (``name_links``), the other word for its subject
    too (爸爸 ↔ Graham), so either finds it."""
    found: list[str] = []
    if subject and subject not in SELF_WORDS:
        found.append(subject)
        for name, relation in (links or {}).items():
            if subject == relation:
                found.append(name)
            elif subject == name:
                found.append(relation)
    found += names_in(text)
    found += opening_nickname(text)
    found += [name for name in known_names if name in text]
    found += [word for word in RELATIONS if word in text]
    unique: list[str] = []
    for item in found:
        if item not in unique:
            unique.append(item)
    return tuple(unique)


# a doubled character opening a memory is its subject's nickname (蕾蕾, 圆圆, 溪溪) unless it is
# an adverb or a common reduplicated word
_OPENING_DOUBLE = re.compile(r"^([\u4e00-\u9fff])\1(?![\u4e00-\u9fff]{0,1}[叫是](?:什么|谁))")
_NOT_NICKNAMES = frozenset(
    c * 2
    for c in "天常刚慢好偏渐每往早多少快悄稍明统处人个年月日时事样星家久万千大小高轻"
    "默纷频连屡仅恰暗重足白平冷热乖哈嘿"
)


def opening_nickname(text: str) -> list[str]:
    """A doubled character opening a memory's text names whom it is about (「蕾蕾怀孕了…」,
    「圆圆是蚕豆病」: the stored subject may be the relation, 老婆, and the request says the
    nickname) — not a relation word (宝宝, 奶奶) nor an adverb (天天, 慢慢)."""
    match = _OPENING_DOUBLE.match(text.strip())
    if match is None:
        return []
    word = match.group(0)
    return [] if word in RELATIONS or word in _NOT_NICKNAMES else [word]


# "帮我 / 给我 / 让我 …" are command idioms, not a reference to the speaker's own life.
_COMMAND_IDIOMS = re.compile(r"(帮|给|让|跟|为|替|陪|告诉|叫)我")
_FIRST_PERSON = re.compile(r"我|咱|俺")


def personally_anchored(question: str) -> bool:
    """Does the question talk about the household itself (我的, 我家, 我老婆…), as opposed to a
    command or general question (放首歌, 明天会下雨吗)?"""
    if relations_in(question):
        return True
    return bool(_FIRST_PERSON.search(_COMMAND_IDIOMS.sub("", question)))


def mentions(question: str, subject: str | None, names: Iterable[str]) -> bool:
    """Does the question literally name what this memory is about?"""
    if subject and subject not in SELF_WORDS and said_itself(question, subject):
        return True
    if any(len(name) >= 2 and said_itself(question, name) for name in names):
        return True
    # 「诺诺有点咳嗽」 names 顾一诺 as the family calls her
    full = {n for n in (subject, *names) if n}
    return any(said_itself(question, call) for n in full for call in call_names(n))


def canonical(word: str) -> str:
    """One spelling per relation (我妈 / 母亲 / 老妈 → 妈妈; 我们 → 我); names stay as said."""
    word = word.strip()
    if word in SELF_WORDS or word in ("我们", "咱们", "咱", "俺", "我们家", "我家", "阿拉", "我哋"):
        return "我"
    if word not in _GROUP and word not in RELATIONS:
        word = kinship.canonical(word) or word  # 娘 → 妈妈, 老伴 → 爱人 (the kinship table)
    return _GROUP.get(word, (word,))[0]


# the speaker in dialect too: Wu 阿拉 (not 阿拉伯, 阿拉斯加), Cantonese 我哋
_DIALECT_WE = r"阿拉(?!伯|斯加|丁)|我哋"
SELF_AT = re.compile(r"我们|咱们|我哋|我|咱|俺|" + _DIALECT_WE)
_ENGLISH_INTRODUCES = re.compile(
    r"^(?:we've got|we have|we got|i've got|i have|there's) (?:a|an|our|my) ", re.IGNORECASE
)
_ENGLISH_SELF = re.compile(r"\b(?:I|I'm|I've|I'd|me|my|mine|we|our|us)\b", re.IGNORECASE)
# 「我家猫」「我们家的狗狗」「我的女儿」: possessive phrases whose head is the subject
_POSSESSIVE = re.compile(
    r"(?:我们家|咱们家|咱家|俺家|我家|我们|俺们|我|俺|(?:" + _DIALECT_WE + r")(?:屋里|屋企)?)的?"
)
# 「我家有条狗…」「咱家还有个闺女…」: introducing a member, who is then the subject
_HOME = r"(?:我们家|咱们家|咱家|俺家|我家|家里|(?:" + _DIALECT_WE + r")(?:屋里|屋企)?)"
_INTRODUCES = re.compile(r"^" + _HOME + r"(?:里)?(?:还|就)?(?:有|养)")
# words of the kinship table everyday speech uses for others (「我们大家」, 「泰山」)
NOT_KIN = frozenset(
    (
        "大家", "先生", "小姐", "女人", "宝贝", "老子", "汉子", "姑娘", "小子", "兄弟", "大官",
        "泰山", "双亲", "子孙", "儿女", "夫人", "弟子", "大大", "官人",
    )
)  # fmt: skip
# an owner before a kinship term the relation words lack: 「俺娘」「我小姑子」「我老伴」
OWNER = r"(?:我们家|咱们家|咱家|俺家|我家|我们|俺们|咱们|我|俺|咱|阿拉(?!伯|斯加|丁)|我哋)的?"
_OWNED = re.compile(OWNER)
_OWNED_BEFORE = re.compile(OWNER + "$")


def subject_of(text: str, names: Iterable[str] = ()) -> str | None:
    """Who a memory is about, read from its text: the first relation word or known name it
    mentions (after a possessive 「我」 that owns it), else 「我」 when it speaks in the first
    person; None when the text names nobody. Names directly after a relation word win
    (「我们家狗狗豆豆」 → 豆豆): they are the more specific subject. English kinship words count
    as their Chinese forms (「my wife」: 老婆), 「I」 and 「my」 as the speaker."""
    text = in_chinese(text)
    spots: list[tuple[int, int, str]] = []
    for word in (*RELATIONS, *_GROUP):
        for match in re.finditer(re.escape(word), text):
            if not PLACE_AFTER.match(text, match.end()):  # 宠物医院 is a place, not the pet
                spots.append((match.start(), -len(word), canonical(word)))
    for start in _clause_starts(text):  # 「老伴前年换了瓣膜」: a kinship term as the subject
        term = kinship.longest_at(text, start, single_char=False)
        if term is not None and term not in NOT_KIN and term not in RELATIONS:
            spots.append((start, -len(term), canonical(term)))
    for name in names:
        if len(name) >= 2:
            for match in re.finditer(re.escape(name), text):
                spots.append((match.start(), -len(name), name))
    for owned in _OWNED.finditer(text):
        term = kinship.longest_at(text, owned.end())
        if term is not None and term not in RELATIONS and term not in NOT_KIN:
            spots.append((owned.end(), -len(term), canonical(term)))
        if owned.group(0).endswith("家"):  # 「我家婆」「我家公」: the 家 is the relation's own
            term = kinship.longest_at(text, owned.end() - 1, single_char=False)
            if term is not None and term not in NOT_KIN:
                spots.append((owned.end() - 1, -len(term), canonical(term)))
        shown = _BETWEEN.match(text, owned.end())  # 「俺那个外孙」: a demonstrative between
        if shown is not None and shown.end() > owned.end():
            term = kinship.longest_at(text, shown.end(), single_char=False)
            if term is not None and term not in NOT_KIN:
                spots.append((shown.end(), -len(term), canonical(term)))
    # 「我们家有只橘猫叫大福」 introduces the cat: about the cat, not the speaker
    introduces = _INTRODUCES.match(text) or _ENGLISH_INTRODUCES.match(text)
    self_at = None if spots and introduces else _self_at(text) or _ENGLISH_SELF.search(text)
    spots = _reported(text, spots)
    if spots:
        start, length, word = min(spots)
        end = start - length
        named = [s for s in spots if s[0] == end and s[2] not in RELATIONS]
        if named:
            word = named[0][2]
        held = _owned_after(text, end, spots)
        if held is not None:  # 「朵朵的奶奶」「老婆的妈妈」: the owned one is the subject
            word = kinship.of(word, held) or held
        if self_at is None or self_at.start() >= start:
            return word
        if _SAID_OF.fullmatch(text, self_at.end(), start):  # 「上趟我讲囡囡读中班」: said of her
            return word
        owner = _POSSESSIVE.match(text, self_at.start())
        # 「我家婆」: the owner's 家 is the relation's own; 「我大儿子」「俺那个外孙」: an ordinal
        # or a demonstrative between
        if owner is not None and (
            start <= owner.end() <= end or _BETWEEN.fullmatch(text, owner.end(), start)
        ):
            return word
        return "我"
    return "我" if self_at is not None else None


_BETWEEN = re.compile(r"(?:那个|这个|那位|这位|那|这|的)?[大小二三四五老幺]?")
# the speaker framing what follows, not its subject: 「我就跟你唠了」「跟你说」「我跟你讲啊」
_FRAMING_SELF = re.compile(
    r"(?:我|俺|咱)(?:就|再|先|也|还)?(?:跟|和|同|给)(?:你|您)(?:说|讲|唠|聊|汇报|交代|念叨)"
    r"|(?:我|俺)(?:跟你)?(?:说|讲)(?:过|的|啊|哈)?(?=[，,：:])"
)


# a member reporting what follows: 「蓓蕾放假回来跟俺说，…」「蓓蕾说那东西狗吃了会中毒」
_REPORTS = re.compile(
    r"[^，,。]{0,6}?(?:跟|和|同)?(?:我|俺|咱)?(?:说|讲|讲的|告诉我|告诉俺)[，,：:]?"
)


def _reported(
    text: str, spots: list[tuple[int, int, str]]
) -> list[tuple[int, int, str]]:  # fmt: skip
    """The spots after a report's verb when the first member only reports what follows and
    another member is named in it; else the spots as found."""
    if not spots:
        return spots
    start, length, _ = min(spots)
    verb = _REPORTS.match(text, start - length)
    if verb is None:
        return spots
    later = [s for s in spots if s[0] >= verb.end()]
    return later or spots


# the speaker saying something of the member named right after: 「我讲囡囡…」「我说过大涵…」
_SAID_OF = re.compile(r"(?:上回|上次|之前|刚才|前两天)?(?:跟你)?(?:说|讲|提)(?:过|的)?")


def _self_at(text: str) -> re.Match[str] | None:
    """The first mention of the speaker that is not the speaker framing what follows."""
    framed = [m.span() for m in _FRAMING_SELF.finditer(text)]
    return next(
        (m for m in SELF_AT.finditer(text) if not any(a <= m.start() < b for a, b in framed)),
        None,
    )


PLACE_AFTER = re.compile(r"医院|诊所|店|门诊|用品")
_CLAUSE_START = re.compile(r"(?:^|[，。！？；,.!?;]\s*)")
_OWNS = re.compile(r"的|'s\s*|’s\s*")


def _clause_starts(text: str) -> list[int]:
    return sorted({m.end() for m in _CLAUSE_START.finditer(text) if m.end() < len(text)})


def _owned_after(text: str, end: int, spots: Iterable[tuple[int, int, str]]) -> str | None:
    """The relation owned by the member that ends at ``end`` (「朵朵的奶奶」 → 奶奶)."""
    owns = _OWNS.match(text, end)
    if owns is None:
        return None
    return next((w for s, _, w in spots if s == owns.end() and w in RELATIONS), None)


_APPOSED_ENGLISH = re.compile(r",?\s*([A-Z][a-z]{1,20})\b")
_CALLED_ENGLISH = re.compile(r"(?:'s|’s|\s+is)?\s+(?:called|named)\s+([A-Z][a-z]{1,20})\b")


def name_links(texts: Iterable[str]) -> dict[str, str]:
    """Which relation each introduced name stands for, from the household's own words: 「女儿叫
    朵朵」, 「我婆婆孙秀兰」, 「my dad Graham」, 「朵朵是我女儿」 → {朵朵: 女儿, 孙秀兰: 婆婆,
    Graham: 爸爸}. A name said for two relations keeps the first."""
    links: dict[str, str] = {}
    for original in texts:
        text = in_chinese(original)
        for at in range(len(text)):
            word = _relation_word_at(text, at)
            if word is None:
                continue
            after = at + len(word)
            after += text[after : after + 1] in ("，", ",")
            name = None
            called = _NAME_PATTERNS[0].match(text, after)
            if called is not None and not called.group(1).startswith(_PRONOUNS):
                name = trim_name(called.group(1))
            if not name:
                name = _names.name_at(text, after, after_relation=True)
            if not name:
                english = _CALLED_ENGLISH.match(text, after) or _APPOSED_ENGLISH.match(text, after)
                if english is not None and english.group(1) not in _NOT_ENGLISH_NAMES:
                    name = english.group(1)
            if name and name not in RELATIONS and canonical(name) == name:
                links.setdefault(name, canonical(word))
                given = given_name(name)
                if given is not None:
                    links.setdefault(given, canonical(word))
        for match in _NAME_PATTERNS[1].finditer(text):  # 「朵朵是我女儿」
            relation = next((w for w in RELATIONS if match.group(0).endswith(w)), None)
            if relation is not None:
                links.setdefault(match.group(1), canonical(relation))
        for name, relation in [(n, r) for n, r in links.items() if n in text]:
            for called in re.finditer(_CALLED_BY.format(name=re.escape(name)), text):
                nickname = _names.name_at(text, called.start(1)) or _whole_call(called.group(1))
                if nickname and nickname not in RELATIONS and canonical(nickname) == nickname:
                    links.setdefault(nickname, relation)  # 「大名叫张浩然，俺都喊他小虎」
    return links


def _whole_call(run: str) -> str | None:
    """What the family calls a member when the call ends its clause (「都喊他小虎」), unless it is
    an everyday word (「叫他吃饭」 goes on; 「喊她起床」 is a word)."""
    return run if 2 <= len(run) <= 3 and not _names.is_common_word(run) else None


# what the family calls a member already named: 「俺都喊他小虎」 (他 resolved: 「喊张浩然小虎」)
_CALLED_BY = r"(?:喊|叫|管)(?:他|她|它|{name})(?:叫)?([\u4e00-\u9fff]{{2,3}})(?=[，,。！!？?；;]|$)"


def _relation_word_at(text: str, at: int) -> str | None:
    """The relation word starting at ``at``: a project relation word, or a kinship term after
    an owner (「俺娘」「阿拉老头子」) — never the first word of a place (宠物医院)."""
    found = [w for w in RELATIONS if text.startswith(w, at)]
    term = kinship.longest_at(text, at, single_char=False)
    if term is not None and term not in NOT_KIN and _OWNED_BEFORE.search(text[:at]):
        found.append(term)
    word = max(found, key=len, default=None)
    if word is None or PLACE_AFTER.match(text, at + len(word)):
        return None
    return word


def introduces(text: str) -> bool:
    """Does the text introduce a member (「我们家有只橘猫」「阿拉屋里还养了一只乌龟」「We've got a
    beagle」)?"""
    return bool(_INTRODUCES.match(text) or _ENGLISH_INTRODUCES.match(text))


def household_names(texts: Iterable[str], subjects: Iterable[str | None] = ()) -> list[str]:
    """The names a household uses: introduced in ``texts`` (「女儿叫小橙子」 → 小橙子) and the
    ``subjects`` that are names — not relation words, their spoken forms or the speaker; a
    three-character full name also by its given name (罗小满 → 小满)."""
    found: list[str] = []
    for name in [*(n for t in texts for n in names_in(t)), *(s for s in subjects if s)]:
        for said in (name, given_name(name)):
            if (
                said
                and said not in found
                and said not in RELATIONS
                and said not in SELF_WORDS
                and canonical(said) == said
            ):
                found.append(said)
    return found


def about_a_pet(text: str, subject: str | None, about: Iterable[str] = ()) -> bool:
    """Is a memory about one of the household's animals: its subject or what it is about a pet
    word, or its text naming one (「兽医说翠翠的肺特别娇气」)?"""
    if any(canonical(w) in _ANIMAL_WORDS for w in (subject or "", *about) if w):
        return True
    return any(word in text for word in _ANIMAL_WORDS)
