"""Identity rules, one home: person ids (= store ids), speaker names, the assistant's ``me``.

Every entry point (device person_map, memory API, MCP, console, CLI, write path) validates with
these and gets one ``IdentityError`` carrying the offending field; each edge turns it into its
own answer (HTTP 400 envelope, exit 2, a form error) without restating the rule.
"""

from __future__ import annotations

import re
import unicodedata

from memory.schema import PersonId

# 1-64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit; never ':'
# (PERSON_ENTITIES values are "person:entity").
PERSON_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # whole string: fullmatch
PERSON_RULE = "1-64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit"
ME = "me"  # the assistant itself: reserved, lower case only, never registered or counted
DEFAULT_STORE = "default"
MAX_SPEAKER_CHARS = 80


class IdentityError(ValueError):
    """An id or name that breaks a rule; ``fields`` names what was sent (for error bodies)."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


def person_id(raw: str, field: str = "person") -> PersonId:
    """The canonical person (store) id. Ids differing only by case are one person."""
    if not PERSON_PATTERN.fullmatch(raw):  # "$" would let a trailing newline through
        raise IdentityError(f"{field} must be {PERSON_RULE}.", **{field: raw})
    return PersonId(raw.lower())


def speaker_name(raw: str) -> str:
    """Trimmed and NFC-normalised; matching is exact after that (Bob and bob are two people)."""
    name = unicodedata.normalize("NFC", raw).strip()
    if not name:
        raise IdentityError("speaker must not be empty.", speaker=raw)
    if len(name) > MAX_SPEAKER_CHARS:
        raise IdentityError(
            f"speaker names are at most {MAX_SPEAKER_CHARS} characters.", speaker=name
        )
    if name != ME and name.casefold() == ME:
        raise IdentityError(
            f"speaker '{name}' is not valid: the assistant is 'me', lower case only.", speaker=name
        )
    return name


def registrable(raw: str) -> str:
    """A speaker name a person or store may register: any valid name but ``me``."""
    name = speaker_name(raw)
    if name == ME:
        raise IdentityError(
            "'me' is the assistant: it is reserved and never registered.", speaker=ME
        )
    return name
