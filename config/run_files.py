"""Files a running Hearth publishes for the other processes on the machine (operator commands,
``hearth-agent-context``), one home for their names. Standard library only: the agent hook
imports this on every prompt.

- ``run/redis.url``: ``hearth up``'s private Redis URL (0600).
- ``run/admin.url``: the running server's admin API address.
"""

from __future__ import annotations

from pathlib import Path


def redis_url_file(data_dir: Path) -> Path:
    return data_dir / "run" / "redis.url"


def admin_url_file(data_dir: Path) -> Path:
    return data_dir / "run" / "admin.url"
