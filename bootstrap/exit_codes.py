"""How a culturebias command ends: each error kind's exit code, and a command run so that a failure is one line.

``EXIT_CODES`` maps each kind of ``CultureBiasError`` to the exit code the ``culturebias`` command
documents (``bootstrap/cli.py``); ``run_guarded`` runs a command with that mapping, SIGTERM as an
interruption, and a refused file as exit 1. The eval-hub entry point (``culturebias-evalhub``)
uses it too, so both commands end the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import NoReturn

from culturebias.domain.errors import (
    CapabilityError,
    ConfigError,
    CultureBiasError,
    DataError,
    MissingDataError,
    ModelLoadError,
    PluginError,
    ResumeMismatchError,
)
from culturebias.domain.redaction import redact_text
from culturebias.domain.runs import OutputFolderBusyError, RunInterrupted, RunInUseError

# Most specific first: the first matching type decides the exit code.
EXIT_CODES: tuple[tuple[type[CultureBiasError], int, str], ...] = (
    (ResumeMismatchError, 6, "resume mismatch"),
    (PluginError, 7, "plugin"),
    (OutputFolderBusyError, 8, "output folder in use"),
    (RunInUseError, 8, "run in use"),
    (MissingDataError, 3, "data"),
    (ConfigError, 2, "configuration"),
    (DataError, 3, "data"),
    (CapabilityError, 4, "capability"),
    (ModelLoadError, 5, "model load"),
    (CultureBiasError, 1, "error"),
)
INTERRUPTED = 130


def exit_code(error: CultureBiasError) -> int:
    return next(code for kind, code, _ in EXIT_CODES if isinstance(error, kind))


def run_guarded(command: Callable[[], int], prog: str = "culturebias") -> int:
    """``command()``'s exit code; a deliberate error (``EXIT_CODES``), an interruption (130, or 128 + the signal:
    SIGTERM interrupts as Ctrl-C does) or a file the system refuses (1) ends it with one line on stderr instead of a
    traceback. The ``culturebias`` command and the eval-hub entry point (``culturebias-evalhub``) share it."""
    try:
        with _sigterm_interrupts():
            return command()
    except CultureBiasError as error:
        print(f"{prog}: error: {redact_text(str(error))}", file=sys.stderr)
        return exit_code(error)
    except KeyboardInterrupt as stop:
        name = stop.signal_name if isinstance(stop, RunInterrupted) else "Ctrl-C"
        print(f"{prog}: interrupted ({name}); stored results are kept, continue with --resume", file=sys.stderr)
        return 128 + stop.signum if isinstance(stop, RunInterrupted) else INTERRUPTED
    except BrokenPipeError:  # `culturebias list | head`: the reader left; exit as a SIGPIPE'd program does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the final flush cannot fail again
        return 128 + signal.SIGPIPE
    except OSError as error:  # the system refused a file (permissions, a full disk): its words, one line
        print(f"{prog}: error: {redact_text(_describe_os_error(error))}", file=sys.stderr)
        return 1


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (``kill``, a scheduler's stop) ends a command as Ctrl-C does: the run stores what it
    computed and is marked interrupted. A second SIGTERM while that is under way is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise RunInterrupted(signum, signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _describe_os_error(error: OSError) -> str:
    where = " -> ".join(str(name) for name in (error.filename, error.filename2) if name is not None)
    reason = error.strerror or str(error)
    return f"{where}: {reason}" if where else reason


def end_process(code: int) -> NoReturn:
    """Exit with ``code``. After an interruption (the run is marked and its results stored by then) the process
    ends without joining worker threads still blocked on a request a stuck server holds: a stopped run stops
    now, not when that request times out."""
    if code >= INTERRUPTED and any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
