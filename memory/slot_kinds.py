"""What a memory states about someone — where they live, where they work, where they study,
their name, their age, what they like, where they are from — and which of these a question asks for.

One home for the statement patterns: the write path's slot rules (``workers.slots``: a new job
replaces the old one) and the payload (``schema.SLOTS``, derived from the text) both read them.
The read path matches a question's form (「我是做什么工作的？」「小橙子几岁了？」) against the
question patterns and fetches the memories of that kind by the payload field, whatever words they
use (「…跳槽了，现在在一家新能源汽车公司当工程师」 shares almost no meaning with the question in
the embedder's space: cosine 0.24).
"""

from __future__ import annotations

import re

# occupations said with 是/当 (「我老公是医生」「爸爸退休前是中学老师」「妈妈当会计」)
_JOBS = (
    "老师|教师|医生|大夫|护士|会计|司机|律师|厨师|警察|工人|工程师|程序员|设计师|公务员|经理|"
    "教授|记者|编辑|销售|保安|店长|老板|农民|军人|演员|作家|画家|快递员|外卖员|主播|客服"
)

# a statement of each kind (order matters to ``workers.slots``: the first kind is a text's slot)
STATEMENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("residence", re.compile(r"住在|住(?!院|宿|手|口|了院)|搬到|搬去|搬家|家在")),
    (
        "work",
        re.compile(
            r"工作|上班|跳槽|单位|公司上班|当[\u4e00-\u9fff]{1,3}(?:师|员|生|士)|"
            rf"(?:是|当|做)(?:一名|一个|个)?[\u4e00-\u9fff]{{0,3}}?(?:{_JOBS})(?![\u4e00-\u9fff]*[叫姓])"
        ),
    ),
    ("school", re.compile(r"年级|幼儿园|上学|小学|初中|高中|大学|[大中小]班")),
    ("name", re.compile(r"叫|名字")),
    ("age", re.compile(r"岁|年纪")),
)

# what someone likes: many-valued (a new liking never replaces another), so it is no slot of the
# write path's rules — only a kind a question can ask for
LIKES = ("likes", re.compile(r"喜欢|爱吃|爱喝|爱看|爱玩|爱听|着迷|迷上|最爱|爱好|兴趣"))

# where someone is from: one value, but no slot of the write path's rules either (a new home is
# no new hometown; rare enough to leave to the extraction's UPDATE)
HOMETOWN = (
    "hometown",
    re.compile(r"老家|籍贯|出生在|出生于|土生土长|是[\u4e00-\u9fff]{2,3}人(?![员士])"),
)

# a question asking for one of them (the forms people use, not the statements' words)
QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("residence", re.compile(r"住(?:在)?哪|家在哪|搬(?:到|去|家)|住址|地址|住的地方")),
    (
        "work",
        re.compile(
            r"工作|上班|职业|行业|干什么的|做什么的|干哪行|哪(?:个|家)公司|单位|跳槽|在哪(?:儿)?上班"
        ),
    ),
    ("school", re.compile(r"几年级|哪(?:个|所)学校|上学|幼儿园|哪个班|读书|上几年级")),
    ("name", re.compile(r"叫什么|叫啥|名字|怎么称呼")),
    ("age", re.compile(r"几岁|多大了|多大年纪|年纪|岁数|年龄")),
    (
        "hometown",
        re.compile(r"哪(?:里|儿)?(?:的)?人|老家|籍贯|在哪(?:里|儿)?出生|哪(?:里|儿)?出生"),
    ),
    (
        "likes",
        re.compile(
            r"喜欢(?:吃|喝|玩|看|听)?(?:什么|啥|哪(?:种|类|样|一种|一类))|"
            r"爱(?:吃|喝|玩|看|听)(?:什么|啥|哪(?:种|类|样))|着迷|迷什么|最爱|爱好|兴趣"
        ),
    ),
)
KINDS = (*(kind for kind, _ in STATEMENTS), LIKES[0], HOMETOWN[0])


def kinds_of(text: str) -> list[str]:
    """Every kind a memory's text states (「女儿叫小橙子，今年五岁」: name and age)."""
    return [kind for kind, pattern in (*STATEMENTS, LIKES, HOMETOWN) if pattern.search(text)]


def asked(question: str) -> tuple[str, ...]:
    """The kinds a question asks for (「我是不是换工作了？」: work)."""
    return tuple(kind for kind, pattern in QUESTIONS if pattern.search(question))
