"""The write path's "when it matters" cues: made after tagging for constraints and preferences,
searched by the read path; a bad cue reply loses nothing and is retried later; a memory
deleted or revised while it waits leaves no orphan cue; a memory that stops being a constraint
loses its cues; cues never cross persons."""

from __future__ import annotations

import uuid

import pytest

from config import keys
from memory.schema import Memory, MemoryClass, MemoryId, PersonId
from memory.store import Search
from memory.writes import MemoryWriter, NoTagging
from providers.llm import JsonLLM
from tests.workers.conftest import DAY_TS, WriteRig, session
from workers import cues, tag_requests
from workers.writepath import WritePath

ZHANG, LI = PersonId("zhang"), PersonId("li")
HEIGHTS = "我恐高，站在高处腿就发软"
HEIGHT_CUES = ["去走玻璃栈道", "坐热气球看风景", "玩蹦极"]
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


def _cue_hits(rig: WriteRig, person: PersonId, question: str) -> list[tuple[str, str]]:
    [vector] = rig.memory.embedder.embed([question])
    [hits] = rig.memory.store.search_batch(
        person, [Search(vector, 10, None, cues=True, exclude_expired=False)], DAY_TS
    )
    return [(h.memory.text, h.cue or "") for h in hits]


def _write_path(rig: WriteRig) -> WritePath:
    llm = JsonLLM(base_url=rig.llm.base_url, model="scripted", api_key="", timeout_s=30,
                  max_tokens=512, style="json_schema")  # fmt: skip
    made = WritePath(rig.redis, rig.memory.embedder, rig.memory.store, llm, rig.settings.write)
    made.clock = lambda: DAY_TS  # the day the script's prompts must carry
    return made


def _script_heights(rig: WriteRig) -> None:
    rig.script.facts = {HEIGHTS: [HEIGHTS], "女儿": ["女儿叫小橙子"]}
    rig.script.tags = {HEIGHTS: ("safety", "volume", None, "我"),
                       "女儿叫小橙子": ("fact", "volume", None, "女儿")}  # fmt: skip
    rig.script.cues = {HEIGHTS: HEIGHT_CUES}


async def test_a_constraint_gets_cues_that_bring_it_to_a_question_without_its_words(
    rig: WriteRig,
) -> None:
    _script_heights(rig)
    await rig.enqueue(session("s-heights", HEIGHTS, "女儿叫小橙子"))
    assert await rig.run_worker() == 1
    assert rig.script.problems == [] and rig.script.calls == ["extract", "tag", "cue"]
    [prompt] = rig.script.cue_prompts
    assert cues.question(HEIGHTS) in prompt  # one call: facts get no cues
    assert sorted(cue for _, cue in _cue_hits(rig, ZHANG, "玻璃栈道")) == sorted(HEIGHT_CUES)
    assert await rig.redis.scard(keys.recue("zhang")) == 0
    recall = await rig.memory.read_path.recall(ZHANG, "周末一起去坐热气球看风景吧", DAY_TS)
    [cued] = [r for r in recall.safety if r.memory.text == HEIGHTS]
    assert cued.why == "cue" and cued.cue == "坐热气球看风景"
    assert "热气球" not in recall.block  # the memory is rendered, never the cue


async def test_a_garbage_cue_reply_loses_nothing_and_is_retried_later(
    rig: WriteRig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tag_requests, "CUE_RETRY_S", 0.05)  # the retry's delay, not its logic
    _script_heights(rig)
    rig.script.garbage_cues = 1
    await rig.enqueue(session("s-garbage", HEIGHTS))
    assert await rig.run_worker() == 2  # the session job, then the cue job it asked for
    assert rig.script.calls == ["extract", "tag", "cue", "cue"]
    memory = next(m for m in rig.memory.store.scroll(ZHANG).memories if m.text == HEIGHTS)
    assert memory.cls is MemoryClass.SAFETY and not memory.tags_pending  # the job's work kept
    assert len(_cue_hits(rig, ZHANG, "玻璃栈道")) == len(HEIGHT_CUES)
    assert await rig.redis.scard(keys.recue("zhang")) == 0


async def test_attempts_run_out_and_the_memory_waits_in_the_cue_set(rig: WriteRig) -> None:
    _script_heights(rig)
    rig.script.garbage_cues = 1
    write_path = _write_path(rig)
    writer = MemoryWriter(rig.memory.embedder, rig.memory.store, rig.redis, NoTagging(), 0.9)
    [vector] = rig.memory.embedder.embed([HEIGHTS])
    async with writer.locked(ZHANG):
        await writer.add(ZHANG, HEIGHTS, vector, source="api", speaker=None, now=DAY_TS)
    outcome = await write_path.tag_pending(ZHANG)
    assert outcome.tagged == 1 and outcome.cued == 0 and outcome.cues_pending == 1
    assert outcome.cues_deferred is not None
    assert not await tag_requests.retry_cues(rig.redis, ZHANG, tag_requests.CUE_ATTEMPTS + 1)
    again = await write_path.cue_pending(ZHANG)  # the next job for the person
    assert again.cued == 1 and again.cues_pending == 0 and again.cues_deferred is None


async def test_deleted_revised_or_reclassified_memories_leave_no_cue(rig: WriteRig) -> None:
    _script_heights(rig)
    write_path = _write_path(rig)
    store, embedder = rig.memory.store, rig.memory.embedder
    gone = Memory(text="爸爸有痛风，不能喝啤酒", person=ZHANG, cls=MemoryClass.SAFETY,
                  id=MemoryId(str(uuid.uuid4())))  # fmt: skip
    moved = Memory(
        text=HEIGHTS, person=ZHANG, cls=MemoryClass.SAFETY, id=MemoryId(str(uuid.uuid4()))
    )
    store.upsert([gone, moved], embedder.embed([gone.text, moved.text]))
    store.put_cues(ZHANG, gone, ["吃动物内脏"], embedder.embed(["吃动物内脏"]))
    store.put_cues(ZHANG, moved, HEIGHT_CUES, embedder.embed(HEIGHT_CUES))
    await rig.redis.sadd(keys.recue("zhang"), gone.key)  # queued for new cues…
    store.delete(ZHANG, [gone.key])  # …and deleted before its job ran
    writer = MemoryWriter(embedder, store, rig.redis, NoTagging(), 0.9)
    revised_text = "我现在不怕高了，上周还去爬了泰山"
    [vector] = embedder.embed([revised_text])
    async with writer.locked(ZHANG):
        await writer.revise(moved, revised_text, vector, now=DAY_TS)
    assert _cue_hits(rig, ZHANG, "玻璃栈道") == []  # the old text's cues went with it
    outcome = await write_path.cue_pending(ZHANG)
    assert outcome.cued == 0 and rig.script.cue_prompts == []  # revised: waits for its tags
    assert await rig.redis.sismember(keys.retag("zhang"), moved.key)
    assert not await rig.redis.sismember(keys.recue("zhang"), gone.key)
    # tagged as a preference-free fact now: no cues, and it leaves the cue set
    rig.script.tags = {revised_text: ("fact", "volume", None, "我")}
    await write_path.tag_pending(ZHANG)
    assert _cue_hits(rig, ZHANG, "玻璃栈道") == []
    assert await rig.redis.scard(keys.recue("zhang")) == 0


async def test_cues_never_cross_persons(rig: WriteRig) -> None:
    _script_heights(rig)
    await rig.enqueue(session("s-zhang", HEIGHTS))
    await rig.enqueue(session("s-li", "女儿叫小橙子", person="li"))
    assert await rig.run_worker() == 2
    assert len(_cue_hits(rig, ZHANG, "坐热气球")) == len(HEIGHT_CUES)
    assert _cue_hits(rig, LI, "坐热气球") == []
    recall = await rig.memory.read_path.recall(LI, "周末一起去坐热气球看风景吧", DAY_TS)
    assert recall.safety == () and all(r.memory.person == LI for r in recall.related)


def test_cue_replies_are_tidied() -> None:
    reply = (
        '{"items": ["1. 玻璃栈道", "我恐高", "玻璃栈道", "具体名字：蹦极", "…", "避免去高处",'
        ' "这是一条特别特别特别特别长的完全不像线索的句子", 3, "小满的摩天轮", "索道（缆车）",'
        ' "活动", "恐高患者去的场所"]}'
    )
    assert cues.parse(HEIGHTS, reply, ("小满",)) == ["玻璃栈道", "的摩天轮", "索道"]
    several = '{"items": ["去坐缆车，走吊桥、玩蹦极"]}'
    assert cues.parse(HEIGHTS, several) == ["去坐缆车", "走吊桥", "玩蹦极"]
    with pytest.raises(cues.GarbageReply):
        cues.parse(HEIGHTS, '{"answer": "好的"}')


@pytest.mark.parametrize(
    ("memory", "asked"),
    [
        ("我对青霉素过敏", "哪些常见的药属于青霉素"),
        ("儿子乳糖不耐受，喝牛奶会拉肚子", "含有乳糖"),
        ("家里的猫碰了百合会中毒", "含有百合"),
        ("爷爷有痛风，海鲜和啤酒都不能碰", "痛风的人"),
        ("我恐高，站在高处腿就发软", "恐高的人害怕去哪些地方"),
        ("妈妈在吃降压药，不能和西柚一起吃", "正在吃降压药的人"),
        ("老婆不吃香菜", "里有香菜"),
        ("爸爸最喜欢钓鱼", "一个人喜欢钓鱼"),
        ("我们家每周五吃披萨", "记忆：「我们家每周五吃披萨」"),
    ],
)
def test_each_memory_gets_one_narrow_question(memory: str, asked: str) -> None:
    assert asked in cues.question(memory)


async def test_an_answer_with_nothing_worth_keeping_is_final(rig: WriteRig) -> None:
    """Every item names the memory's own topic or is advice: no cues, and no retry (asking again
    at temperature 0 would repeat it)."""
    _script_heights(rig)
    rig.script.cues = {HEIGHTS: ["恐高的人怕的地方", "避免去高处", "活动"]}
    await rig.enqueue(session("s-none", HEIGHTS))
    assert await rig.run_worker() == 1  # no cue job asked for
    assert rig.script.calls == ["extract", "tag", "cue"]
    assert _cue_hits(rig, ZHANG, "玻璃栈道") == []
    assert await rig.redis.scard(keys.recue("zhang")) == 0
