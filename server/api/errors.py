"""The one home of the API's error envelope and error types.

Every error answers ``{"type": "error", "error": {"type": …, "message": …, …fields}}`` — the
shape in seed 000. Clients branch on the status code, ``error.type`` and the extra fields
(``speaker``, ``speaker_limit``, ``retry_after_ms``…), never on the message text.
"""

from __future__ import annotations

import enum
from typing import Any

from fastapi.responses import JSONResponse


class ErrorType(enum.StrEnum):
    INVALID_REQUEST = "invalid_request_error"  # 400 (and 422 for a reused Idempotency-Key)
    AUTHENTICATION = "authentication_error"  # 401
    PERMISSION = "permission_error"  # 403 a store-bound key creating stores
    NOT_FOUND = "not_found_error"  # 404 (also: a store this key may not touch)
    GONE = "gone_error"  # 410 retired model
    CONFLICT = "conflict_error"  # 409 idempotent repeat while running / outcome unknown
    TOO_LARGE = "request_too_large"  # 413
    API = "api_error"  # 500 / 503: our side (Redis or the memory engine unavailable)


class ApiError(Exception):
    def __init__(self, status: int, kind: ErrorType, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.fields = fields

    def body(self) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": self.kind.value, "message": self.message, **self.fields},
        }

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)


def invalid(message: str, **fields: Any) -> ApiError:
    return ApiError(400, ErrorType.INVALID_REQUEST, message, **fields)


def not_found(message: str, **fields: Any) -> ApiError:
    return ApiError(404, ErrorType.NOT_FOUND, message, **fields)


def store_not_found(store: str) -> ApiError:
    """Also what a key answers for a store it may not touch: existence never leaks."""
    return not_found(f"store '{store}' not found.", user_id=store)


def speaker_not_registered(name: str) -> ApiError:
    """Store with an unregistered name: 400, nothing stored (seed 000, verbatim)."""
    return invalid(
        f"speaker '{name}' is not registered in this store. Register it first: "
        "POST /api/v1/memory/speakers.",
        speaker=name,
    )


def speaker_unknown(name: str) -> ApiError:
    """Search or by-speaker filtered by an unregistered name: 404 (seed 000, verbatim)."""
    return not_found(f"speaker '{name}' is not registered in this store.", speaker=name)


def speaker_limit(limit: int) -> ApiError:
    return invalid(
        f"This store already has {limit} registered speakers, the current limit. "
        "Remove one (DELETE /api/v1/memory/speakers) before registering another.",
        speaker_limit=limit,
    )


def unavailable(what: str) -> ApiError:
    return ApiError(503, ErrorType.API, f"{what} is unavailable; nothing was changed. Retry later.")
