"""person_map: edits apply to the next connection on every server instance; bench isolation."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis
from typer.testing import CliRunner

from config.settings import load_settings
from memory.identity import IdentityError
from memory.importer import import_memories, parse_lines
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.cli import app
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from server.persons import BENCH_PERSON, PersonMap, PersonMapError, default_person
from tests.conftest import TEST_SECRET, RunningHttp, start_hearth
from tests.support.scripted_llm import Reply, ScriptedLLM

MAC = "aa:bb:cc:dd:00:01"


async def test_unmapped_device_is_its_own_person(redis: Redis) -> None:
    assert await PersonMap(redis).resolve("AA:BB:CC:DD:00:01") == "device-aabbccdd0001"
    assert default_person(MAC) == "device-aabbccdd0001"


async def test_bad_ids_are_refused(redis: Redis) -> None:
    persons = PersonMap(redis)
    with pytest.raises(PersonMapError):
        await persons.map("phone", "alice")
    with pytest.raises(IdentityError, match="person must be 1-64 ASCII"):
        await persons.map(MAC, "-bad")
    assert await persons.map(MAC, "Alice") == "alice"  # ids differing by case are one person


async def test_edit_applies_to_the_next_connection_on_another_server_instance(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.responder = lambda req: Reply("好。")
    async with (
        start_hearth(tmp_path / "a", redis_url, scripted_llm.base_url, scripted_llm) as one,
        start_hearth(tmp_path / "b", redis_url, scripted_llm.base_url, scripted_llm) as two,
    ):
        first = one.device(MAC)
        await first.connect()
        await first.close()
        before = await one.ended.wait_for(first.session_id)
        assert before.person == default_person(MAC)
        # an admin edits the map through its own Redis connection (CLI / admin API do the same)
        await PersonMap(Redis.from_url(redis_url)).map(MAC, "zhang")
        second = two.device(MAC)
        await second.connect()
        await second.close()
        after = await two.ended.wait_for(second.session_id)
        assert after.person == "zhang"


async def test_a_remap_applies_to_an_open_session_at_its_next_turn(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> None:
    """Issue 20 (low): a session used to keep the person it resolved at connect."""
    scripted_llm.responder = lambda req: Reply("好。")
    await PersonMap(redis).unmap(MAC)
    async with start_hearth(tmp_path, redis_url, scripted_llm.base_url, scripted_llm) as hearth:
        device = hearth.device(MAC)
        await device.connect()
        await device.ask("你好", within_s=30)
        await PersonMap(Redis.from_url(redis_url)).map(MAC, "zhang")  # an admin, meanwhile
        await device.ask("还在吗", within_s=30)
        session = next(s for s in hearth.server.sessions if s.creds.device_id == MAC)
        assert session.person == "zhang"
        await device.close()
        record = await hearth.ended.wait_for(device.session_id)
    assert record.person == "zhang"  # the transcript goes to the person mapped now
    await PersonMap(redis).unmap(MAC)


async def test_bench_person_is_invisible_to_real_persons_and_back(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> None:
    embedder = UseEmbedder()
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    lines = parse_lines(['{"text": "我老婆对海鲜过敏", "cls": "safety", "subject": "老婆"}'])
    import_memories(lines, PersonId(BENCH_PERSON), embedder, store)
    real = parse_lines(['{"text": "我老婆喜欢吃海鲜", "cls": "preference", "subject": "老婆"}'])
    import_memories(real, PersonId("zhang"), embedder, store)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    persons = PersonMap(redis)
    await persons.map("02:00:00:00:00:01", BENCH_PERSON)
    await persons.map("02:00:00:00:00:02", BENCH_PERSON)
    await persons.map(MAC, "zhang")
    scripted_llm.responder = lambda req: Reply("好。")
    prompts: dict[str, str] = {}
    async with start_hearth(tmp_path, redis_url, scripted_llm.base_url, scripted_llm,
                            memory=engine) as hearth:  # fmt: skip
        for mac in ("02:00:00:00:00:01", "02:00:00:00:00:02", MAC):
            device = hearth.device(mac)
            await device.connect()
            await device.ask("订个海鲜礼包送我老婆")
            await device.close()
            messages = scripted_llm.requests[-1]["messages"]
            prompts[mac] = "\n".join(m["content"] for m in messages if m["role"] == "system")
    store.close()
    for bench_mac in ("02:00:00:00:00:01", "02:00:00:00:00:02"):
        assert "我老婆对海鲜过敏" in prompts[bench_mac]
        assert "我老婆喜欢吃海鲜" not in prompts[bench_mac]
    assert "我老婆喜欢吃海鲜" in prompts[MAC] and "我老婆对海鲜过敏" not in prompts[MAC]


def test_persons_cli_map_list_unmap(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HEARTH_AUTH__SECRET", TEST_SECRET)
    monkeypatch.setenv("HEARTH_REDIS__URL", redis_url)
    runner = CliRunner()
    mapped = runner.invoke(app, ["persons", "map", MAC, "zhang"])
    assert mapped.exit_code == 0, mapped.output
    listed = runner.invoke(app, ["persons", "list"])
    assert MAC in listed.output and "zhang" in listed.output
    assert runner.invoke(app, ["persons", "map", MAC, "bad id!"]).exit_code == 2
    unmapped = runner.invoke(app, ["persons", "unmap", MAC])
    assert "unmapped" in unmapped.output


async def test_admin_person_endpoint_needs_the_admin_token(http_app: RunningHttp) -> None:
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        refused = await client.post("/admin/persons", json={"device_id": MAC, "person": "zhang"})
        assert refused.status_code == 401
        headers = {"Authorization": "Bearer admin-secret"}
        ok = await client.post(
            "/admin/persons", json={"device_id": MAC, "person": "zhang"}, headers=headers
        )
        listed = await client.get("/admin/persons", headers=headers)
    assert ok.json() == {"device_id": MAC, "person": "zhang"}
    assert listed.json()["person_map"] == {MAC: "zhang"}


async def test_a_session_that_connected_while_redis_was_down_reaches_its_owner(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> None:
    """Issue 20 (low): the words of a device that connected while person_map could not be read
    used to go to an orphan ``device-…`` person for the whole session."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    scripted_llm.responder = lambda req: Reply("好。")
    async with start_hearth(tmp_path, redis_url, scripted_llm.base_url, scripted_llm) as hearth:
        real = hearth.server.services.resolve_person
        calls = 0

        async def flaky(device_id: str) -> PersonId:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RedisConnectionError("Redis is down")
            return PersonId("zhang")

        hearth.server.services.resolve_person = flaky
        try:
            device = hearth.device(MAC)
            await device.connect()
            await device.ask("你好", within_s=30)  # Redis answers again before this turn
            await device.close()
            record = await hearth.ended.wait_for(device.session_id)
        finally:
            hearth.server.services.resolve_person = real
    assert record.person == "zhang"
