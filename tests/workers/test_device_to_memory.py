"""The whole loop on real parts: a device says something → disconnects → the session's arq job
runs the write path → a later connection of that device gets it back from the read path."""

from __future__ import annotations

from pathlib import Path

import pytest
from arq.connections import ArqRedis
from redis.asyncio import Redis

from memory.schema import MemoryClass, PersonId
from server.device.session_end import EnqueueOnSessionEnd
from server.persons import PersonMap
from tests.conftest import start_hearth
from tests.server.memory.test_device_memory import system_prompt
from tests.support.scripted_llm import Reply
from tests.support.write_llm import WriteScript
from tests.workers.conftest import WriteRig

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
MAC = "aa:bb:cc:00:00:07"


async def test_said_then_remembered_then_recalled(
    tmp_path: Path, redis: Redis, redis_url: str, rig: WriteRig
) -> None:
    script: WriteScript = rig.script
    script.day = None  # the session happens now, not on the fixture's date
    script.facts = {"我老婆对海鲜过敏，尤其是虾": ["我老婆对海鲜过敏，尤其是虾"]}
    script.tags = {"我老婆对海鲜过敏，尤其是虾": ("safety", "volume", None, "老婆")}
    await PersonMap(redis).map(MAC, "zhang")
    await PersonMap(redis).name_speaker("zhang", "老张")
    async with start_hearth(tmp_path, redis_url, rig.llm.base_url, rig.llm,
                            memory=rig.memory) as hearth:  # fmt: skip
        device = hearth.device(MAC)
        await device.connect()
        await device.ask("我老婆对海鲜过敏，尤其是虾")
        await device.close()
        record = await hearth.ended.wait_for(device.session_id)
        assert record.person == "zhang"
        assert await rig.run_worker() == 1
        assert script.problems == []
        [memory] = rig.memory.store.scroll(PersonId("zhang")).memories
        assert memory.text == "我老婆对海鲜过敏，尤其是虾"
        assert memory.speaker == "老张" and memory.source == "device"
        assert memory.cls is MemoryClass.SAFETY and memory.subject == "老婆"
        # days later, a new connection: the memory is the only place this can come from
        script.chat = lambda body: Reply("记得你老婆对海鲜过敏，换个礼物吧。")
        again = hearth.device(MAC)
        await again.connect()
        await again.ask("订个海鲜礼包送我老婆")
        await again.close()
        prompt = system_prompt(rig.llm)
        assert "[安全约束]" in prompt and "我老婆对海鲜过敏，尤其是虾" in prompt
        assert "老张说" in prompt  # who said it travels with the memory


async def test_redis_down_at_disconnect_is_spooled_then_stored(
    tmp_path: Path, rig: WriteRig
) -> None:
    from server.device.session_end import record_payload
    from tests.workers.test_session_jobs import record as session_record

    rig.script.day = None
    rig.script.facts = {"我老婆对海鲜过敏": ["我老婆对海鲜过敏，尤其是虾"]}
    dead = ArqRedis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    spool = tmp_path / "spool"
    down = EnqueueOnSessionEnd(dead, spool)
    ended = session_record("s-offline")
    await down.session_ended(ended)
    await dead.aclose()
    assert [p.name for p in down.spooled()] == ["s-offline.json"]
    assert rig.memory.store.count(PersonId("alice")) == 0
    up = EnqueueOnSessionEnd(rig.arq, spool)
    assert await up.drain_spool() == 1 and up.spooled() == []
    assert await rig.run_worker() == 1
    [memory] = rig.memory.store.scroll(PersonId("alice")).memories
    assert memory.text == "我老婆对海鲜过敏，尤其是虾"
    assert memory.speaker == "alice"  # no speaker name known while Redis was down: the person
    assert record_payload(ended)["transcript"][1]["speaker"] == "me"
