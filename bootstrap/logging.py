"""structlog set-up: readable console lines by default, JSON on demand, credentials never.

``redact_secrets`` runs before the renderer: every value of every event goes
through ``domain/redaction.py`` (URL userinfo, key-like query parameters and
pairs, Authorization headers, DSN passwords, secret-named fields), so a log line
cannot carry a key whichever module wrote it.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from culturebias.domain.redaction import REDACTED, is_secret_name, redact_text, redact_value

_PLAIN = (int, float, bool, type(None))
_RENDERER_KEYS = frozenset({"exc_info", "stack_info"})  # the renderer formats these itself


def _redacted(value: Any) -> Any:
    if isinstance(value, (str, dict, list, tuple)):
        return redact_value(value)
    if isinstance(value, _PLAIN):
        return value
    text = str(value)  # what the renderer would print (exceptions, paths, models)
    hidden = redact_text(text)
    return hidden if hidden != text else value


def redact_secrets(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """structlog processor: the event with every credential in it replaced by ``**redacted**``."""
    return {
        key: value
        if key in _RENDERER_KEYS
        else REDACTED
        if is_secret_name(key) and isinstance(value, str) and value
        else _redacted(value)
        for key, value in event_dict.items()
    }


class _StderrLogger:
    """Writes to whatever ``sys.stderr`` is at call time (test capture and redirection follow it)."""

    def msg(self, message: str) -> None:
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
