"""The embedded Redis child: a port another process takes between our probe and redis binding it
is retried on a fresh one, and a redis that cannot start says why."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from redis.asyncio import Redis

from providers.errors import PermanentProviderError
from providers.processes import EmbeddedRedis, free_port


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


def test_a_free_port_is_below_the_range_outgoing_connections_take() -> None:
    """A port from the ephemeral range can be taken by any client socket before its listener
    binds it; one below it cannot."""
    start = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {free_port() for _ in range(20)}
    if start - 10_000 >= 1_000:
        assert all(10_000 <= port < start for port in ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # nothing listens there
