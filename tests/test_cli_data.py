"""The data sets outside the checkout: ``data where`` and ``data fetch`` (from a mirror served on 127.0.0.1),
and an install with no ../shared that finds its data in the user folder or says how to fetch it."""

from __future__ import annotations

import csv
import hashlib
import http.server
import io
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engines.datasets import CATALOGUE, ChecksumMismatch, FetchFailed, fetch, where
from engines.errors import EngineError
from engines.settings import Settings
from tui.cli import main
from worlds.data import checkout_data_dir

SHARED = checkout_data_dir()
pytestmark = pytest.mark.skipif(SHARED is None, reason="../shared/data is not present")
FILES = [f for e in CATALOGUE for f in e.files]


class _Mirror(http.server.BaseHTTPRequestHandler):
    """Serves ``root`` read-only, honouring ``Range: bytes=N-``; records each request's path and Range."""

    root: Path
    seen: list[tuple[str, str | None]]

    def do_GET(self) -> None:
        from urllib.parse import unquote

        rel = unquote(self.path.lstrip("/"))
        self.seen.append((rel, self.headers.get("Range")))
        path = (self.root / rel).resolve()
        if not path.is_file() or self.root.resolve() not in path.parents:
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[len("bytes=") : -1])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])

    def log_message(self, *args) -> None:
        pass


def _serve(root: Path) -> Iterator[tuple[str, list]]:
    seen: list[tuple[str, str | None]] = []
    handler = type("Handler", (_Mirror,), {"root": root, "seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def mirror(tmp_path) -> Iterator[tuple[str, list, Path]]:
    """A copy of ../shared/data served over HTTP on 127.0.0.1."""
    root = tmp_path / "mirror"
    shutil.copytree(SHARED, root)
    for url, seen in _serve(root):
        yield url, seen, root


@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """A wheel-style install: CS224V_DATA unset, a fresh user data folder (XDG_DATA_HOME), no checkout fallback.
    Returns the user data folder."""
    for name in ("CS224V_DATA", "CS224V_SHARED_DATA", "CS224V_DATA_DIR", "CS224V_DATA_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CS224V_NO_CHECKOUT_DATA", "1")
    return tmp_path / "xdg" / "cs224v-tui"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_catalogue_checksums_are_the_shared_copies():
    assert {f.path for f in FILES} == {
        p.relative_to(SHARED).as_posix() for p in SHARED.rglob("*") if p.is_file() and p.name != "README.md"
    }
    for f in FILES:
        assert _sha(SHARED / f.path) == f.sha256 and (SHARED / f.path).stat().st_size == f.size


def test_where_finds_the_checkout_data(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CS224V_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "empty"))
    assert main(["data", "where", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in found] == ["hybridqa", "spinach-dev", "spinach-row-f1", "suql-paper"]
    assert all(d["found"] and d["how"] == "source checkout" and not d["files_differ"] for d in found)
    assert found[0]["files_ok"] == 15 and found[0]["path"] == str(SHARED / "hybridqa")


def test_an_install_without_the_checkout_says_how_to_fetch_then_fetches(installed, mirror, capsys):
    url, _seen, _root = mirror
    # nothing anywhere: every data set is named missing, with where it was looked for and how to get it
    assert main(["data", "where"]) == 0
    out = capsys.readouterr().out
    assert out.count("MISSING") == 4 and "cs224v-tui data fetch" in out and str(installed) in out
    assert "source checkout" not in out
    # the features that need a data set say so, and how to get it
    assert main(["hybridqa", "--tables"]) != 0
    err = capsys.readouterr().err
    assert "No HybridQA data found" in err and "cs224v-tui data fetch" in err
    from engines.hybridqa.session import open_hybridqa

    with pytest.raises(EngineError, match="data fetch"):
        open_hybridqa(Settings(), source="real")
    # fetched into the user data folder, found there
    assert main(["data", "fetch", "--from", url]) == 0
    captured = capsys.readouterr()
    assert f"18 files downloaded, 0 already there, in {installed}" in captured.out
    assert captured.err.count("SHA-256 ok") == 18
    for f in FILES:
        assert _sha(installed / f.path) == f.sha256
    assert not list(installed.rglob("*.part"))
    assert main(["data", "where", "--json"]) == 0
    assert all(d["how"] == "user data folder" and not d["files_missing"] for d in json.loads(capsys.readouterr().out))
    assert main(["hybridqa", "--tables", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["tables"]) == 14
    # a second fetch keeps what is intact
    assert main(["data", "fetch", "--from", url]) == 0
    assert "0 files downloaded, 18 already there" in capsys.readouterr().out


def test_the_mirror_url_is_a_setting(installed, mirror, monkeypatch):
    url, seen, _root = mirror
    monkeypatch.setenv("CS224V_DATA_URL", url)
    result = fetch(Settings(), ["spinach-dev"])
    assert result.downloaded == ["spinach/dev.json"] and seen == [("spinach/dev.json", None)]


def test_a_corrupted_file_is_a_checksum_error_and_nothing_is_written(installed, mirror, capsys):
    url, _seen, root = mirror
    path = root / "spinach" / "row_f1_cases.json"
    path.write_bytes(path.read_bytes().replace(b"0.5", b"0.6", 1))
    assert main(["data", "fetch", "spinach-row-f1", "--from", url]) == 1
    err = capsys.readouterr().err
    assert "spinach/row_f1_cases.json" in err and "does not match its checksum" in err and "Traceback" not in err
    assert not (installed / "spinach" / "row_f1_cases.json").exists()
    assert not list(installed.rglob("*.part"))


def test_a_network_failure_is_a_clear_error(installed, capsys):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["data", "fetch", "suql-paper", "--from", f"http://127.0.0.1:{port}"]) == 1
    err = capsys.readouterr().err
    assert f"Could not download http://127.0.0.1:{port}/suql_paper/" in err and "again" in err
    assert "Traceback" not in err


def test_an_http_error_names_the_url(installed, tmp_path):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    for url, _seen in _serve(empty):
        with pytest.raises(FetchFailed, match="HTTP 404"):
            fetch(Settings(), ["spinach-dev"], mirror=url)


def test_an_interrupted_download_continues_where_it_stopped(installed, mirror):
    url, seen, _root = mirror
    f = next(f for f in FILES if f.path == "spinach/dev.json")
    part = installed / "spinach" / "dev.json.part"
    part.parent.mkdir(parents=True)
    part.write_bytes((SHARED / f.path).read_bytes()[:50_000])
    fetch(Settings(), ["spinach-dev"], mirror=url)
    assert seen == [("spinach/dev.json", "bytes=50000-")]
    assert _sha(installed / f.path) == f.sha256 and not part.exists()


def test_without_a_mirror_upstream_sources_are_used(installed):
    """The SPINACH dev set comes from its pinned upstream URL as is; the SUQL paper CSV from upstream's form (with
    its Prolific ID column), rebuilt.  (The derived sets, built from upstream: tests/test_data_fetch.py.)"""
    csv_text = (SHARED / "suql_paper" / "restaurants_single_turn_SUQL.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(csv_text, newline="")))
    upstream = io.StringIO(newline="")
    csv.writer(upstream, lineterminator="\n").writerows(
        [r[:9] + (["Prolific ID"] if n == 0 else [f"5f{n:022x}"]) + r[9:] for n, r in enumerate(rows)]
    )
    served = {
        "/stanford-oval/spinach/8bb2d9cfa7f54b7b63ba5e6acd8264fdb7f8ecf9/spinach_dataset/dev.json": (
            SHARED / "spinach" / "dev.json"
        ).read_bytes(),
        "/stanford-oval/suql/98631933ec1bf77990dd011d9be54b09017c6510/paper_data/restaurants_single_turn_SUQL.csv": (
            upstream.getvalue().encode("utf-8")
        ),
    }
    asked: list[str] = []

    def upstream_only(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        assert request.url.host == "raw.githubusercontent.com"
        return httpx.Response(200, content=served[request.url.path])

    result = fetch(Settings(), ["spinach-dev", "suql-paper"], transport=httpx.MockTransport(upstream_only))
    assert sorted(result.downloaded) == ["spinach/dev.json", "suql_paper/restaurants_single_turn_SUQL.csv"]
    assert len(asked) == 2
    assert _sha(installed / "suql_paper" / "restaurants_single_turn_SUQL.csv") == _sha(
        SHARED / "suql_paper" / "restaurants_single_turn_SUQL.csv"
    )


def test_damaged_upstream_bytes_are_refused(installed):
    def damaged(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"[]")

    with pytest.raises(ChecksumMismatch, match="spinach/dev.json from https://raw.githubusercontent.com/"):
        fetch(Settings(), ["spinach-dev"], transport=httpx.MockTransport(damaged))
    assert not (installed / "spinach").exists() or not list((installed / "spinach").iterdir())


def test_unknown_data_set_and_missing_action(installed, capsys):
    assert main(["data", "fetch", "wikidata"]) == 1
    assert "No data set is called 'wikidata'" in capsys.readouterr().err
    assert main(["data"]) == 2
    assert "data where" in capsys.readouterr().err


def test_an_explicit_data_folder_is_the_only_one_looked_in(installed, tmp_path, monkeypatch):
    monkeypatch.setenv("CS224V_DATA", str(tmp_path / "typo"))
    (found, *_rest) = where(Settings())
    assert found.path is None and str(tmp_path / "typo" / "hybridqa") in found.message
    monkeypatch.setenv("CS224V_DATA", str(SHARED))
    assert all(f.how == "CS224V_DATA" and f.ok == len(f.entry.files) for f in where(Settings()))


def test_each_data_set_is_looked_for_on_its_own(tmp_path, monkeypatch):
    """A user data folder holding one data set does not hide the checkout's others."""
    from engines.lab.lecture8.complexity import _dev_queries
    from engines.suql.examples import paper_queries

    monkeypatch.delenv("CS224V_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "cs224v-tui"
    (user / "spinach").mkdir(parents=True)
    shutil.copy(SHARED / "spinach" / "dev.json", user / "spinach" / "dev.json")
    found = {f.entry.dataset.name: f.how for f in where(Settings())}
    assert found == {
        "hybridqa": "source checkout",
        "spinach-dev": "user data folder",
        "spinach-row-f1": "source checkout",
        "suql-paper": "source checkout",
    }
    assert len(paper_queries(Settings())) == 100 and len(_dev_queries(Settings())) == 155
