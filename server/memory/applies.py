"""Which recalled constraints a request plainly touches, so that Hearth says them itself, first,
in the words memory holds them — a safety constraint must not depend on a small model deciding
to mention it (measured: the local 1.5B model left the constraint out of a third of the replies
that needed it, and garbled others: 「爸爸对啤酒过敏」 for 「爸爸有痛风，不能喝啤酒」).

No LLM. A constraint applies when it is about whoever the request is about (a name it says, else
``lookup.Scope``) and the request names what the constraint is about:

- *the same item*: an item word both share (「海鲜」「啤酒」「花生」「青霉素」), two adjacent
  characters neither of which is a function word — 「过敏」「不能」「能吃」 say nothing;
- *one step of world knowledge* (``_KNOWLEDGE``): a request word for something the constraint
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
from collections.abc import Sequence

from memory import entities
from memory.schema import Memory
from memory.terms import terms
from server.memory import lookup

# A shared character pair says an item only when neither character is a function word or a verb
# every request has: 「过敏」「不能」「能吃」「要少」「一吃」 are in every second constraint.
_FUNCTION = frozenset(
    "对不能要会就了的是有一个只也都在和把给很太吃喝去做买带点想多少起着过这那些么什还再又最"
    "我你您他她它们家让被从到说用种类样些次天每早晚上下午中里外前后时候可以别得地"
)
# constraint words → request words for what the constraint covers (one step of world knowledge;
# general household knowledge, reviewed by family, not a list of the bench's questions)
_KNOWLEDGE: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("高血压", "太咸", "少盐", "低盐", "口味淡"),
     ("咸", "盐", "酱油", "腌", "腊肉", "腊肠", "榨菜", "泡面", "方便面", "火腿", "卤", "豆瓣酱")),
    (("痛风", "尿酸"),
     ("啤酒", "海鲜", "内脏", "动物肝", "浓汤", "火锅", "沙丁鱼", "虾", "蟹", "扇贝", "生蚝")),
    (("糖尿病", "血糖", "甜的"),
     ("甜", "糖", "蛋糕", "奶茶", "冰淇淋", "雪糕", "巧克力", "月饼", "可乐", "果汁", "点心",
      "汤圆", "饮料")),
    (("花生",), ("花生", "宫保", "花生酱", "坚果", "沙爹", "担担面", "鱼皮花生", "牛轧糖")),
    (("海鲜", "虾", "蟹", "贝类"),
     ("海鲜", "虾", "蟹", "贝", "蚝", "鱿鱼", "墨鱼", "海参", "鲍鱼", "刺身", "寿司", "鱼")),
    (("芒果",), ("芒果", "杨枝甘露")),
    (("牛奶", "乳糖", "奶制品"),
     ("奶", "芝士", "奶酪", "拿铁", "冰淇淋", "雪糕", "黄油")),
    (("鸡蛋", "蛋类"), ("蛋", "蛋糕", "蛋挞", "沙拉酱", "蛋黄酱")),
    (("青霉素", "盘尼西林"),
     ("青霉素", "阿莫西林", "氨苄西林", "西林", "消炎药", "抗生素", "盘尼西林")),
    (("头孢",), ("头孢", "消炎药", "抗生素")),
    (("阿司匹林", "布洛芬"), ("阿司匹林", "布洛芬", "止痛药", "退烧药", "止疼药")),
    (("西柚", "葡萄柚"), ("西柚", "葡萄柚", "柚子")),
    (("恐高", "高处", "怕高"),
     ("高空", "高处", "楼以上", "十楼", "顶楼", "高层", "往下看", "栈道", "缆车", "摩天轮",
      "蹦极", "跳伞", "悬崖", "观景台", "天台", "过山车", "索道", "玻璃桥")),
    (("幽闭", "密闭", "不坐电梯"),
     ("电梯", "隧道", "山洞", "溶洞", "密室", "核磁", "胶囊", "地下室", "潜水艇")),
    (("处方猫粮", "处方粮", "肾不好"), ("猫粮", "罐头", "猫条", "鱼干", "冻干", "零食")),
    (("葡萄", "巧克力"), ("葡萄", "提子", "葡萄干", "巧克力", "可可")),
    (("百合",), ("百合",)),
    (("花粉",), ("花粉", "花海", "赏花", "春游", "花园")),
    (("辣",), ("辣", "麻辣", "火锅", "川菜", "湘菜", "辣椒")),
    (("酒精", "不能喝酒", "忌酒"), ("酒",)),
)  # fmt: skip
_PERSON_WORDS = re.compile(
    "|".join(re.escape(w) for w in sorted({*entities.RELATIONS, "我", "你", "自己"}, key=len,
                                           reverse=True))
)  # fmt: skip


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


def _known(question: str, constraint: str) -> bool:
    return any(
        any(w in constraint for w in covers) and any(w in question for w in words)
        for covers, words in _KNOWLEDGE
    )


def touches(question: str, memory: Memory, cue: str | None = None) -> bool:
    """Does the request name what this constraint is about (an item, one step of knowledge, or
    a cue's item)?"""
    names = [n for n in (memory.subject, *memory.entities) if n]
    asked = _items(question, names)
    if asked & _items(memory.text, names) or _known(question, memory.text):
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
