"""Admins: person_map edits, device approvals and tokens, MCP tokens."""

from __future__ import annotations

import time

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from memory.identity import IdentityError
from server.auth import MAC_PATTERN, normalise_mac
from server.console.accounts import Account
from server.console.sessions import Session
from server.console.views import context, guarded_form, page, viewer
from server.devices import DeviceRegistry
from server.persons import PersonMap

log = structlog.get_logger(__name__)


@viewer
async def admin(request: Request, account: Account, session: Session) -> Response:
    ctx = context(request)
    if not account.admin:
        return page(request, "message.html", 403, title="拒绝", kind="error",
                    message="需要管理员权限。", account=account, csrf=session.csrf)  # fmt: skip
    mapping = sorted((await PersonMap(ctx.redis).all()).items())
    approved = await DeviceRegistry(ctx.redis).approved()
    return page(request, "admin.html", title="管理", account=account, csrf=session.csrf,
                person_map=mapping, approved=approved)  # fmt: skip


async def admin_map(request: Request) -> Response:
    ctx = context(request)
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
    ctx = context(request)
    checked = await guarded_form(request, admin=True)
    if isinstance(checked, Response):
        return checked
    account, session, form = checked
    device, client = str(form.get("device_id", "")).strip(), str(form.get("client_id", ""))
    if not device or not client.strip():
        return page(request, "message.html", 400, title="缺少参数", kind="error",
                    message="需要设备 MAC 和 Client-Id。", account=account,
                    csrf=session.csrf, back="/admin")  # fmt: skip
    device = normalise_mac(device)
    if not MAC_PATTERN.match(device):
        return page(request, "message.html", 400, title="设备 MAC 无效", kind="error",
                    message="设备 MAC 形如 aa:bb:cc:dd:ee:ff。", account=account,
                    csrf=session.csrf, back="/admin")  # fmt: skip
    await DeviceRegistry(ctx.redis).approve(device, client.strip())  # a token for it: approved
    token = ctx.authority.mint(device, client.strip(), time.time())
    log.info("console.device_token", user=account.name, device=device)
    return page(request, "message.html", title="设备令牌", account=account, csrf=session.csrf,
                message=f"{device} 的令牌：", secret=token, back="/admin")  # fmt: skip


async def admin_device_revoke(request: Request) -> Response:
    """Withdraw one (device, client) approval: refused at the next connection, and the running
    device server closes its open connections."""
    ctx = context(request)
    checked = await guarded_form(request, admin=True)
    if isinstance(checked, Response):
        return checked
    account, _session, form = checked
    device, client = str(form.get("device_id", "")), str(form.get("client_id", ""))
    await DeviceRegistry(ctx.redis).revoke(device, client or None)
    log.info("console.device_revoked", user=account.name, device=device, client=client)
    return RedirectResponse("/admin", 303)


async def admin_mcp_token(request: Request) -> Response:
    ctx = context(request)
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
