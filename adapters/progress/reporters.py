"""Progress reporters: a tqdm bar on stderr, callbacks to an embedding host, or silence."""

from __future__ import annotations

import os
import shutil
import sys
import threading
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


# How often a bar redraws between advances: its elapsed time keeps moving while a batch runs.
TICK_SECONDS = 1.0


class TqdmTask:
    """One stage's bar on stderr: count of total, rate and ETA; its last state stays on screen.

    The bar moves when results are stored, which on a loaded CPU can be minutes apart (one batch of
    generations). tqdm redraws only on an update, so between them the bar read ``[00:00<?, ?req/s]``
    and looked frozen; a daemon thread redraws it every ``tick`` seconds so the elapsed time (and,
    after the first update, the ETA) keeps moving. tqdm's class lock orders the redraw with log lines.
    Only on a terminal: ``run.progress=always`` into a log file gets no line a second.
    """

    def __init__(self, description: str, total: int | None, *, tick: float = TICK_SECONDS):
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=description, unit="req", file=sys.stderr, leave=True, **bar_shape(sys.stderr))
        self._closed = threading.Event()
        if tick > 0 and not self._bar.disable and _is_terminal(sys.stderr):
            threading.Thread(target=self._tick, args=(tick,), name="culturebias-progress-tick", daemon=True).start()

    def _tick(self, tick: float) -> None:
        while not self._closed.wait(tick):
            with self._bar.get_lock():
                if self._closed.is_set():
                    return
                self._bar.refresh(nolock=True)

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        with self._bar.get_lock():
            self._closed.set()
        self._bar.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # not a stream, or a closed one
        return False


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
