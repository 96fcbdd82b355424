"""Issue 20, high: request bodies are capped before they are read, and credentials are checked
before a body is parsed — on the memory API, the HTTP port (admin) and the console. Raw sockets
on loopback: the server must answer while the client is still in the middle of its body."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from redis.asyncio import Redis

from config.settings import load_settings
from memory.registry import ApiKeys, Speakers
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.api.app import ApiContext, build_api
from server.api.service import MemoryService
from server.auth import TokenAuthority
from server.console.app import ConsoleContext, build_console
from server.console.sessions import SessionSigner
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from tests.conftest import RunningHttp
from tests.support.serving import serving

CHUNK = b"x" * 65536
STORE = "/api/v1/memory/store"


@pytest.fixture
async def api_url(tmp_path: Path, redis: Redis, embedder: UseEmbedder) -> AsyncIterator[str]:
    settings = load_settings(data_dir=tmp_path)
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    service = MemoryService(embedder, store, Speakers(redis), settings.api)
    async with serving(build_api(ApiContext(redis, service, settings.api))) as url:
        yield url
    store.close()


async def _head_then_chunks(
    url: str, path: str, headers: dict[str, str], chunks: int
) -> tuple[int, bytes]:
    """Send the headers and ``chunks`` chunks of a chunked body — never the final chunk — and
    return the status line's code and what came back. A server waiting for the whole body
    would never answer: the read is bounded."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    writer.write(head.encode())
    try:
        for _ in range(chunks):
            writer.write(f"{len(CHUNK):x}\r\n".encode() + CHUNK + b"\r\n")
            await writer.drain()
    except ConnectionError:
        pass  # the server answered and closed while we were still sending: fine
    async with asyncio.timeout(10):
        answer = await reader.read(4096)
    writer.close()
    return int(answer.split(b" ", 2)[1]), answer


async def _declared(url: str, path: str, headers: dict[str, str], length: int) -> int:
    """A Content-Length far above the cap, and not one byte of body."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    writer.write(head.encode())
    async with asyncio.timeout(10):
        answer = await reader.read(4096)
    writer.close()
    return int(answer.split(b" ", 2)[1])


async def test_an_unauthenticated_chunked_flood_is_refused_before_its_body(api_url: str) -> None:
    status, answer = await _head_then_chunks(api_url, STORE, {}, chunks=1)
    assert status == 401 and b"authentication_error" in answer


async def test_an_authenticated_chunked_body_past_the_cap_gets_413_not_400(
    api_url: str, redis: Redis
) -> None:
    key, _ = await ApiKeys(redis).create("flood", ["*"])
    status, answer = await _head_then_chunks(api_url, STORE, {"X-API-Key": key}, chunks=4)
    assert status == 413 and b"at most 65536 bytes" in answer


async def test_a_declared_length_past_the_cap_is_refused_without_reading(
    api_url: str, redis: Redis
) -> None:
    key, _ = await ApiKeys(redis).create("big", ["*"])
    assert await _declared(api_url, STORE, {"X-API-Key": key}, 800_000_000) == 413
    assert await _declared(api_url, STORE, {}, 800_000_000) == 413  # the cap is checked first


async def test_the_admin_api_checks_its_token_before_the_body(http_app: RunningHttp) -> None:
    status, _ = await _head_then_chunks(http_app.base_url, "/admin/memory/import", {}, chunks=1)
    assert status == 401
    ok = {"Authorization": "Bearer admin-secret"}
    assert await _declared(http_app.base_url, "/admin/memory/import", ok, 800_000_000) == 413


async def test_the_console_login_form_is_capped(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    ctx = ConsoleContext(redis, engine, SessionSigner(b"k" * 32, 3600),
                         TokenAuthority(b"t" * 32, 86400))  # fmt: skip
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    async with serving(build_console(ctx)) as url:
        status, _ = await _head_then_chunks(url, "/login", form, chunks=4)
        declared = await _declared(url, "/login", form, 800_000_000)
    store.close()
    assert status == 413 and declared == 413
