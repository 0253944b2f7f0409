"""``OpenAITestServer`` as a process of its own, for tests that kill a served model mid-run (SIGKILL).

    python -m culturebias.testing.openai_server_process --port PORT [--hang-after N]

serves ``served-model`` (every character a token scored by a fixed rule, every generated reply "A") on
127.0.0.1:PORT until killed. With ``--hang-after N``, every model request after the N-th gets no reply
(a ``hang`` fault), so a test can wait until a run is stuck mid-way and kill the server then, with no
timing. Each model request served is one line on stdout (``served <n> <fault>``), flushed, for the test
to wait on.
"""

from __future__ import annotations

import argparse
import sys
import time

from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer

MODEL = "served-model"


def served_model(port: int = 0) -> OpenAITestServer:
    """The scripted served model this process serves (the same replies in any process)."""
    scorer = ScriptedScorer(lambda context, char: -0.1 * (1 + ord(char) % 5))
    return OpenAITestServer(MODEL, CharacterTokenSource(scorer), ScriptedGenerator(lambda request, prompt: "A"), port=port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="openai_server_process")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--hang-after", type=int, default=None, metavar="N")
    args = parser.parse_args(argv)
    server = served_model(args.port).start()
    print(f"serving {server.api_base}", flush=True)
    hanging = False
    reported = 0
    while True:  # until killed
        served = server.requests()
        for request in served[reported:]:
            print(f"served {reported + 1} {request.fault or '-'}", flush=True)
            reported += 1
        if args.hang_after is not None and not hanging and reported >= args.hang_after:
            server.inject_every("hang", 1)  # every request from now on waits for ever
            hanging = True
        time.sleep(0.02)


if __name__ == "__main__":
    sys.exit(main())
