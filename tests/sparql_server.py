"""A real SPARQL 1.1 server for the tests: ``oxigraph serve`` (the ``oxigraph`` package on PyPI) on 127.0.0.1.

    with OxigraphServer.start(nt_path) as server:      # loads the file, serves it on a free port
        server.url                                      # http://127.0.0.1:PORT/query

:func:`oxigraph_binary` is None when the package is not installed (the tests then skip, saying
so).  :func:`write_world` serialises the built-in knowledge-graph world (worlds/kg/) as
N-Triples, a Wikidata-shaped graph for the server to load.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

SKIP_REASON = "the oxigraph server is not installed (pip install oxigraph: it ships the `oxigraph` command)"


def oxigraph_binary() -> str | None:
    return shutil.which("oxigraph")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_world(path: Path) -> Path:
    """The built-in KG world's statements as N-Triples (each term in its N-Triples form)."""
    from worlds import kg

    with open(path, "w", encoding="utf-8") as f:
        for s, p, o in kg.rdf_triples(kg.build(kg.DEFAULT_SEED).world):
            f.write(f"{s.n3()} {p.n3()} {o.n3()} .\n")
    return path


class OxigraphServer:
    """``oxigraph load`` then ``oxigraph serve`` over a temporary directory; stopped on exit."""

    def __init__(self, process: subprocess.Popen, port: int, directory: tempfile.TemporaryDirectory) -> None:
        self.process = process
        self.port = port
        self._directory = directory
        self.url = f"http://127.0.0.1:{port}/query"

    @classmethod
    def start(cls, *files: Path, timeout_s: float = 60.0) -> OxigraphServer:
        binary = oxigraph_binary()
        if binary is None:
            raise RuntimeError(SKIP_REASON)
        directory = tempfile.TemporaryDirectory(prefix="cs224v-oxigraph-")
        location = os.path.join(directory.name, "db")
        if files:
            subprocess.run(
                [binary, "load", "--location", location, "--file", *map(str, files)],
                check=True,
                capture_output=True,
                timeout=timeout_s,
            )
        port = free_port()
        process = subprocess.Popen(
            # the server's own timeout ends a query the client gave up on (a test of the client's timeout)
            [binary, "serve", "--location", location, "--bind", f"127.0.0.1:{port}", "--timeout-s", "10"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        server = cls(process, port, directory)
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                server.stop()
                raise RuntimeError(f"oxigraph serve exited with code {process.returncode}")
            try:
                httpx.post(server.url, data={"query": "ASK {}"}, timeout=2.0, trust_env=False)
                return server
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    server.stop()
                    raise RuntimeError("oxigraph serve did not start in time") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._directory.cleanup()

    def __enter__(self) -> OxigraphServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
