"""What a household member's name looks like when nothing introduces it with 「叫」.

People name their family in apposition (「我婆婆孙秀兰有糖尿病」「my dad Graham」) or simply
open a clause with the name (「文涛倒是不爱吃甜的」「朗仔而家读 P3」「Tom can't stand spicy
food」). Chinese given names and nicknames have a few productive shapes, read here from the
structure of the word, not from a list of our households' names:

- a reduplicated syllable (朵朵, 萌萌, 晴晴): the pet form of a child's name, unless the dictionary
  knows the pair as a word of its own (天天, 常常, 慢慢);
- a prefix of address before a syllable: 阿 (阿强, 阿轩), 老 / 小 before a surname (老刘, 小王);
- the Cantonese diminutive 仔 after a syllable (朗仔), 大 / 二 before one (大涵, 二黑) — when the
  dictionary does not know the whole as a word (公仔 and 大夫 are words; 朗仔 and 大涵 are not);
- a full name: a common surname and one or two syllables (孙秀兰, 胡敏), as jieba's name tagger
  reads it, or, right after a relation word, the surname and the next two syllables.

English names are capitalized words in the same places (after a kinship word, or opening a
clause before a verb), never a weekday, a month or a sentence opener.
"""

from __future__ import annotations

import re
from functools import lru_cache

import jieba
import jieba.posseg

jieba.setLogLevel(60)

# the commonest surnames (about nine people in ten in the census carry one of these)
SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶"
    "程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾"
    "毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关"
    "兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁"
)
_HAN = re.compile(r"[\u4e00-\u9fff]")
# a word the dictionary knows this often is a word, not a pet name (点点 316, 宝宝 301, 大宝 92)
_COMMON = 80
_NAME_FLAGS = ("nr", "nrfg", "nrt")
_RARE = 5  # a full name is a word the dictionary does not know, or barely


def _han(ch: str) -> bool:
    return bool(_HAN.fullmatch(ch))


def _known_word(word: str) -> bool:
    freq = jieba.dt.FREQ.get(word)
    return freq is not None and freq >= _COMMON


def is_common_word(word: str) -> bool:
    """Does the dictionary know ``word`` as an everyday word (外卖, 老师), not a name?"""
    return _known_word(word)


def tagged_name(word: str) -> bool:
    """Does jieba read all of ``word`` as one person's name (李娜, 王老师)?"""
    token, flag = _first_token(word)
    return token == word and flag in _NAME_FLAGS


@lru_cache(maxsize=4096)
def _first_token(text: str) -> tuple[str, str]:
    """The first word jieba reads in ``text`` and its part of speech."""
    for pair in jieba.posseg.lcut(text[:12]):
        return str(pair.word), str(pair.flag)
    return "", ""


def first_word(text: str) -> str:
    """The first word jieba reads in ``text``."""
    return _first_token(text)[0]


# reduplicated dialect adverbs: Cantonese 啱啱 (just now)
_DIALECT_WORDS = frozenset(("啱啱", "尕娃", "尕娃子"))
# characters that end a word rather than a name: 「大的」 is the big one, 「二个」 a count
_FUNCTION_CHARS = frozenset("的了着过是在和也都就们个些点")
# what follows a repeated verb (「唠唠我家那爷俩」「说说吧」), never a name's predicate
_AFTER_VERB = re.compile(r"[我你他她它这那咱俺吧呗呢啊嘛哈，。！？,.!?]|$")


def _verb_repeated(text: str, at: int) -> bool:
    """A verb said twice (唠唠, 说说, 看看) before its object or at a clause's end."""
    _, flag = _first_token(text[at])
    return flag.startswith("v") and bool(_AFTER_VERB.match(text, at + 2))


def nickname_at(text: str, at: int, *, after_relation: bool = False) -> str | None:
    """A nickname-shaped word starting at ``at`` (朵朵, 阿强, 老刘, 朗仔, 大涵, 尕桐), else None;
    ``after_relation``: right after a relation word (「我家老闺女萌萌，…」), where a repeated
    syllable is a name even when the syllable alone reads as a verb."""
    two = text[at : at + 2]
    if len(two) < 2 or not all(_han(c) for c in two):
        return None
    first, second = two[0], two[1]
    if first == second:
        if _known_word(two) or two in _DIALECT_WORDS:
            return None
        if not after_relation and _verb_repeated(text, at):
            return None
        return two
    word, _ = _first_token(text[at:])
    if len(word) > 2:
        return None  # 阿莫西林, 大学生: a longer word of its own
    if first == "阿" or (first in "老小" and second in SURNAMES):
        return None if _known_word(two) else two
    if second == "仔" or first in "大二尕":  # 尕: Northwestern "little" (尕桐, 尕蛋)
        if second in _FUNCTION_CHARS or two in _DIALECT_WORDS:
            return None  # 「大的那个」「尕娃」: the big one, a kid
        return None if two in jieba.dt.FREQ else two
    return None


def full_name_at(text: str, at: int, *, after_relation: bool = False) -> str | None:
    """A surname-first full name starting at ``at``: as jieba's name tagger reads it, or right
    after a relation word (「我老头子徐国平顶欢喜…」) the surname and two syllables."""
    if at >= len(text) or text[at] not in SURNAMES:
        return None
    word, flag = _first_token(text[at:])
    if flag in _NAME_FLAGS and 2 <= len(word) <= 3 and jieba.dt.FREQ.get(word, 0) <= _RARE:
        return word  # 杨桃 (22) is a fruit jieba also tags as a name
    if after_relation:
        three = text[at : at + 3]
        if (
            len(three) == 3
            and all(_han(c) for c in three)
            and not _known_word(three[:2])
            and not _known_word(three[1:])  # 「猫毛过敏」: 过敏 is a word, not a given name
        ):
            return three
    return None


def name_at(text: str, at: int, *, after_relation: bool = False) -> str | None:
    """A person's or pet's name starting at ``at`` in Chinese text, else None."""
    return nickname_at(text, at, after_relation=after_relation) or full_name_at(
        text, at, after_relation=after_relation
    )


# English: a capitalized word after a kinship word or opening a clause before a verb
_NOT_NAMES = frozenset(
    (
        "The", "This", "That", "There", "Then", "These", "Those", "It", "He", "She", "They",
        "We", "You", "What", "When", "Where", "Which", "Who", "How", "Why", "Today", "Tomorrow",
        "Yesterday", "Tonight", "Everyone", "Everything", "Nothing", "Someone", "Somebody",
        "Nobody", "Anyone", "Oh", "And", "Also", "So", "Well", "Yes", "No", "Hi", "Hey",
        "Okay", "But", "Anyway", "Right", "Sorry", "Please", "Thanks", "Just", "Actually",
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December", "Christmas", "Easter", "Mum", "Mom", "Dad", "Grandma",
        "Grandpa", "Nana", "Granny", "Did", "Does", "Is", "Was", "Can", "Could", "Will", "Would",
        "Last", "Next", "Every", "Our", "My", "His", "Her", "Their", "Your", "One", "Two",
    )
)  # fmt: skip
_ENGLISH_CLAUSE_NAME = re.compile(
    r"(?:^|(?<=[.!?,;:—–-]\s)|(?<=\b[Aa]nd\s)|(?<=\b[Bb]ut\s)|(?<=\b[Ss]o\s)|(?<=^Oh\s)"
    r"|(?<=^Well\s)|(?<=^Now\s))([A-Z][a-z]{2,20})"
    r"(?='s\b|’s\b|\s+(?:is|was|has|had|does|did|can|can't|cannot|will|won't|loves|likes|hates|"
    r"got|gets|goes|went|wants|needs|started|finally|always|never|only|just|already|still|"
    r"takes|took|plays|puts|wears|works|lives|supports|flies|turns|turned|and\s+[A-Z])"
    r"|\s+[—–]\s)"  # 「So Ollie — Oliver — is in Year 3」
)


def english_names(text: str) -> list[str]:
    """Capitalized words that open a clause as its subject (「Tom can't stand spicy food」)."""
    return [m.group(1) for m in _ENGLISH_CLAUSE_NAME.finditer(text) if m.group(1) not in _NOT_NAMES]
