"""``culturebias run`` in a real pseudo-terminal: the bar a person sees (count, rate, ETA), the plan once,
the headline card at the end.

The CLI runs in a child process whose stdin, stdout and stderr are a pty, so ``run.progress=auto`` takes it
for a terminal, as under ``script`` or tmux. Its model is a scripted one behind the loopback OpenAI server
(``culturebias.testing.openai_server``), answering each request after a short pause: seconds, not minutes.
A pty made without a window size reports 0 × 0 (``script`` started from a job, some CI runners): tqdm drew
no bar at all there; both that pty and one with a size must show the bar.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

CHILD = r"""
import sys, time
from culturebias.bootstrap.cli import main
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer

out = sys.argv[1]

def reply(request, prompt):
    time.sleep(0.02)  # a model that takes its time: the bar has a rate and an ETA to show
    return "A"

scorer = ScriptedScorer(lambda context, char: -0.1)
with OpenAITestServer("served-model", CharacterTokenSource(scorer), ScriptedGenerator(reply)) as server:
    code = main([
        "run", "kobbq", "--out", out, "--limit", "10",
        "--set", "model.backend=openai", "--set", f"model.api_base={server.api_base}", "--set", "model.path=served-model",
        "--set", "model.chat_template=none", "--set", "model.max_concurrency=1", "--set", f"run.cache_dir={out}-cache",
        "--set", "protocol.mode=generate", "--set", "protocol.prompts=1", "--set", "protocol.statistics=false",
        "--set", "run.progress=auto", "--set", "run.commit_seconds=0",
    ])
sys.exit(code)
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# tqdm's bar: "KoBBQ: answers:  40%|████      | 12/30 [00:00<00:01, 19.33req/s]"
BAR = re.compile(r"KoBBQ: answers:\s+(\d+)%\|[^|]*\|\s*(\d+)/(\d+) \[(\d\d:\d\d)<(\d\d:\d\d|\?),\s+([\d.]+|\?)req/s\]")


def run_in_pty(out: Path, columns: int, rows: int, timeout: float = 240.0) -> tuple[int, str]:
    master, slave = pty.openpty()
    if columns or rows:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TERM": "xterm"}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], stdin=slave, stdout=slave, stderr=slave,
                             env=env, close_fds=True, start_new_session=True)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif child.poll() is not None:
                break
        code = child.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if child.poll() is None:
            child.kill()
        os.close(master)
    return code, ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


@pytest.mark.parametrize(("columns", "rows"), [(0, 0), (120, 40)], ids=["pty-without-size", "pty-120x40"])
def test_the_run_draws_a_bar_with_count_rate_and_eta_in_a_terminal(tmp_path, columns, rows):
    code, screen = run_in_pty(tmp_path / "run", columns, rows)
    assert code == 0, screen[-3000:]
    states = [m.groups() for line in re.split(r"[\r\n]", screen) if (m := BAR.search(line))]
    assert states, f"no progress bar on the terminal:\n{screen[-3000:]}"
    assert {int(total) for _, _, total, *_ in states} == {30}  # 10 items × 3 option orders × 1 prompt
    counts = [int(done) for _, done, *_ in states]
    assert counts[-1] == 30 and any(0 < n < 30 for n in counts), counts  # it moved while the stage ran
    assert any(rate != "?" and float(rate) > 0 and eta != "?" for *_, eta, rate in states)  # a rate and an ETA
    assert screen.count("plan for kobbq on openai:served-model") == 1  # the plan once
    assert not re.search(r"\[info *\] plan ", screen)  # ... not also as a log event
    card = screen[screen.index("KoBBQ: the answer"):]
    assert "accuracy in ambiguous contexts:" in card and "95% interval" in card and "warning: A limited run" in card
    assert card.index("KoBBQ: the answer") < card.index("summary: ")
    assert "Warning:" not in screen and "FutureWarning" not in screen
