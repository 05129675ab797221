"""A hostile model server on 127.0.0.1, for the reply bounds of the claude and openai backends (issue 25).

It answers every request (``POST /v1/chat/completions`` of an OpenAI-compatible server, ``POST
/v1/messages`` of the Anthropic Messages API) with :attr:`HostileServer.answer` -- or, when
:attr:`HostileServer.route` is set, with ``route(method, path, body)`` (the Message Batches
endpoints) -- written to the socket as the test
asks: a body of a given size with an honest ``content-length`` or chunked without one, gzip-encoded,
or trickled one byte every ``trickle_s`` seconds for as long as the client listens.  It counts the
requests and the body bytes it managed to write.  The bodies are the real wire formats
(:func:`completion_of_size`, :func:`message_of_size`).
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.engines.llm.openai_stub import completion

CHUNK = 64 * 1024


def message(text: str, model: str = "claude-test-model") -> dict:
    """A Messages API reply (as tests/engines/llm/test_claude.py's)."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }


def _of_size(make: Any, size: int) -> bytes:
    """``make(text)`` as JSON bytes, its text padded so the body is exactly ``size`` bytes."""
    empty = len(json.dumps(make("")).encode())
    body = json.dumps(make("x" * (size - empty))).encode()
    assert len(body) == size
    return body


def completion_of_size(size: int) -> bytes:
    """A valid chat completion of exactly ``size`` bytes (its text is mostly ``x``)."""
    return _of_size(completion, size)


def message_of_size(size: int) -> bytes:
    """A valid Messages API reply of exactly ``size`` bytes."""
    return _of_size(message, size)


@dataclass
class Answer:
    """How the server answers: ``body`` with ``status``; ``chunked`` drops the content-length;
    ``gzip`` sends the body gzip-compressed (and says so); ``trickle_s`` sends one byte of
    whitespace that often, with no end, instead of a body."""

    body: bytes = b"{}"
    status: int = 200
    chunked: bool = False
    gzip: bool = False
    trickle_s: float | None = None
    headers: dict[str, str] = field(default_factory=dict)


class HostileServer:
    """See the module docstring; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.answer = Answer()
        self.route: Callable[[str, str, bytes], Answer] | None = None
        self.requests = 0
        self.paths: list[str] = []
        self.sent = 0  # body bytes written to the sockets
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                with server._lock:
                    server.requests += 1
                    server.paths.append(self.path)
                route = server.route
                try:
                    server._write(self, server.answer if route is None else route(self.command, self.path, raw))
                except OSError:  # the client hung up: what it read is what it got
                    pass
                self.close_connection = True

            do_GET = do_POST

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def _count(self, n: int) -> None:
        with self._lock:
            self.sent += n

    def _write(self, handler: BaseHTTPRequestHandler, answer: Answer) -> None:
        body = gzip.compress(answer.body, compresslevel=9) if answer.gzip else answer.body
        handler.send_response(answer.status)
        handler.send_header("content-type", "application/json")
        if answer.gzip:
            handler.send_header("content-encoding", "gzip")
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        chunked = answer.chunked or answer.trickle_s is not None
        handler.send_header(
            "transfer-encoding" if chunked else "content-length", "chunked" if chunked else str(len(body))
        )
        handler.send_header("connection", "close")
        handler.end_headers()
        out = handler.wfile
        if answer.trickle_s is not None:
            while not self.stopping.is_set():  # forever, a byte at a time, as long as the client listens
                out.write(b"1\r\n \r\n")
                out.flush()
                self._count(1)
                time.sleep(answer.trickle_s)
            return
        for start in range(0, len(body), CHUNK):
            piece = body[start : start + CHUNK]
            out.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            self._count(len(piece))
        if chunked:
            out.write(b"0\r\n\r\n")
        out.flush()

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
