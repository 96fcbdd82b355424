"""Secrets that must exist but need not be chosen by a person: generated once, kept 0600."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pydantic import SecretStr


def secret_value(configured: SecretStr | None, data_dir: Path, name: str) -> str:
    """The configured secret, else one generated into ``data_dir/secrets/<name>`` and reused."""
    if configured is not None and configured.get_secret_value():
        return configured.get_secret_value()
    folder = data_dir / "secrets"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    return value
