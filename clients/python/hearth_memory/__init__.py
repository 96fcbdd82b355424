"""Hearth's memory HTTP API from Python: ``Client`` (sync) and ``AsyncClient`` (asyncio)."""

from hearth_memory.client import AsyncClient, Client, derived_key
from hearth_memory.errors import (
    AuthenticationError,
    Conflict,
    Gone,
    HearthError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    TooLarge,
    Unavailable,
)

__all__ = [
    "AsyncClient", "AuthenticationError", "Client", "Conflict", "Gone", "HearthError",
    "InvalidRequest", "NotFound", "PermissionDenied", "TooLarge", "Unavailable", "derived_key",
]  # fmt: skip
