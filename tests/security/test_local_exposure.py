"""Issue 20, medium: local exposure — the embedded Redis password is not on the command line
(``ps`` shows argv to every local user) and its folder and config are private."""

from __future__ import annotations

import stat
from pathlib import Path

from providers.processes import EmbeddedRedis


async def test_the_redis_password_is_not_in_argv_and_its_files_are_private(
    tmp_path: Path,
) -> None:
    redis = EmbeddedRedis(tmp_path)
    await redis.start()
    try:
        assert redis.child.proc is not None
        _check(redis.child.proc.pid, redis.password, tmp_path / "redis" / "redis.conf")
    finally:
        redis.stop()


def _check(pid: int, password: str, config: Path) -> None:
    assert password.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700


def test_what_the_cli_creates_is_private(tmp_path: Path) -> None:
    """The CLI sets umask 077: folders and files it creates without an explicit mode (here the
    data folder's secrets/ directory) are the running user's alone."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HEARTH_DATA_DIR": str(tmp_path / "data"),
           "HEARTH_AUTH__ENROLLMENT": "open"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "device", "token", "aa:bb:cc:dd:ee:ff", "c-1"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE((tmp_path / "data" / "secrets").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
