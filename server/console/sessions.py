"""The console's session cookie: ``base64(json) . HMAC-SHA256`` with an expiry, HttpOnly and
SameSite=Strict; it carries the account name and the session's CSRF token (every form posts it
back, compared in constant time). A tampered, expired or foreign cookie is no session."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

import orjson

COOKIE = "hearth_console"


@dataclass(frozen=True, slots=True)
class Session:
    user: str
    csrf: str
    expires_at: float


class SessionSigner:
    def __init__(self, key: bytes, ttl_s: float) -> None:
        self.key = key
        self.ttl_s = ttl_s

    def _mac(self, payload: bytes) -> str:
        return hmac.new(self.key, payload, hashlib.sha256).hexdigest()

    def issue(self, user: str, now: float | None = None) -> tuple[str, Session]:
        session = Session(user, secrets.token_urlsafe(24), (now or time.time()) + self.ttl_s)
        body = orjson.dumps({"u": session.user, "c": session.csrf, "e": session.expires_at})
        payload = base64.urlsafe_b64encode(body)
        return f"{payload.decode()}.{self._mac(payload)}", session

    def read(self, cookie: str | None, now: float | None = None) -> Session | None:
        if not cookie or "." not in cookie:
            return None
        payload, _, mac = cookie.rpartition(".")
        # bytes: compare_digest on str refuses non-ASCII (a 500 instead of a sign-in page)
        if not hmac.compare_digest(mac.encode(), self._mac(payload.encode()).encode()):
            return None
        try:
            data = orjson.loads(base64.urlsafe_b64decode(payload.encode()))
        except (ValueError, orjson.JSONDecodeError):
            return None
        session = Session(str(data["u"]), str(data["c"]), float(data["e"]))
        if session.expires_at < (now or time.time()):
            return None
        return session


def csrf_ok(session: Session, supplied: str | None) -> bool:
    return bool(supplied) and hmac.compare_digest(session.csrf.encode(), str(supplied).encode())
