"""A device never invents a household fact.

Asked 「我儿子叫什么名字？」 with nothing about a son in memory, the small local model answered
「你儿子叫小明。」; asked 「我姐姐住在哪？」 it borrowed 「苏州」 from a memory about the mother.
The prompt's "no memory about this" marker and rule help (``server.memory.render``), but a rule
a model may ignore is no guarantee. So, like the claims guard (``server.device.claims``), a
sentence is checked before TTS:

- only in a turn whose question asks for a *fact* about the household (「…叫什么」「…几岁」
  「…在哪」, about me, my family, a named member or pet) — not for advice, plans or requests
  (「我中午吃点什么好」「周末带孩子去哪玩」), where new content is the point;
- what the sentence states specifically — names, places, things, numbers (jieba's part of
  speech) — must be found in the question, in what memory holds *about whoever the question is
  about* (``Grounds``, built by the read path), or in what the person said earlier in this
  session; numbers compare as numbers (三月十二号 = 3月12号);
- an unsupported sentence is not spoken; when the reply ends having stated nothing that holds
  (every fact in it dropped), the device says an honest 「这个你还没跟我说过，我不知道。」 — so a
  right answer after a stray sentence (「你老婆叫林芳，女儿小名叫橙橙。」 asked about the
  daughter) is still heard, without an "I don't know" in the middle of it. A turn where a tool
  ran is not checked (the answer may come from the tool), nor one without memory (the store
  down: unknown, not empty).

Only Chinese is checked (the device language of the defaults); other languages pass through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import cn2an
import jieba.posseg

from memory import entities, slot_kinds
from server.understanding import answer_shapes
from server.understanding.question import Question
from server.understanding.words import tagged

DONT_KNOW = {"zh": "这个你还没跟我说过，我不知道。"}

# where the answer is an instance of the word that follows (「什么品种」「哪个明星」)
_CATEGORY_BEFORE = re.compile(
    r"(?:什么|啥|哪(?:个|种|类|家|只|位|所|款|一个|一种)?|几(?:个|种|位)?)$"
)
# a question of several asks
_SEVERAL = re.compile(r"[，,；;、]")
# 「豆豆是公的还是母的？」: the two values asked between
_CHOICE_SIDES = re.compile(r"是([^，。？?还]{1,8}?)还是([^，。？?]{1,8}?)[的呢啊呀]*[？?]?\s*$")
# a constraint claimed of an item (「她对向日葵过敏」): memory must say it of that item
_ALLERGY_CLAIM = re.compile(r"对([^，。,；;！!？?、]{1,12}?)过敏")
# the sentence already says it does not know
_ADMITS = re.compile(r"不知道|不清楚|不记得|没跟我说过|没说过|没提过|没告诉过|没有记录|没有关于")
# asked what someone likes to eat, drink, hear, read or play: the verbs of each sort
_LIKING_VERB = re.compile(r"(?:喜欢|爱|最爱)(吃|喝|听|看|读|玩)")
_VERB_SORTS = {"吃": ("吃",), "喝": ("喝",), "听": ("听",), "看": ("看", "读"), "读": ("看", "读"),
               "玩": ("玩",)}  # fmt: skip
# the category a question asks an instance of, at its end: 「喜欢吃什么水果」
_CATEGORY_AFTER = re.compile(
    r"(?:什么|啥|哪(?:个|种|类|家|样)?)([\u4e00-\u9fff]{1,4}?)[的呢啊呀]*[？?]?\s*$"
)
# the instance of a category a question asks for: 「打的是什么疫苗」「最喜欢哪种恐龙」
_INSTANCE_ASKED = re.compile(
    r"(?:什么|啥|哪(?:种|类|款|样|一种|一类))(?:样的)?([\u4e00-\u9fff]{1,6}?)[的呢啊呀吗]*[？?]?\s*$"
)
# a category word with only a verb before it names no instance (打疫苗, 喜欢恐龙, 钓鱼, 吃药)
_BARE_BEFORE = frozenset("打吃喝钓看玩听买用养爱欢学练弹做去有")
# after it, an instance follows (「最喜欢的花是向日葵」)
_INSTANCE_AFTER = frozenset("是叫为")
# who is named: the last word before 叫/姓 (「瑜伽老师叫什么」), name words left out
_NAME_WORDS = re.compile(r"(?:的)?(?:全名|名字|大名|小名|昵称|外号|全称|真名)")
_NAMED = re.compile(r"(.{1,8}?)(?:叫|姓)(?:什么|啥)")
# verbs too common to say what a question is about
_GENERIC_VERBS = frozenset(
    ("知道", "记得", "觉得", "喜欢", "是不是", "有没有", "一般", "平时", "现在", "是从", "是在",
     "是跟", "是和", "过来", "过去")
)  # fmt: skip
# one-character nouns too common to say what a question is about
_GENERIC_CHARS = frozenset("人事天年月时家里边面")
# nouns that name no fact (the model's filler, its own machinery)
_GENERIC = frozenset(
    ("现在", "目前", "时候", "事情", "东西", "问题", "信息", "记忆", "家庭", "有点", "名字",
     "时间", "情况", "方面", "地方", "样子", "意思", "一下", "你们", "我们", "无法", "办法",
     "方法", "建议", "建议您", "需要", "可能")
)  # fmt: skip
# one spelling per weekday: 星期六 / 礼拜六 → 周六, 周天 / 星期天 → 周日
_WEEKDAY = re.compile(r"星期|礼拜")
_DAY = re.compile(r"周[日天末]|星期|礼拜")
# a time relative to now (明天, 今年, 上周, 现在): says nothing specific on its own
_RELATIVE_TIME = re.compile(r"[今明昨前后去上下这本每]|现在|目前|刚才|以后|以前|平时|最近|时候")
_NUMERAL = re.compile(r"[0-9零一二两三四五六七八九十百千万]")
_BARE_NUMBER = re.compile(r"[0-9.零一二两三四五六七八九十百千万]+")
_ARTICLE = re.compile(r"一[个些点下家种样次位名只条件把群份块]?")
_WORDLIKE = re.compile(r"[0-9A-Za-z\u4e00-\u9fff]")


@dataclass(frozen=True)
class Grounds:
    """What a reply to a personal fact question may state: the question, what memory holds about
    whoever it is about, what the person said earlier in the session. ``lacking``: memory
    surely holds no answer (``memory_lacks``): the reply says it does not know before anything
    else."""

    question: str
    texts: tuple[str, ...]
    lacking: bool = False
    # what ``lacking`` was judged on: the memory texts about them, and who they are
    about: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def with_said(self, said: Sequence[str], understood: Question | None = None) -> Grounds:
        """These grounds and what the person said earlier in the session (「我儿子叫小明」 told
        a minute ago answers 「我儿子叫什么名字？」); ``understood``: the question as the read
        path read it, not read again."""
        about = (*self.about, *said)
        lacking = self.lacking and memory_lacks(understood or self.question, about, self.names)
        return Grounds(self.question, (*self.texts, *said), lacking, about, self.names)

    @cached_property
    def source(self) -> str:
        return "\n".join((self.question, *self.texts))

    @cached_property
    def normal(self) -> str:
        """``source`` as facts compare (once per turn, not per sentence)."""
        return _normal(self.source)


def names_a_held_topic(question: str, texts: Sequence[str]) -> bool:
    """Does ``question`` — no 我 in it, no one named — ask about what one memory holds by at
    least two of its specific words (「国庆去云南是坐飞机还是开车？」: 国庆 and 云南, the family's
    plan)? Then it is about the household. A world question shares one at most (「云南的省会是
    哪里？」: 省会 is held by no memory); the values of a choice are not its topic."""
    choice = _CHOICE_SIDES.search(question)
    sides = [side for side in choice.groups() if side] if choice else []
    words = {
        pair.word
        for pair in tagged(question)
        if _specific(pair.word, pair.flag) or _festive(pair.word, pair.flag)
    }
    words = {word for word in words if not _a_side(word, sides)}
    return len(words) >= 2 and any(all(word in text for word in words) for text in texts)


def _a_side(word: str, sides: Sequence[str]) -> bool:
    """Is ``word`` one of the values a choice asks between (「坐飞机还是开车」: 飞机, 开车)?"""
    return any(word in side or side in word for side in sides)


def _festive(word: str, flag: str) -> bool:
    """A named time of year (国庆, 春节, 中秋): as specific as a date."""
    return flag == "t" and len(word) > 1 and not _RELATIVE_TIME.search(word)


def memory_lacks(asked: str | Question, texts: Sequence[str], names: Iterable[str]) -> bool:
    """Do ``texts`` — what memory holds about whoever a fact question (``asked``, read once:
    ``Question``) is about — surely hold no answer to it? Only when that is plain, so a right
    answer is never refused:

    - nothing is held about them at all (「我儿子叫什么名字？」 with no son in memory);
    - the question asks for a kind of fact (``memory.slot_kinds``: a name, an age, where they
      live or work or study, what they like, where they are from) and no text states one
      (「豆豆今年几岁了？」 when memory has his name and breed only); asked what someone likes
      to eat, drink, hear, read or play, a liking of another sort is none (「我爸最爱吃什么菜？」
      against 「爸爸最喜欢去钓鱼」); asked the name of someone memory knows by no name or
      relation, only a line naming them answers (「我老婆的瑜伽老师叫什么名字？」 is not answered
      by 「我老婆叫林芳」);
    - asked an instance of a category (「这次打的是什么疫苗？」「最喜欢哪种恐龙？」), the lines
      about it name the category only as a verb's object (「去打疫苗」「特别喜欢恐龙」; not
      「处方猫粮」, nor 「最喜欢的花是向日葵」);
    - a choice between two values neither of which any text about the topic has a character of,
      what the two share left out (「豆豆是公的还是母的？」; 「年糕是公猫还是母猫？」: 公, 母;
      「国庆去云南是坐飞机还是开车？」 is not answered by 「开车过去要四十分钟」, a text about the
      office);
    - in a single ask that is not about what to watch out for (the constraints answer that):
      the answer has a shape (``answer_shapes``: a clock time, a place, a colour, a brand…) and
      no text about the asked thing shows one (「老婆的瑜伽课几点开始？」 against 「…每周二和周五
      晚上」; 「我爸一般去哪儿钓鱼？」 against 「爸爸退休以后最喜欢去钓鱼」: 钓鱼 is what happens,
      not where) — the asked thing being the question's specific words and verbs (瑜伽课, 下班),
      when it has any; or the specific things it asks about (「小橙子的班主任姓什么？」: 班主任),
      leaving out ``names`` (who it is about) and the word after 什么/哪个 (「什么品种」 is
      answered by 「柯基」: a category, never looked for as written), share no character with any
      text (two adjacent ones for a word of three or more: 「车牌号」 and 「手机号」).
    """
    if not texts:
        return True
    understood = asked if isinstance(asked, Question) else Question(asked)
    question = understood.text
    several = _SEVERAL.search(question.rstrip("？?。 ")) is not None
    pairs = tagged(question)
    asked_words = {pair.word for pair in pairs}
    shapes = [] if several else answer_shapes.asked(question)
    kinds = set(understood.slots)
    category = _instance_asked(question)
    if kinds:
        answering = [text for text in texts if kinds & set(slot_kinds.kinds_of(text))]
        if not several and kinds == {"likes"}:
            answering = [text for text in answering if _liking_alike(question, text)]
        role = _named_role(question, names) if "name" in kinds and not several else None
        if role:  # 「我老婆的瑜伽老师叫什么？」 is not answered by 「我老婆叫林芳」
            answering = [text for text in answering if role in text]
        if category:  # 「最喜欢哪种恐龙？」 is not answered by 「特别喜欢恐龙」
            answering = [text for text in answering if not _only_bare(category, text)]
        shapes = [shape for shape in shapes if shape.name != "place"]  # the kind is the place
        return not any(_shows_all(shapes, text, asked_words) for text in answering)
    held = "".join(texts)
    choice = _CHOICE_SIDES.search(question)
    sides = _differing([side.rstrip("的呢") for side in choice.groups()]) if choice else []
    if not choice and (understood.caution or several):
        return False  # what to watch out for is the constraints' to answer; several asks, any
    people = [name for name in names if name]
    focus, topic = _asked_thing(pairs, people, sides)
    # the texts about what it asks of (「瑜伽课」「国庆…云南」); all when it names nothing
    about = _about(texts, focus, topic) if focus or topic else list(texts)
    if choice:  # among the texts about the topic (「国庆去云南…」), not 「开车过去要四十分钟」
        return not any(char in text for text in about for side in sides for char in side)
    if category and not shapes:
        naming = [text for text in about if category in text]
        # every line about the asked thing names the category, only as a verb's object (a line
        # about it without the word may name an instance in other words: 什么药, 青霉素)
        every = not (focus or topic) or len(naming) == len(about)
        if naming and every and all(_only_bare(category, text) for text in naming):
            return True  # 「这次打的是什么疫苗？」 against 「…带小橙子去打疫苗」
    if shapes:
        if understood.liking:  # 「最喜欢哪个明星」: among what they like
            about = [text for text in about if slot_kinds.LIKES[1].search(text)]
        not_values = asked_words | set(people)
        return not any(_shows_all(shapes, text, not_values) for text in about)
    return bool(focus) and not any(_held(word, held) for word in focus)


def _asked_thing(
    pairs: Sequence[jieba.posseg.pair], people: Sequence[str], sides: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The words of a question naming the thing it asks about: its specific words (``focus``)
    and its topical ones, leaving out whom it is about, the values a choice asks between and
    the category after 什么/哪个."""
    focus, topic = [], []
    for i, pair in enumerate(pairs):
        word = pair.word.strip()
        if not word or any(word in n or n in word for n in people):
            continue
        if _a_side(word, sides):
            continue  # 「坐飞机还是开车」: the values asked between say nothing of the topic
        if _CATEGORY_BEFORE.search("".join(p.word for p in pairs[:i])) and len(word) < 3:
            continue  # 「什么品种」: a category; 「什么降压药」 still names a thing
        if _specific(word, pair.flag):
            focus.append(word)
        elif _topical(word, pair.flag):
            topic.append(word)
    return focus, topic


def _instance_asked(question: str) -> str | None:
    """The category ``question`` asks an instance of (「什么疫苗」: 疫苗), not a word naming no
    thing (「什么时候」「什么东西」)."""
    found = _INSTANCE_ASKED.search(question.strip())
    if found is None:
        return None
    word = found.group(1).split("的")[0]  # 「什么品种的猫」: 品种
    if (
        not word
        or word in "呢啊呀吗了"
        or word in _GENERIC
        or word in _GENERIC_CHARS
        or word in ("时候", "样", "地方", "意思")
    ):
        return None
    return word


def _only_bare(category: str, text: str) -> bool:
    """Does ``text`` name ``category`` only as a verb's object, never an instance of it
    (「去打疫苗」「特别喜欢恐龙」「去钓鱼」, not 「处方猫粮」「美式咖啡」「最喜欢的花是向日葵」)?
    False when it does not name it at all: an instance may be written without the word
    (「什么药」: 青霉素)."""
    at = [i for i in range(len(text)) if text.startswith(category, i)]
    if not at:
        return False
    for i in at:
        before = text[i - 1] if i else ""
        after = text[i + len(category) : i + len(category) + 1]
        if after in _INSTANCE_AFTER or (
            before and before not in _BARE_BEFORE and _WORDLIKE.match(before)
        ):
            return False
    return True


def _named_role(question: str, names: Iterable[str]) -> str | None:
    """Whom a name question asks the name of when that is no one memory knows by name or
    relation (「我老婆的瑜伽老师叫什么名字？」: 老师; 「我爱人全名叫啥？」: nobody new)."""
    found = _NAMED.search(_NAME_WORDS.sub("", question))
    if found is None:
        return None
    pairs = [p for p in tagged(found.group(1)) if _WORDLIKE.search(p.word)]
    if not pairs or not (pairs[-1].flag.startswith("n") or pairs[-1].flag == "eng"):
        return None  # 「她叫什么」: a pronoun is whoever the question is about
    word, people = str(pairs[-1].word), {name for name in names if name}
    if word in people or entities.relations_in(word):
        return None
    if any(word in name or name in word for name in people if len(name) > 1):
        return None
    return word


def _differing(sides: list[str]) -> list[str]:
    """The two values of a choice without what they share (「公猫还是母猫」: 公, 母 — the 猫 is
    the topic, held by any line about the cat)."""
    common = set(sides[0]) & set(sides[1])
    parts = ["".join(char for char in side if char not in common) for side in sides]
    return parts if all(parts) else sides


def _about(texts: Sequence[str], focus: Sequence[str], topic: Sequence[str]) -> list[str]:
    """The texts about what a question asks of: those holding one of its words as written (苏州
    is not held by 杭州), else a character of one (「牙医」: 「去医院看牙」)."""
    whole = [text for text in texts if any(word in text for word in (*focus, *topic))]
    return whole or [text for text in texts if any(_held(word, text) for word in focus)]


def _topical(word: str, flag: str) -> bool:
    """Does this word, stating no fact itself, say what the question is about: a verb
    (下班, 上课) or a one-character noun (「去看牙」: 牙)?"""
    if flag.startswith("v"):
        return len(word) > 1 and word not in _GENERIC_VERBS
    return flag == "n" and len(word) == 1 and word not in _GENERIC_CHARS


def _shows_all(shapes: Sequence[answer_shapes.Shape], text: str, asked_words: set[str]) -> bool:
    return all(answer_shapes.shows(shape, text, asked_words) for shape in shapes)


def _liking_alike(question: str, text: str) -> bool:
    """Is ``text`` a liking of the sort asked: to eat, drink, hear, read or play (「爱吃什么」 is
    not answered by 「喜欢去钓鱼」), or naming the asked category itself (「喜欢吃什么水果」:
    「水果」)? A question naming no such verb takes any liking."""
    verb = _LIKING_VERB.search(question)
    if verb is None:
        return True
    category = _CATEGORY_AFTER.search(question)
    if category and category.group(1) in text:
        return True
    return any(alike in text for alike in _VERB_SORTS[verb.group(1)])


def _held(word: str, held: str) -> bool:
    """Does memory say anything of ``word``: a character of a short word, two adjacent ones of
    a longer word (「车牌号」 is not held by 「手机号」's 号)."""
    if len(word) < 3:
        return any(char in held for char in word)
    return any(word[i : i + 2] in held for i in range(len(word) - 1))


def _normal(text: str) -> str:
    """Weekdays in one spelling, numbers as digits: what a fact compares as."""
    text = _WEEKDAY.sub("周", text).replace("周天", "周日")
    try:
        return str(cn2an.transform(text, "cn2an"))
    except (ValueError, KeyError):  # a numeral it cannot read: compare as written
        return text


def _specific(word: str, flag: str) -> bool:
    """Does this word state a fact: a name, place, thing or number? Not a common one-character
    noun (人, 事) nor 「一」 as an article (一个, 一些)."""
    if word in _GENERIC or not _WORDLIKE.search(word):
        return False
    if flag in ("nr", "ns", "nt", "nz", "nrfg", "nrt", "eng"):
        return True
    if flag.startswith("n"):
        return len(word) > 1
    if _ARTICLE.fullmatch(word):
        return False
    dated = _NUMERAL.search(word) is not None or _DAY.search(word) is not None
    return flag in ("m", "mq", "t") and dated


def unsupported(sentence: str, grounds: Grounds) -> list[str]:
    """The specifics ``sentence`` states that ``grounds`` do not hold (empty: grounded)."""
    if _ADMITS.search(sentence):
        return []
    source, normal = grounds.source, grounds.normal
    missing = []
    pairs = tagged(sentence)
    for i, pair in enumerate(pairs):
        word, flag = pair.word.strip(), pair.flag
        if not word or not _specific(word, flag) or word in source:
            continue
        if word.startswith("对") and word[1:] in source:
            continue  # jieba's 对虾 (a prawn) in 「她对虾过敏」
        if _BARE_NUMBER.fullmatch(word):
            # a number with its unit: 「1岁」 is not held by 「一只柯基」's 1
            unit = pairs[i + 1].word if i + 1 < len(pairs) else ""
            word += unit if len(unit) == 1 and _WORDLIKE.match(unit) else ""
        if _normal(word) not in normal:
            missing.append(word)
    # each word held, the claim not: 「老婆对向日葵过敏」 joins her favourite flower to an
    # allergy of another line
    unheld = unheld_allergies(sentence, (grounds.question, *grounds.texts))
    return missing + [word for word in unheld if word not in missing]


def restates_a_line(sentence: str, grounds: Grounds) -> bool:
    """Does ``sentence`` tell one line of memory back — every specific word it states held by
    that one line, two at least (「翠翠是只画眉。」 from 「翠翠是一只画眉」)? Then it is true, even
    when memory lacks the answer asked for: context before "I don't know", not an invented
    answer. An answer made of the question's words and another line's (「班主任姓王」 from the
    piano teacher's line) is not held by one line."""
    words = {
        pair.word.strip() for pair in tagged(sentence) if _specific(pair.word.strip(), pair.flag)
    }
    if len(words) < 2:
        return False
    lines = [_normal(text) for text in grounds.texts]
    return any(all(_normal(word) in line for word in words) for line in lines)


# a clause that claims nothing of anyone: a condition, a guess, people in general, a question
_NO_CLAIM = re.compile(
    r"如果|要是|假如|假设|万一|若是|可能|也许|是否|有没有|有些|有的|很多|一些|不少|部分"
)
_CLAUSE = re.compile(r"[，。,；;！!？?：:]")
# relation words that stand for any member of their kind: a line about 孩子 may be 女儿's
_ANY_MEMBER = frozenset({"孩子", "宝宝", "宠物"})


@dataclass(frozen=True)
class _Household:
    """Who memory's lines name: the names they introduce, and for each member every word the
    household uses for them (「女儿叫小橙子」「小橙子小名叫橙橙」: 女儿, 小橙子, 橙橙), joined
    through the lines that introduce a name."""

    names: tuple[str, ...]
    links: dict[str, set[str]]

    @classmethod
    def of(cls, lines: Sequence[str]) -> _Household:
        household = cls(tuple(entities.household_names(lines)), {})
        for line in lines:
            if not entities.names_in(line):
                continue
            group = household.members(line) - {"*"}
            for member in list(group):
                group |= household.links.get(member, set())
            for member in group:
                household.links[member] = group
        return household

    def members(self, text: str) -> set[str]:
        """The household members a text names: relation words (one spelling each) and names;
        '*' for the whole family (「家里」)."""
        if any(word in text for word in entities.FAMILY_WORDS):
            return {"*"}
        found = {entities.canonical(word) for word in entities.relations_in(text)}
        return found | {name for name in self.names if name in text}

    def claims(self, sentence: str) -> Iterator[tuple[re.Match[str], set[str]]]:
        """Each allergy claim of ``sentence`` (「X对Y过敏」; not a condition, a guess, people in
        general) with every word for the members X names ('*': the whole family; empty: it
        names none memory knows)."""
        for claim in _ALLERGY_CLAIM.finditer(sentence):
            clause = _CLAUSE.split(sentence[: claim.start()])[-1]
            if _NO_CLAIM.search(clause):
                continue
            who = self.members(clause)
            yield claim, {word for member in who for word in self.links.get(member, {member})}

    def theirs(self, line: str, whose: set[str]) -> bool:
        """Could ``line`` be about one of ``whose``? Yes when it names nobody in particular (the
        speaker's own, or no one), the whole family, or any member of a kind."""
        members = self.members(line)
        return not members or "*" in members or bool(members & (_ANY_MEMBER | whose))


def unheld_allergies(
    sentence: str, lines: Sequence[str], constraints: Sequence[str] = ()
) -> list[str]:
    """The items ``sentence`` claims someone is allergic to (「X对Y过敏」) that memory does not
    hold: no line with 过敏 (or, given ``constraints``, no constraint line) names the item — or
    every line that does is about someone else than the household member the claim names
    (a name or relation word; a name reaches its relation through a line introducing it:
    「女儿叫小橙子」; 「豆豆对花生过敏」 when the peanut allergy is 小橙子's). ``lines``: the
    question and what memory holds. A condition, a guess, people in general or a question
    claim nothing (「如果你对花粉过敏…」)."""
    if _ALLERGY_CLAIM.search(sentence) is None or sentence.rstrip().endswith(("？", "?")):
        return []
    holding = [line for line in lines if "过敏" in line] + list(constraints)
    household = _Household.of(lines)
    unheld: list[str] = []
    for claim, whose in household.claims(sentence):
        for pair in tagged(claim.group(1)):
            word = pair.word.strip()
            if not _specific(word, pair.flag) or word in unheld:
                continue
            held = [line for line in holding if word in line]
            if not held or (whose and not any(household.theirs(line, whose) for line in held)):
                unheld.append(word)
    return unheld


def constraints_of_claimed(
    sentence: str, lines: Sequence[str], constraints: Sequence[str]
) -> list[str]:
    """The ``constraints`` about whoever ``sentence``'s allergy claims name (by name or relation,
    as ``lines`` introduce them): what memory says of them, to say instead of a claim it does
    not hold (「妈妈对荔枝过敏」 → 「妈妈有糖尿病，甜的要少吃」)."""
    household = _Household.of(lines)
    found: list[str] = []
    for _, whose in household.claims(sentence):
        named = whose - {"*"}
        found += [c for c in constraints if c not in found and household.members(c) & named]
    return found


_CONTINUES = re.compile(r"\s*(但是|但|不过|可是|只是|而且|并且|所以|因此|因为|还有)")


def continues(sentence: str) -> bool:
    """Does ``sentence`` lean on the one before it (「但不能和西柚一起吃。」)? Said alone after
    that one was dropped, it would be half an answer."""
    return _CONTINUES.match(sentence) is not None


def states_something(sentence: str) -> bool:
    """Does ``sentence`` state a fact at all (a name, place, thing or number)?"""
    return any(_specific(p.word.strip(), p.flag) for p in tagged(sentence))


def admits(sentence: str) -> bool:
    """Does ``sentence`` say it does not know (「这个你还没跟我说过」)?"""
    return any(_ADMITS.search(said) for said in (sentence, sentence.replace("没有", "没")))


def dont_know(language: str) -> str | None:
    """The replacement for an invented fact, or None where replies are not checked."""
    return DONT_KNOW.get(language.split("-")[0])
