"""A device never claims an action it did not take.

A small model asked to set an alarm with no alarm tool said
「好的，明天早上七点的闹钟已经设置好了」. The prompt's rule (``server.device.rules``) helps,
but a rule a model may ignore is no guarantee. So a spoken sentence that claims an action was
done (or is about to be) — in a turn where no tool that acts ran — is replaced before TTS by an
honest 「这个我这里做不到。」, once per turn; further claims in that turn are dropped. Only
Chinese is checked (the device language of the defaults); other languages pass through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# verbs of acting on the world, as a device would: set, switch, call, send, order, book…
_ACT = (
    r"(设置|设定|设|定|调|打开|开启|关闭|关掉|关上|拨打|打电话|打个电话|打给|发送|发|下单|预约|预订|订|"
    r"约|叫|添加|加|缴|交|拉上|拉开|购买|买)"
)
# for whom: 帮你, 为您, 给老婆, 替小橙子 (a short name or relation); 「帮你给快递员」 is two
_FOR_YOU = r"(((帮|为|给|替)[^，。！？\s]{1,4}?){1,2})"
_OBJECT = r"((把|将)[^，。！？]{0,12})?"
_DONE = r"(好|了|完|到|上)"
CLAIM = re.compile(
    # 我(已经/会/将/可以…)(帮你)(把…)设/开/打… — the device speaking of its own act
    rf"我(已经|已|会|将|马上|这就|立刻|现在就|可以|来|正在|正在准备|准备)?{_FOR_YOU}?{_OBJECT}{_ACT}"
    # 已经帮你(把…)设好了 — an act done for the user
    rf"|(已经?|都){_FOR_YOU}{_OBJECT}{_ACT}{_DONE}"
    # 到时候提醒你 / 准时叫你 / 我会在三点提醒你 (but 「我会提醒你老婆对海鲜过敏」 is speech)
    r"|(到时候?|准时|按时)(会)?(叫|提醒)你"
    # a timer the device says it started: 「倒计时开始」「计时已经开始了」
    r"|计时(已经?)?开始"
    # the thing it set, said done: 「提醒已经设置好」「闹钟设好了」「会议已加到日历」
    rf"|(提醒|闹钟|倒计时|计时器|日程|会议|铃声|空调|灯|窗帘)[^，。！？]{{0,4}}(已经?|都)?{_ACT}{_DONE}"
    r"|我(会|将)(在|于)[^，。！？]{1,12}(提醒|叫)你"
    # the device's own controls said done: 「音量调大了」「屏幕已经调亮了」
    r"|(音量|声音|亮度|屏幕)[^，。！？]{0,4}(已经?|都)?调[大小高低亮暗到][^，。！？]{0,6}(了|好)"
    r"|我(会|将|马上|这就)(提醒|叫)你(明天|今天|今晚|晚上|早上|每天|到点|按时)"
)
# 「好的，…闹钟已经设置好了」: an acknowledgement, then something done
_ACK_WORDS = r"(好的|好|没问题|收到|行|可以)"
_ACK = re.compile(rf"^\s*{_ACK_WORDS}[，,。！!]")
_DONE_AFTER_ACK = re.compile(rf"(已经?{_OBJECT}{_ACT}(好|完|了)|{_ACT}好了)")
CANNOT = {"zh": "这个我这里做不到。"}
LOOKUP_TOOLS = frozenset({"check_safety"})  # tools that only look things up: no act
# a sentence that already says the device cannot (「这个我这里做不到」「我没法打电话」)
SAYS_CANNOT = re.compile(
    r"做不到|办不到|做不了|帮不了|没法|没办法|无法|不能帮|不能替|不能为你|不支持|没有这个功能|"
    r"(?:设|打|发|控制|操作|调|叫|约|交|买|加|订)不了"
)
REMINDER = {"zh": "提醒一下："}
_REMINDER_OPENS = re.compile(r"\s*(提醒(一下|你)?|温馨提示)")
_REMINDS = re.compile(r"\s*(提醒(一下|你)?|注意|要注意|小心|温馨提示|不过)")
_SORRY_ONLY = re.compile(r"^\s*(抱歉|不好意思|对不起|很抱歉|真抱歉|哎呀)[，,。！!]?\s*$")
# an acknowledgement alone (「好的，」): nothing to say before 「这个我这里做不到」
_ACK_ONLY = re.compile(
    rf"^\s*(?:{_ACK_WORDS}|嗯|好嘞|明白|明白了|知道了|了解|懂了|(?:好的|好|嗯)[，,]?(?:我)?(?:明白|知道)了)"
    r"[，,。！!]?\s*$"
)


@dataclass(frozen=True)
class Act:
    """A kind of act a person may ask the device to do, and how a tool that could do it is
    named or described (a device's MCP tools, a configured server's)."""

    what: str  # as the turn's note names it
    request: re.Pattern[str]
    tool_words: tuple[str, ...]


# Requests to act on the world — set, call, send, switch, order, book, pay, play music — by what
# they act on (a song needs a player: 「来一首轻音乐」 is an act, 「背一首李白的诗」 is talk).
# Talking a plan over is not one (「给爷爷买箱酸奶」「周末去哪玩」: advice, the static rule says
# so): buying counts only through a shop or an order, and nothing here is a question.
ACTS: tuple[Act, ...] = (
    Act(
        "定闹钟、计时或提醒",
        re.compile(
            r"闹钟|倒计时|计时器|定时|叫醒|叫[^，。？]{0,3}起床|起床叫"
            r"|提醒[^，。？]{0,5}(?:去|吃|喝|带|买|交|拿|记得|按时|起床|开会|上课|出门)"
            r"|(?:[点分]|分钟|小时|明天|今天|今晚|每天|早上|晚上|上午|下午|中午)[^，。？]{0,6}提醒"
        ),
        ("alarm", "timer", "remind", "clock", "闹钟", "提醒", "定时", "计时"),
    ),
    Act(
        "打电话或发消息",
        re.compile(
            r"打(?:个|一个|通|一通)?电话|拨(?:打|个|一下)|视频通话"
            r"|发(?:个|条|一条|封|一封)?(?:微信|短信|消息|信息|邮件|语音)"
        ),
        ("call", "phone", "dial", "message", "sms", "wechat", "mail", "电话", "短信", "消息"),
    ),
    Act(
        "操作家里的电器",
        re.compile(
            r"(?:打开|关掉|关闭|关上|开一下|关一下|启动|调[高低暗亮大小到]|拉上|拉开|开到)"
            r"[^，。？]{0,6}(?:灯|空调|窗帘|热水器|扫地|电视|风扇|加湿器|净化器|暖气|地暖|门锁|"
            r"插座|洗衣机|电饭煲|烤箱|音响|机器人)|^\s*(?:开|关)(?:个|一下)?灯"
            r"|(?:灯|空调|窗帘|热水器|扫地机器人|电视|风扇|加湿器|净化器|暖气|地暖|门锁|插座|"
            r"洗衣机|电饭煲|烤箱)[^，。？]{0,6}(?:打开|关掉|关上|关了|开了|关一下|开一下|调[高低暗亮大小到]|拉上|拉开)"
        ),
        ("light", "lamp", "switch", "home", "device", "appliance", "灯", "空调", "窗帘", "家电"),
    ),
    Act(
        "下单、付款或预约",
        re.compile(
            r"下单|付款|支付|缴费|交[^，。？吗]{0,4}费|(?:京东|淘宝|拼多多|美团|网上|外卖)[^，。？]{0,3}买"
            r"|费[^，。？]{0,3}交|叫(?:一?辆|个)?(?:车|出租车|网约车|专车|快车|滴滴|外卖)|预约|预订"
            r"|订[^，。？]{0,8}(?:票|酒店|房间|位子|座位|餐厅|桌)|挂(?:个)?号"
        ),
        ("order", "buy", "shop", "pay", "book", "reserv", "taxi", "下单", "购买", "预约", "支付"),
    ),
    Act(
        "放歌或放音乐",
        re.compile(
            r"(?:放|播)(?:一|个|一个)?(?:首|段|曲|张)"
            r"|来(?:一|个)?(?:首|段|曲)[^，。？]{0,8}(?:歌|音乐|曲子|儿歌)"
            r"|(?:放|播)[^，。？]{0,8}(?:歌|音乐|曲子|专辑|儿歌|广播|电台)"
        ),
        ("music", "song", "play", "audio", "radio", "音乐", "播放", "歌"),
    ),
    Act(
        "调这台设备的音量或屏幕亮度",
        re.compile(
            r"(?:声音|音量|屏幕|亮度)[^，。？]{0,4}(?:调|开|放|弄)?(?:大|小|高|低|亮|暗)"
            r"|(?:调|开|放)(?:大|小|高|低|亮|暗)[^，。？]{0,3}(?:声音|音量|亮度|屏幕|一点|点儿?)"
            r"|^\s*(?:大|小)声(?:一)?点|静音"
        ),
        ("volume", "speaker", "brightness", "screen", "display", "音量", "亮度", "屏幕"),
    ),
    Act(
        "改日历或手机设置",
        re.compile(r"(?:加|放|记|写)[^，。？]{0,3}(?:日历|日程)|铃声|壁纸"),
        ("calendar", "schedule", "ringtone", "setting", "日历", "日程", "铃声"),
    ),
)
# a question is no request (「闹钟怎么设？」「空调开到几度合适？」: advice), nor the person's own
# plan (「我明天要去交电费」)
_ASKING = re.compile(
    r"[？?]\s*$|吗\s*$|怎么|如何|几度|合适|能不能吃|可以吃"
    r"|我(?:明天|今天|今晚|等会儿?|待会儿?|一会儿?)?(?:要去|得去|打算|准备|想去|自己)"
)


def requested_act(text: str) -> Act | None:
    """The act ``text`` asks the device to do (「帮我定个明天七点的闹钟」), or None."""
    if _ASKING.search(text):
        return None
    return next((act for act in ACTS if act.request.search(text)), None)


def tool_could_do(act: Act, functions: list[dict[str, Any]]) -> bool:
    """Could one of the offered tools (OpenAI function specs) do ``act``? By its name and
    description: a lamp tool for the lights, a timer tool for an alarm; lookups never."""
    for spec in functions:
        function = spec.get("function", spec)
        name = str(function.get("name", ""))
        if name in LOOKUP_TOOLS:
            continue
        said = f"{name} {function.get('description', '')}".lower()
        if any(word in said for word in act.tool_words):
            return True
    return False


def declined_note(act: Act, language: str) -> str | None:
    """This turn's note to the model: the act asked for, and that no tool does it. No order
    of sentences (the safety rule's reminder may come first; the turn puts 「这个我这里做不到」
    first otherwise) and no phrase to fill in: the local model read 「可以再给一句办法」 aloud."""
    if language.split("-")[0] != "zh":
        return None
    return (
        f"<request>用户要你去{act.what}，提供给你的工具都做不了这件事：回答里要说“这个我这里做不到”，"
        "不要说已经做了、正在做或会去做。</request>"
    )


def says_cannot(sentence: str) -> bool:
    return SAYS_CANNOT.search(sentence) is not None


def reminds(sentence: str) -> bool:
    """Does ``sentence`` open with a safety reminder (「提醒一下，爷爷对牛奶过敏」)?"""
    return _REMINDS.match(sentence) is not None


_OPENER_ONLY = re.compile(r"^\s*(提醒(一下|你)?|温馨提示|注意)[，,：:！!]?\s*$")


def opens_reminder_only(sentence: str) -> bool:
    """「提醒一下，」 alone: the splitter's first cut, before what it reminds of."""
    return _OPENER_ONLY.match(sentence) is not None


def apologises_only(sentence: str) -> bool:
    """「抱歉，」 alone: a fine start for 「这个我这里做不到」."""
    return _SORRY_ONLY.match(sentence) is not None


def acknowledges_only(sentence: str) -> bool:
    return _ACK_ONLY.match(sentence) is not None


def claims_action(sentence: str, opening: str = "") -> bool:
    """Does ``sentence`` claim an act? ``opening``: how the reply began (the splitter may have
    sent 「好的，」 on its own before 「闹钟已经设置好了。」)."""
    if CLAIM.search(sentence):
        return True
    acknowledged = _ACK.match(opening or sentence) is not None
    return acknowledged and _DONE_AFTER_ACK.search(sentence) is not None


def reminder_sentence(constraints: Sequence[str], language: str) -> str | None:
    """The constraints a request names, said before the model's reply (None: none, or a
    language without the sentence)."""
    opening = REMINDER.get(language.split("-")[0])
    return None if not constraints or opening is None else opening + "；".join(constraints) + "。"


def repeats_reminder(sentence: str) -> bool:
    """A reminder of the model's own (「提醒一下，爸爸对啤酒过敏」) after Hearth said the
    constraints in memory's words: a repeat at best, garbled at worst."""
    return _REMINDER_OPENS.match(sentence) is not None


def honest_sentence(language: str) -> str | None:
    """The replacement for a claimed action, or None where claims are not checked."""
    return CANNOT.get(language.split("-")[0])
