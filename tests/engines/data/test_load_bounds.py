"""Loading a user's files is bounded (issue 25): a deadline, caps on rows and on bytes as they expand
(whatever the compression), no link followed out of a --db folder, no special file read, a path that is
a path and never a glob; every bound a one-line error naming the file and the setting, nothing lost."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import duckdb
import pytest

from engines.data.describe import describe
from engines.data.source import DataSourceError, open_source
from engines.settings import Settings
from tests.engines.data.conftest import hotel_rows, write_csv, write_parquet
from tui.cli import main

REPO = Path(__file__).resolve().parents[3]
CANARY = "CANARY-7f3a9c"
MiB = 1024 * 1024


def settings(**kw) -> Settings:
    return Settings(backend="sim", **kw)


def refused(spec: Path | str, *words: str, **kw) -> str:
    with pytest.raises(DataSourceError) as e:
        open_source(str(spec), settings(**kw))
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message, message
    for w in words:
        assert w in message, message
    return message


def gzip_bomb(path: Path, member_mib: int = 16, members: int = 64) -> Path:
    """A CSV of 1,000-byte lines, ``member_mib * members`` MiB once expanded (1 GiB by default), about
    a thousand times smaller on disk: the same gzip member repeated (a gzip file may hold several)."""
    line = b"x" * 999 + b"\n"
    member = gzip.compress(line * (member_mib * MiB // len(line)), compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b"text\n"))
        for _ in range(members):
            f.write(member)
    return path


def digest(path: Path) -> bytes:
    return path.read_bytes()


# --- bytes, as they expand ----------------------------------------------------------------------------


def test_a_gzip_bomb_stops_at_the_byte_cap_and_the_file_is_untouched(tmp_path):
    bomb = gzip_bomb(tmp_path / "bomb.csv.gz", member_mib=1, members=16)  # 16 MiB expanded, 20 KB on disk
    before = digest(bomb)
    refused(bomb, "bomb.csv.gz", "load_max_bytes", "1 MiB", load_max_bytes=MiB)
    assert digest(bomb) == before
    with open_source(str(bomb), settings(load_max_bytes=32 * MiB)) as source:  # under the cap: it loads
        assert source.sandbox.run("SELECT count(*) FROM bomb").rows == ((16 * (MiB // 1000),),)


def test_the_byte_cap_counts_every_file_of_a_folder_together(tmp_path):
    write_csv(tmp_path / "a.csv", [{"v": "y" * 100} for _ in range(6000)])  # ~600 KB each
    write_csv(tmp_path / "b.csv", [{"v": "z" * 100} for _ in range(6000)])
    refused(tmp_path, "b.csv", "all its files together", "load_max_bytes", load_max_bytes=MiB)


def test_a_zstd_bomb_stops_at_the_byte_cap(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / "bomb.csv.zst"
    path.write_bytes(zstandard.ZstdCompressor(level=19).compress(b"text\n" + (b"y" * 999 + b"\n") * 8192))  # 8 MiB
    refused(path, "bomb.csv.zst", "load_max_bytes", load_max_bytes=MiB)
    with open_source(str(path), settings(load_max_bytes=16 * MiB)) as source:
        assert source.sandbox.run("SELECT count(*) FROM bomb").rows == ((8192,),)


def test_the_pump_stops_reading_the_compressed_file_at_the_cap(tmp_path):
    """Decompression stops one byte past the cap: most of the bomb is never even read from disk."""
    from engines.data import load_worker

    bomb = gzip_bomb(tmp_path / "bomb.csv.gz")  # 1 GiB expanded
    size = bomb.stat().st_size
    source = os.open(bomb, os.O_RDONLY)
    read_end, write_end = os.pipe()
    con = duckdb.connect()
    drained = []

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            drained.append(len(chunk))

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        pump = load_worker.Pump(source, "gzip", MiB, write_end, con)
        pump.first()
        pump.start()
        pump.join(timeout=30)
        assert not pump.is_alive()
        assert pump.over and pump.count == MiB + 1
        assert sum(drained) <= MiB  # DuckDB never sees a byte past the cap
        assert os.lseek(source, 0, os.SEEK_CUR) < size // 4, (os.lseek(source, 0, os.SEEK_CUR), size)
        pump.close()
    finally:
        reader.join(timeout=5)
        os.close(read_end)
        os.close(source)
        con.close()


# A child process runs the CLI; its own children (the loader) are waited for, so RUSAGE_CHILDREN here is
# the peak RSS of the CLI and the loader, whichever was larger.
_PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    proc = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
    sys.exit(proc.returncode)
""")


def test_the_cli_stops_a_gigabyte_gzip_bomb_at_the_cap_with_little_memory(tmp_path):
    bomb = gzip_bomb(tmp_path / "bomb.csv.gz")  # 1 GiB expanded, ~1 MB on disk
    before = digest(bomb)
    env = {**os.environ, "CS224V_BACKEND": "sim", "CS224V_LOAD_MAX_BYTES": str(MiB), "PYTHONPATH": str(REPO)}
    cli = [sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())"]
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, *cli, "sql", "SELECT count(*) FROM bomb", "--db", str(bomb), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,  # expanding the whole gigabyte takes DuckDB about 35 s here
    )
    *err, peak_kb = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr[-2000:]
    error = json.loads(proc.stdout)["error"]
    assert "bomb.csv.gz" in error and "load_max_bytes" in error and "\n" not in error
    assert "Traceback" not in "".join(err) + proc.stdout
    print(f"peak RSS {int(peak_kb) / 1024:.0f} MB")
    assert int(peak_kb) < 400 * 1024, f"peak RSS {int(peak_kb) / 1024:.0f} MB"
    assert digest(bomb) == before


# --- rows ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl.gz"])
def test_a_file_one_row_past_the_row_cap_stops(tmp_path, kind):
    rows = [{"id": i, "city": "Rome"} for i in range(101)]
    if kind == "csv":
        path = write_csv(tmp_path / "many.csv", rows)
    elif kind == "parquet":
        path = write_parquet(tmp_path / "many.parquet", rows)
    else:
        path = tmp_path / "many.jsonl.gz"
        path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    refused(path, path.name, "100 rows", "load_max_rows", load_max_rows=100)
    with open_source(str(path), settings(load_max_rows=101)) as source:  # at the cap: it loads
        assert source.sandbox.run("SELECT count(*) FROM many").rows == ((101,),)


def test_the_row_cap_counts_every_file_of_a_folder_together(tmp_path):
    write_csv(tmp_path / "a.csv", [{"x": i} for i in range(60)])
    write_csv(tmp_path / "b.csv", [{"x": i} for i in range(50)])
    refused(tmp_path, "b.csv", "all its files together", "load_max_rows", load_max_rows=100)
    with open_source(str(tmp_path), settings(load_max_rows=110)) as source:
        assert source.sandbox.run("SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)").rows == ((110,),)


def test_a_million_row_csv_and_parquet_load(tmp_path):
    con = duckdb.connect()
    try:
        million = con.sql("SELECT i AS id, i % 7 AS k, 'n' || (i % 1000) AS name FROM range(1000000) t(i)")
        million.write_csv(str(tmp_path / "big.csv"))
        million.write_parquet(str(tmp_path / "big.parquet"))
    finally:
        con.close()
    for name in ("big.csv", "big.parquet"):
        with open_source(str(tmp_path / name), Settings()) as source:
            assert source.schema.tables[0].rows == 1_000_000
            assert source.sandbox.run("SELECT count(*), max(id), sum(k) FROM big").rows == (
                (1_000_000, 999_999, sum(i % 7 for i in range(1_000_000))),
            )


# --- time -------------------------------------------------------------------------------------------


def test_a_slow_load_ends_at_the_deadline(tmp_path):
    """The issue's 4 MB .csv.gz that ran 200 s was a gzip bomb: DuckDB parsed every expanded gigabyte.
    Under the caps (2 GiB, 10 million rows) a 1 GiB bomb still takes DuckDB half a minute: the loader
    process is stopped at the deadline."""
    bomb = gzip_bomb(tmp_path / "bomb.csv.gz")
    started = time.monotonic()
    refused(bomb, "bomb.csv.gz", "longer than 1 s", "load_timeout_s", load_timeout_s=1.0)
    assert time.monotonic() - started < 10
    with open_source(str(write_csv(tmp_path / "h.csv", hotel_rows(3))), settings()) as source:  # a new loader
        assert source.sandbox.run("SELECT count(*) FROM h").rows == ((3,),)


def test_describing_stops_at_its_deadline(hotels_csv):
    with open_source(str(hotels_csv), Settings()) as source:
        tables = source.sandbox.tables()
        schema = describe(source.sandbox, tables, source="h", deadline=time.monotonic() - 1, deadline_note="the test")
    (table,) = schema.tables
    assert table.rows is None
    assert {c.name: c.role for c in table.columns}["city"] == "text"  # the type's role: no statistic read
    assert len(schema.notes) == 1 and "the test" in schema.notes[0]


# --- links, special files, globs ---------------------------------------------------------------------


def _secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    return write_csv(outside / "secret.csv", [{"id": 1, "city": CANARY}])


def test_a_link_out_of_a_folder_is_refused_and_never_read(tmp_path, capsys):
    secret = _secret(tmp_path)
    folder = tmp_path / "data"
    folder.mkdir()
    write_csv(folder / "hotels.csv", hotel_rows(3))
    (folder / "link.csv").symlink_to(secret)
    message = refused(folder, "link.csv", "outside the folder")
    assert CANARY not in message
    code = main(["sql", "SELECT * FROM link", "--db", str(folder), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and "outside the folder" in json.loads(out)["error"]
    assert CANARY not in out + err and "Traceback" not in out + err


def test_a_link_to_a_device_in_a_folder_is_refused(tmp_path):
    write_csv(tmp_path / "hotels.csv", hotel_rows(3))
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    refused(tmp_path, "zero.csv", "outside the folder")


def test_a_link_that_stays_inside_the_folder_is_followed(tmp_path):
    (tmp_path / "raw").mkdir()
    write_csv(tmp_path / "raw" / "hotels.csv", hotel_rows(3))
    (tmp_path / "hotels.csv").symlink_to(tmp_path / "raw" / "hotels.csv")
    with open_source(str(tmp_path), Settings()) as source:
        assert source.sandbox.run("SELECT count(*) FROM hotels").rows == ((3,),)


def test_a_fifo_is_refused_at_once_alone_or_in_a_folder(tmp_path):
    write_csv(tmp_path / "hotels.csv", hotel_rows(3))
    os.mkfifo(tmp_path / "x.csv")
    started = time.monotonic()
    refused(tmp_path / "x.csv", "x.csv", "FIFO", "not a regular file")
    refused(tmp_path, "x.csv", "FIFO", "not a regular file")
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("name, sibling", [("x*.csv", "xa.csv"), ("?.csv", "a.csv"), ("a[1].csv", "a1.csv")])
def test_a_file_named_like_a_glob_is_that_one_file(tmp_path, name, sibling):
    write_csv(tmp_path / name, [{"id": 1, "city": "Rome"}])
    write_csv(tmp_path / sibling, [{"id": 2, "city": CANARY}])
    with open_source(str(tmp_path / name), Settings()) as source:
        (table,) = source.schema.tables
        rows = source.sandbox.run(f'SELECT * FROM "{table.name}"').rows
    assert rows == ((1, "Rome"),)
    with open_source(str(tmp_path), Settings()) as source:  # in a folder, each file is its own table
        assert sorted(t.name for t in source.schema.tables) == sorted([table.name, sibling.removesuffix(".csv")])
        assert source.sandbox.run(f'SELECT count(*) FROM "{table.name}"').rows == ((1,),)


def test_a_broken_file_named_like_a_glob_is_named_in_the_error_and_its_sibling_is_not(tmp_path):
    (tmp_path / "x*.csv").write_bytes(b"a,b\n1,\xff\xfe\n")  # not UTF-8
    write_csv(tmp_path / "xa.csv", [{"city": CANARY}])
    message = refused(tmp_path / "x*.csv", "x*.csv", "CSV file")
    assert "xa.csv" not in message and CANARY not in message
    refused(tmp_path / "x?.csv", "No such file")  # a pattern given is not expanded


@pytest.mark.parametrize(
    "content, words",
    [
        (gzip.compress(b""), "empty once decompressed"),
        (b"\x1f\x8b\x08\x00 this is not gzip at all", "could not be decompressed"),
        (gzip.compress(b"a,b\n1,2\n")[:-12], "could not be decompressed"),  # cut short
    ],
    ids=["empty", "not-gzip", "cut-short"],
)
def test_a_bad_compressed_file_is_a_clear_error(tmp_path, content, words):
    path = tmp_path / "bad.csv.gz"
    path.write_bytes(content)
    refused(path, "bad.csv.gz", words)


@pytest.mark.parametrize(
    "env, make, words",
    [
        ({"CS224V_LOAD_MAX_ROWS": "5"}, lambda p: write_csv(p / "h.csv", hotel_rows(6)), "load_max_rows"),
        ({"CS224V_LOAD_MAX_BYTES": "1024"}, lambda p: write_csv(p / "h.csv", hotel_rows(60)), "load_max_bytes"),
        ({}, lambda p: (os.mkfifo(p / "f.csv"), p / "f.csv")[1], "not a regular file"),
    ],
)
def test_cli_bounds_are_one_line_errors(capsys, monkeypatch, tmp_path, env, make, words):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    path = make(tmp_path)
    code = main(["sql", "SELECT 1", "--db", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    error = json.loads(out)["error"]
    assert words in error and "\n" not in error and "Traceback" not in out + err


def test_opening_a_duckdb_file_has_the_deadline_too(hotels_duckdb):
    """The file is first attached by the loader process, under the deadline (a huge write-ahead log to
    replay, or a file that crashes DuckDB, costs that process only); here the deadline is already gone."""
    refused(hotels_duckdb, "hotels.duckdb", "load_timeout_s", load_timeout_s=0.001)
    with open_source(str(hotels_duckdb), settings()) as source:
        assert source.sandbox.run("SELECT count(*) FROM hotels").rows == ((24,),)
