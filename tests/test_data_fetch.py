"""``data fetch`` against real HTTP servers on 127.0.0.1: the derived data sets built from ../shared/upstream served at
raw.githubusercontent.com's paths, and hostile servers (more bytes than the catalogue, a Content-Length above it,
trickling bytes, a redirect to another origin, a proxy in the environment), each bound measured end to end."""

from __future__ import annotations

import hashlib
import json
import os
import select
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest

from engines.datasets import CATALOGUE, ChecksumMismatch, FetchFailed, TooLarge, entry, fetch
from engines.derive import DeriveFailed, row_f1_cases
from engines.settings import Settings
from tests.loopback_http import LoopbackServer, Reply
from tests.measured import run_measured
from tui.cli import main
from worlds.data import checkout_data_dir

REPO = Path(__file__).resolve().parents[1]
SHARED = checkout_data_dir()
UPSTREAM = SHARED.parent / "upstream" if SHARED is not None else None
pytestmark = pytest.mark.skipif(
    UPSTREAM is None or not (UPSTREAM / "README.md").is_file(),
    reason="../shared/data and ../shared/upstream (the upstream files the derived data sets are built from) are not "
    "present beside this checkout",
)
DEV = next(f for f in entry("spinach-dev").files)  # spinach/dev.json, 138,246 bytes


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """A wheel-style install (no checkout data, a fresh user data folder); returns the user data folder."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CS224V_NO_CHECKOUT_DATA", "1")
    return tmp_path / "xdg" / "cs224v-tui"


def _pinned_commits() -> dict[str, str]:
    """``owner/repo/path`` → commit, from the table rows of ../shared/upstream/README.md."""
    pinned = {}
    for line in (UPSTREAM / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and len(cells[1]) == 40 and (UPSTREAM / cells[0]).is_file():
            pinned[cells[0]] = cells[1]
    return pinned


class Upstream(LoopbackServer):
    """../shared/upstream served as raw.githubusercontent.com serves it, ``/OWNER/REPO/COMMIT/PATH``: only at the commit
    the upstream README pins (else 404); ``changed`` replaces a file's bytes."""

    name = "upstream"

    def __init__(self, changed: dict[str, bytes] | None = None) -> None:
        self.pinned = _pinned_commits()
        self.changed = changed or {}
        self.asked: list[str] = []
        super().__init__()

    def handle(self, method, path, headers, raw) -> Reply:
        owner, repo, commit, rest = unquote(path).lstrip("/").split("/", 3)
        name = f"{owner}/{repo}/{rest}"
        self.asked.append(name)
        if self.pinned.get(name) != commit:
            return Reply(b"404: Not Found", status=404, content_type="text/plain")
        return Reply(self.changed.get(name) or (UPSTREAM / name).read_bytes(), content_type="text/plain")


@pytest.fixture
def upstream(monkeypatch) -> Iterator[Upstream]:
    server = Upstream()
    monkeypatch.setenv("CS224V_DATA_UPSTREAM_URL", server.url)
    yield server
    server.close()


def test_the_derived_sets_are_built_from_the_pinned_upstream_files_byte_for_byte(installed, upstream, capsys):
    """Build 7: without a mirror, the HybridQA sample and the row-F1 cases are built from upstream (HybridQA's
    dev.traced.json, 28 WikiTables files, SPINACH's tests/test_eval.py) at the commits the upstream README pins, and
    the SPINACH dev set comes from the same pinned commit; every file matches the catalogue's SHA-256."""
    assert main(["data", "fetch", "hybridqa", "spinach-row-f1", "spinach-dev"]) == 0
    captured = capsys.readouterr()
    assert "1 files downloaded, 16 built from upstream, 0 already there" in captured.out
    assert captured.err.count("built from upstream") == 16 and "Traceback" not in captured.err
    files = [f for name in ("hybridqa", "spinach-row-f1", "spinach-dev") for f in entry(name).files]
    for f in files:
        assert _sha(installed / f.path) == f.sha256 == _sha(SHARED / f.path), f.path
    assert sorted(upstream.asked) == sorted(
        ["wenhuchen/HybridQA/released_data/dev.traced.json", "stanford-oval/spinach/tests/test_eval.py"]
        + [
            f"wenhuchen/WikiTables-WithLinks/{kind}/{f.path[9:]}"
            for f in entry("hybridqa").files[1:]
            for kind in ("tables_tok", "request_tok")
        ]
        + ["stanford-oval/spinach/spinach_dataset/dev.json"]
    )
    # nothing is left behind: no upstream copies, no part files
    assert sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()) == sorted(
        f.path for f in files
    )
    assert main(["data", "where", "--json"]) == 0
    found = {d["name"]: d for d in json.loads(capsys.readouterr().out)}
    assert found["hybridqa"]["files_ok"] == 15 and found["spinach-row-f1"]["files_ok"] == 1
    # a second fetch keeps what is intact and asks nothing
    upstream.asked.clear()
    assert main(["data", "fetch", "hybridqa", "spinach-row-f1"]) == 0
    assert "0 files downloaded, 16 already there" in capsys.readouterr().out and upstream.asked == []


def test_a_file_there_with_other_bytes_is_kept_renamed_never_replaced(installed, upstream, capsys):
    """Loses nothing: a user's own (or damaged) copy where a fetched or built file goes is renamed, not overwritten,
    and the report names its new place; a second copy goes to the next free name."""
    cases = installed / "spinach" / "row_f1_cases.json"
    dev = installed / DEV.path
    for path in (cases, dev):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"my own notes")
    (installed / "spinach" / "dev.json.before-fetch").write_bytes(b"an older copy")
    assert main(["data", "fetch", "spinach-row-f1", "spinach-dev", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report["kept"]) == ["spinach/dev.json.before-fetch.2", "spinach/row_f1_cases.json.before-fetch"]
    assert (installed / "spinach" / "row_f1_cases.json.before-fetch").read_bytes() == b"my own notes"
    assert (installed / "spinach" / "dev.json.before-fetch.2").read_bytes() == b"my own notes"
    assert (installed / "spinach" / "dev.json.before-fetch").read_bytes() == b"an older copy"
    assert _sha(cases) == entry("spinach-row-f1").files[0].sha256 and _sha(dev) == DEV.sha256
    assert main(["data", "fetch", "spinach-row-f1"]) == 0  # intact now: nothing renamed again
    assert "kept" not in capsys.readouterr().out


def test_a_changed_upstream_file_is_caught_by_the_built_files_checksums(installed, monkeypatch):
    """A regenerated WikiTables file (no upstream SHA-256 to check) changed upstream, same length: the built table
    does not match its SHA-256, nothing is written, and the upstream copies are dropped for the next try."""
    name = "wenhuchen/WikiTables-WithLinks/request_tok/Jason_Segel_1.json"
    original = (UPSTREAM / name).read_bytes()
    changed = original.replace(b"Freaks and Geeks", b"Freaks and Geekz", 1)
    assert changed != original and len(changed) == len(original)
    server = Upstream({name: changed})
    try:
        with pytest.raises(ChecksumMismatch, match=r"hybridqa/Jason_Segel_1\.json: expected SHA-256"):
            fetch(Settings(data_upstream_url=server.url), ["hybridqa"])
    finally:
        server.close()
    assert not installed.exists() or not [p for p in installed.rglob("*") if p.is_file()]


def test_row_f1_cases_are_read_from_the_syntax_tree_never_run(tmp_path):
    """SPINACH's test file is parsed, not executed: its real text gives the shared bytes; code in it is refused."""
    real = (UPSTREAM / "stanford-oval/spinach/tests/test_eval.py").read_bytes()
    assert row_f1_cases(real) == (SHARED / "spinach" / "row_f1_cases.json").read_bytes()
    marker = tmp_path / "ran"
    hostile = real.replace(
        b"predicted = [{'item': {'type': 'uri', 'value': 'a'}}]\n",
        f"predicted = __import__('pathlib').Path({str(marker)!r}).write_text('x')\n".encode(),
        1,
    )
    assert hostile != real
    with pytest.raises(DeriveFailed, match="test_f1_simple_no_label: predicted is not a literal"):
        row_f1_cases(hostile)
    bomb = real.replace(b"2 / (2 + 0 + 4)", b"9 ** 9 ** 9", 1)
    with pytest.raises(DeriveFailed, match="not arithmetic on numbers"):
        row_f1_cases(bomb)
    assert not marker.exists()


# --- hostile servers ------------------------------------------------------------------------------------------


class Hostile:
    """An HTTP server on 127.0.0.1 whose every GET is answered by ``behave(handler)``, writing raw bytes."""

    def __init__(self, behave: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.sent = 0
        self.requests: list[str] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.requests.append(self.path)
                try:
                    behave(self)
                except OSError:  # the client hung up
                    pass
                self.close_connection = True

            def log_message(self, *_args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def write(self, handler: BaseHTTPRequestHandler, data: bytes) -> None:
        handler.wfile.write(data)
        handler.wfile.flush()
        self.sent += len(data)

    def hung_up(self, handler: BaseHTTPRequestHandler, seconds: float) -> bool:
        """Wait up to ``seconds`` for the client to close the connection; True if it did."""
        readable, _, _ = select.select([handler.connection], [], [], seconds)
        return bool(readable) and handler.connection.recv(1) == b""

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hostile() -> Iterator[Callable[[Callable[[BaseHTTPRequestHandler], None]], Hostile]]:
    servers: list[Hostile] = []

    def start(behave):
        servers.append(Hostile(behave))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _no_files(folder: Path) -> bool:
    return not folder.exists() or not [p for p in folder.rglob("*") if p.is_file()]


def _cli_child(args: list[str], env: dict[str, str]) -> tuple[int, str, int]:
    """Run the CLI in a grandchild (tests.measured): (exit code, stderr, its own peak RSS in KiB).  Not a direct
    child of this process: Linux counts the RSS of the process a child was forked from into the child's ru_maxrss,
    and a test worker late in the suite holds hundreds of MB."""
    done = run_measured(*args, **env)
    return done["code"], done["stderr"], done["rss"] // 1024


def test_a_mirror_sending_far_more_than_the_catalogue_is_cut_off_with_little_memory(tmp_path, hostile):
    """The issue's 3 GB case, at 96 MB: a mirror that sends spinach/dev.json (138,246 bytes) and then keeps sending,
    with no Content-Length.  The child stops just past the size; nothing is written; its peak RSS stays small (the
    old code wrote all of it and read it back into memory)."""
    payload = 96 << 20
    block = b"[" * (1 << 20)

    def endless(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Connection", "close")
        h.end_headers()
        while server.sent < payload:
            server.write(h, block)

    server = hostile(endless)
    data = tmp_path / "xdg"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "XDG_DATA_HOME": str(data),
        "CS224V_NO_CHECKOUT_DATA": "1",
    }
    code, err, peak_kib = _cli_child(["data", "fetch", "spinach-dev", "--from", server.url], env)
    assert code == 1, err
    assert f"spinach/dev.json from {server.url}/spinach/dev.json" in err and "more than the 138,246 bytes" in err
    assert "Traceback" not in err
    stopped = int(err.split("stopped after ")[1].split(")")[0].replace(",", ""))
    assert DEV.size < stopped <= DEV.size + 64 * 1024
    assert _no_files(data)
    assert server.sent < 32 << 20  # the client hung up: the rest was never sent
    assert peak_kib < 96 * 1024, f"peak RSS {peak_kib / 1024:.0f} MB"


def test_one_byte_past_the_size_is_refused_and_nothing_is_written(installed, hostile):
    body = (SHARED / DEV.path).read_bytes() + b"\n"

    def one_more(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Connection", "close")
        h.end_headers()
        server.write(h, body)

    server = hostile(one_more)
    with pytest.raises(TooLarge, match=r"more than the 138,246 bytes this file can have \(stopped after 138,247\)"):
        fetch(Settings(), ["spinach-dev"], mirror=server.url)
    assert _no_files(installed)


def test_a_content_length_above_the_size_is_refused_before_any_byte_is_read(installed, hostile):
    """The server announces one byte more than the catalogue's size and then waits: the client hangs up at once."""
    seen: dict[str, bool] = {}

    def announce(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(DEV.size + 1))
        h.end_headers()
        h.wfile.flush()
        seen["hung up before the body"] = server.hung_up(h, 8)
        if not seen["hung up before the body"]:
            server.write(h, (SHARED / DEV.path).read_bytes() + b"\n")

    server = hostile(announce)
    with pytest.raises(TooLarge, match=f"{server.url}/spinach/dev.json: the server announces 138,247 bytes"):
        fetch(Settings(), ["spinach-dev"], mirror=server.url)
    deadline = time.monotonic() + 10
    while "hung up before the body" not in seen and time.monotonic() < deadline:
        time.sleep(0.02)
    assert seen == {"hung up before the body": True} and server.sent == 0
    assert _no_files(installed)


@pytest.mark.parametrize("where", ["body", "headers"])
def test_a_trickling_server_ends_at_the_overall_deadline(installed, hostile, where):
    """One byte every 0.1 s (of the body, or of the headers) for up to 8 s: every read is quick, so only an overall
    deadline ends it; the bytes that came stay in the part file for the next fetch."""

    def trickle(h: BaseHTTPRequestHandler) -> None:
        if where == "body":
            h.send_response(200)
            h.send_header("Content-Length", str(DEV.size))
            h.end_headers()
            source = (SHARED / DEV.path).read_bytes()
        else:
            h.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            source = b"a" * 100_000
        h.wfile.flush()
        for n in range(80):
            if server.hung_up(h, 0.1):
                return
            server.write(h, source[n : n + 1])

    server = hostile(trickle)
    started = time.monotonic()
    with pytest.raises(FetchFailed, match=rf"{server.url}/spinach/dev.json within the 1 s deadline for one file"):
        fetch(Settings(data_fetch_deadline_s=1.0), ["spinach-dev"], mirror=server.url)
    assert time.monotonic() - started < 6  # the server would go on for 8 s
    assert not (installed / DEV.path).exists()
    part = installed / "spinach" / "dev.json.part"
    if where == "body":
        assert (
            0 < part.stat().st_size < 100
            and part.read_bytes() == (SHARED / DEV.path).read_bytes()[: part.stat().st_size]
        )
    else:
        assert not part.exists() or part.stat().st_size == 0


def test_a_resumed_download_refuses_another_range_and_a_compressed_body(installed, hostile):
    """Continuing a part file, the server answers 206 with the bytes from 0 (appending them would corrupt the file):
    refused and the part dropped.  A gzip body sent though identity was asked (a bomb: 48 MB in 48 KB) is refused
    before it is decoded."""
    import gzip

    whole = (SHARED / DEV.path).read_bytes()

    def wrong_range(h: BaseHTTPRequestHandler) -> None:
        h.send_response(206)
        h.send_header("Content-Range", f"bytes 0-{len(whole) - 1}/{len(whole)}")
        h.send_header("Content-Length", str(len(whole)))
        h.end_headers()
        server.write(h, whole)

    server = hostile(wrong_range)
    part = installed / "spinach" / "dev.json.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(whole[:50_000])
    with pytest.raises(FetchFailed, match="asked for the bytes from 50,000 on, it sent 'bytes 0-138245/138246'"):
        fetch(Settings(), ["spinach-dev"], mirror=server.url)
    assert _no_files(installed)

    bomb = gzip.compress(b"[" * (48 << 20), compresslevel=9)

    def gzipped(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Encoding", "gzip")
        h.send_header("Content-Length", str(len(bomb)))
        h.end_headers()
        server.write(h, bomb)

    server = hostile(gzipped)
    with pytest.raises(FetchFailed, match="it sends Content-Encoding 'gzip', not the file's bytes"):
        fetch(Settings(), ["spinach-dev"], mirror=server.url)
    assert _no_files(installed)


class Mirror(LoopbackServer):
    """Serves ../shared/data; ``redirect`` answers a path with a 302 to another URL."""

    def __init__(self, redirect: dict[str, str] | None = None) -> None:
        self.redirect = redirect or {}
        self.asked: list[str] = []
        super().__init__()

    def handle(self, method, path, headers, raw) -> Reply:
        self.asked.append(path)
        if path in self.redirect:
            return Reply(b"", status=302, headers={"Location": self.redirect[path]})
        rel = unquote(path).lstrip("/").removeprefix("moved/")
        file = SHARED / rel
        if ".." in rel or not file.is_file():
            return Reply(b"", status=404)
        return Reply(file.read_bytes(), content_type="application/octet-stream")


def test_redirects_are_followed_within_the_origin_only(installed):
    elsewhere = Mirror()
    mirror = Mirror({"/spinach/dev.json": f"{elsewhere.url}/spinach/dev.json"})
    try:
        with pytest.raises(
            FetchFailed,
            match=rf"{mirror.url}/spinach/dev.json redirects to {elsewhere.url}/spinach/dev.json, another origin",
        ):
            fetch(Settings(), ["spinach-dev"], mirror=mirror.url)
        assert elsewhere.asked == [] and _no_files(installed)
        # within the origin, a redirect is followed
        mirror.redirect = {"/spinach/dev.json": "/moved/spinach/dev.json"}
        assert fetch(Settings(), ["spinach-dev"], mirror=mirror.url).downloaded == ["spinach/dev.json"]
        assert mirror.asked[-2:] == ["/spinach/dev.json", "/moved/spinach/dev.json"]
        assert _sha(installed / DEV.path) == DEV.sha256
    finally:
        mirror.close()
        elsewhere.close()


def test_proxy_variables_in_the_environment_are_ignored(installed, monkeypatch):
    proxy = Mirror()  # records whatever reaches it
    mirror = Mirror()
    try:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        assert fetch(Settings(), ["spinach-dev"], mirror=mirror.url).downloaded == ["spinach/dev.json"]
        assert proxy.asked == [] and mirror.asked == ["/spinach/dev.json"]
    finally:
        proxy.close()
        mirror.close()


def test_every_upstream_download_is_bounded():
    """Each upstream file has a cap: its exact size when its SHA-256 is pinned, a little more when not."""
    for e in CATALOGUE:
        inputs = e.build.inputs if e.build is not None else [f.upstream for f in e.files]
        for u in inputs:
            assert u is not None and 0 < u.size <= u.cap <= u.size + max(1024, u.size // 16)
            if u.sha256 is not None:
                assert u.cap == u.size
            if (UPSTREAM / u.name).is_file():
                assert (UPSTREAM / u.name).stat().st_size == u.size, u.name
