"""Signing in (rate-limited, scrypt) and out."""

from __future__ import annotations

import time

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from config import keys
from server.console.accounts import RateLimited
from server.console.sessions import COOKIE
from server.console.views import context, guarded_form, page

log = structlog.get_logger(__name__)


async def login(request: Request) -> Response:
    ctx = context(request)
    if request.method == "GET":
        return page(request, "login.html", title="登录")
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    try:
        address = request.client.host if request.client else ""
        account = await ctx.accounts.login(name, password, address)
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
    _account, session, _form = checked
    # the cookie is signed, not stored: remember it was signed out until it would expire
    remaining = max(1, int(session.expires_at - time.time()))
    await context(request).redis.set(keys.console_signed_out(session.csrf), 1, ex=remaining)
    response = RedirectResponse("/login", 303)
    response.delete_cookie(COOKIE, path="/")
    return response
