"""Where culturebias's log events go: the standard ``logging`` module, under the ``culturebias`` logger.

Every module logs through ``get_logger(name)`` (names start with ``culturebias``). While
nobody has configured structlog (an embedding host that uses plain ``logging``), an event
becomes a record of ``logging.getLogger(name)``: its text is ``"event key=value ..."`` and
its fields travel as ``record.culturebias_event``. Importing culturebias adds one
``NullHandler`` to the ``culturebias`` logger, as a library should, so the host's logging
configuration alone decides what is shown and where; unconfigured, nothing is printed.

Where structlog has been configured (by the CLI, which renders console lines or JSON on
stderr, by a host that uses structlog itself, or by ``structlog.testing.capture_logs``),
the events follow that configuration, as any structlog user's would.

Credentials are redacted before a record is made (``redact_secrets``).
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog
from structlog.typing import Processor

from culturebias.domain.redaction import REDACTED, is_secret_name, redact_text, redact_value

ROOT_LOGGER = "culturebias"
EVENT_ATTRIBUTE = "culturebias_event"  # the structured fields of a record culturebias made

_PLAIN = (int, float, bool, type(None))
_RENDERER_KEYS = frozenset({"exc_info", "stack_info"})  # the renderer formats these itself


def _redacted(value: Any) -> Any:  # Any: structlog's loggers and event values are untyped
    if isinstance(value, (str, dict, list, tuple)):
        return redact_value(value)
    if isinstance(value, _PLAIN):
        return value
    text = str(value)  # what the renderer would print (exceptions, paths, models)
    hidden = redact_text(text)
    return hidden if hidden != text else value


def redact_secrets(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> dict[str, Any]:  # Any: structlog's logger and event values
    """structlog processor: the event with every credential in it replaced by ``**redacted**``."""
    return {
        key: value
        if key in _RENDERER_KEYS
        else REDACTED
        if is_secret_name(key) and isinstance(value, str) and value
        else _redacted(value)
        for key, value in event_dict.items()
    }


def _field(value: Any) -> str:  # Any: structlog's loggers and event values are untyped
    text = str(value)
    return repr(text) if isinstance(value, str) and (not text or any(c.isspace() for c in text)) else text


def _to_record(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:  # Any: structlog's logger, event values and the stdlib call's arguments
    """The arguments of the stdlib call: a one-line message, the fields as ``extra``, the exception if any."""
    fields = dict(event_dict)
    exc_info = fields.pop("exc_info", None)
    fields.pop("level", None)
    event = str(fields.pop("event", ""))
    message = " ".join([event, *(f"{key}={_field(value)}" for key, value in fields.items())])
    return (message,), {"extra": {EVENT_ATTRIBUTE: {"event": event, **fields}}, "exc_info": exc_info or None}


_STDLIB_PROCESSORS: list[Processor] = [
    structlog.stdlib.filter_by_level,  # nothing is rendered for a level the host does not want
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    redact_secrets,
    _to_record,
]


class CultureBiasLogger:
    """A structlog logger that picks its route at each call (see the module docstring)."""

    def __init__(self, name: str = ROOT_LOGGER):
        self._name = name

    def _bound(self) -> Any:  # Any: structlog's loggers and event values are untyped
        if structlog.is_configured():
            return structlog.get_logger(self._name)
        return structlog.wrap_logger(
            logging.getLogger(self._name), processors=_STDLIB_PROCESSORS, wrapper_class=structlog.stdlib.BoundLogger
        )

    def bind(self, **values: Any) -> Any:  # Any: structlog's loggers and event values are untyped
        return self._bound().bind(**values)

    def __getattr__(self, method: str) -> Any:  # Any: structlog's loggers and event values are untyped
        return getattr(self._bound(), method)


def get_logger(name: str = ROOT_LOGGER) -> CultureBiasLogger:
    return CultureBiasLogger(name)

