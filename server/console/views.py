"""What every console page shares: the typed state (``ConsoleContext``, ``app.state.console``),
the signed-in account, the page renderer with its security headers, and the CSRF-checked form."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from redis.asyncio import Redis
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from config import keys
from memory.photos import PhotoFiles
from memory.schema import Memory
from server.auth import TokenAuthority
from server.console.accounts import Account, Accounts
from server.console.sessions import COOKIE, Session, SessionSigner, csrf_ok
from server.memory.engine import MemoryEngine

log = structlog.get_logger(__name__)
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).with_name("templates")))
MAX_LIST = 500


@dataclass
class ConsoleContext:
    redis: Redis
    memory: MemoryEngine
    signer: SessionSigner
    authority: TokenAuthority
    secure_cookie: bool = False
    photos: PhotoFiles | None = None  # where image memories keep their photos
    voice_weights: Path | None = None  # the voice encoder (None: voices switched off)

    @property
    def accounts(self) -> Accounts:
        return Accounts(self.redis)


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else ""


def row(memory: Memory, score: float | None = None) -> dict[str, Any]:
    return {"id": memory.key, "text": memory.text, "cls": memory.cls.value,
            "subject": memory.subject, "speaker": memory.speaker, "source": memory.source,
            "created": when(memory.created_at), "photo": memory.photo is not None,
            "score": f"{score:.2f}" if score is not None else ""}  # fmt: skip


def context(request: Request) -> ConsoleContext:
    ctx: ConsoleContext = request.app.state.console
    return ctx


async def signed_in(request: Request) -> tuple[Account, Session] | None:
    ctx = context(request)
    session = ctx.signer.read(request.cookies.get(COOKIE))
    if session is None or await ctx.redis.exists(keys.console_signed_out(session.csrf)):
        return None  # expired, forged, or signed out: the cookie is worth nothing any more
    account = await ctx.accounts.get(session.user)
    return (account, session) if account is not None else None


def viewer(
    handler: Callable[[Request, Account, Session], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """A page for signed-in accounts; anyone else goes to the login page."""

    async def view(request: Request) -> Response:
        who = await signed_in(request)
        if who is None:
            return RedirectResponse("/login", 303)
        return await handler(request, *who)

    return view


def page(request: Request, name: str, status: int = 200, **values: Any) -> Response:
    response = TEMPLATES.TemplateResponse(request, name, values, status_code=status)
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = "default-src 'self'; style-src 'unsafe-inline'"
    return response


async def guarded_form(
    request: Request, admin: bool = False
) -> tuple[Account, Session, FormData] | Response:
    """A POST from a signed-in account with the right CSRF token, or the refusal."""
    who = await signed_in(request)
    if who is None:
        return RedirectResponse("/login", 303)
    account, session = who
    form = await request.form()
    supplied = form.get("csrf")
    if not csrf_ok(session, supplied if isinstance(supplied, str) else None):
        log.warning("console.csrf_refused", user=account.name, path=request.url.path)
        return page(request, "message.html", 403, title="拒绝", kind="error",
                    message="请求缺少有效的 CSRF 令牌。", account=account,
                    csrf=session.csrf)  # fmt: skip
    if admin and not account.admin:
        return page(request, "message.html", 403, title="拒绝", kind="error",
                    message="需要管理员权限。", account=account, csrf=session.csrf)  # fmt: skip
    return account, session, form
