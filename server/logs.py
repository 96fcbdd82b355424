"""Structured logging set-up (structlog): event name + key-values, console or JSON lines."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


class _Stderr:
    """Whatever ``sys.stderr`` is when an event is written (a test runner swaps it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


STDERR: TextIO = _Stderr()  # type: ignore[assignment]


def configure_logging(
    level: str = "info", fmt: str = "console", stream: TextIO | None = None
) -> None:
    """Events go to stdout (``stream`` overrides: ``hearth mcp stdio`` owns stdout)."""
    numeric = logging.getLevelName(level.upper())
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=numeric, force=True)
    for noisy in ("websockets", "httpx", "uvicorn.access", "openai", "httpcore"):
        logging.getLogger(noisy).setLevel(max(numeric, logging.WARNING))
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # stdout is looked up when each logger is made (tests swap it); an explicit stream is fixed
        logger_factory=structlog.PrintLoggerFactory(stream) if stream else None,
        cache_logger_on_first_use=True,
    )
