"""The memory console: accounts, cookie and CSRF rules over HTTP, then the real thing in headless
Debian chromium driven by playwright-core (tests/browser/console.mjs)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from config.settings import load_settings
from memory.importer import import_file
from memory.photos import PhotoFiles
from memory.schema import PersonId, Photo
from memory.store import EdgeMemoryStore
from memory.writes import Duplicate, MemoryWriter, NoTagging
from providers.embedder import UseEmbedder
from server.auth import TokenAuthority
from server.console.accounts import MAX_FAILURES, Accounts, hash_password, password_matches
from server.console.app import ConsoleContext, build_console
from server.console.sessions import COOKIE, SessionSigner
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from tests.memory.conftest import FIXTURES
from tests.support.serving import serving
from workers.contract import Said, SessionJob
from workers.jobs import archive

BROWSER = Path(__file__).resolve().parents[2] / "browser"
PASSWORDS = {"zhang": "zhang-password-1", "li": "li-password-22", "admin": "admin-password-3"}


@dataclass
class Console:
    url: str
    engine: MemoryEngine
    redis: Redis
    photos: PhotoFiles


@pytest.fixture
async def console(tmp_path: Path, redis: Redis, embedder: UseEmbedder) -> AsyncIterator[Console]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", PersonId("zhang"), embedder, store)
    import_file(FIXTURES / "household_li.jsonl", PersonId("li"), embedder, store)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    accounts = Accounts(redis)
    await accounts.create("zhang", PASSWORDS["zhang"], "zhang", admin=False)
    await accounts.create("li", PASSWORDS["li"], "li", admin=False)
    await accounts.create("admin", PASSWORDS["admin"], "zhang", admin=True)
    photos = PhotoFiles(tmp_path / "photos")
    ctx = ConsoleContext(redis, engine, SessionSigner(b"k" * 32, 3600),
                         TokenAuthority(b"t" * 32, 86400), photos=photos)  # fmt: skip
    async with serving(build_console(ctx)) as url:
        yield Console(url, engine, redis, photos)
    store.close()


def test_passwords_are_hashed_with_scrypt() -> None:
    record = hash_password("correct horse battery")
    assert record["kdf"] == "scrypt" and "correct" not in str(record)
    assert password_matches("correct horse battery", record)
    assert not password_matches("correct horse batterY", record)


def test_session_cookies_expire_and_resist_tampering() -> None:
    signer = SessionSigner(b"k" * 32, ttl_s=60)
    cookie, session = signer.issue("zhang", now=1000.0)
    assert signer.read(cookie, now=1030.0) == session
    assert signer.read(cookie, now=1061.0) is None  # expired
    payload, mac = cookie.rsplit(".", 1)
    assert signer.read(payload + "." + "0" * len(mac), now=1030.0) is None
    assert SessionSigner(b"x" * 32, 60).read(cookie, now=1030.0) is None  # another key


async def test_login_is_rate_limited_and_writes_need_csrf(console: Console) -> None:
    async with httpx.AsyncClient(base_url=console.url) as http:
        for _ in range(MAX_FAILURES):
            bad = await http.post("/login", data={"name": "li", "password": "wrong-password"})
            assert bad.status_code == 401
        limited = await http.post("/login", data={"name": "li", "password": PASSWORDS["li"]})
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
        ok = await http.post("/login", data={"name": "zhang", "password": PASSWORDS["zhang"]})
        assert ok.status_code == 303
        set_cookie = ok.headers["set-cookie"].lower()
        assert "httponly" in set_cookie and "samesite=strict" in set_cookie
        assert "max-age=3600" in set_cookie
        assert http.cookies.get(COOKIE)
        forged = await http.post("/memories/delete", data={"id": "x", "csrf": "nope"})
        assert forged.status_code == 403
        assert (await http.get("/admin")).status_code == 403  # not an admin
    async with httpx.AsyncClient(base_url=console.url) as anonymous:
        assert (await anonymous.get("/")).status_code == 303


BROWSER_READY = (
    shutil.which("node") is not None
    and Path("/usr/bin/chromium").exists()
    and (BROWSER / "node_modules" / "playwright-core").is_dir()
)


def screenshots_folder(default: Path) -> Path:
    """CONSOLE_SCREENSHOTS keeps the pages (the README's come from here)."""
    shots = Path(os.environ.get("CONSOLE_SCREENSHOTS", default))
    shots.mkdir(parents=True, exist_ok=True)
    return shots


@pytest.mark.skipif(not BROWSER_READY, reason="browser test dependencies missing (make test)")
async def test_console_in_a_real_browser(console: Console, tmp_path: Path) -> None:
    page = await asyncio.to_thread(console.engine.store.scroll, PersonId("zhang"), None, 100)
    seafood = next(m for m in page.memories if "海鲜" in m.text)
    shots = screenshots_folder(tmp_path)
    env = {**os.environ, "ZHANG_PASSWORD": PASSWORDS["zhang"], "LI_PASSWORD": PASSWORDS["li"],
           "ADMIN_PASSWORD": PASSWORDS["admin"], "ZHANG_MEMORY_ID": seafood.key}  # fmt: skip
    done = await asyncio.to_thread(
        subprocess.run, ["node", str(BROWSER / "console.mjs"), console.url, str(shots)],
        capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    seen = orjson.loads(done.stdout.decode().strip().splitlines()[-1])

    assert any("我老婆对海鲜过敏" in t for t in seen["zhangTexts"])
    assert not any("猫毛" in t for t in seen["zhangTexts"])  # li's
    assert any("海鲜过敏" in t for t in seen["searchTexts"])
    assert seen["safetyTexts"] and all(
        "过敏" in t or "药" in t or "血压" in t or "幽闭" in t for t in seen["safetyTexts"]
    )
    assert seen["confirmTexts"] == [seen["deleteTarget"]]  # exactly the selected record
    assert "已删除 1 条" in seen["deleteMessage"]
    remaining = await asyncio.to_thread(console.engine.store.scroll, PersonId("zhang"), None, 100)
    assert not any(m.text == seen["deleteTarget"] for m in remaining.memories)
    assert seen["csrfStatus"] == 403
    assert seen["tamperedUrl"] == "/login"
    assert seen["liTexts"] and not any("海鲜" in t for t in seen["liTexts"])
    assert seen["stealStatus"] == 200 and seen["stealBody"]  # nothing of zhang's resolved
    [still] = await asyncio.to_thread(console.engine.store.get, PersonId("zhang"), [seafood.key])
    assert still.text == seafood.text
    assert "AA:BB:CC:DD:EE:01" in " ".join(seen["personMap"]).upper()
    assert "需要管理员权限" in seen["userAdminText"]
    for name in ("memories", "search", "confirm-delete", "admin", "jobs"):
        assert (shots / f"console-{name}.png").stat().st_size > 5000


async def test_admins_mint_device_and_mcp_tokens(console: Console) -> None:
    import re

    from server.mcp.tokens import McpTokens

    async with httpx.AsyncClient(base_url=console.url) as http:
        await http.post("/login", data={"name": "admin", "password": PASSWORDS["admin"]})
        page = (await http.get("/admin")).text
        match = re.search(r'name="csrf" value="([^"]+)"', page)
        assert match is not None
        csrf = match.group(1)
        mcp = await http.post("/admin/tokens/mcp", data={
            "csrf": csrf, "person": "li", "endpoint": "device", "source": "kitchen"})  # fmt: skip
        device = await http.post("/admin/tokens/device", data={
            "csrf": csrf, "device_id": "AA:BB:CC:DD:EE:02", "client_id": "c-1"})  # fmt: skip
        listed = (await http.get("/admin")).text
        revoke = await http.post("/admin/devices/revoke", data={
            "csrf": csrf, "device_id": "aa:bb:cc:dd:ee:02", "client_id": "c-1"})  # fmt: skip
        after = (await http.get("/admin")).text
    assert mcp.status_code == 200 and device.status_code == 200
    # minting approved the pair; the revoke button withdrew it
    assert "aa:bb:cc:dd:ee:02</td><td>c-1" in listed
    assert revoke.status_code == 303 and "aa:bb:cc:dd:ee:02</td><td>c-1" not in after
    token_match = re.search(r'<code id="secret">(hmcp_[^<]+)</code>', mcp.text)
    assert token_match is not None
    identity = await McpTokens(console.redis).identity(token_match.group(1))
    assert identity is not None
    assert (identity.person, identity.endpoint, identity.source) == ("li", "device", "kitchen")
    assert re.search(r'<code id="secret">[^<]{20,}</code>', device.text)


async def _signed_in(http: httpx.AsyncClient, name: str) -> None:
    ok = await http.post("/login", data={"name": name, "password": PASSWORDS[name]})
    assert ok.status_code == 303


async def test_why_shows_the_conversation_the_photo_or_the_call(
    console: Console, embedder: UseEmbedder
) -> None:
    """Issue 21, item 7: "why do you remember that?" in the console — the same answer as the
    API's /expand, for the account's own memories only."""
    zhang = PersonId("zhang")
    said = [Said(role="user", text="我女儿下周三要去打疫苗", at=1000.0),
            Said(role="assistant", text="好的，记住了。", at=1001.0)]  # fmt: skip
    job = SessionJob(session_id="s-why", person=zhang, device_id="aa:bb:cc:dd:ee:01",
                     transcript=said)  # fmt: skip
    await archive(console.redis, job)
    writer = MemoryWriter(embedder, console.engine.store, console.redis, NoTagging(), 0.9)
    async with writer.locked(zhang):
        from_session = await writer.add(zhang, "女儿下周三打疫苗", embedder.embed(["x"])[0],
                                        source="device", speaker=None, now=1002.0,
                                        origin="s-why")  # fmt: skip
    assert not isinstance(from_session, Duplicate)
    data = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    saved = console.photos.save(zhang, data)
    photo = Photo("这是什么药？", "一盒布洛芬", saved.name, saved.content_type, len(data))
    kept = await writer.keep_photo(zhang, "一盒布洛芬（照片；问：这是什么药？）", photo)
    page = await asyncio.to_thread(console.engine.store.scroll, zhang, None, 100)
    imported = next(m for m in page.memories if "海鲜" in m.text)
    async with httpx.AsyncClient(base_url=console.url) as http:
        await _signed_in(http, "zhang")
        listing = (await http.get("/")).text
        session = (await http.get(f"/memories/{from_session.memory.key}/why")).text
        shown = (await http.get(f"/memories/{kept.key}/why")).text
        image = await http.get(f"/memories/{kept.key}/photo")
        call = (await http.get(f"/memories/{imported.key}/why")).text
    assert f"/memories/{kept.key}/why" in listing
    assert "来自这段对话" in session and "我女儿下周三要去打疫苗" in session
    assert "好的，记住了。" in session
    assert "来自一张照片" in shown and "这是什么药？" in shown
    assert image.status_code == 200 and image.content == data
    assert image.headers["content-type"] == "image/png"
    assert "由一次调用存入" in call and "import" in call
    async with httpx.AsyncClient(base_url=console.url) as other:
        await _signed_in(other, "li")
        assert (await other.get(f"/memories/{kept.key}/why")).status_code == 404
        assert (await other.get(f"/memories/{kept.key}/photo")).status_code == 404
