"""What enrolment by voice hears and says, in Chinese and English: the request to remember the
speaker's voice (with the name they give), the words that abort it, the sentences read aloud,
and a refusal told in plain words.

The request is narrow on purpose: a verb of remembering with 「我的声音」 / "my voice" as its
object, not negated and not a question about how it works. 「记住我的生日」, 「别记我的声音」
and 「怎么让你记住我的声音」 are ordinary turns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from server.device.phrases import normalize
from server.voices.enrol import READ_ALOUD

_ASK_ZH = re.compile(
    r"(?:记住|记下|记一下|录入|录一下|登记|认识|认一下|学习|学一下|熟悉)(?:一下)?我的?(?:声音|声纹|嗓音)"
)
_NOT_ZH = re.compile(r"(?:别|不要|不用|不许|不准|不必|不需要|怎么|如何|为什么|为啥|会不会|是不是)")
_NAME_ZH = re.compile(r"(?:我是|我叫|叫我)([^\s，。,.!！?？、；;：:]{1,12})")
_PARTICLES_ZH = "呀啊哦吧呢啦嘛哈"
_ASK_EN = re.compile(
    r"\b(?:remember|learn|enrol|enroll|register|save|memori[sz]e|recogni[sz]e)\s+my\s+voice\b"
)
_NOT_EN = re.compile(r"\b(?:don't|dont|do not|never|how|why|not)\b")
_NAME_EN = re.compile(r"\b(?:i'm|i am|im|this is|it's|call me|my name is)\s+([a-z][a-z' -]{0,30})")
_NAME_LEAD_EN = re.compile(r"^(?:the|your|a)\s+")
CANCEL = {
    "zh": ("取消", "算了", "不录了", "不要了", "不登记了", "停下", "别录了"),
    "en": ("cancel", "stop", "never mind", "nevermind", "forget it", "abort"),
}
MAX_BARE_NAME = 6  # 「外婆」, 「孩子他妈」: an answer longer than this is a sentence, not a name
_NOT_A_NAME_ZH = re.compile(r"[我你吗呢？?\s]|什么|怎么")


@dataclass(frozen=True, slots=True)
class EnrolmentRequest:
    language: str  # "zh" or "en": what the flow answers in
    speaker: str | None  # the name given with the request, if any


def enrolment_request(text: str) -> EnrolmentRequest | None:
    """``text`` asks to remember the speaker's voice: the request, else None."""
    lower = text.lower()
    if _ASK_ZH.search(text) and not _NOT_ZH.search(text):
        return EnrolmentRequest("zh", name_in(text, "zh"))
    if _ASK_EN.search(lower) and not _NOT_EN.search(lower):
        return EnrolmentRequest("en", name_in(text, "en"))
    return None


def name_in(text: str, language: str) -> str | None:
    """The name in 「我是妈妈」 / "I'm mum", else None."""
    if language == "zh":
        found = _NAME_ZH.search(text)
        name = found.group(1).rstrip(_PARTICLES_ZH) if found else ""
        return name.removeprefix("你的") or None
    found = _NAME_EN.search(text.lower())
    if not found:
        return None
    start = found.start(1)
    said = text[start : start + len(found.group(1))]  # the name as written, not lower-cased
    said = re.split(r"[.,!?;]", said)[0].strip()
    return _NAME_LEAD_EN.sub("", said, count=1).strip() or None


def answered_name(text: str, language: str) -> str | None:
    """The name in an answer to "who are you?": 「我是妈妈」, or just 「妈妈」."""
    named = name_in(text, language)
    if named:
        return named
    bare = re.sub(r"[\s，。,.!！?？、；;：:]+", " ", text).strip()
    if language == "zh":
        bare = bare.rstrip(_PARTICLES_ZH)
        plain = 0 < len(bare) <= MAX_BARE_NAME and not _NOT_A_NAME_ZH.search(bare)
        return bare if plain else None
    return bare if 0 < len(bare) <= 30 and len(bare.split()) <= 3 else None


def is_cancel(text: str) -> bool:
    """「取消」, 「算了算了」, "cancel": short, and a word that stops (in either language)."""
    said = normalize(text)
    return 0 < len(said) <= 16 and any(normalize(w) in said for w in CANCEL["zh"] + CANCEL["en"])


SENTENCES = READ_ALOUD
ORDINAL = {"zh": ("第一句", "第二句", "最后一句"), "en": ("First", "Second", "Last")}
SAY = {
    "zh": {
        "ask_name": "好的。请告诉我你是谁，比如：我是妈妈。",
        "begin": "好的，{name}，我来记住你的声音。请跟我读三句话，想停下就说取消。",
        "read": "{ordinal}：{sentence}",
        "again": "请再读一遍：{sentence}",
        "enrolled": "记住了，{name}。以后我能听出你的声音。",
        "re_enrolled": "好的，{name}，我重新记住了你的声音。",
        "cancelled": "好的，取消了，没有记录你的声音。",
        "give_up": "这次没有记住你的声音。想再试的话，请说：记住我的声音。",
        "unavailable": "抱歉，这台设备现在不能记住声音。",
    },
    "en": {
        "ask_name": "Sure. Who are you? For example: I'm mum.",
        "begin": "OK {name}, let me learn your voice. Please read three sentences after me; "
        "say cancel to stop.",
        "read": "{ordinal}: {sentence}",
        "again": "Please read it once more: {sentence}",
        "enrolled": "Got it, {name}. I'll know your voice from now on.",
        "re_enrolled": "OK {name}, I've learned your voice again.",
        "cancelled": "OK, cancelled. Your voice was not saved.",
        "give_up": "I couldn't learn your voice this time. To try again, say: remember my voice.",
        "unavailable": "Sorry, this device can't learn voices right now.",
    },
}
REFUSED = {
    "zh": {
        "silence": "{ordinal}我什么也没听到。",
        "not_speech": "{ordinal}听起来不像人声，可能旁边有音乐或水声。",
        "too_short": "{ordinal}太短了，我没听全。",
        "inconsistent": "{ordinal}听起来不像同一个人读的。",
        "two_voices": "{ordinal}里好像有两个人的声音。",
        "same_voice": "这个声音已经登记成{other}了，同一个人不能用两个名字。",
        "name_taken": "{name}这个名字已经登记了另一个人的声音。"
        "要换成你的声音，请在网页控制台重新登记。",
        "household_full": "家里登记的声音已经满了，请先在网页控制台删掉一个。",
    },
    "en": {
        "silence": "I heard nothing in the {ordinal} sentence.",
        "not_speech": "The {ordinal} sentence didn't sound like a voice; is music or water on?",
        "too_short": "The {ordinal} sentence was too short.",
        "inconsistent": "The {ordinal} sentence didn't sound like the same person.",
        "two_voices": "I heard two voices in the {ordinal} sentence.",
        "same_voice": "This voice is already enrolled as {other}; one person can't have two names.",
        "name_taken": "{name} is already enrolled with another voice. To replace it, use the "
        "console.",
        "household_full": "This household has no room for another voice; remove one in the "
        "console first.",
    },
}
ORDINAL_IN = {"zh": ("第一句", "第二句", "第三句"), "en": ("first", "second", "third")}
