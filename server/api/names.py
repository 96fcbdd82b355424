"""The identity rules (memory/identity.py) as the memory API answers them: the same checks,
an IdentityError becoming the seed's 400 envelope with the field that was sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from memory import identity
from memory.identity import DEFAULT_STORE, ME, IdentityError
from memory.schema import PersonId
from server.api.errors import ApiError, invalid

T = TypeVar("T")


def _as_api_error(check: Callable[[str], T], raw: str) -> T:
    try:
        return check(raw)
    except IdentityError as exc:
        raise invalid(exc.message, **exc.fields) from exc


def store_id(raw: str) -> PersonId:
    """The canonical store id (= the memory person)."""
    return _as_api_error(lambda value: identity.person_id(value, "user_id"), raw)


def speaker_name(raw: str) -> str:
    return _as_api_error(identity.speaker_name, raw)


def registrable(raw: str) -> str:
    return _as_api_error(identity.registrable, raw)


__all__ = ["DEFAULT_STORE", "ME", "ApiError", "registrable", "speaker_name", "store_id"]
