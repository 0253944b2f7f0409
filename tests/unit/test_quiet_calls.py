"""Silence by default when embedded: log events are stdlib records, third-party output is captured (docs/api.md)."""

from __future__ import annotations

import logging
import sys
import threading
import warnings

import pytest
import structlog

from culturebias.adapters.progress.quiet import quiet_call
from culturebias.logs import EVENT_ATTRIBUTE, get_logger


@pytest.fixture(autouse=True)
def _structlog_unconfigured():
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


def test_an_unconfigured_event_is_a_stdlib_record_under_culturebias_with_its_fields(caplog, capsys):
    caplog.set_level(logging.INFO, logger="culturebias")
    get_logger("culturebias.hf").info("device chosen", device="cpu", api_base="http://u:SECRET@h/v1")
    [record] = [r for r in caplog.records if r.name == "culturebias.hf"]
    assert record.levelno == logging.INFO and record.getMessage().startswith("device chosen device=cpu")
    fields = getattr(record, EVENT_ATTRIBUTE)
    assert fields["event"] == "device chosen" and fields["device"] == "cpu"
    assert "SECRET" not in record.getMessage() and "SECRET" not in str(fields)  # redacted before the record is made
    assert capsys.readouterr() == ("", "")


def test_the_culturebias_logger_has_a_null_handler_so_nothing_reaches_the_terminal(capfd):
    import culturebias  # noqa: F401  (the package adds the handler)

    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("culturebias").handlers)
    get_logger("culturebias.run").warning("no host handler")  # would reach stderr through logging.lastResort
    assert capfd.readouterr() == ("", "")


def test_a_level_the_host_does_not_want_is_dropped_before_rendering(caplog):
    caplog.set_level(logging.ERROR, logger="culturebias")
    get_logger("culturebias.run").info("run finished")
    assert not [r for r in caplog.records if r.name.startswith("culturebias")]


def test_a_configured_structlog_decides_where_events_go(capsys):
    from culturebias.bootstrap.logging import configure_logging

    configure_logging("json", "info")  # what the CLI does: JSON lines on stderr
    get_logger("culturebias.run").info("run finished", run_id="r1")
    out, err = capsys.readouterr()
    assert out == "" and '"event": "run finished"' in err and '"run_id": "r1"' in err


def test_third_party_bars_prints_warnings_and_library_loggers_go_to_the_logger(caplog, capsys):
    from tqdm import tqdm

    library = logging.getLogger("transformers")
    saved = (list(library.handlers), library.propagate)
    library.handlers, library.propagate = [logging.StreamHandler(sys.stderr)], False
    caplog.set_level(logging.DEBUG, logger="culturebias")
    try:
        with quiet_call():
            for _ in tqdm(range(3), desc="Loading weights"):
                pass
            print("a library's print")
            print("a library's complaint", file=sys.stderr)
            warnings.warn("`foo` is deprecated", FutureWarning, stacklevel=1)
            library.warning("generation flags are not valid")
        assert library.handlers[0].stream is sys.stderr  # its own handler back
    finally:
        library.handlers, library.propagate = saved
    assert capsys.readouterr() == ("", "")
    seen = {(r.name, r.levelno, r.getMessage().split(":")[0]) for r in caplog.records}
    assert ("culturebias.output", logging.INFO, "a library's print") in seen
    assert ("culturebias.output", logging.WARNING, "a library's complaint") in seen
    assert ("culturebias.warnings", logging.WARNING, "FutureWarning") in seen
    assert ("culturebias.transformers", logging.WARNING, "generation flags are not valid") in seen
    bars = [r for r in caplog.records if r.name == "culturebias.output" and "Loading weights" in r.getMessage()]
    assert [r.levelno for r in bars] == [logging.DEBUG] and "3/3" in bars[0].getMessage()  # the final state, once


def test_other_threads_and_later_writes_reach_the_real_streams(capsys):
    def host_thread():
        print("the host's other thread")
        warnings.warn("the host's own warning", UserWarning, stacklevel=1)

    shown: list[str] = []  # the host's own way of showing warnings
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *args, **kwargs: shown.append(str(message))
        with quiet_call():
            thread = threading.Thread(target=host_thread)
            thread.start()
            thread.join()
            stream = sys.stdout  # a handler created inside the call keeps this object
        print("after the call", file=stream)
    assert capsys.readouterr().out == "the host's other thread\nafter the call\n"
    assert shown == ["the host's own warning"]
