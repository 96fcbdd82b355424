"""Typed errors carrying the API's envelope: ``{"type": "error", "error": {"type", "message",
…fields}}``. Branch on the class (or ``type``) and the fields, never on the message text."""

from __future__ import annotations

from typing import Any


class HearthError(Exception):
    """Any error answer of the memory API."""

    def __init__(self, status: int, type_: str, message: str, fields: dict[str, Any]) -> None:
        super().__init__(f"{status} {type_}: {message}")
        self.status = status
        self.type = type_
        self.message = message
        self.fields = fields


class InvalidRequest(HearthError):
    """400 (and 422 for an Idempotency-Key reused with another body)."""


class AuthenticationError(HearthError):
    """401: the API key is missing or unknown."""


class PermissionDenied(HearthError):
    """403."""


class NotFound(HearthError):
    """404: no such store (or one this key may not touch), memory, speaker or route."""


class Conflict(HearthError):
    """409: the same Idempotency-Key is running (``retry_after_ms``) or its outcome is unknown."""

    @property
    def retry_after_ms(self) -> int | None:
        value = self.fields.get("retry_after_ms")
        return int(value) if isinstance(value, int | float) else None


class Gone(HearthError):
    """410: the model named in X-WOS-Model has retired."""


class TooLarge(HearthError):
    """413."""


class Unavailable(HearthError):
    """5xx: Redis or the memory engine is down; nothing was changed."""


_BY_TYPE: dict[str, type[HearthError]] = {
    "invalid_request_error": InvalidRequest,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDenied,
    "not_found_error": NotFound,
    "conflict_error": Conflict,
    "gone_error": Gone,
    "request_too_large": TooLarge,
    "api_error": Unavailable,
}


def from_answer(status: int, body: Any) -> HearthError:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return HearthError(status, "unknown", str(body)[:200], {})
    kind = str(error.get("type", "unknown"))
    fields = {k: v for k, v in error.items() if k not in ("type", "message")}
    return _BY_TYPE.get(kind, HearthError)(status, kind, str(error.get("message", "")), fields)
