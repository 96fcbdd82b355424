"""The embedded Redis child: a port another process takes between our probe and redis binding it
is retried on a fresh one, and a redis that cannot start says why."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from redis.asyncio import Redis

from providers.errors import PermanentProviderError
from providers.processes import EmbeddedRedis


async def test_a_port_taken_before_redis_binds_it_is_retried_on_another(tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path)
    taken = redis.port
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        await redis.start()
        try:
            assert redis.port != taken
            client = Redis.from_url(redis.url)
            assert await client.ping()
            await client.aclose()
            assert "Address already in use" in (tmp_path / "logs" / "redis.log").read_text()
        finally:
            redis.stop()


async def test_a_port_that_stays_taken_fails_with_the_log_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        monkeypatch.setattr("providers.processes.free_port", lambda host="127.0.0.1": port)
        redis = EmbeddedRedis(tmp_path)
        with pytest.raises(PermanentProviderError, match=r"redis\.log"):
            await redis.start(attempts=2)
        assert not redis.child.alive()
