"""Progress bars go to a person at a terminal: run.progress=auto|always|never."""

from __future__ import annotations

import os

import pytest

from culturebias.adapters.progress.reporters import NullProgress, TqdmProgress, terminal_progress
from culturebias.bootstrap.container import build_progress
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError


@pytest.fixture
def terminal():
    """A real pseudo-terminal: what stderr is when a person runs culturebias."""
    master, slave = os.openpty()
    stream = os.fdopen(slave, "w")
    yield stream
    stream.close()
    os.close(master)


@pytest.fixture
def log_file(tmp_path):
    with open(tmp_path / "log.txt", "w") as stream:
        yield stream


def test_auto_draws_bars_on_a_terminal_only(terminal, log_file):
    assert isinstance(terminal_progress("auto", stream=terminal), TqdmProgress)
    assert isinstance(terminal_progress("auto", stream=log_file), NullProgress)


def test_auto_draws_no_bars_beside_json_logs(terminal):
    assert isinstance(terminal_progress("auto", json_logs=True, stream=terminal), NullProgress)


def test_always_and_never_are_what_they_say(terminal, log_file):
    assert isinstance(terminal_progress("always", stream=log_file), TqdmProgress)
    assert isinstance(terminal_progress("always", json_logs=True, stream=log_file), TqdmProgress)
    assert isinstance(terminal_progress("never", stream=terminal), NullProgress)


def test_the_setting_defaults_to_auto_and_takes_the_old_booleans():
    assert load_settings().run.progress == "auto"
    assert load_settings(None, ["run.progress=false"]).run.progress == "never"
    assert load_settings(None, ["run.progress=true"]).run.progress == "always"
    assert load_settings(None, ["run.progress=always"]).run.progress == "always"
    with pytest.raises(ConfigError, match="run.progress"):
        load_settings(None, ["run.progress=sometimes"])


def test_the_container_reads_the_setting_and_the_log_format():
    # Under pytest stderr is captured, not a terminal: auto means no bars.
    assert isinstance(build_progress(load_settings()), NullProgress)
    assert isinstance(build_progress(load_settings(None, ["run.progress=always"])), TqdmProgress)
    assert isinstance(build_progress(load_settings(None, ["run.log_format=json"])), NullProgress)


def test_a_bar_on_a_terminal_without_a_window_size_gets_one(terminal, log_file, monkeypatch):
    """tqdm draws nothing on a pty reporting 0 x 0 (script from a job, some CI runners): the bar is sized there."""
    import fcntl
    import struct
    import termios

    from culturebias.adapters.progress.reporters import bar_shape

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    assert bar_shape(log_file) == {"dynamic_ncols": True}  # not a terminal: tqdm's own defaults
    fcntl.ioctl(terminal.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
    shape = bar_shape(terminal)
    assert shape["ncols"] > 0 and shape["nrows"] > 0 and "dynamic_ncols" not in shape
    monkeypatch.setenv("COLUMNS", "101")
    assert bar_shape(terminal)["ncols"] == 100
    fcntl.ioctl(terminal.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    assert bar_shape(terminal) == {"dynamic_ncols": True}  # a terminal with a size: the bar follows it


def test_a_bar_keeps_its_clock_moving_between_advances(monkeypatch, tmp_path):
    """A batch on a loaded CPU can take minutes: on a terminal the bar redraws meanwhile, so its elapsed time moves."""
    import fcntl
    import struct
    import termios
    import time

    from culturebias.adapters.progress.reporters import TqdmTask

    def drawn(stream, read, tick: float) -> str:
        """What the stream shows of a bar that never advances: once its elapsed time reads 00:01 (polled up to
        20 s, so a loaded machine that schedules the redraw late still passes), or after 1.3 s without a tick."""
        monkeypatch.setattr("sys.stderr", stream)
        task = TqdmTask("KoBBQ: answers", 10, tick=tick)
        time.sleep(1.3)  # no advance: nothing stored yet
        deadline = time.monotonic() + (20.0 if tick and stream.isatty() else 0.0)  # only a terminal gets the tick
        while True:
            stream.flush()
            before_close = read()
            if "00:01<" in before_close or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        task.close()
        stream.flush()
        closed = read()
        time.sleep(0.5)
        assert read() == closed  # closed: the redrawing stopped
        return before_close

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    terminal = os.fdopen(slave, "w")
    os.set_blocking(master, False)
    seen = []

    def read_terminal() -> str:
        try:
            seen.append(os.read(master, 65536).decode(errors="replace"))
        except BlockingIOError:
            pass
        return "".join(seen)

    try:
        assert "00:01<" in drawn(terminal, read_terminal, 0.2)  # elapsed moved while nothing advanced
        seen.clear()
        assert "00:01<" not in drawn(terminal, read_terminal, 0)  # without the tick tqdm redraws only on an update
    finally:
        terminal.close()
        os.close(master)
    with open(tmp_path / "log.txt", "w") as log:  # run.progress=always into a file: no redraw a second
        assert "00:01<" not in drawn(log, lambda: (tmp_path / "log.txt").read_text(), 0.2)
