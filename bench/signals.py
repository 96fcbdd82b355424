"""How a bench process ends when it is told to stop."""

from __future__ import annotations

import signal
from types import FrameType


def _terminated(signum: int, _frame: FrameType | None) -> None:
    # a second SIGTERM (an impatient operator, a supervisor's retry) must not cut the cleanup
    # short: stopping a busy model server takes seconds, and it is what the first one started
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def stop_on_sigterm() -> None:
    """SIGTERM unwinds like an error: the benches' ``finally`` blocks run, so the `hearth up`
    a bench started (and its model servers) stop with it instead of living on as orphans."""
    signal.signal(signal.SIGTERM, _terminated)
