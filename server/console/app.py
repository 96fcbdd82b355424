"""The memory console: server-rendered pages (Starlette + Jinja2, autoescaped) on its own port.

A person signs in and sees, searches, filters (speaker, class, source) and deletes only their own
memories — the delete shows exactly which records it removes before it happens; sees registered
speakers and recent write-path jobs and failures. Admins also edit person_map and mint device and
MCP tokens. The voices of a household are enrolled and removed on their own page. Every state
change is a POST carrying the session's CSRF token; every read of memory is scoped to the
signed-in account's person, so no URL reaches another person's records.
Pages live in ``server.console.pages`` (one module per area) and read a typed state
(``server.console.views.ConsoleContext``).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from server.body_guard import BodyGuard, plain_too_large
from server.console.pages.admin import (
    admin,
    admin_device_revoke,
    admin_device_token,
    admin_map,
    admin_mcp_token,
)
from server.console.pages.auth import login, logout
from server.console.pages.memories import (
    confirm_delete,
    delete,
    jobs,
    memories,
    photo,
    speakers,
    why,
)
from server.console.pages.voices import recorder, voice_enrol, voice_remove, voices
from server.console.views import ConsoleContext

__all__ = ["ConsoleContext", "build_console"]


MAX_BODY_BYTES = 64 * 1024  # forms: a login, a confirm, a person_map edit
MAX_VOICE_UPLOAD_BYTES = 12 * 1024 * 1024  # three WAV sentences, 20 s each at 48 kHz stereo


def _limit(path: str, default: int) -> int:
    return MAX_VOICE_UPLOAD_BYTES if path == "/voices/enrol" else default


def build_console(ctx: ConsoleContext) -> ASGIApp:
    """The console, its form bodies capped before they are read (``server.body_guard``)."""
    app = Starlette(
        routes=[
            Route("/login", login, methods=["GET", "POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/", memories),
            Route("/memories/delete/confirm", confirm_delete, methods=["POST"]),
            Route("/memories/delete", delete, methods=["POST"]),
            Route("/memories/{memory_id:uuid}/why", why),
            Route("/memories/{memory_id:uuid}/photo", photo),
            Route("/speakers", speakers),
            Route("/jobs", jobs),
            Route("/admin", admin),
            Route("/admin/persons", admin_map, methods=["POST"]),
            Route("/admin/persons/remove", admin_map, methods=["POST"]),
            Route("/admin/tokens/device", admin_device_token, methods=["POST"]),
            Route("/admin/devices/revoke", admin_device_revoke, methods=["POST"]),
            Route("/admin/tokens/mcp", admin_mcp_token, methods=["POST"]),
            Route("/voices", voices),
            Route("/voices/record.js", recorder),
            Route("/voices/enrol", voice_enrol, methods=["POST"]),
            Route("/voices/remove", voice_remove, methods=["POST"]),
        ]
    )
    app.state.console = ctx
    return BodyGuard(app, MAX_BODY_BYTES, plain_too_large, limits=_limit)
