"""An API call that leaves the host's terminal alone: third-party output and warnings go to the ``culturebias`` logger.

Inside ``quiet_call()``:

- text the calling thread writes to ``sys.stdout`` / ``sys.stderr`` (transformers' and
  huggingface_hub's progress bars, a library's ``print``) becomes records of the
  ``culturebias.output`` logger, line by line: a progress bar's final state at DEBUG,
  other stderr lines at WARNING, stdout lines at INFO. Other threads of the host write
  where they always did;
- warnings the calling thread raises (``warnings.warn``: a ``FutureWarning``, say) become
  WARNING records of ``culturebias.warnings`` instead of being printed; the host's warning
  filters still decide which are shown, and other threads' warnings show as before;
- the records of the libraries' own loggers that print to the terminal themselves
  (transformers, huggingface_hub, accelerate) go to ``culturebias.<library>`` instead.

Everything is put back when the call returns. Output written by compiled code straight to
the file descriptors (a C++ runtime's own messages) is not seen by Python and is not caught.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

OUTPUT_LOGGER = "culturebias.output"
WARNINGS_LOGGER = "culturebias.warnings"
# Libraries that give their loggers a terminal handler of their own (and stop propagation).
CHATTY_LIBRARIES = ("transformers", "huggingface_hub", "accelerate")
_BAR = re.compile(r"\d+%\||\d+/\d+ \[")


class _ThreadOutput(io.TextIOBase):
    """Stands in for a stream: the owning thread's text goes to a logger, other threads' to the stream."""

    def __init__(self, stream: TextIO, owner: int, level: int):
        self._stream = stream
        self._owner = owner
        self._level = level
        self._pending = ""
        self._logger = logging.getLogger(OUTPUT_LOGGER)
        self.active = True  # after the call, a handler that kept this stream writes to the real one

    def _passes(self) -> bool:
        return not self.active or threading.get_ident() != self._owner

    def write(self, text: str) -> int:
        if self._passes():
            return self._stream.write(text)
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._emit(line)
        return len(text)

    def _emit(self, line: str) -> None:
        shown = line.rsplit("\r", 1)[-1].strip()  # a bar redraws itself after "\r": its last state is what was shown
        if not shown:
            return
        level = logging.DEBUG if ("\r" in line or _BAR.search(shown)) else self._level
        self._logger.log(level, shown)

    def flush(self) -> None:
        if self._passes():
            self._stream.flush()

    def close(self) -> None:  # type: ignore[override]  # the real stream stays open
        if self._pending:
            self._emit(self._pending)
            self._pending = ""
        self.active = False

    def isatty(self) -> bool:  # no bar redraws itself into a log
        return not self.active and self._stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # a read-only property where TextIO declares an attribute
        return getattr(self._stream, "encoding", "utf-8")  # a wrapped text stream may declare none

    def fileno(self) -> int:
        return self._stream.fileno()


class _Forward(logging.Handler):
    """Hands a library's records to a ``culturebias.<library>`` logger."""

    def __init__(self, name: str):
        super().__init__()
        self._target = logging.getLogger(f"culturebias.{name}")

    def emit(self, record: logging.LogRecord) -> None:
        if self._target.isEnabledFor(record.levelno):
            self._target.handle(logging.makeLogRecord({**record.__dict__, "name": self._target.name}))


def _warnings_to_log(owner: int, shown: Any) -> Any:  # Any: warnings.showwarning, in and out
    """A ``warnings.showwarning`` that logs the calling thread's warnings and shows other threads' as before."""

    def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None) -> None:  # Any: warnings.showwarning's signature
        if threading.get_ident() != owner:
            return shown(message, category, filename, lineno, file, line)
        logging.getLogger(WARNINGS_LOGGER).warning("%s: %s (%s:%s)", category.__name__, message, filename, lineno)

    return show


@contextlib.contextmanager
def _library_loggers() -> Iterator[None]:
    saved = []
    for name in CHATTY_LIBRARIES:
        if name not in logging.root.manager.loggerDict:
            continue
        logger = logging.getLogger(name)
        saved.append((logger, list(logger.handlers), logger.propagate))
        logger.handlers = [_Forward(name)]
        logger.propagate = False
    try:
        yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers = handlers
            logger.propagate = propagate


@contextlib.contextmanager
def quiet_call() -> Iterator[None]:
    """Run the body without writing to the host's stdout or stderr (see the module docstring)."""
    owner = threading.get_ident()
    out = _ThreadOutput(sys.stdout, owner, logging.INFO)
    err = _ThreadOutput(sys.stderr, owner, logging.WARNING)
    with warnings.catch_warnings(), _library_loggers(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        warnings.showwarning = _warnings_to_log(owner, warnings.showwarning)
        try:
            yield
        finally:
            out.close()
            err.close()
