"""The write path end to end: arq job → mem0 two-stage extraction → tagging → payload."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest
from arq.jobs import Job

from config import keys
from memory.schema import Decay, Memory, MemoryClass, PersonId
from memory.writes import MemoryWriter, NoTagging, Stored
from tests.support.scripted_llm import Reply
from tests.support.waiting import wait_until
from tests.support.write_llm import WriteScript
from tests.workers.conftest import DAY_TS, WriteRig, session
from workers.codec import load
from workers.failures import DeadLetters
from workers.settings import QUEUE
from workers.writepath import WritePath

ZHANG = PersonId("zhang")
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


def by_text(rig: WriteRig, person: str = "zhang") -> dict[str, Memory]:
    return {m.text: m for m in rig.memory.store.scroll(PersonId(person)).memories}


async def test_seafood_allergy_becomes_a_safety_memory_that_never_expires(rig: WriteRig) -> None:
    rig.script.facts = {"我老婆对海鲜过敏，尤其是虾": ["我老婆对海鲜过敏，尤其是虾"]}
    rig.script.tags = {"我老婆对海鲜过敏，尤其是虾": ("safety", "volume", None, "老婆")}
    await rig.enqueue(session("s-allergy", "我老婆对海鲜过敏，尤其是虾"))
    assert await rig.run_worker() == 1
    assert rig.script.problems == []
    # nothing stored to merge with: no merge call; a constraint gets its cues
    assert rig.script.calls == ["extract", "tag", "cue"]
    memory = by_text(rig)["我老婆对海鲜过敏，尤其是虾"]
    assert memory.cls is MemoryClass.SAFETY and memory.subject == "老婆"
    assert memory.decay is Decay.VOLUME and memory.expires_at is None
    assert memory.speaker == "老张" and memory.source == "device"
    assert "老婆" in memory.entities and not memory.tags_pending
    recall = await rig.memory.read_path.recall(ZHANG, "订个海鲜礼包送我老婆")
    assert [r.memory.text for r in recall.safety] == ["我老婆对海鲜过敏，尤其是虾"]
    assert await rig.redis.hexists(keys.speakers("zhang"), "老张")  # the API sees the speaker


async def test_event_expiry_resolves_against_the_conversation_date(rig: WriteRig) -> None:
    """The date is resolved against the session's day by rule, written into the text (read
    two weeks later, 「下周三」 alone would be wrong) and is the expiry — even when the model
    computes it wrongly, as the 1.5B model did."""
    rig.script.facts = {"下周三": ["我下周三去上海出差"]}
    annotated = "我下周三（12月2日）去上海出差"
    rig.script.tags = {annotated: ("event", "time", "2026-11-26", "我")}  # the model's arithmetic
    await rig.enqueue(session("s-trip", "我下周三要去上海出差"))
    await rig.run_worker()
    memory = by_text(rig)[annotated]
    assert memory.cls is MemoryClass.EVENT and memory.decay is Decay.TIME
    assert time.strftime("%Y-%m-%d", time.localtime(memory.expires_at or 0)) == "2026-12-02"


async def test_a_weekly_schedule_is_never_an_expiring_event(rig: WriteRig) -> None:
    rig.script.facts = {"吉他": ["我每周四晚上有吉他课"]}
    rig.script.tags = {"我每周四晚上有吉他课": ("event", "time", "2026-11-26", "我")}
    await rig.enqueue(session("s-weekly", "我每周四晚上有吉他课"))
    await rig.run_worker()
    memory = by_text(rig)["我每周四晚上有吉他课"]
    assert memory.cls is MemoryClass.FACT and memory.decay is Decay.VOLUME
    assert memory.expires_at is None


async def test_move_is_an_update_and_the_read_path_returns_the_new_value(rig: WriteRig) -> None:
    rig.script.facts = {"我住在北京": ["我住在北京"], "我搬到上海了": ["我搬到上海了"]}
    rig.script.updates = {"我搬到上海了": "我住在北京"}
    await rig.enqueue(session("s-1", "我住在北京"))
    await rig.run_worker()
    [old] = [m for m in by_text(rig).values()]
    job = await rig.enqueue(session("s-2", "我搬到上海了"))
    await rig.run_worker()
    assert rig.script.problems == []
    outcome = await Job(job, rig.arq, _queue_name=QUEUE, _deserializer=load).result(timeout=5)
    assert [(r["rule"], r["target"]) for r in outcome["rules"]] == [("same slot", "我住在北京")]
    memories = by_text(rig)
    assert list(memories) == ["我搬到上海了"]
    moved = memories["我搬到上海了"]
    assert moved.id == old.id and moved.history[0][0] == "我住在北京"
    recall = await rig.memory.read_path.recall(ZHANG, "我家住在哪里")
    recalled = [r.memory.text for r in recall.related + recall.safety]
    assert "我搬到上海了" in recalled and "我住在北京" not in recalled


async def test_changed_class_time_updates_in_place(rig: WriteRig) -> None:
    rig.script.facts = {
        "周六上午": ["女儿每周六上午上钢琴课"],
        "改到": ["女儿的钢琴课改到每周日下午了"],
    }
    await rig.enqueue(session("s-1", "女儿每周六上午上钢琴课"))
    await rig.run_worker()  # sessions a week apart: the first is stored before the second
    await rig.enqueue(session("s-2", "女儿的钢琴课改到每周日下午了"))
    await rig.run_worker()
    assert rig.texts() == ["女儿的钢琴课改到每周日下午了"]
    recall = await rig.memory.read_path.recall(ZHANG, "女儿的钢琴课是什么时候")
    assert [r.memory.text for r in recall.related] == ["女儿的钢琴课改到每周日下午了"]


async def test_shuffled_tagging_reply_still_tags_every_memory(rig: WriteRig) -> None:
    facts = [
        "我老婆对海鲜过敏",
        "女儿叫小橙子",
        "我喜欢喝绿茶",
        "我对幽闭空间有恐惧症",
        "我下周三去上海出差",
    ]
    rig.script.facts = {"一堆事": facts}
    rig.script.tags = {
        "我老婆对海鲜过敏": ("safety", "volume", None, "老婆"),
        "女儿叫小橙子": ("fact", "volume", None, "女儿"),
        "我喜欢喝绿茶": ("preference", "volume", None, "我"),
        "我对幽闭空间有恐惧症": ("safety", "volume", None, "我"),
        "我下周三（12月2日）去上海出差": ("event", "time", "2026-12-02", "我"),
    }
    rig.script.shuffle_tags = True
    await rig.enqueue(session("s-many", "跟你说一堆事", *facts))
    await rig.run_worker()
    memories = by_text(rig)
    for text, (cls, decay, _expires, subject) in rig.script.tags.items():
        assert memories[text].cls.value == cls, text
        assert memories[text].decay.value == decay, text
        assert memories[text].subject == subject, text
    assert memories["我对幽闭空间有恐惧症"].expires_at is None  # never another item's expiry
    assert rig.script.calls.count("tag") == 1  # one call for every memory of the job


async def test_an_unusable_tag_item_is_settled_by_the_rules_never_left_pending(
    rig: WriteRig,
) -> None:
    """The model's item for a memory echoes the wrong text (or carries an unknown class): the
    memory still gets the tags the rules read off its text (a medicine → safety, 爸爸), and the
    retag set drains — it used to stay pending and grew by one per such memory."""
    rig.script.facts = {"药": ["我爸每天早上吃降压药", "我喜欢喝绿茶"]}
    rig.script.tags = {
        "我爸每天早上吃降压药": ("safety", "volume", None, "爸爸"),
        "我喜欢喝绿茶": ("preferred-thing", "volume", None, "我"),  # not a class
    }
    rig.script.mangle_tag_texts = {"我爸每天早上吃降压药"}
    await rig.enqueue(session("s-1", "我爸每天早上吃降压药，我喜欢喝绿茶"))
    await rig.run_worker()
    memories = by_text(rig)
    medicine = memories["我爸每天早上吃降压药"]
    assert medicine.cls is MemoryClass.SAFETY and medicine.subject == "爸爸"
    assert not medicine.tags_pending and medicine.expires_at is None
    tea = memories["我喜欢喝绿茶"]
    # no usable class from the model: the rules read a liking as a preference
    assert tea.cls is MemoryClass.PREFERENCE and tea.subject == "我" and not tea.tags_pending
    assert await rig.redis.scard(keys.retag("zhang")) == 0


async def test_llm_calls_per_session_do_not_grow_with_facts(rig: WriteRig) -> None:
    rig.script.facts = {
        "十件事": [
            f"我的第{i}个习惯是{habit}"
            for i, habit in enumerate(
                ["跑步", "读书", "游泳", "写字", "画画", "下棋", "弹琴", "爬山", "做饭", "钓鱼"]
            )
        ]
    }
    rig.merge_with("model")  # mem0's merge: one call for every fact too
    said = rig.script.facts["十件事"]
    await rig.enqueue(session("s-ten", "说说我的十件事", *said))
    await rig.run_worker()
    assert rig.script.calls == ["extract", "merge", "tag"]  # facts: no cue calls either
    assert len(rig.texts()) == 10


async def test_facts_a_merge_reply_leaves_out_are_kept(rig: WriteRig) -> None:
    """Small models drop items from the merge reply; a dropped fact is not lost, and one whose
    meaning is stored is still not duplicated."""
    stored = Memory(text="女儿叫小橙子", person=ZHANG, source="device")
    rig.memory.store.upsert([stored], rig.memory.embedder.embed([stored.text]))
    rig.script.facts = {"一堆": ["我老婆对海鲜过敏，尤其是虾", "女儿叫小橙子", "我喜欢喝绿茶"]}
    rig.script.merge_drops = {"我老婆对海鲜过敏，尤其是虾", "女儿叫小橙子"}
    rig.merge_with("model")
    await rig.enqueue(session("s-drop", "跟你说一堆事", *rig.script.facts["一堆"]))
    await rig.run_worker()
    assert rig.texts() == sorted(["女儿叫小橙子", "我老婆对海鲜过敏，尤其是虾", "我喜欢喝绿茶"])
    assert rig.script.calls == [
        "extract",
        "merge",
        "tag",
        "cue",
        "cue",
    ]  # one per constraint or liking


async def test_a_rerun_stores_nothing_twice_and_calls_no_llm(rig: WriteRig) -> None:
    rig.script.facts = {"小橙子": ["女儿叫小橙子"]}
    record = session("s-again", "我女儿叫小橙子")
    await rig.enqueue(record)
    await rig.run_worker()
    await rig.enqueue(record, job_id="s-again:redelivered")  # arq delivering it again
    await rig.run_worker()
    assert rig.texts() == ["女儿叫小橙子"]
    assert rig.script.calls == ["extract", "tag"]


async def test_a_fact_restated_in_the_same_session_keeps_the_first(rig: WriteRig) -> None:
    """The local model extracted both from one sentence; the restatement rule says the second
    adds nothing — it must not take the first with it (it once did: nothing was stored)."""
    rig.script.facts = {"小橙子": ["我女儿叫小橙子，她对花生过敏", "我女儿叫小橙子"]}
    rig.script.tags = {"我女儿叫小橙子，她对花生过敏": ("safety", "volume", None, "女儿")}
    await rig.enqueue(session("s-restated", "记住，我女儿叫小橙子，她对花生过敏。"))
    await rig.run_worker()
    assert rig.texts() == ["我女儿叫小橙子，小橙子对花生过敏"]  # 她 named


async def test_meaning_already_stored_is_dropped(rig: WriteRig) -> None:
    stored = Memory(text="女儿叫小橙子", person=ZHANG, source="device")
    rig.memory.store.upsert([stored], rig.memory.embedder.embed([stored.text]))
    rig.script.facts = {"小橙子": ["女儿叫小橙子。"]}  # the model ADDs a near-copy anyway
    await rig.enqueue(session("s-dup", "我女儿叫小橙子"))
    await rig.run_worker()
    assert rig.texts() == ["女儿叫小橙子"]


async def test_source_priority_decides_conflicts(rig: WriteRig) -> None:
    operator = Memory(text="我住在北京", person=ZHANG, source="import")
    rig.memory.store.upsert([operator], rig.memory.embedder.embed([operator.text]))
    rig.script.facts = {"搬到": ["我搬到上海了"]}
    rig.script.updates = {"我搬到上海了": "我住在北京"}
    await rig.enqueue(session("s-device", "我搬到上海了"))  # device (20) < import (30)
    await rig.run_worker()
    assert rig.texts() == ["我住在北京"]
    [conflict] = [c for c in await rig.redis.lrange(keys.conflicts("zhang"), 0, -1)]
    assert b"kept stored" in conflict
    await rig.enqueue(session("s-console", "我搬到上海了", source="console"))  # 40 > 30
    await rig.run_worker()
    assert rig.texts() == ["我搬到上海了"]


async def test_two_jobs_for_one_person_never_merge_concurrently(rig: WriteRig) -> None:
    rig.script.facts = {"咖啡": ["我喜欢喝咖啡"], "拿铁": ["我最喜欢燕麦拿铁"]}
    rig.merge_with("model")
    await rig.enqueue(session("s-a", "我喜欢喝咖啡"))
    await rig.enqueue(session("s-b", "我最喜欢燕麦拿铁"))
    assert await rig.run_worker() == 2  # max_jobs=4: both run at once
    first, second = rig.script.merge_prompts
    # the first merge saw an empty memory; the second saw what the first stored
    assert "Current memory is empty" in first
    assert "current content of my memory" in second
    assert sorted(rig.texts()) == ["我喜欢喝咖啡", "我最喜欢燕麦拿铁"]


async def test_an_api_write_never_waits_for_a_jobs_llm_call(rig: WriteRig) -> None:
    """Issue 20: the person lock was held across the merge and tagging LLM calls (minutes), so
    an API store for that person waited 30 s and answered 503. Now a job holds its own merge
    lock across LLM calls and the store lock only around its apply and tag patch."""
    rig.script.facts = {"咖啡": ["我喜欢喝咖啡"]}
    in_merge = asyncio.Event()
    release = asyncio.Event()
    script = rig.script

    def responder(body: dict[str, Any]) -> Reply:
        reply = script(body)
        if len(script.merge_prompts) == 1 and not release.is_set():
            in_merge.set()  # the job is inside its merge call: hold it there
            return dataclasses.replace(reply, hang=release)
        return reply

    rig.llm.responder = responder
    rig.merge_with("model")
    await rig.enqueue(session("s-slow", "我喜欢喝咖啡"))
    worker = asyncio.create_task(rig.run_worker())
    try:
        async with asyncio.timeout(30):
            await in_merge.wait()
        writer = MemoryWriter(rig.memory.embedder, rig.memory.store, rig.redis, NoTagging(), 0.9)
        async with asyncio.timeout(5):  # would wait for the LLM (and fail after 30 s) before
            async with writer.locked(PersonId("zhang"), wait_s=2):
                pass
            stored = await writer.remember(PersonId("zhang"), "我每周四晚上有吉他课",
                                           source="api", speaker=None)  # fmt: skip
        assert isinstance(stored, Stored)
    finally:
        release.set()
        assert await worker == 1
    assert sorted(rig.texts()) == ["我喜欢喝咖啡", "我每周四晚上有吉他课"]


async def test_transient_llm_errors_retry_then_succeed(rig: WriteRig) -> None:
    rig.script.facts = {"小橙子": ["女儿叫小橙子"]}
    rig.script.fail_next = [Reply(status=503), Reply("这不是 JSON")]
    await rig.enqueue(session("s-flaky", "我女儿叫小橙子"))
    await rig.run_worker()
    assert rig.texts() == ["女儿叫小橙子"]
    assert await DeadLetters(rig.redis).all() == []


class DyingEngine:
    """The write LLM's process as ``hearth up``'s supervisor sees it: every failure it answers
    is its death (down until the test brings it back)."""

    def __init__(self, script: WriteScript) -> None:
        self.script = script
        self.up = asyncio.Event()
        self.up.set()
        self.waits = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.script.fail_next:
            self.up.clear()
        return self.script(body)

    def is_up(self) -> bool:
        return self.up.is_set()

    async def wait_up(self) -> None:
        self.waits += 1
        await self.up.wait()


async def test_a_job_waits_for_a_dead_llm_instead_of_burning_its_tries(rig: WriteRig) -> None:
    rig.script.facts = {"小橙子": ["女儿叫小橙子"]}
    rig.script.fail_next = [Reply(status=503)] * 4  # more deaths than max_tries (3)
    engine = DyingEngine(rig.script)
    rig.llm.responder = engine
    await rig.enqueue(session("s-restarts", "我女儿叫小橙子"))
    worker = asyncio.create_task(rig.run_worker(llm_gate=engine))
    for death in range(1, 5):  # the supervisor restarts it each time
        await wait_until(lambda n=death: engine.waits == n, within_s=30)  # type: ignore[misc]
        assert not worker.done()
        engine.up.set()
    assert await asyncio.wait_for(worker, 60) == 1
    assert rig.texts() == ["女儿叫小橙子"]
    assert await DeadLetters(rig.redis).all() == []
    info = await Job("s-restarts", rig.redis, _queue_name=QUEUE, _deserializer=load).result_info()
    assert info is not None and info.success and info.job_try == 1  # no try was spent


async def test_exhausted_and_permanent_failures_land_in_dead_letters(rig: WriteRig) -> None:
    rig.script.facts = {"小橙子": ["女儿叫小橙子"]}
    rig.script.fail_next = [Reply("garbage")] * 3  # max_tries = 3
    await rig.enqueue(session("s-garbage", "我女儿叫小橙子"))
    await rig.run_worker()
    rig.script.fail_next = [Reply(status=401)]
    await rig.enqueue(session("s-denied", "我女儿叫小橙子"))
    await rig.run_worker()
    failed = {job.job_id: job for job in await DeadLetters(rig.redis).all()}
    assert failed["s-garbage"].kind == "exhausted" and failed["s-garbage"].tries == 3
    assert failed["s-denied"].kind == "permanent" and failed["s-denied"].tries == 1
    assert rig.texts() == []
    # an operator replays it once the LLM is fixed: every step is idempotent
    job = await DeadLetters(rig.redis).take("s-garbage")
    assert job is not None
    await rig.enqueue(job.record, job_id="s-garbage:retry:1")
    await rig.run_worker()
    assert rig.texts() == ["女儿叫小橙子"]


async def test_malformed_record_is_a_permanent_failure(rig: WriteRig) -> None:
    await rig.enqueue({"session_id": "s-bad", "person": "zhang", "transcript": "nope"})
    await rig.run_worker()
    [job] = await DeadLetters(rig.redis).all()
    assert job.kind == "permanent" and rig.script.calls == []


async def test_other_persons_are_untouched(rig: WriteRig) -> None:
    rig.script.facts = {"小橙子": ["女儿叫小橙子"]}
    await rig.enqueue(session("s-li", "我女儿叫小橙子", person="li", speaker="小李"))
    await rig.run_worker()
    assert rig.texts("li") == ["女儿叫小橙子"] and rig.texts("zhang") == []
    await asyncio.sleep(0)


async def test_a_bug_goes_to_the_dead_letters_at_once_with_its_traceback(
    rig: WriteRig, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: WritePath, record: object) -> None:
        raise TypeError("a programming error")

    monkeypatch.setattr(WritePath, "remember", broken)
    await rig.enqueue(session("s-bug", "我女儿叫小橙子"))
    await rig.run_worker()
    [job] = await DeadLetters(rig.redis).all()
    assert job.kind == "permanent" and job.tries == 1  # not retried max_tries times
    assert "Traceback" in job.error and "TypeError: a programming error" in job.error


async def test_a_two_hour_session_and_200_pending_tags_fit_the_model(rig: WriteRig) -> None:
    """Issue 20: a transcript longer than the model's context (llama.cpp answers 400 = a
    permanent failure) and a retag set too big for one JSON reply (cut at max_tokens: every
    later job failed). The transcript is read in windows, the tags asked in batches."""
    said = [f"第{n}件事：我在第{n}个抽屉里放了一把备用钥匙，记得提醒我" for n in range(240)]
    rig.script.facts = {s: [f"第{n}个抽屉里有备用钥匙"] for n, s in enumerate(said)}
    pending = [f"待打标签的记忆{n}号" for n in range(200)]
    embedder = rig.memory.embedder
    vectors = embedder.embed(pending)
    memories = [Memory(t, PersonId("zhang"), tags_pending=True) for t in pending]
    rig.memory.store.upsert(memories, vectors)
    await rig.redis.sadd(keys.retag("zhang"), *[m.key for m in memories])
    prompts: list[int] = []
    script = rig.script

    def sizes(body: dict[str, Any]) -> Reply:
        prompts.append(sum(len(str(m["content"])) for m in body["messages"]))
        return script(body)

    rig.llm.responder = sizes
    await rig.enqueue(session("s-long", *said, at=DAY_TS - 5 * 3600))  # ends the same day
    assert await rig.run_worker() == 1, script.problems
    assert script.calls.count("extract") > 1 and script.calls.count("tag") >= 24
    assert max(prompts) < 12_000  # every call stays far below a 4k-token context's prompt
    info = await Job("s-long", rig.redis, _queue_name=QUEUE, _deserializer=load).result_info()
    assert info is not None and info.success
    outcome = info.result
    assert outcome["facts"] == 240  # every window's facts, none lost to a cut-off reply
    assert len(outcome["added"]) + len(outcome["duplicates"]) == 240  # each one decided
    stored = rig.memory.store.scroll(PersonId("zhang"), limit=1000).memories
    assert len(stored) == 200 + len(outcome["added"])
    assert not any(m.tags_pending for m in stored)  # the 200 and the new ones, all tagged
    assert await rig.redis.scard(keys.retag("zhang")) == 0


async def test_a_plan_called_off_ends_with_its_history_kept(rig: WriteRig) -> None:
    """A cancellation ends the plan it names: recalled no more, its text and what ended it kept
    in its history (a deletion would lose both)."""
    rig.script.facts = {"黄山": ["我下周六去黄山"], "去不成": ["黄山那趟去不成了"]}
    await rig.enqueue(session("s-plan", "我下周六去黄山"))
    await rig.run_worker()
    [plan] = rig.memory.store.scroll(ZHANG).memories
    assert plan.cls is MemoryClass.EVENT
    await rig.enqueue(session("s-off", "黄山那趟去不成了", at=DAY_TS + 3600))
    await rig.run_worker()
    assert rig.script.problems == []
    [ended] = rig.memory.store.scroll(ZHANG).memories
    assert ended.id == plan.id and ended.expires_at is not None
    assert ended.expires_at <= time.time()  # ended when the job ran
    assert "黄山那趟去不成了" in ended.history[-1][0]
    recall = await rig.memory.read_path.recall(ZHANG, "我下周六有什么安排")
    assert all("黄山" not in r.memory.text for r in recall.related + recall.safety)
