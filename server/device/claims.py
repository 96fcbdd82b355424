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
    r"|我(会|将)(在|于)[^，。！？]{1,12}(提醒|叫)你"
    r"|我(会|将|马上|这就)(提醒|叫)你(明天|今天|今晚|晚上|早上|每天|到点|按时)"
)
# 「好的，…闹钟已经设置好了」: an acknowledgement, then something done
_ACK = re.compile(r"^\s*(好的|好|没问题|收到|行|可以)[，,。！!]")
_DONE_AFTER_ACK = re.compile(rf"(已经?{_OBJECT}{_ACT}(好|完|了)|{_ACT}好了)")
CANNOT = {"zh": "这个我这里做不到。"}
LOOKUP_TOOLS = frozenset({"check_safety"})  # tools that only look things up: no act


def claims_action(sentence: str, opening: str = "") -> bool:
    """Does ``sentence`` claim an act? ``opening``: how the reply began (the splitter may have
    sent 「好的，」 on its own before 「闹钟已经设置好了。」)."""
    if CLAIM.search(sentence):
        return True
    acknowledged = _ACK.match(opening or sentence) is not None
    return acknowledged and _DONE_AFTER_ACK.search(sentence) is not None


def honest_sentence(language: str) -> str | None:
    """The replacement for a claimed action, or None where claims are not checked."""
    return CANNOT.get(language.split("-")[0])
