"""Issue 20, low: a signed-out console cookie is worth nothing even before it expires, and odd
characters in a cookie or CSRF value are a refusal, not a 500 (real Redis, the console on
loopback)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from redis.asyncio import Redis

from config.settings import load_settings
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.auth import TokenAuthority
from server.console.accounts import Accounts
from server.console.app import ConsoleContext, build_console
from server.console.sessions import COOKIE, Session, SessionSigner, csrf_ok
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from tests.support.serving import serving

PASSWORD = "correct horse battery staple"


def test_non_ascii_in_a_cookie_or_csrf_value_is_a_refusal() -> None:
    signer = SessionSigner(b"k" * 32, 3600)
    cookie, session = signer.issue("zhang")
    payload = cookie.rpartition(".")[0]
    assert signer.read(f"{payload}.签名") is None
    assert not csrf_ok(session, "令牌")
    assert csrf_ok(Session("zhang", "abc", 0), "abc")


async def test_a_signed_out_cookie_no_longer_opens_anything(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    await Accounts(redis).create("leaver", PASSWORD, "zhang", admin=False)
    ctx = ConsoleContext(redis, engine, SessionSigner(b"k" * 32, 3600),
                         TokenAuthority(b"t" * 32, 86400))  # fmt: skip
    async with serving(build_console(ctx)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            await http.post("/login", data={"name": "leaver", "password": PASSWORD})
            cookie = http.cookies[COOKIE]
            home = await http.get("/")
            csrf = re.search(r'name="csrf" value="([^"]+)"', home.text)
            assert home.status_code == 200 and csrf is not None
            await http.post("/logout", data={"csrf": csrf.group(1)})
        async with httpx.AsyncClient(base_url=url, cookies={COOKIE: cookie}) as stolen:
            replayed = await stolen.get("/")
        async with httpx.AsyncClient(base_url=url) as forged:
            odd = await forged.get("/", headers={"Cookie": f"{COOKIE}=e30.签名".encode()})
    store.close()
    assert replayed.status_code == 303 and replayed.headers["location"] == "/login"
    assert odd.status_code == 303
