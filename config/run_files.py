"""Files a running Hearth publishes for the other processes on the machine (operator commands,
``hearth-agent-context``), one home for their names. Standard library only: the agent hook
imports this on every prompt.

- ``run/redis.url``: ``hearth up``'s private Redis URL (0600).
- ``run/admin.url``: the running server's admin API address.
- ``agent_pointer_file()``: in the *user's* config folder (``$XDG_CONFIG_HOME/hearth`` or
  ``~/.config/hearth``), where that user's running Hearth keeps its data and whose memory the
  agent hook injects. The hook reads only this and the user's environment — never a file in
  the working directory, which a cloned repository controls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def redis_url_file(data_dir: Path) -> Path:
    return data_dir / "run" / "redis.url"


def admin_url_file(data_dir: Path) -> Path:
    return data_dir / "run" / "admin.url"


def agent_pointer_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hearth" / "agent.json"


def publish_agent_pointer(data_dir: Path, agent_person: str | None) -> Path:
    """Written by a starting server (0600): its data folder, the hook's default person."""
    path = agent_pointer_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    body = json.dumps({"data_dir": str(data_dir.resolve()), "agent_person": agent_person})
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(body)
    return path


def read_agent_pointer() -> dict[str, Any]:
    """The pointer, or {} when no server of this user ever published one."""
    try:
        found: dict[str, Any] = json.loads(agent_pointer_file().read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
