"""What a question asks, by its words alone: a recorded fact (「我儿子叫什么」), what is
so (「老婆周一还练瑜伽吗？」), what to watch out for (「我爸怕什么？」), what someone likes — or
advice, leave, a plan or an act (「我中午吃点什么好」「帮我查查」). ``Question`` keeps the
answers; the grounding of a reply reads them there."""

from __future__ import annotations

import re

# a question for a recorded fact: who, what, which, where, when, how many, how old or far
_ASKS_FACT = re.compile(r"什么|哪|几|多少|谁|啥|多大|多高|多重|多远|多久|多长")
# a choice between two values: 「打疫苗是上午还是下午」
_ASKS_CHOICE = re.compile(r"是[^，。？?]{1,8}还是")
# what someone likes is recorded, even when the words look like a request for ideas
_ASKS_LIKING = re.compile(r"喜欢|爱吃|爱喝|爱看|爱玩|最爱")
# …but asking for advice, a plan or an act is asking for something new
_ASKS_ADVICE = re.compile(
    r"好[？?吗呢啊]?\s*$|什么好|哪个好|哪家好|点什么|推荐|建议|怎么|能不能|可不可以|可以|能吃|能喝|"
    r"要带|该|适合|值得|玩(?!具)|撞|冲突|送(?!的)|买(?!的)|做什么菜|吃什么|喝什么|帮我|给我|替我"
)
# what to watch out for (the safety constraints answer it)
_CAUTION = re.compile(
    r"注意|小心|忌口|禁忌|饮食|身体|毛病|健康|能不能|可不可以|能吃|能喝|过敏|害怕|恐惧|(?<!恐)怕"
)
# how long a supply lasts is a fact, not whether it may be eaten: 「狗粮一袋能吃几天？」
_LASTS = re.compile(r"能[吃喝用]上?(?=多久|多长时间|几天|几个月|几周|几个星期|几年)")
# words that only ask: 我想知道, 我想问一下, 我问你, 请问, 告诉我, 你知道…吗
_ASKING_WORDS = re.compile(
    r"^\s*(?:我想(?:知道|问(?:一下|问)?|了解(?:一下)?|请教(?:一下)?)|我问(?:你|一下)|请问|"
    r"(?:你)?告诉我|你知道)[，,：:\s]*"
)
# a yes/no question or what is on, at the end: 「还练瑜伽吗？」「要干嘛？」 (not 「…好吗？」,
# 「…行吗？」 nor 「可以吗？」: asking leave or advice)
_ASKS_STATE = re.compile(r"(?<![好行可对])(?:吗|干嘛|干啥|干什么)[？?]?\s*$")
# may I, should I, would it suit (「我能养猫吗」): asking leave, which a constraint may answer
_MAY = re.compile(r"[能可该]|要不要|行不行|适合|会不会")
# a request, not a question: 「给豆豆喂几颗葡萄」「把空调调到几度」
_REQUEST = re.compile(r"\s*(给|帮|把|让|请|替|叫|设|定|打开|关|放|播)")


# anything that asks: a question mark, a question word, a yes-or-no ending, 行不行-style choices
# (not 几: 「多囤几袋」 asks nothing)
_ASKS_ANYTHING = re.compile(
    r"[？?]|什么|哪(?!怕)|多少|谁|啥|怎么|咋|如何|为什么|[吗呢吧么]\s*[。！!]?\s*$|能不能|可不可以|行不行|"
    r"好不好|是不是|要不要|有没有|会不会|对不对|\b(?:what|which|who|how|why|when|where|can|could|"
    r"should|is|are|do|does)\b",
    re.IGNORECASE,
)


def asks_anything(utterance: str) -> bool:
    """Does ``utterance`` ask anything (a question, a yes-or-no, advice) — or only tell or ask
    for something to be done (「超市低钠盐打折，多囤几袋回来」「周末带姥姥去冰雪大世界」)?"""
    return _ASKS_ANYTHING.search(utterance) is not None


def without_asking(question: str) -> str:
    """``question`` without the words that only ask (「我想知道长城有多少年历史」: the 我 of 我想
    知道 is no sign the question is about the household)."""
    return _ASKING_WORDS.sub("", question)


def asks_for_a_fact(question: str) -> bool:
    """Does ``question`` ask for something recorded (「我儿子叫什么」) rather than for advice or
    an act (「我中午吃点什么好」「帮我查查」)?"""
    asks = _ASKS_FACT.search(question) or _ASKS_CHOICE.search(question)
    if asks is None or _REQUEST.match(question):
        return False
    asking = _LASTS.sub("", question)
    return _ASKS_ADVICE.search(asking) is None or _ASKS_LIKING.search(question) is not None


def asks_about_the_household_state(question: str) -> bool:
    """Does ``question`` ask what is so — a recorded fact (``asks_for_a_fact``), whether
    something still holds (「老婆周一还练瑜伽吗？」) or what is on (「这周六上午小橙子要干嘛？」) —
    rather than for advice, leave, a plan or an act (「周六全家去郊游怎么样？」「我可以养猫吗？」
    「中秋给她寄点什么？」)?"""
    if asks_for_a_fact(question):
        return True
    asked = _ASKS_STATE.search(question) is not None and _REQUEST.match(question) is None
    return asked and _ASKS_ADVICE.search(question) is None and _MAY.search(question) is None


def asks_caution(question: str) -> bool:
    """Does ``question`` ask what to watch out for (「小橙子有什么要注意的？」「我爸怕什么？」)? The
    safety constraints answer that."""
    return _CAUTION.search(_LASTS.sub("", question)) is not None


def asks_liking(question: str) -> bool:
    """Does ``question`` ask what someone likes (「我爸最爱吃什么」「最喜欢哪个明星」)?"""
    return _ASKS_LIKING.search(question) is not None
