"""The cue call: "when does this memory matter?" → a handful of concrete things — dishes, snacks,
drinks, medicines, places, activities, gifts — in which a memory should come up though a request
about them shares no word with it (a peanut allergy → 宫保鸡丁, 花生酱; fear of heights → 玻璃栈道,
摩天轮). The read path searches them as extra vectors (``memory.schema.CUE``); a hit renders the
memory, never the cue.

One narrow question per memory, asked by what the memory is (``question``): what contains the
allergen, what a condition rules out, what a fear is afraid of, where a liking comes up, what
interacts with a medicine. Measured on the cue bench's dev split with the 1.5B model: asked
"when does this memory matter?" with worked examples, it copied the examples into unrelated
memories (an egg allergy got the cilantro example's noodle soups) or restated the memory
(「避免吃虾」); asked the narrow question, it lists things.

Cues are made for the classes where a missed memory costs most: safety constraints and
preferences (``memory.schema.CUED_CLASSES``). A cue is kept only if it is a short phrase of its
own (not the memory or part of it, no prompt words, no advice such as 「少吃」), at most
``MAX_CUES`` per memory. A reply that is empty, cut off or not JSON leaves its memory without
cues — stored and recalled as before — and it waits in the person's cue set for the next try;
a readable answer with nothing worth keeping is final (the memory has no cues).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import structlog

from memory import entities
from providers.llm import StructuredLLM
from workers.mem0_stages import GarbageReply, reply_list
from workers.tagging import align_key

log = structlog.get_logger(__name__)

MAX_CUES = 6  # = ASKED: what the read-path budget was measured with (README)
ASKED = 6  # things asked for per memory (a few are usually dropped by ``tidy``)
MIN_CHARS, MAX_CHARS = 2, 16
CUES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": {"type": "string", "maxLength": 24}, "maxItems": 10}
    },
    "required": ["items"],
}

_STOP = r"(?=[，,。；;、和与及也还]|$)"
_MEDICINE = re.compile(r"(?:素|西林|霉素|沙星|药|片|胶囊)$")
# (what the memory is, a pattern whose group 1 names its topic), first match wins
_CONDITIONS = (
    "糖尿病|高血压|痛风|哮喘|胃病|甲亢|心脏病|癫痫|肾病|肾不好|肝病|血糖高|血压高|腰椎间盘突出|"
    "腰不好|膝盖[^，。]{0,4}伤|腿脚不好|怀孕|孕期|心脏起搏器|贫血"
)
_FEARS = "恐高|怕高|怕水|幽闭恐惧症|晕车|晕船|晕机|怕黑|怕狗|怕猫|怕虫|[\u4e00-\u9fff]{1,4}恐惧症"
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("allergy", re.compile(r"对(.{1,8}?)(?:严重)?(?:过敏|不耐受)")),
    ("allergy", re.compile(r"([\u4e00-\u9fff]{1,6}?)(?:过敏|不耐受)")),
    ("allergy", re.compile(r"(?:碰了?|吃了?)(.{1,6}?)会中毒")),
    ("condition", re.compile(f"({_CONDITIONS})")),
    ("fear", re.compile(f"({_FEARS})")),
    ("medicine", re.compile(r"在吃(.{1,8}?)" + _STOP)),
    ("avoid", re.compile(r"不能(?:吃|喝|碰|沾|用)(.{1,8}?)" + _STOP)),
    ("avoid", re.compile(r"不(?:吃|喝)(.{1,6}?)" + _STOP)),
    ("liking", re.compile(r"(?:最喜欢|喜欢|最爱|爱吃|爱喝|只喝|只吃|只要)(.{1,10}?)" + _STOP)),
)
_QUESTIONS = {
    "allergy": "哪些常见的菜、零食、饮料、药或东西里含有{topic}？列出 {n} 种具体名字。",
    "medicine_allergy": "哪些常见的药属于{topic}或含有{topic}？列出 {n} 种具体药名。",
    "condition": "{topic}的人不能吃哪些东西、不能做哪些事？列出 {n} 种具体名字。",
    "fear": "{topic}的人害怕去哪些地方、做哪些事？列出 {n} 种具体名字。",
    "medicine": "正在吃{topic}的人，吃哪些药、保健品、食物或饮料会和它冲突？列出 {n} 种具体名字。",
    "avoid": "哪些常见的菜、零食、饮料里有{topic}？列出 {n} 种具体名字。",
    "liking": "一个人喜欢{topic}。家里人点菜、买东西、送礼物、出去玩的时候，哪些具体的东西、"
    "礼物、地方和它有关？列出 {n} 种具体名字。",
    "other": "记忆：「{topic}」。和这件事有关、应该想起它的具体的东西、菜、活动或地方有哪些？"
    "列出 {n} 种具体名字。",
}
_PROMPT = "{question}\n只写名字，每个 2 到 10 个字，不要解释，不要写建议。\n" + (
    '只返回 JSON：{{"items": ["...", "..."]}}'
)
_EDGES = re.compile(
    r"^[\s\-–—•·*\d.、:：「」『』\"'“”‘’()（）\[\]]+|[\s。．.!！?？，,；;、\"'“”‘’]+$"
)
_PROMPT_WORDS = ("记忆", "助手", "名字", "具体", "患者")
# the question's own category words given back as answers: they match every request
_GENERIC = frozenset(
    ("东西", "活动", "地方", "场所", "场合", "食物", "饮料", "零食", "礼物", "药", "药物", "菜",
     "座位", "运动", "旅行", "美食", "音乐", "艺术")
)  # fmt: skip
# advice and restatements, not situations: 「避免吃虾」「控制血糖」「少吃羊肉」
_ADVICE = re.compile(r"避免|少吃|少喝|不能|不要|别|禁止|减少|控制|注意|过敏|选择|尽量|保持|适量")
_SEVERAL = re.compile(r"[，,、；;]")
_ASIDE = re.compile(r"[（(][^）)]*[）)]")  # 「头孢菌素类（如头孢氨苄）」: the aside goes


def _topic_of(text: str) -> tuple[str, str]:
    """(what kind of memory, the word the question is about)."""
    for kind, pattern in _KINDS:
        found = pattern.search(text)
        if found is None:
            continue
        topic = found.group(1).strip("的了是")
        for word in (*entities.SELF_WORDS, *sorted(entities.RELATIONS, key=len, reverse=True)):
            topic = topic.removeprefix(word)  # 「我花粉过敏」「儿子乳糖不耐受」: not the person
        if len(topic) < 1:
            continue
        if kind == "allergy" and _MEDICINE.search(topic):
            return "medicine_allergy", topic
        return kind, topic
    return "other", text


def _parts(topic: str) -> list[str]:
    """The words of a topic (「洋葱和大蒜」 → 洋葱, 大蒜)."""
    return [p for p in re.split(r"[和与及、,，/]", topic) if len(p) >= 1]


def question(text: str) -> str:
    """The one narrow question the model answers for ``text``."""
    kind, topic = _topic_of(text)
    return _QUESTIONS[kind].format(topic=topic, n=ASKED)


def messages(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": _PROMPT.format(question=question(text))}]


def tidy(raw: Any, memory: str, names: tuple[str, ...] = ()) -> str | None:
    """One cue as the model gave it → the cue kept, or None (why: in the docstring above).
    ``names``: the memory's people, taken out of a cue (「小满虾饺」 is 虾饺). A cue that names
    what the memory is about (「洋葱披萨」 for 「狗不能吃洋葱」) is dropped: the memory's own text
    already finds a request with that word, and the rest of the cue (披萨) would bring the
    memory to every pizza."""
    if not isinstance(raw, str):
        return None
    cue = _ASIDE.sub("", unicodedata.normalize("NFKC", raw))
    for name in names:
        cue = cue.replace(name, "")
    cue = _EDGES.sub("", cue.strip())
    if not MIN_CHARS <= len(cue) <= MAX_CHARS:
        return None
    if align_key(cue) == align_key(memory) or cue in memory:
        return None  # the memory itself (or part of it): its own vector already finds that
    kind, topic = _topic_of(memory)
    if kind != "other" and any(part in cue for part in _parts(topic)):
        return None
    if any(word in cue for word in _PROMPT_WORDS) or "..." in cue or "…" in cue:
        return None
    if cue in _GENERIC:
        return None  # the question's own category word: it would match every request
    if _ADVICE.search(cue):
        return None  # advice instead of a situation
    return cue


def parse(text: str, reply: str, names: tuple[str, ...] = ()) -> list[str]:
    """The kept cues of one memory — possibly none: a readable answer whose every item was
    dropped (「芝麻酱」「芝麻糊」 for a sesame allergy all name the allergen) is an answer, and
    asking again at temperature 0 would only repeat it."""
    items = reply_list("cues", reply, "items")
    kept: list[str] = []
    # one item holding several (「去电影院，坐地铁，做胃镜检查」) is several
    parts = [p for raw in items for p in (_SEVERAL.split(raw) if isinstance(raw, str) else [raw])]
    for raw in parts:
        cue = tidy(raw, text, names)
        if cue is not None and cue not in kept:
            kept.append(cue)
    return kept[:MAX_CUES]


async def cue(
    llm: StructuredLLM, texts: list[str], names: tuple[str, ...] = ()
) -> dict[str, list[str] | None]:
    """Cues for each text, one call each (an empty list: the answer held none worth keeping); an
    unreadable reply leaves only its own text waiting (None). ``names``: the household's names,
    kept out of cues."""
    result: dict[str, list[str] | None] = {}
    for text in texts:
        reply = await llm.complete_json(messages(text), CUES_SCHEMA, "cues")
        try:
            result[text] = parse(text, reply, tuple(n for n in names if n in text))
        except GarbageReply as exc:
            log.warning("cues.unreadable", text=text, error=str(exc)[:200])
            result[text] = None
    return result


def calls(texts: list[str]) -> int:
    return len(texts)
