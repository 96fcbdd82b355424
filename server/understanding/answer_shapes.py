"""What shape an answer to a question takes, and whether a memory has one.

「老婆的瑜伽课几点开始？」 is answered by a clock time, 「我的车是什么颜色的？」 by a colour,
「狗粮是什么牌子？」 by a brand, 「老婆的瑜伽课在哪个馆上？」 by a place. A memory about the same
thing without a value of that shape (「老婆的瑜伽课改到了每周二和周五晚上」: a day, no hour, no
place) does not answer it — and a small model handed it answers with it anyway (asked her
favourite colour, it named her flowers). ``grounding.memory_lacks`` reads these shapes.

Only shapes a text shows by its form are here: a time, a day, a year, a duration, a colour, a
brand, a price, a weight, a height, a floor, a distance, a medicine (「我妈的糖尿病吃的是什么
药？」 is not answered by 「妈妈有糖尿病，甜的要少吃」: no medicine in it), a head count, a meal
count, how often (「一周上几次」: a count, or the days 「每周二和周五」), a count of things by
their measure word (「几杯」 by 「两杯」, not by 「一只」), a place, a celebrity's name. An answer
that is an instance of an open category (「什么品种」 → 柯基, 「哪类书」 → 悬疑小说)
has no form to check and is never judged by shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import jieba.posseg

from server.understanding.words import tagged

_NUM = "0-9零〇一二两三四五六七八九十百千万半"


@dataclass(frozen=True)
class Shape:
    """One shape: how a question asks for it, how a text shows it."""

    name: str
    asked: re.Pattern[str]
    shown: re.Pattern[str] | None  # None: a place, read by its words (``_names_a_place``)


SHAPES: tuple[Shape, ...] = (
    Shape("clock", re.compile(r"几点|什么时间|几时"),
          re.compile(rf"[{_NUM}]+点|\d{{1,2}}[:：]\d{{2}}|点钟")),
    Shape("year", re.compile(r"哪一?年|几几年|什么年份|哪年"),
          re.compile(rf"[{_NUM}]{{2,4}}年|[去前今明]年")),
    Shape("day", re.compile(r"什么时候|哪天|哪一天|哪几天|几号|几月|哪个月|星期几|周几|礼拜几"),
          re.compile(rf"[{_NUM}]+[月日号]|周[一二三四五六日天末]|星期|礼拜|[上下中]午|早上|早晨|"
                     r"晚上|傍晚|夜里|凌晨|[今明后昨前每]天|[上下这本每]周|[上下这本每]个?月|"
                     r"[去今明]年|节|寒假|暑假|\d{4}-\d{1,2}-\d{1,2}")),
    Shape("colour", re.compile(r"(?:什么|啥|哪种|哪个)颜色|什么色"),
          re.compile(r"[红橙黄绿青蓝紫黑白灰粉棕金银褐米]色|[红黄绿蓝紫黑白灰粉](?:的|颜色)")),
    Shape("brand", re.compile(r"(?:什么|啥|哪个|哪家|哪种)(?:牌子|品牌|牌)"),
          re.compile(r"牌|[A-Za-z]{2,}")),
    Shape("price", re.compile(r"多少钱|几块钱|什么价|价格|价钱"),
          re.compile(rf"[{_NUM}]+(?:块|元|毛|万|千)|免费|￥|¥")),
    Shape("weight", re.compile(r"多重|几斤|多少斤|几公斤|多少公斤|体重"),
          re.compile(rf"[{_NUM}]+(?:斤|公斤|千克|克|kg)")),
    Shape("height", re.compile(r"多高|身高|几米"),
          re.compile(rf"[{_NUM}]+(?:米|厘米|公分|cm)|[一二]米[{_NUM}]")),
    Shape("headcount", re.compile(r"几个人|多少人|几位|几口人"),
          re.compile(rf"[{_NUM}]+(?:个人|人|位|口)|一家[{_NUM}]口")),
    Shape("meals", re.compile(r"几顿|几餐"),
          re.compile(rf"[{_NUM}]+(?:顿|餐)|[早中晚]饭|[早午晚]餐")),
    Shape("duration", re.compile(
        r"多久|多长时间|多少年|(?<!哪)(?:几年(?!级)|几个月|几天|几个(?:星期|礼拜)|几周(?![一二三四五六日天末])|"
        r"几个?小时|几分钟)|多少个?月|多少天|多少个?小时|多少分钟"
    ), re.compile(rf"(?<![{_NUM}])[{_NUM}]{{1,3}}个?(?:年|天|周|星期|礼拜|小时|钟头|分钟)|"
                  rf"[{_NUM}]+个月|半(?:年|天|个月|小时)|[{_NUM}]{{4}}年|[去前]年|上个?月")),
    Shape("floor", re.compile(r"几楼|几层|哪一?层|哪一?楼(?!盘)|多少层|多少楼"),
          re.compile(rf"(?<![{_NUM}])[{_NUM}]+[楼层]|[A-Za-z]\d+|负[{_NUM}]+层?|顶楼|底楼|地下")),
    Shape("distance", re.compile(r"多少公里|几公里|多少千米|多少里"),
          re.compile(rf"[{_NUM}]+(?:公里|千米|里|km)")),
    Shape("far", re.compile(r"多远"),
          re.compile(rf"[{_NUM}]+(?:公里|千米|里|米|km|分钟|个?小时)|半小时|[{_NUM}]+站")),
    Shape("times", re.compile(r"(?:几|多少)(?:次|回|趟|遍)"),
          re.compile(rf"[{_NUM}]+(?:次|回|趟|遍)|每(?:天|日|晚|周[一二三四五六日天]|个?星期[一二三四五六日天])|"
                     r"天天|周[一二三四五六日天][和、跟及到至]周?[一二三四五六日天]")),
    *(Shape(f"count-{unit}", re.compile(rf"(?:几|多少)个?{unit}"),
            re.compile(rf"[{_NUM}]+个?{unit}"))
      for unit in "杯片颗粒条本辆台套瓶碗盒袋包张件双场节门首根支"),
    Shape("medicine", re.compile(r"(?:什么|啥|哪种|哪个|哪款)药(?![店房])"),
          re.compile(r"药|素|胶囊|丸|针|双胍|他汀|沙坦|地平|普利|洛尔|阿司匹林|布洛芬")),
    Shape("celebrity", re.compile(r"(?:哪个|哪位|什么|谁)(?:明星|歌手|演员|作家|偶像)|偶像是谁"),
          None),
    Shape("place", re.compile(
        r"[在去到]哪(?![个种类家位一样所座])|哪儿|哪里|什么地方|哪个地方|哪家(?!人)|"
        r"哪(?:家|个|所|座)?(?:医院|学校|小区|区|城市|省|饭店|餐厅|饭馆|店|馆|球馆|科室|商场|超市)"
    ), None),
)  # fmt: skip

# a word after these says where (「在外婆家吃饭」「去医院看牙」「住在苏州」; not 从, as in
# 「从牛肉味换成」)
_PLACE_BEFORE = frozenset(("在", "去", "到", "住", "住在", "搬到", "来"))
# the last character of a word that names a place (未来科技城, 滨江区, 体育馆)
_PLACE_END = re.compile(r"[城区市县镇村路街馆店站楼院园场所厦港湾寺庙家]$")


def asked(question: str) -> list[Shape]:
    """The shapes ``question`` asks for (「吉他课是星期几几点？」: a day and a clock time)."""
    return [shape for shape in SHAPES if shape.asked.search(question)]


def shows(shape: Shape, text: str, asked_words: set[str]) -> bool:
    """Does ``text`` hold a value of ``shape``, other than the question's own words (「去医院看
    牙」 names no hospital for 「我去看牙是哪家医院？」)?"""
    if shape.shown is not None:
        return shape.shown.search(text) is not None
    pairs = [p for p in tagged(text) if p.word.strip()]
    if shape.name == "celebrity":
        return any(p.flag in ("nr", "nrt", "nrfg") and p.word not in asked_words for p in pairs)
    return _names_a_place(pairs, asked_words)


def _names_a_place(pairs: list[jieba.posseg.pair], asked_words: set[str]) -> bool:
    """A place name or location word (jieba's ``ns``, ``s``, ``nt``), a noun after 在/去/到/住…,
    or a noun ending like a place (科技城, 体育馆) — other than the question's own words (去钓鱼:
    the activity) and a place left (从西湖区) unless the question asks where from."""
    for i, pair in enumerate(pairs):
        if pair.word in asked_words:
            continue
        if i > 0 and pairs[i - 1].word == "从" and "从" not in asked_words:
            continue  # 「从西湖区搬到了滨江区」: where they came from, unless that is asked
        if pair.flag in ("ns", "s", "nt"):
            return True
        noun = pair.flag.startswith("n") or pair.flag == "eng"
        after = i > 0 and pairs[i - 1].word in _PLACE_BEFORE
        if noun and after:
            return True
        if noun and i > 0 and _PLACE_END.search(pair.word) and pairs[i - 1].flag.startswith("n"):
            return True  # 科技 + 城: a compound place jieba splits
    return False
