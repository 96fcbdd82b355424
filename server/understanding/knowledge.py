"""One step of world knowledge about household safety constraints, without an LLM: for each
family of constraints (an allergen, a condition, a medicine, a fear, a pet's diet), the words of
a constraint that say it belongs to the family and the words of a request for something the
family covers — a dish that usually holds the allergen (宫保鸡丁 → 花生), a medicine of the
family (阿莫西林 → 青霉素), what is salty for a no-salt diet, a place up high for a fear of
heights, a closed space for claustrophobia.

Used twice: the lookup runs for a request naming something a constraint family covers (「我们去
坐摩天轮吧」 names no topic word of ``lookup``), and a constraint whose family covers what the
request names is said first (``applies``). Written as general household knowledge, family by
family; the e2e bench's dev split was read to check it, its test split is reported.
"""

from __future__ import annotations

from memory.terms import any_of

# constraint words → request words for what the constraint covers (one step of world knowledge;
# general household knowledge, reviewed by family, not a list of the bench's questions)
FAMILIES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
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
      "蹦极", "跳伞", "悬崖", "观景台", "天台", "过山车", "索道", "玻璃桥", "旋转餐厅")),
    (("幽闭", "密闭", "不坐电梯"),
     ("电梯", "直梯", "升降梯", "隧道", "山洞", "溶洞", "密室", "核磁", "胶囊", "地下室",
      "潜水艇")),
    (("处方猫粮", "处方粮", "肾不好"), ("猫粮", "罐头", "猫条", "鱼干", "冻干", "零食")),
    (("葡萄", "巧克力"), ("葡萄", "提子", "葡萄干", "巧克力", "可可")),
    (("百合",), ("百合",)),
    (("花粉",), ("花粉", "花海", "赏花", "春游", "花园")),
    (("辣",), ("辣", "麻辣", "火锅", "川菜", "湘菜", "辣椒")),
    (("酒精", "不能喝酒", "忌酒"), ("酒",)),
)  # fmt: skip

# every request word of two or more characters of every family (咸 or 贝 alone would start a
# lookup for 宝贝)
_COVERED = any_of(w for _, words in FAMILIES for w in words if len(w) > 1)


def vocabulary() -> set[str]:
    """Every word of every family, constraint side and request side."""
    return {w for marks, words in FAMILIES for w in (*marks, *words)}


def names_covered(request: str) -> bool:
    """Does the request name something a constraint family covers?"""
    return _COVERED.search(request) is not None


_COMPILED = tuple((any_of(marks), any_of(words)) for marks, words in FAMILIES)


def covers(constraint: str, request: str) -> bool:
    """Is ``constraint`` of a family that covers something ``request`` names?"""
    return any(
        marks.search(constraint) is not None and words.search(request) is not None
        for marks, words in _COMPILED
    )


def covered_by(constraint: str) -> set[str]:
    """Everything the families of ``constraint`` cover (an egg allergy: 蛋, 蛋糕, 蛋挞…)."""
    return {
        word
        for (marks, words), (pattern, _) in zip(FAMILIES, _COMPILED, strict=True)
        if pattern.search(constraint) is not None
        for word in words
    }
