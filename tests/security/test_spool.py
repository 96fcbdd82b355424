"""Issue 20, medium: the disk spool loses nothing and never stops for good — a corrupt file is
quarantined and the rest drains, a record Redis refuses waits while later ones go, a hung Redis
makes the hook spool instead of hanging, and spooled transcripts are private (real Redis)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

import pytest
from arq.connections import ArqRedis, create_pool
from redis.exceptions import ResponseError

from server.device import session_end
from server.device.session_end import EnqueueOnSessionEnd, record_payload
from tests.workers.test_session_jobs import record
from workers.settings import redis_settings


def _spooled(spool: Path, session_id: str) -> Path:
    return EnqueueOnSessionEnd(None, spool)._spool(record_payload(record(session_id)))  # type: ignore[arg-type]


async def test_a_corrupt_file_is_quarantined_and_the_rest_drains(
    redis_url: str, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    _spooled(spool, "s-a")
    (spool / "s-b.json").write_bytes(b"{half a record")
    (spool / "s-c.json").write_bytes(b'{"not": "a session"}')
    _spooled(spool, "s-d")
    arq = await create_pool(redis_settings(redis_url))
    try:
        hook = EnqueueOnSessionEnd(arq, spool)
        assert await hook.drain_spool() == 2
        assert hook.spooled() == []
        kept = sorted(p.name for p in (spool / "quarantine").iterdir())
        assert kept == ["s-b.json", "s-c.json"]  # kept for an operator, out of the way
    finally:
        await arq.aclose()


async def test_a_refused_record_waits_while_later_ones_go(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = tmp_path / "spool"
    for name in ("s-1", "s-2", "s-3"):
        _spooled(spool, name)
    real = session_end.enqueue_session

    async def refusing(arq: ArqRedis, job: Any) -> bool:
        if job.session_id == "s-1":
            raise ResponseError("OOM command not allowed when used memory > 'maxmemory'")
        return await real(arq, job)

    monkeypatch.setattr(session_end, "enqueue_session", refusing)
    arq = await create_pool(redis_settings(redis_url))
    try:
        hook = EnqueueOnSessionEnd(arq, spool)
        assert await hook.drain_spool() == 2
        assert [p.name for p in hook.spooled()] == ["s-1.json"]  # not lost, tried next round
    finally:
        await arq.aclose()


async def test_a_hung_redis_makes_the_hook_spool_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)  # accepts, never answers
    port = silent.sockets[0].getsockname()[1]
    monkeypatch.setattr(session_end, "ENQUEUE_TIMEOUT_S", 0.5)
    hung = ArqRedis.from_url(f"redis://127.0.0.1:{port}/0")
    try:
        hook = EnqueueOnSessionEnd(hung, tmp_path / "spool")
        async with asyncio.timeout(10):
            await hook.session_ended(record("s-hung"))
        [path] = hook.spooled()
        assert path.name == "s-hung.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    finally:
        silent.close()
        await hung.aclose()


async def test_the_drain_loop_outlives_a_round_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds = 0

    async def failing(self: EnqueueOnSessionEnd) -> int:
        nonlocal rounds
        rounds += 1
        if rounds == 1:
            raise RuntimeError("a bug in one round")
        raise asyncio.CancelledError  # end the loop for the test

    monkeypatch.setattr(EnqueueOnSessionEnd, "drain_spool", failing)
    monkeypatch.setattr(session_end, "SPOOL_RETRY_S", 0)
    with pytest.raises(asyncio.CancelledError):
        await EnqueueOnSessionEnd(None, tmp_path).drain_forever()  # type: ignore[arg-type]
    assert rounds == 2  # the failing round was logged, the loop went on
