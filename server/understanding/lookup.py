"""Hearth looks before the model answers: when a request is about something a safety constraint
could touch — food or drink, a medicine, a purchase or gift, an outing or activity, a pet — the
read path runs the ``check_safety`` lookup itself, in its first round trip, and puts the
constraints of whoever the request is about into the safety group. A small model that never
calls the tool still sees them; the tool stays for capable models.

Two questions, answered without an LLM:

- *Does the request touch a safety topic?* ``touches_safety``: words of the topics the tool and
  the prompt list (``render.SAFETY_TOPICS``), spelled out as the everyday verbs and nouns of
  each (吃, 喝, 药, 买, 送, 订, 去…玩, 喂…). Chit-chat, music, weather, code and device commands
  contain none of them.
- *Whose constraints?* ``Scope``: the relations and names the request mentions (「给我爸买一箱
  啤酒」 → 爸爸's); the speaker alone when it only speaks of itself (「我中午一个人吃点什么」 →
  the constraints about 我); the whole household when it names nobody (「订个外卖」). Constraints
  about no one in particular apply in every scope.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory import entities, kinship
from memory.schema import Memory
from memory.terms import any_of
from server.understanding import knowledge

# Everyday words of each topic in render.SAFETY_TOPICS (one list, reviewed by topic, not tuned on
# the bench's questions).
_FOOD = (
    "吃", "喝", "饭", "菜", "餐", "面条", "粥", "汤", "零食", "点心", "甜点", "甜品", "蛋糕",
    "糖", "水果", "奶", "茶", "咖啡", "酒", "饮料", "果汁", "汁", "外卖", "做饭", "煮", "炒",
    "烤", "炖", "蒸", "腌", "夜宵", "早饭", "早餐", "午饭", "午餐", "晚饭", "晚餐", "食",
    "火锅", "烧烤", "披萨", "汉堡", "海鲜", "坚果",
    # what dishes are made of: a dish name carries one (宫保鸡丁, 红烧肉, 清蒸鱼)
    "肉", "鸡", "鸭", "鱼", "虾", "蟹", "蛋", "豆腐", "米饭", "牛排", "羊",
)  # fmt: skip
_HEALTH = (
    "药", "医", "病", "疫苗", "打针", "输液", "保健品", "维生素", "感冒", "发烧", "咳嗽",
    "疼", "痛", "过敏", "体检", "手术", "牙",
)  # fmt: skip
_BUYING = ("买", "送", "礼物", "礼包", "订", "下单", "网购")
_OUTINGS = (
    "旅行", "旅游", "出行", "出门", "出去玩", "去玩", "逛", "爬山", "爬", "游泳", "跑步",
    "运动", "健身", "锻炼", "酒店", "住宿", "民宿", "机票", "高铁", "火车", "飞机", "电梯",
    "楼", "景区", "公园", "露营", "滑雪", "潜水", "蹦极", "栈道", "游乐", "过山车", "坐车",
)  # fmt: skip
_PETS = ("喂", "猫粮", "狗粮", "遛狗", "宠物")
_PLANTS = ("花草", "盆栽", "绿萝", "植物", "鲜花", "香薰")
TRIGGERS: tuple[str, ...] = _FOOD + _HEALTH + _BUYING + _OUTINGS + _PETS + _PLANTS
# What a request or a constraint is about, by the same words (a constraint's own words too: a
# medicine it names, a height or a closed space it fears). 过敏 says a constraint, not its topic.
# Buying is no topic of a constraint: what is bought is (「给我买一双跑步鞋」 is an outing).
_ALLERGENS = ("花生", "芒果", "牛奶", "鸡蛋", "小麦", "麸质", "乳糖", "辣")
_MEDICINES = ("霉素", "头孢", "阿莫西林", "阿司匹林", "布洛芬", "磺胺", "降压药", "胰岛素")
_HEIGHTS_AND_SPACES = ("恐高", "高处", "高空", "幽闭", "密闭", "电梯", "缆车", "飞机")
_TOPICS: dict[str, tuple[str, ...]] = {
    "food": _FOOD + _ALLERGENS,
    "health": tuple(w for w in _HEALTH if w != "过敏") + _MEDICINES,
    "outing": _OUTINGS + _HEIGHTS_AND_SPACES,
    "pet": (*_PETS, "猫", "狗"),
    "plant": (*_PLANTS, "百合"),
}
# A wrong topic drops a constraint that matters, a missing one only keeps it: no one-character
# word that is part of another topic's (花 of 花生), and 花粉 on no topic (it matters outdoors).


_TRIGGER = any_of(TRIGGERS)
# the speaker speaks of themself — after possessives (我家, 我的, 我老婆, 我妈) are taken out
_SELF = re.compile(r"我|自己|本人")
_POSSESSIVE = re.compile(
    "我(?=家|的|" + "|".join(sorted((*entities.RELATIONS, "妈", "爸"), key=len, reverse=True)) + ")"
)
_WE = ("我们", "咱们", "咱家", "一起", "大家", "全家")
# people outside the household: a gift or a drink for a colleague touches none of its
# constraints (the local model, shown the speaker's penicillin allergy for 「给我同事买杯奶茶」,
# said 「你同事可能对青霉素过敏」)
_OUTSIDERS = ("同事", "朋友", "同学", "客户", "老板", "领导", "邻居", "室友", "客人")
_OUTSIDER_OF_MINE = re.compile("我(?=" + "|".join(_OUTSIDERS) + ")")


# separable verbs say the same thing split: 跑个步 is 跑步, 游个泳 游泳, 吃顿饭 吃饭
_SPLIT_VERB = re.compile(r"(?<=[\u4e00-\u9fff])(?:个|了个|一个|顿|一顿|了)(?=[\u4e00-\u9fff])")


def touches_safety(question: str) -> bool:
    """Is the request about something a household's safety constraint could touch?"""
    return _TRIGGER.search(question) is not None or (
        _TRIGGER.search(_SPLIT_VERB.sub("", question)) is not None
    )


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose constraints a request can touch."""

    relations: tuple[str, ...]  # relation words the request mentions (synonyms expanded)
    me: bool  # the speaker themself
    everyone: bool  # nobody in particular, or all of us: the whole household

    def covers(self, question: str, memory: Memory) -> bool:
        if self.me and memory.subject in entities.SELF_WORDS:
            return True  # the speaker's own, whatever it mentions (「我对猫毛过敏」: 猫)
        about = [
            w for w in (memory.subject, *memory.entities) if w and w not in entities.SELF_WORDS
        ]
        if not about:  # about no one in particular (the speaker's own: above)
            return memory.subject not in entities.SELF_WORDS
        if self.everyone or entities.mentions(question, memory.subject, memory.entities):
            return True  # the request names them (小橙子, 年糕), or names nobody
        if any(word in self.relations for word in about):
            return True
        # one relation, many spellings: 我妈 / 老妈 / 母亲 are the 妈妈 a request names
        named = {entities.canonical(word) for word in self.relations}
        if any(entities.canonical(word) in named for word in about):
            return True
        # a member the household calls from the child's side (嗲嗲, 娭毑, 姥爷) is the one the
        # speaker names from their own (公公 or 爸爸, 婆婆 or 妈妈, 岳父 or 爸爸): either parent
        # may be speaking
        return any(named & _speakers_words(word) for word in about)


@lru_cache(maxsize=1024)
def _speakers_words(term: str) -> frozenset[str]:
    """What a parent may call the relative their child calls ``term``, canonical."""
    return frozenset(entities.canonical(t) for t in kinship.from_childs_side(term))


def scope_of(question: str, named: Sequence[str] = (), linked: Sequence[str] = ()) -> Scope:
    """``named``: household names the request says (「给小橙子吃」), known from recalled
    memories; a name names someone as a relation word does, and brings the relation words the
    household links to it (``linked``: 女儿 for 小橙子), so her constraints stored under either
    are hers — and the mother's or the cat's are not."""
    relations = tuple(entities.relations_in(question))
    if named:
        relations += tuple(w for w in linked if w in entities.RELATIONS and w not in relations)
    together = any(w in question for w in _WE)
    myself = _SELF.search(_POSSESSIVE.sub("", question)) is not None
    everyone = together or (not relations and not myself and not named)
    return Scope(relations, me=myself or everyone, everyone=everyone)


def for_outsiders(question: str) -> bool:
    """Is the request only for people outside the household (「给我同事买杯奶茶」)? Not when
    it also speaks of the speaker, of us, or of a relation (「我和同事去吃火锅」)."""
    if not any(word in question for word in _OUTSIDERS):
        return False
    rest = _POSSESSIVE.sub("", _OUTSIDER_OF_MINE.sub("", question))
    mine = _SELF.search(rest) or any(w in question for w in _WE)
    return not mine and not entities.relations_in(question)


_TOPIC_WORDS = {topic: any_of(words) for topic, words in _TOPICS.items()}
# the words of safety a recogniser must get right (server.device.hotwords)
VOCABULARY: tuple[str, ...] = tuple(
    sorted({w for words in (TRIGGERS, *_TOPICS.values(), knowledge.vocabulary()) for w in words
            if len(w) >= 2})
)  # fmt: skip


def topics_of(text: str) -> frozenset[str]:
    """The topics a request or a constraint is about (food, health, outing, pet, plant)."""
    plain = _SPLIT_VERB.sub("", text)
    return frozenset(
        topic
        for topic, words in _TOPIC_WORDS.items()
        if words.search(text) is not None or words.search(plain) is not None
    )


def in_scope(question: str, constraints: Sequence[Memory], limit: int) -> list[Memory]:
    """The constraints the request can touch, in the order given (best match first), at most
    ``limit``: those of whoever it is about (``Scope``), on a topic it is about — a penicillin
    allergy is no answer to 「我中午想吃个鸡腿饭」 (the local model recited it) — or whose topic
    is unknown (kept: a constraint missed costs more), or whose family covers what the request
    names (``knowledge``: a revolving restaurant is up high); none for a request only for people
    outside the household."""
    if for_outsiders(question):
        return []
    return within(question, scope_of(question), topics_of(question), constraints, limit)


def within(
    question: str, scope: Scope, asked: frozenset[str], constraints: Sequence[Memory], limit: int
) -> list[Memory]:
    """``in_scope`` for a request already read (``server.understanding.question``): its
    ``scope`` and the topics it is about (``asked``), not for outsiders only."""
    chosen = []
    for memory in constraints:
        about = topics_of(memory.text)
        on_topic = not asked or not about or bool(asked & about)
        if scope.covers(question, memory) and (on_topic or knowledge.covers(memory.text, question)):
            chosen.append(memory)
    return chosen[:limit]


# what a question asking for information looks like (「长城有多长？」「珠江流经哪个城市」)
_ASKS = re.compile(r"[？?]\s*$|吗|什么|哪|谁|几|多少|多长|多远|多高|多大|多久|怎么|为什么|是不是")


def asks_for_information(question: str) -> bool:
    """A question about the world rather than a request or plan of the household's."""
    return _ASKS.search(question) is not None
