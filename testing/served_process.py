"""A real OpenAI-compatible server started as a subprocess on 127.0.0.1 for a test (llama-cpp-python, vLLM)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from typing import Mapping, Sequence


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServedProcess:
    """Runs ``command`` (which must serve ``api_base``), waits until ``/models`` answers, ``stop()`` ends it."""

    def __init__(self, command: Sequence[str], api_base: str, log: Path, *, env: Mapping[str, str] | None = None, start_s: float = 120):
        import httpx

        self.api_base = api_base
        self._log_path = log
        self._log = log.open("wb")
        self._process = subprocess.Popen(list(command), stdout=self._log, stderr=subprocess.STDOUT, env=dict(env) if env else None)
        deadline = time.monotonic() + start_s  # a bound on loading the model, not a timing
        try:
            while True:
                if self._process.poll() is not None:
                    raise RuntimeError(f"{command[0]} exited: {log.read_text(errors='replace')[-3000:]}")
                try:
                    if httpx.get(f"{api_base}/models", timeout=2).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start within {start_s:g} s: {log.read_text(errors='replace')[-3000:]}")
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
        self._log.close()
