"""Open a page in headless Chromium and talk to it over the DevTools protocol, for the page tests.

The protocol runs over ``--remote-debugging-pipe`` (Chromium reads commands from fd 3 and writes
replies and events to fd 4, each a JSON message ended by a NUL byte), so no port is opened and
no websocket client is needed. The browser runs with a new empty profile and without network
services; everything it reports while the page loads is collected: console messages, uncaught
exceptions and log entries (a missing image is logged as a failed resource load).
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class ChromiumPage:
    """One browser with one page; use as a context manager."""

    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self._buffer = b""
        self._profile = tempfile.TemporaryDirectory(prefix="ruclevr-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def connect_pipes() -> None:
            # In the child: the protocol's fds are 3 (in) and 4 (out). Move both ends above 4 first,
            # so that placing one cannot overwrite the other; dup2's copies are inherited by exec.
            reading = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            writing = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        # close_fds=False: the fds placed by connect_pipes must survive; the pipes' own fds are
        # not inheritable, so nothing else of ours reaches the browser.
        self._process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            close_fds=False, preexec_fn=connect_pipes, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._session = self._attach_to_page()

    def __enter__(self) -> ChromiumPage:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._send("Browser.close", session=None, wait=False)
        except OSError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    # -- protocol -----------------------------------------------------------------------------

    def _attach_to_page(self) -> str:
        targets = self._send("Target.getTargets", session=None)["targetInfos"]
        page = next(target for target in targets if target["type"] == "page")
        return self._send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=None)["sessionId"]

    def _send(self, method: str, params: dict | None = None, session: str | None = "", wait: bool = True) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        target = self._session if session == "" else session
        if target:
            message["sessionId"] = target
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        if not wait:
            return {}
        wanted = self._next_id
        while True:
            reply = self._read_message()
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read_message(self, deadline: float | None = None) -> dict:
        deadline = deadline or time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    # -- what a test uses -----------------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Load ``path`` and wait for its load event (images included), collecting events on the way."""
        self.open_url(path.resolve().as_uri())

    def open_url(self, url: str) -> None:
        """Load ``url`` (a file or a loopback server) and wait for its load event."""
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self._send(domain)
        self._send("Page.navigate", {"url": url})
        self._wait_for_load()

    def reload(self) -> None:
        """Reload the page (what the browser keeps, such as its storage, stays) and wait for its load event."""
        self._send("Page.reload")
        self._wait_for_load()

    def _wait_for_load(self) -> None:
        deadline = time.monotonic() + self.timeout
        while not any(event.get("method") == "Page.loadEventFired" for event in self.events):
            self.events.append(self._read_message(deadline))
        self.events = [event for event in self.events if event.get("method") != "Page.loadEventFired"]

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused element, as a keyboard would (input events fire)."""
        self._send("Input.insertText", {"text": text})

    def press_key(self, key: str, code: int, shift: bool = False) -> None:
        """Press and release one key, e.g. ``press_key("Enter", 13)``."""
        params = {"key": key, "code": key, "windowsVirtualKeyCode": code, "modifiers": 8 if shift else 0}
        self._send("Input.dispatchKeyEvent", {"type": "keyDown", **params})
        self._send("Input.dispatchKeyEvent", {"type": "keyUp", **params})

    def evaluate(self, expression: str) -> Any:
        result = self._send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and error log entries, as text."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(f"console.{params['type']}: {[arg.get('value') for arg in params.get('args', [])]}")
            elif method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')} "
                             f"{params['exceptionDetails'].get('exception', {}).get('description', '')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                entry = params["entry"]
                found.append(f"log {entry['level']}: {entry.get('text')} {entry.get('url', '')}")
        return found
