"""Progress reporters: a tqdm bar on stderr, callbacks to an embedding host, or silence."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Callable, Literal, TextIO

from culturebias.ports.progress import ProgressEvent


def bar_shape(stream: TextIO) -> dict[str, int | bool]:
    """tqdm's size arguments for a bar on ``stream``.

    tqdm sizes a bar from the terminal's window size and draws **nothing** when a
    terminal reports 0 columns or 0 rows (it computes ``rows - 1 = -1`` and hides
    every bar "below" it). A pty made without a window size reports 0 × 0: ``script``
    started from a job, a container's ``-t`` before its size is set, some CI runners.
    There the bar gets the size ``COLUMNS``/``LINES`` give, else 80 × 24; a terminal
    with a size keeps following it (``dynamic_ncols``).
    """
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):  # not a terminal, or a closed stream: tqdm's defaults
        return {"dynamic_ncols": True}
    if size.columns > 0 and size.lines > 0:
        return {"dynamic_ncols": True}
    fallback = shutil.get_terminal_size()
    return {"ncols": (size.columns or fallback.columns) - 1, "nrows": (size.lines or fallback.lines) - 1}


class TqdmTask:
    """One stage's bar on stderr: count of total, rate and ETA; its last state stays on screen."""

    def __init__(self, description: str, total: int | None):
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=description, unit="req", file=sys.stderr, leave=True, **bar_shape(sys.stderr))

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()


class TqdmProgress:
    def task(self, description: str, total: int | None) -> TqdmTask:
        return TqdmTask(description, total)


class NullTask:
    def __init__(self) -> None:
        self.done = 0

    def advance(self, n: int = 1) -> None:
        self.done += n

    def close(self) -> None:
        pass


class NullProgress:
    def task(self, description: str, total: int | None) -> NullTask:
        return NullTask()


class CallbackTask:
    def __init__(self, description: str, total: int | None, callback: Callable[[ProgressEvent], None]):
        self._description = description
        self._total = total
        self._callback = callback
        self.done = 0
        callback(ProgressEvent(description, 0, total))

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._callback(ProgressEvent(self._description, self.done, self._total))

    def close(self) -> None:
        self._callback(ProgressEvent(self._description, self.done, self._total, finished=True))


class CallbackProgress:
    """Progress as calls of ``callback(ProgressEvent)``: what ``culturebias.evaluate(on_progress=...)`` uses."""

    def __init__(self, callback: Callable[[ProgressEvent], None]):
        self._callback = callback

    def task(self, description: str, total: int | None) -> CallbackTask:
        return CallbackTask(description, total, self._callback)


def terminal_progress(mode: Literal["auto", "always", "never"], *, json_logs: bool = False, stream: TextIO | None = None):
    """Bars for a person at a terminal (``run.progress``).

    ``auto`` draws them only when ``stream`` (stderr) is a terminal and logs are not JSON:
    a bar's carriage returns garble a redirected log file and a JSON log collector.
    """
    if mode == "always":
        return TqdmProgress()
    if mode == "never" or json_logs:
        return NullProgress()
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return TqdmProgress() if isatty is not None and isatty() else NullProgress()
    except ValueError:  # a closed stream
        return NullProgress()
