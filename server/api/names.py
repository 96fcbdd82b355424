"""Store ids and speaker names: the rules of seeds 000 and 002 in one place."""

from __future__ import annotations

import unicodedata

from server.api.errors import ApiError, invalid
from server.persons import PERSON_PATTERN

ME = "me"  # the assistant itself: reserved, lower case only, never registered or counted
DEFAULT_STORE = "default"
MAX_SPEAKER_CHARS = 80


def store_id(raw: str) -> str:
    """The canonical store id (= the memory person). Ids differing only by case are one store."""
    if not PERSON_PATTERN.match(raw):
        raise invalid(
            "user_id must be 1-64 ASCII letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            user_id=raw,
        )
    return raw.lower()


def speaker_name(raw: str) -> str:
    """Trimmed and NFC-normalised; matching is exact after that (Bob and bob are two people)."""
    name = unicodedata.normalize("NFC", raw).strip()
    if not name:
        raise invalid("speaker must not be empty.", speaker=raw)
    if len(name) > MAX_SPEAKER_CHARS:
        raise invalid(f"speaker names are at most {MAX_SPEAKER_CHARS} characters.", speaker=name)
    if name != ME and name.casefold() == ME:
        raise invalid(
            f"speaker '{name}' is not valid: the assistant is 'me', lower case only.", speaker=name
        )
    return name


def registrable(raw: str) -> str:
    name = speaker_name(raw)
    if name == ME:
        raise invalid("'me' is the assistant: it is reserved and never registered.", speaker=ME)
    return name


__all__ = ["DEFAULT_STORE", "ME", "ApiError", "registrable", "speaker_name", "store_id"]
