"""A reader that leaves early (`culturebias list | head -1`) is not an error of culturebias."""

import os
import signal
import subprocess
import sys


def test_a_closed_stdout_ends_the_command_quietly_with_the_sigpipe_status():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has left before the first write: every write fails, whatever the timing
    command = [sys.executable, "-c", "import sys; from culturebias.bootstrap.cli import main; sys.exit(main(['list']))"]
    try:
        finished = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, timeout=300)
    finally:
        os.close(write_end)
    stderr = finished.stderr.decode()
    assert finished.returncode == 128 + signal.SIGPIPE, stderr
    assert "Traceback" not in stderr and "Broken pipe" not in stderr and "Exception ignored" not in stderr, stderr
