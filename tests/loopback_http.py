"""The HTTP server the stub APIs of the tests share (Anthropic Messages, Message Batches, OpenAI chat completions).

:class:`LoopbackServer` listens on 127.0.0.1 at a free port and answers in threads; a subclass says what each
request gets in :meth:`LoopbackServer.handle` (a :class:`Reply`).  Shared here: HTTP/1.1 keep-alive, the requests in
flight (the most ever, for concurrency bounds), a reply's delay cut short when the client hangs up (a cancelled
request: ``hangups``, ``hung_up``), a scripted ``responder`` and the shutdown.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One HTTP answer: a status, a body (bytes as they are, anything else as JSON), headers, and a delay before
    answering (cut short when the client hangs up)."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    content_type: str = "application/json"

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body).encode()


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (see the module's docstring); ``url`` is its root, ``http://127.0.0.1:PORT``."""

    name = "stub-http"

    def __init__(self) -> None:
        self.responder: Callable[[dict], Reply] = lambda _request: Reply({})
        self.in_flight = 0
        self.most_in_flight = 0
        self.hangups = 0
        self.hung_up = threading.Event()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once (no delayed-ACK stalls)

            def _answer(self, method: str) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0))) if method == "POST" else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                with stub._lock:
                    stub.in_flight += 1
                    stub.most_in_flight = max(stub.most_in_flight, stub.in_flight)
                try:
                    reply = stub.handle(method, self.path, headers, raw)
                    if reply.delay_s and not stub._wait(self.connection, reply.delay_s):
                        with stub._lock:
                            stub.hangups += 1
                        stub.hung_up.set()
                        self.close_connection = True
                        return
                    payload = reply.payload()
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    self.send_header("content-length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

            def do_POST(self) -> None:
                self._answer("POST")

            def do_GET(self) -> None:
                self._answer("GET")

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), name=self.name, daemon=True)
        self._thread.start()

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        """The answer to one request (``headers`` lower-cased, ``raw`` the body as sent)."""
        return self.responder(json.loads(raw or b"{}"))

    def _wait(self, conn: socket.socket, seconds: float) -> bool:
        """Delay the answer; False as soon as the client hangs up (or the stub stops)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stopping.is_set():
            readable, _, _ = select.select([conn], [], [], 0.02)
            if readable:
                try:
                    if conn.recv(1, socket.MSG_PEEK) == b"":
                        return False
                except OSError:
                    return False
        return not self.stopping.is_set()

    def script(self, *replies: Reply) -> None:
        """Answer the requests with ``replies`` in turn; the last one repeats."""
        queue = list(replies)

        def respond(_request: dict) -> Reply:
            with self._lock:
                return queue.pop(0) if len(queue) > 1 else queue[0]

        self.responder = respond

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
