"""A real headless Chromium driven over the DevTools protocol, for tests of the HTML reports.

The protocol runs over ``--remote-debugging-pipe`` (the browser reads commands on fd 3 and
writes replies on fd 4, each message NUL-terminated JSON), so no port, no websocket library and
no network are involved. ``open_page(path)`` loads a file and collects every console message,
uncaught exception and browser log entry (a blocked fetch, a CSP violation) that it produces.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPLY_TIMEOUT_S = 600.0  # a guard against a hung browser only: a loaded machine may be slow


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Page:
    """One tab: commands in, replies and events out (events are kept in ``events``)."""

    def __init__(self, process: subprocess.Popen, to_browser: int, from_browser: int):
        self._process = process
        self._out = os.fdopen(to_browser, "wb", buffering=0)
        self._in = os.fdopen(from_browser, "rb", buffering=0)
        self._next = 0
        self._replies: dict[int, dict[str, Any]] = {}  # Any: DevTools protocol JSON
        self._cond = threading.Condition()
        self.events: list[dict[str, Any]] = []  # Any: DevTools protocol JSON
        self.session: str | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = self._in.read(65536)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                with self._cond:
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> dict[str, Any]:  # Any: DevTools protocol JSON
        """A command to the page's session (or to the browser) and its result; an error reply raises."""
        self._next += 1
        ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}  # Any: DevTools protocol JSON
        if not browser and self.session is not None:
            message["sessionId"] = self.session
        self._out.write(json.dumps(message).encode() + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._replies or self._process.poll() is not None, REPLY_TIMEOUT_S):
                raise BrowserError(f"no reply to {method} within {REPLY_TIMEOUT_S}s")
            if ident not in self._replies:
                raise BrowserError(f"the browser exited (code {self._process.returncode}) before replying to {method}")
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_for_event(self, method: str, after: int = 0) -> dict[str, Any]:  # Any: DevTools protocol JSON
        """The first ``method`` event from the ``after``-th event on."""

        def seen() -> dict[str, Any] | None:  # Any: DevTools protocol JSON
            return next((e for e in self.events[after:] if e.get("method") == method), None)

        with self._cond:
            self._cond.wait_for(lambda: seen() is not None or self._process.poll() is not None, REPLY_TIMEOUT_S)
            event = seen()
        if event is None:
            raise BrowserError(f"no {method} event")
        return event

    def evaluate(self, expression: str) -> Any:  # Any: the page's JSON result
        """The JSON value of a JavaScript expression in the page; a thrown exception raises."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def load(self, path: Path) -> None:
        """Open a file in this tab and wait for its load event (the events before it are dropped)."""
        with self._cond:
            self.events.clear()
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_for_event("Page.loadEventFired")

    def viewport(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser log entries of level error/warning."""
        found = []
        for event in list(self.events):
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                found.append(f"log {params['entry'].get('source')}: {params['entry'].get('text')}")
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked the network layer for (the page itself included)."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]


@contextmanager
def open_page(path: Path, width: int = 1200, height: int = 900) -> Iterator[Page]:
    """``path`` loaded in a fresh headless Chromium (temporary profile, no sandbox: CI runs as root)."""
    with open_browser(width, height) as page:
        page.load(path)
        yield page


@contextmanager
def open_browser(width: int = 1200, height: int = 900) -> Iterator[Page]:
    """One headless Chromium tab for several pages (``page.load``), so a test module starts one browser."""
    binary = chromium_binary()
    if binary is None:
        raise BrowserError("no chromium on PATH")
    profile = tempfile.mkdtemp(prefix="culturebias-chromium-")
    commands_r, commands_w = os.pipe()
    replies_r, replies_w = os.pipe()

    def child_fds() -> None:  # the protocol's fixed descriptors: commands on 3, replies on 4
        high_r, high_w = fcntl.fcntl(commands_r, fcntl.F_DUPFD, 10), fcntl.fcntl(replies_w, fcntl.F_DUPFD, 10)
        os.dup2(high_r, 3)  # dup2 leaves the copy inheritable: it survives the exec
        os.dup2(high_w, 4)

    args = [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
        f"--user-data-dir={profile}", f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank",
    ]
    process = subprocess.Popen(
        args, close_fds=False, preexec_fn=child_fds,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    os.close(commands_r)
    os.close(replies_w)
    page = Page(process, commands_w, replies_r)
    try:
        target = page.send("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        page.session = page.send("Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        page.viewport(width, height)
        yield page
    finally:
        try:
            page.send("Browser.close", browser=True)
        except BrowserError:
            pass
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)
