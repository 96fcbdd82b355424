"""``hearth bench``: a bench stopped with SIGTERM still runs its cleanup (the `hearth up` it
started would otherwise live on, with its llama server)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

CHILD = """
import asyncio, pathlib, sys
import uvloop
from bench.signals import stop_on_sigterm

stop_on_sigterm()

async def main() -> None:
    try:
        print("ready", flush=True)
        await asyncio.Event().wait()
    finally:
        print("cleaning", flush=True)
        await asyncio.sleep(0.5)  # an awaiting cleanup, as a bench's child shutdown is
        pathlib.Path(sys.argv[1]).write_text("cleaned up")

uvloop.run(main())
"""


def test_sigterm_runs_a_benchs_cleanup(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(marker)], cwd=root,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGTERM)
        assert child.stdout.readline().strip() == "cleaning"
        child.send_signal(signal.SIGTERM)  # a second one does not cut the cleanup short
        assert child.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        child.kill()
    assert marker.read_text() == "cleaned up"
