"""Secrets that must exist but need not be chosen by a person: generated once, kept 0600.

A secret never fails open: a configured or stored value shorter than ``MIN_SECRET_CHARS`` (an
empty file left by a crash between create and write, a placeholder) stops start-up with a
message naming it, instead of keys and tokens that compare equal to "". A new secret is written
to a temporary file, flushed to disk, and only then linked into place, so a crash leaves either
no file or a whole one.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pydantic import SecretStr

from config.settings import SettingsError

MIN_SECRET_CHARS = 16


def secret_value(
    configured: SecretStr | None, data_dir: Path, name: str, setting: str | None = None
) -> str:
    """The configured secret, else one generated into ``data_dir/secrets/<name>`` and reused.
    ``setting`` names the configuration key for the error message (default: the file)."""
    path = data_dir / "secrets" / name
    if configured is not None and configured.get_secret_value():
        return _strong(
            configured.get_secret_value(), setting or name, "set it to a long random value"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        hint = f"delete {path} to have a new one generated, or write a long random value into it"
        return _strong(path.read_text().strip(), str(path), hint)
    return _generate(path)


def _strong(value: str, where: str, hint: str) -> str:
    if len(value) < MIN_SECRET_CHARS:
        raise SettingsError(
            where, f"this secret is empty or shorter than {MIN_SECRET_CHARS} characters: {hint}"
        )
    return value


def _generate(path: Path) -> str:
    value = secrets.token_urlsafe(32)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(value)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)  # atomic, and never replaces a secret another process made
        except FileExistsError:
            return _strong(path.read_text().strip(), str(path), "delete it")
    finally:
        temporary.unlink(missing_ok=True)
    return value
