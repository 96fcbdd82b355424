"""A few settings read without pydantic, for commands that start on every prompt
(``hearth-agent-context``): importing the full settings tree costs ~0.3 s. Same sources and
precedence as ``config.settings`` (environment, then the user file, then ``defaults.yaml``) but
no validation: anything beyond simple values belongs in ``load_settings()``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from config.settings_files import DEFAULTS_FILE, ENV_NESTING, ENV_PREFIX, user_config_file


def peek(*path: str) -> Any:
    """The value at ``path`` (e.g. ``"mcp", "agent_person"``), or None."""
    env = os.environ.get(ENV_PREFIX + ENV_NESTING.join(p.upper() for p in path))
    if env is not None:
        return env
    for file in (user_config_file(), DEFAULTS_FILE):
        if file is None:
            continue
        node: Any = yaml.safe_load(Path(file).read_text())
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None
