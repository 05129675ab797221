"""Fixtures of the fuzz suite: a killable worker per module, a recording HTTP server on 127.0.0.1
(no query may reach it) and a canary file (no query may read it)."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fuzz.harness import CANARY_TOKEN, Worker, hermetic_env


class Recorder:
    """A TCP server on 127.0.0.1 that counts connections and answers each with an HTTP 200 whose
    body carries the canary token (so a result that used it would show it)."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self.peers: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        body = (
            '{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"%s"}}]}}' % CANARY_TOKEN
        ).encode()
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            with conn:
                conn.settimeout(0.5)
                try:
                    self.peers.append(conn.recv(2048))
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
                        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
                    )
                except OSError:
                    pass

    def count(self) -> int:
        """Connections so far, once any the kernel holds for accept() are counted."""
        deadline = time.monotonic() + 2.0
        while select.select([self._sock], [], [], 0)[0] and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.connections

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self._sock.close()


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    r = Recorder()
    yield r
    r.close()


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("canary") / "canary.ttl"
    path.write_text(f'<urn:canary> <urn:says> "{CANARY_TOKEN}" .\n{CANARY_TOKEN},{CANARY_TOKEN}\n', encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    w = Worker(hermetic_env(tmp_path_factory.mktemp("fuzz-cache")))
    w.start()
    yield w
    w.stop()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the examples' input files (module-scoped: hypothesis runs many examples per test)."""
    return tmp_path_factory.mktemp("fuzz-files")
