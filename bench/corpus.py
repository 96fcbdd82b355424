"""Synthetic but realistic Chinese household memories, and labelled questions about them.

Deterministic for a seed. Each generated memory comes with the question a person would ask to
need it, so recall@k can be measured; noise questions (weather, music, code…) have no target.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

RELS = [
    "老婆",
    "老公",
    "女儿",
    "儿子",
    "妈妈",
    "爸爸",
    "奶奶",
    "爷爷",
    "姐姐",
    "弟弟",
    "岳母",
    "外婆",
]
FOODS = [
    "海鲜",
    "花生",
    "芒果",
    "牛奶",
    "鸡蛋",
    "虾",
    "螃蟹",
    "小麦",
    "大豆",
    "菠萝",
    "猕猴桃",
    "蚕豆",
]
DRUGS = ["青霉素", "阿司匹林", "头孢", "布洛芬", "磺胺类药"]
MEDS = ["降压药", "降糖药", "甲状腺药", "抗凝药", "哮喘喷雾"]
HOBBIES = [
    "恐龙",
    "乐高",
    "钢琴",
    "篮球",
    "围棋",
    "画画",
    "钓鱼",
    "跳舞",
    "悬疑小说",
    "爬山",
    "摄影",
    "养花",
]
CLASSES = ["吉他", "游泳", "英语", "书法", "舞蹈", "编程", "钢琴", "跆拳道"]
DAYS = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]
TIMES = ["早上八点", "上午十点", "中午十二点", "下午三点", "晚上七点", "晚上八点半"]
PLACES = ["杭州西湖区", "上海浦东", "北京朝阳区", "成都高新区", "深圳南山", "南京鼓楼区"]
JOBS = ["医院", "学校", "银行", "设计院", "律所", "超市", "研究所"]
DRINKS = ["美式咖啡", "绿茶", "豆浆", "乌龙茶", "燕麦拿铁", "菊花茶"]
COLORS = ["蓝色", "红色", "绿色", "黄色", "紫色", "白色"]
MONTHS = ["一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]
GIVEN = ["橙子", "豆豆", "晓", "磊", "静", "洋", "雨", "明", "晓梅", "子涵", "浩然",
         "一诺", "欣怡", "俊杰", "雨桐", "思远", "佳怡", "博文", "梓萱", "宇轩", "若曦", "天佑",
         "可馨", "明轩", "诗涵", "皓宇", "语嫣", "子墨", "安琪", "立诚"]  # fmt: skip
# 300 full names (surname + given name) so a 10,000-memory person needs no conflicting facts.
NAMES = [s + g for s in "王李张刘陈杨黄赵吴周" for g in GIVEN]
NOISE = [
    "今天天气怎么样", "放首周杰伦的歌", "帮我写个Python排序函数", "现在几点了", "把灯关了",
    "讲个笑话", "一加一等于几", "明天会下雨吗", "音量调大一点", "你叫什么名字", "定个十分钟的闹钟",
    "播放新闻", "翻译一下hello", "暂停音乐", "下一首", "北京到上海多远", "圆周率是多少",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Item:
    memory: dict[str, object]  # one JSONL import line
    question: str
    slot: str = ""  # what the question asks about; one memory per slot per person


# One template per kind of household fact: class, memory text, the question that needs it, and
# the value lists drawn (in this order) to fill them. ``{rel}`` is the person it is about.
TEMPLATES: tuple[tuple[str, str, str, tuple[tuple[str, Sequence[object]], ...]], ...] = (
    ("safety", "{rel}对{f}过敏", "{rel}能吃{f}吗", (("f", FOODS),)),
    ("safety", "{rel}对{d}过敏", "{rel}感冒了能用{d}吗", (("d", DRUGS),)),
    ("safety", "{rel}每天{t}要吃{m}", "{rel}什么时候吃{m}", (("m", MEDS), ("t", TIMES))),
    ("preference", "{rel}特别喜欢{h}", "{rel}喜欢{h}吗", (("h", HOBBIES),)),
    ("fact", "{rel}每{d}{t}有{c}课", "{rel}的{c}课是什么时候",
     (("c", CLASSES), ("d", DAYS), ("t", TIMES))),
    ("fact", "{rel}的生日是{mo}月{day}号", "{rel}生日是哪天", (("mo", MONTHS), ("day", range(1, 29)))),
    ("fact", "{rel}在{j}上班", "{rel}在哪里工作", (("j", JOBS),)),
    ("preference", "{rel}每天早上都喝{dr}", "给{rel}准备点{dr}", (("dr", DRINKS),)),
    ("fact", "{rel}住在{p}", "{rel}家住哪里", (("p", PLACES),)),
    ("preference", "{rel}最喜欢的颜色是{col}", "{rel}喜欢什么颜色", (("col", COLORS),)),
)  # fmt: skip


def _item(rng: random.Random) -> Item:
    rel = rng.choice(RELS) if rng.random() < 0.4 else rng.choice(NAMES)
    cls, text, question, fields = TEMPLATES[rng.randrange(len(TEMPLATES))]
    values: dict[str, object] = {"rel": rel}
    for name, choices in fields:
        values[name] = rng.choice(choices)
    asked = question.format(**values)
    # The question names the slot (subject + what is asked): 「王磊的游泳课是什么时候」.
    return Item({"text": text.format(**values), "cls": cls, "subject": rel}, asked, asked)


def unique_items(count: int, seed: int = 7) -> list[Item]:
    """``count`` items with distinct memory texts (the embedding pool)."""
    rng = random.Random(seed)
    seen: dict[str, Item] = {}
    attempts = 0
    while len(seen) < count and attempts < count * 50:
        item = _item(rng)
        seen.setdefault(str(item.memory["text"]), item)
        attempts += 1
    return list(seen.values())
