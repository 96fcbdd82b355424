"""The memory console: server-rendered pages (Starlette + Jinja2, autoescaped) on its own port.

A person signs in and sees, searches, filters (speaker, class, source) and deletes only their own
memories — the delete shows exactly which records it removes before it happens; sees registered
speakers and recent write-path jobs and failures. Admins also edit person_map and mint device and
MCP tokens. Every state change is a POST carrying the session's CSRF token; every read of memory
is scoped to the signed-in account's person, so no URL reaches another person's records.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import structlog
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from config import keys
from memory.identity import IdentityError
from memory.schema import Memory, MemoryClass, MemoryId
from memory.store import store_call
from server.auth import TokenAuthority
from server.console.accounts import Account, Accounts, RateLimited
from server.console.sessions import COOKIE, Session, SessionSigner, csrf_ok
from server.memory.engine import MemoryEngine
from server.persons import PersonMap

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

    @property
    def accounts(self) -> Accounts:
        return Accounts(self.redis)


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else ""


def _row(memory: Memory, score: float | None = None) -> dict[str, Any]:
    return {"id": memory.key, "text": memory.text, "cls": memory.cls.value,
            "subject": memory.subject, "speaker": memory.speaker, "source": memory.source,
            "created": _when(memory.created_at),
            "score": f"{score:.2f}" if score is not None else ""}  # fmt: skip


def build_console(ctx: ConsoleContext) -> Starlette:
    async def signed_in(request: Request) -> tuple[Account, Session] | None:
        session = ctx.signer.read(request.cookies.get(COOKIE))
        if session is None:
            return None
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
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; style-src 'unsafe-inline'"
        )
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

    # ---- sign in / out ---------------------------------------------------------------------

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return page(request, "login.html", title="登录")
        form = await request.form()
        name, password = str(form.get("name", "")), str(form.get("password", ""))
        try:
            account = await ctx.accounts.login(name, password)
        except RateLimited as exc:
            log.warning("console.login_rate_limited", user=name)
            response = page(request, "login.html", 429, title="登录",
                            error=f"失败次数过多，请 {exc.retry_after_s} 秒后再试。")  # fmt: skip
            response.headers["Retry-After"] = str(exc.retry_after_s)
            return response
        if account is None:
            log.info("console.login_failed", user=name)
            return page(request, "login.html", 401, title="登录", error="账号或密码不对。")
        cookie, _session = ctx.signer.issue(account.name)
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, cookie, max_age=int(ctx.signer.ttl_s), httponly=True,
                            samesite="strict", secure=ctx.secure_cookie, path="/")  # fmt: skip
        log.info("console.login", user=account.name, person=account.person)
        return response

    async def logout(request: Request) -> Response:
        checked = await guarded_form(request)
        if isinstance(checked, Response):
            return checked
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, path="/")
        return response

    # ---- memories --------------------------------------------------------------------------

    @viewer
    async def memories(request: Request, account: Account, session: Session) -> Response:
        person = account.person
        params = request.query_params
        q, speaker = params.get("q", "").strip(), params.get("speaker", "")
        cls, source = params.get("cls", ""), params.get("source", "")
        everything = (await store_call(ctx.memory.store, ctx.memory.store.scroll, person,
                                       None, MAX_LIST)).memories  # fmt: skip
        scores: dict[str, float] = {}
        if q:
            recall = await ctx.memory.read_path.recall(person, q)
            hits = [*recall.safety, *recall.related]
            scores = {r.memory.key: r.score for r in hits}
            shown = [r.memory for r in hits]
        else:
            shown = sorted(everything, key=lambda m: m.created_at or 0, reverse=True)
        shown = [
            m for m in shown
            if (not speaker or m.speaker == speaker) and (not cls or m.cls.value == cls)
            and (not source or m.source == source)
        ]  # fmt: skip
        return page(
            request, "memories.html", title="记忆", account=account, csrf=session.csrf,
            memories=[_row(m, scores.get(m.key)) for m in shown], total=len(everything),
            q=q, speaker=speaker, cls=cls, source=source,
            speakers=sorted({m.speaker for m in everything if m.speaker}),
            sources=sorted({m.source for m in everything}),
            classes=[c.value for c in MemoryClass],
        )  # fmt: skip

    async def own(account: Account, form: FormData) -> list[Memory]:
        """The selected ids that are this person's memories (others simply do not resolve)."""
        ids = [MemoryId(str(v)) for v in form.getlist("id")][:MAX_LIST]
        if not ids:
            return []
        return list(await store_call(ctx.memory.store, ctx.memory.store.get,
                                     account.person, ids))  # fmt: skip

    async def confirm_delete(request: Request) -> Response:
        checked = await guarded_form(request)
        if isinstance(checked, Response):
            return checked
        account, session, form = checked
        doomed = await own(account, form)
        if not doomed:
            return page(request, "message.html", 400, title="没有选中", account=account,
                        csrf=session.csrf, message="没有选中任何属于你的记忆。")  # fmt: skip
        return page(request, "confirm_delete.html", title="确认删除", account=account,
                    csrf=session.csrf, memories=[_row(m) for m in doomed])  # fmt: skip

    async def delete(request: Request) -> Response:
        checked = await guarded_form(request)
        if isinstance(checked, Response):
            return checked
        account, session, form = checked
        doomed = await own(account, form)
        if doomed:
            await store_call(ctx.memory.store, ctx.memory.store.delete, account.person,
                             [m.key for m in doomed])  # fmt: skip
        log.info("console.deleted", user=account.name, person=account.person,
                 memories=[m.text for m in doomed])  # fmt: skip
        return page(request, "message.html", title="已删除", account=account, csrf=session.csrf,
                    message=f"已删除 {len(doomed)} 条记忆。")  # fmt: skip

    # ---- speakers, jobs --------------------------------------------------------------------

    @viewer
    async def speakers(request: Request, account: Account, session: Session) -> Response:
        from memory.registry import Speakers

        person = account.person
        rows = []
        for name, at in sorted((await Speakers(ctx.redis).all(account.person)).items()):
            count = await store_call(ctx.memory.store, ctx.memory.store.count, person, name)
            rows.append({"name": name, "at": at[:16], "count": count})
        return page(request, "speakers.html", title="说话人", account=account, csrf=session.csrf,
                    speakers=rows)  # fmt: skip

    @viewer
    async def jobs(request: Request, account: Account, session: Session) -> Response:
        from workers.failures import DeadLetters

        raw = await ctx.redis.lrange(keys.transcripts(account.person), 0, 19)  # type: ignore[misc]
        sessions = []
        for item in raw:
            record = orjson.loads(item)
            sessions.append({"session_id": str(record.get("session_id", "")),
                             "device_id": record.get("device_id", ""),
                             "ended": _when(record.get("ended_at")),
                             "utterances": len(record.get("transcript", [])),
                             "reason": record.get("end_reason", "")})  # fmt: skip
        failures = [{"job_id": f.job_id, "kind": f.kind, "tries": f.tries, "error": f.error[:200],
                     "at": _when(f.failed_at)}
                    for f in await DeadLetters(ctx.redis).all()
                    if str(f.record.get("person", "")) == account.person]  # fmt: skip
        return page(request, "jobs.html", title="写入任务", account=account, csrf=session.csrf,
                    sessions=sessions, failures=failures)  # fmt: skip

    # ---- admin -----------------------------------------------------------------------------

    @viewer
    async def admin(request: Request, account: Account, session: Session) -> Response:
        if not account.admin:
            return page(request, "message.html", 403, title="拒绝", kind="error",
                        message="需要管理员权限。", account=account, csrf=session.csrf)  # fmt: skip
        mapping = sorted((await PersonMap(ctx.redis).all()).items())
        return page(request, "admin.html", title="管理", account=account, csrf=session.csrf,
                    person_map=mapping)  # fmt: skip

    async def admin_map(request: Request) -> Response:
        checked = await guarded_form(request, admin=True)
        if isinstance(checked, Response):
            return checked
        account, session, form = checked
        persons = PersonMap(ctx.redis)
        device = str(form.get("device_id", ""))
        try:
            if request.url.path.endswith("/remove"):
                await persons.unmap(device)
            else:
                await persons.map(device, str(form.get("person", "")))
        except IdentityError as exc:
            return page(request, "message.html", 400, title="无法映射", kind="error",
                        message=str(exc), account=account, csrf=session.csrf,
                        back="/admin")  # fmt: skip
        log.info("console.person_map", user=account.name, device=device)
        return RedirectResponse("/admin", 303)

    async def admin_device_token(request: Request) -> Response:
        checked = await guarded_form(request, admin=True)
        if isinstance(checked, Response):
            return checked
        account, session, form = checked
        device, client = str(form.get("device_id", "")).strip(), str(form.get("client_id", ""))
        if not device or not client.strip():
            return page(request, "message.html", 400, title="缺少参数", kind="error",
                        message="需要设备 MAC 和 Client-Id。", account=account,
                        csrf=session.csrf, back="/admin")  # fmt: skip
        token = ctx.authority.mint(device, client.strip(), time.time())
        log.info("console.device_token", user=account.name, device=device)
        return page(request, "message.html", title="设备令牌", account=account, csrf=session.csrf,
                    message=f"{device} 的令牌：", secret=token, back="/admin")  # fmt: skip

    async def admin_mcp_token(request: Request) -> Response:
        checked = await guarded_form(request, admin=True)
        if isinstance(checked, Response):
            return checked
        account, session, form = checked
        from server.mcp.tokens import ENDPOINTS, McpTokens

        person, endpoint = str(form.get("person", "")).strip(), str(form.get("endpoint", ""))
        source = str(form.get("source", "mcp")).strip() or "mcp"
        if not person or endpoint not in ENDPOINTS:
            return page(request, "message.html", 400, title="缺少参数", kind="error",
                        message="需要 person 和 endpoint。", account=account,
                        csrf=session.csrf, back="/admin")  # fmt: skip
        label = f"{source}@{person}"
        token = await McpTokens(ctx.redis).create(label, person, source, endpoint)
        log.info("console.mcp_token", user=account.name, person=person, endpoint=endpoint)
        return page(request, "message.html", title="MCP 令牌", account=account,
                    csrf=session.csrf, message=f"{person} 的 {endpoint} 令牌：", secret=token,
                    back="/admin")  # fmt: skip

    return Starlette(
        routes=[
            Route("/login", login, methods=["GET", "POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/", memories),
            Route("/memories/delete/confirm", confirm_delete, methods=["POST"]),
            Route("/memories/delete", delete, methods=["POST"]),
            Route("/speakers", speakers),
            Route("/jobs", jobs),
            Route("/admin", admin),
            Route("/admin/persons", admin_map, methods=["POST"]),
            Route("/admin/persons/remove", admin_map, methods=["POST"]),
            Route("/admin/tokens/device", admin_device_token, methods=["POST"]),
            Route("/admin/tokens/mcp", admin_mcp_token, methods=["POST"]),
        ]
    )
