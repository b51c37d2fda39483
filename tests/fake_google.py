"""A stand-in for Google Translate's mobile page on 127.0.0.1, for tests of the google backend.

Only the far end of the HTTP connection is replaced: deep-translator builds the request, sends it
through requests over a real socket, checks the status and parses the HTML as it would for
translate.google.com/m. Each text answers by a script (429, 500, a hang, an echo, a page without
a result) and then with its configured translation; every request is recorded.
"""

from __future__ import annotations

import html
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# Shaped like the page https://translate.google.com/m?sl=en&tl=ru&q=... returns.
RESULT_PAGE = """<!DOCTYPE html><html lang="ru"><head><meta charset="UTF-8"><title>Google Переводчик</title></head>
<body><div class="root-container"><div class="header"><a href="./m?sl=en&amp;tl=ru">Google Переводчик</a></div>
<form action="/m"><div class="input-container"><textarea name="q" class="input-field">{source}</textarea></div></form>
<div class="result-container">{translation}</div>
<div class="footer"><a href="https://www.google.com/policies/privacy/">Конфиденциальность</a></div></div></body></html>"""
NO_RESULT_PAGE = """<!DOCTYPE html><html><head><meta charset="UTF-8"><title>Before you continue</title></head>
<body><form action="https://consent.google.com/save"><button>Accept all</button></form></body></html>"""

ACTIONS = ("429", "500", "503", "hang", "echo", "no-result")


class FakeGoogle:
    """Serve scripted Google result pages; ``requests`` lists the ``q`` of every request received."""

    def __init__(self) -> None:
        self.translations: dict[str, str] = {}
        self.latency_s = 0.0  # added before every answer (benchmarks: a stand-in for the network)
        self.requests: list[str] = []
        self.params: list[dict[str, str]] = []
        self._scripts: dict[str, deque[str]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/m"

    def script(self, text: str, *actions: str) -> None:
        """Answer the next requests for ``text`` with ``actions`` in order, then normally."""
        unknown = set(actions) - set(ACTIONS)
        assert not unknown, f"unknown actions {unknown}"
        self._scripts[text].extend(actions)

    def start(self) -> FakeGoogle:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # let hanging handlers finish
        self._server.shutdown()
        self._server.server_close()

    def next_action(self, text: str) -> str:
        with self._lock:
            self.requests.append(text)
            script = self._scripts[text]
            return script.popleft() if script else "page"

    def wait_while_hanging(self) -> None:
        self._release.wait(timeout=30)


def _handler_for(fake: FakeGoogle) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            query = {key: values[0] for key, values in parse_qs(urlsplit(self.path).query).items()}
            fake.params.append(query)
            text = query.get("q", "")
            action = fake.next_action(text)
            if fake.latency_s:
                time.sleep(fake.latency_s)
            if action in ("429", "500", "503"):
                self._send(int(action), "<html><body>error</body></html>")
            elif action == "hang":
                fake.wait_while_hanging()
                self._send(200, RESULT_PAGE.format(source=html.escape(text), translation="поздно"))
            elif action == "no-result":
                self._send(200, NO_RESULT_PAGE)
            elif action == "echo":
                self._send(200, RESULT_PAGE.format(source=html.escape(text), translation=html.escape(text)))
            elif text in fake.translations:
                page = RESULT_PAGE.format(source=html.escape(text), translation=html.escape(fake.translations[text]))
                self._send(200, page)
            else:
                self._send(500, "<html><body>the fake has no translation for this text</body></html>")

        def _send(self, status: int, body: str) -> None:
            data = body.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to answer

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Handler
