"""The CLI's structlog set-up: readable console lines on stderr by default, JSON on demand, credentials never.

An embedding host that calls nothing here gets culturebias's events as standard ``logging`` records
(``culturebias.logs``).

``redact_secrets`` (``culturebias.logs``) runs before the renderer: every value of every event goes
through ``domain/redaction.py`` (URL userinfo, key-like query parameters and
pairs, Authorization headers, DSN passwords, secret-named fields), so a log line
cannot carry a key whichever module wrote it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

import structlog

from culturebias.logs import redact_secrets

__all__ = ["configure_logging", "redact_secrets"]


class _StderrLogger:
    """Writes to whatever ``sys.stderr`` is at call time (test capture and redirection follow it)."""

    def msg(self, message: str) -> None:
        bars = sys.modules.get("tqdm")  # a progress bar on screen: clear it, write the line, draw it again below
        if bars is None:
            print(message, file=sys.stderr, flush=True)
            return
        with bars.tqdm.external_write_mode(file=sys.stderr):
            print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def _stderr_logger(*_args) -> _StderrLogger:
    return _StderrLogger()


def configure_logging(fmt: str = "console", level: str = "info") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    renderer = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_secrets,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """structlog's configuration as it was before, once the body is done (a CLI call inside a longer-lived process)."""
    configured, saved = structlog.is_configured(), structlog.get_config()
    try:
        yield
    finally:
        if configured:
            structlog.configure(**saved)
        else:
            structlog.reset_defaults()
