"""A server that is not there: one ServerUnavailableError within seconds, no retries (docs/backends.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("httpx")

from structlog.testing import capture_logs  # noqa: E402

import culturebias  # noqa: E402
from culturebias.adapters.openai.client import ApiClient  # noqa: E402
from culturebias.errors import ServerUnavailableError  # noqa: E402
from culturebias.testing.served_process import free_port  # noqa: E402

UNKNOWN_HOST = "http://no-such-host.invalid:8000/v1"  # .invalid never resolves (RFC 2606)


def dead_port() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there


@pytest.mark.parametrize("api_base", [dead_port(), UNKNOWN_HOST], ids=["connection-refused", "unknown-host"])
def test_a_connection_that_cannot_be_made_is_one_error_at_once(api_base):
    client = ApiClient(api_base, max_retries=5, sleep=lambda s: pytest.fail(f"waited {s} s to retry"))
    with capture_logs() as logs, pytest.raises(ServerUnavailableError, match="cannot connect") as caught:
        client.post("completions", {"prompt": "x", "max_tokens": 1})
    assert client.sent == 1  # at once: one request, and a retry would have failed the test in sleep()
    assert api_base.rsplit("/v1", 1)[0] in str(caught.value) and "is the server running" not in str(caught.value)
    assert not [e for e in logs if e["event"] == "api retry"]


def test_a_batch_against_a_dead_server_raises_once_after_at_most_its_first_requests():
    client = ApiClient(dead_port(), max_retries=5, max_concurrency=8, initial_concurrency=2, sleep=lambda s: None)
    with capture_logs() as logs, pytest.raises(ServerUnavailableError):
        client.post_all("completions", [{"prompt": f"p{i}", "max_tokens": 1} for i in range(8)])
    assert client.sent <= 2  # the requests allowed in flight; the others never start
    assert not [e for e in logs if e["event"] == "api retry"]


def test_a_run_against_a_dead_server_stops_at_once_with_one_error(tmp_path):
    code = (
        "import culturebias\n"
        "try:\n"
        f"    culturebias.evaluate('kobbq', model={{'backend': 'openai', 'path': 'm', 'api_base': {dead_port()!r}}},\n"
        "                         options={'limit': 4, 'prompts': '1', 'mode': 'generate'})\n"
        "except culturebias.errors.ServerUnavailableError as error:\n"
        "    print('one error:', error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "OPENAI_API_KEY": "k"})  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.count("one error:") == 1 and "cannot connect" in done.stdout
    assert culturebias.errors.ServerUnavailableError.__name__ in dir(culturebias.errors)
