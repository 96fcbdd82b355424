"""Where settings come from (files and environment names), without importing pydantic."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULTS_FILE = Path(__file__).with_name("defaults.yaml")
ENV_PREFIX = "HEARTH_"
ENV_NESTING = "__"


class MissingConfigFile(Exception):
    pass


def user_config_file() -> Path | None:
    explicit = os.environ.get("HEARTH_CONFIG")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise MissingConfigFile(f"file not found: {path}")
        return path
    local = Path("hearth.yaml")
    return local if local.is_file() else None
