"""A damaged, read-only, locked, full or missing answer cache is one warning line, and the run goes
on uncached (or with what still works): never a traceback, never a long wait, never a wrong answer."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.llm import cache as cache_module
from engines.llm.cache import FILENAME, AnswerCache

ROOT = Path(__file__).resolve().parents[3]
BACKEND = "sim|sim(seed=224)|sim-3"
ENTRIES = {
    (f"Review {i}: the patio is heated and dogs are welcome.", f"question {i}?"): {
        "value": f"v{i}",
        "evidence": [f"e{i}"],
    }
    for i in range(40)
}
NEW = ("a text asked later", "a question asked later", {"value": "later"})


def populate(folder: Path) -> None:
    with AnswerCache(folder) as c:
        for (text, question), payload in ENTRIES.items():
            c.put("answer", text, question, BACKEND, payload)


def cache_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "engines.llm.cache"]


def exercise(c: AnswerCache, rounds: int = 3) -> dict[tuple[str, str], dict | None]:
    """What a run does with a cache: reads every entry, stores new answers, counts (several times)."""
    seen: dict[tuple[str, str], dict | None] = {}
    for _ in range(rounds):
        for text, question in ENTRIES:
            seen[text, question] = c.get("answer", text, question, BACKEND)
        c.put("answer", NEW[0], NEW[1], BACKEND, NEW[2])
        c.get("answer", NEW[0], NEW[1], BACKEND)
        len(c)
    return seen


def assert_one_line_each(lines: list[str]) -> None:
    assert all("\n" not in line for line in lines)
    assert len(lines) == len(set(lines))


# --- damage: byte flips -------------------------------------------------------------------

_BASE: dict[str, bytes] = {}


def base_file() -> bytes:
    """A populated, cleanly closed cache file (built once)."""
    if "db" not in _BASE:
        with tempfile.TemporaryDirectory() as folder:
            populate(Path(folder))
            _BASE["db"] = (Path(folder) / FILENAME).read_bytes()
    return _BASE["db"]


def check_flipped(offset: int, mask: int) -> None:
    data = bytearray(base_file())
    offset %= len(data)
    data[offset] ^= mask
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / FILENAME).write_bytes(bytes(data))
        with AnswerCache(folder) as c:
            seen = exercise(c)
            # a damaged file never serves a wrong answer: each entry is what was stored, or a miss
            for key, got in seen.items():
                assert got is None or got == ENTRIES[key], (offset, mask, key, got)
            assert_one_line_each(c.warnings)
            # at most one line per problem: a few problems, not one per call
            assert len(c.warnings) <= 4, c.warnings
        # the next run opens whatever is left (or was moved aside) and uses it fully
        with AnswerCache(folder) as again:
            exercise(again, rounds=1)
            assert again.readable and again.writable, (offset, mask, again.warnings)
            assert again.get("answer", NEW[0], NEW[1], BACKEND) == NEW[2]


# The header (magic, page size, versions, reserved space, schema cookie, layout number, text
# encoding), the first b-tree page, and the middles of the table's pages.
FIXED_OFFSETS = [
    0,
    5,
    16,
    17,
    18,
    19,
    20,
    21,
    24,
    28,
    40,
    44,
    52,
    56,
    60,
    64,
    96,
    100,
    101,
    105,
    4096,
    4100,
    4200,
    6000,
    8192,
    9000,
    12000,
]


@pytest.mark.parametrize("offset", FIXED_OFFSETS)
def test_a_flipped_byte_at_a_fixed_offset(offset: int) -> None:
    if offset < len(base_file()):
        check_flipped(offset, 0xFF)
        check_flipped(offset, 0x01)


def test_a_flipped_bit_in_a_stored_answer_is_never_served() -> None:
    """The flip that leaves valid JSON and a valid page: "v7" becomes "v6".  Without a checksum the
    cache would hand key 7 the wrong answer."""
    offset = base_file().index(b'"value": "v7"') + len(b'"value": "v')
    assert base_file()[offset : offset + 1] == b"7"
    check_flipped(offset, 0x01)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(offset=st.integers(min_value=0, max_value=2**31), mask=st.integers(min_value=1, max_value=255))
def test_a_flipped_byte_anywhere(offset: int, mask: int) -> None:
    check_flipped(offset, mask)


def test_flipped_bytes_at_seeded_random_offsets() -> None:
    rng = random.Random(224)
    size = len(base_file())
    for _ in range(40):
        check_flipped(rng.randrange(size), rng.randrange(1, 256))


def test_a_damaged_entry_is_dropped_with_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A payload changed behind the cache's back (still valid JSON) fails its checksum."""
    populate(tmp_path)
    conn = sqlite3.connect(tmp_path / FILENAME)
    with conn:
        conn.execute("UPDATE answers SET payload = replace(payload, '\"v', '\"w')")
    conn.close()
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(tmp_path) as c:
        seen = exercise(c)
        assert all(v is None for v in seen.values())
        assert len(c) == 1  # the damaged entries were deleted; the new one is stored
    [line] = cache_lines(caplog)
    assert "damaged entry" in line


def test_damage_found_while_reading_moves_the_file_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A page damaged after the cache opened (another process, a disk error): one line, then a fresh file."""
    with AnswerCache(tmp_path) as c:
        for (text, question), payload in ENTRIES.items():
            c.put("answer", text, question, BACKEND, payload)
        c._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the pages are in the main file now
        size = (tmp_path / FILENAME).stat().st_size
        with open(tmp_path / FILENAME, "r+b") as f:  # overwrite every b-tree page but the first
            f.seek(4096)
            f.write(b"\xa5" * (size - 4096))
        c._conn.execute("PRAGMA shrink_memory")  # forget the pages read so far: the next read sees the damage
        with caplog.at_level("WARNING", logger="engines.llm.cache"):
            seen = exercise(c)
        assert all(v is None or v == ENTRIES[k] for k, v in seen.items())
        assert c.get("answer", NEW[0], NEW[1], BACKEND) == NEW[2]  # the fresh file works
    lines = cache_lines(caplog)
    assert len(lines) == 1 and "moved it to" in lines[0], lines
    assert len(list(tmp_path.glob(FILENAME + ".corrupt-*"))) == 1


# --- missing: a directory in place of the file, a folder that cannot be made, deleted files --


def test_a_directory_in_place_of_the_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / FILENAME).mkdir()
    (tmp_path / FILENAME / "keep").write_text("mine")
    with caplog.at_level("WARNING", logger="engines.llm.cache"):
        for _ in range(2):  # two sessions of one run: still one line
            with AnswerCache(tmp_path) as c:
                assert not c.readable
                assert all(v is None for v in exercise(c).values())
                assert len(c) == 0
    [line] = cache_lines(caplog)
    assert "not a regular file" in line and "running uncached" in line
    assert (tmp_path / FILENAME / "keep").read_text() == "mine"


def test_a_symlink_in_place_of_the_file_is_not_followed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / FILENAME).symlink_to(target)
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(tmp_path / "cache") as c:
        exercise(c, rounds=1)
    assert target.read_bytes() == b""
    assert len(cache_lines(caplog)) == 1


def test_files_deleted_during_a_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    populate(tmp_path)
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(tmp_path) as c:
        exercise(c, rounds=1)
        shutil.rmtree(tmp_path)
        exercise(c)  # SQLite keeps the open files; nothing fails
    with AnswerCache(tmp_path) as c:  # the next run starts afresh
        assert len(c) == 0 and c.writable
    assert cache_lines(caplog) == []


# --- read-only ------------------------------------------------------------------------------

READ_ONLY_RUN = textwrap.dedent(
    """
    import json, logging, os, sys
    sys.path.insert(0, sys.argv[2])
    from engines.llm.cache import AnswerCache
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if os.geteuid() == 0:  # run as an ordinary user, as the cache's users do (root ignores permissions)
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    entries = json.loads(sys.argv[3])
    with AnswerCache(sys.argv[1], busy_timeout_s=0.2) as c:
        for _ in range(3):
            hits = [c.get("answer", t, q, "b") for t, q, _ in entries]
            c.put("answer", "new text", "new question", "b", {"value": "new"})
        print(json.dumps({"hits": hits, "readable": c.readable, "writable": c.writable, "warnings": c.warnings}))
    """
)


def run_unprivileged(folder: Path, entries: list[tuple[str, str, dict]]) -> tuple[dict, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", READ_ONLY_RUN, str(folder), str(ROOT), json.dumps(entries)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout), [line for line in done.stderr.splitlines() if line.strip()]


@pytest.fixture
def shared_tmp():
    """A folder an unprivileged user can reach (pytest's own tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="cache-ro-"))
    folder.chmod(0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder)


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


ENTRY_LIST = [(t, q, {"value": f"v{i}"}) for i, (t, q) in enumerate(list(ENTRIES)[:5])]


def populated_for_others(folder: Path) -> None:
    with AnswerCache(folder) as c:
        for t, q, payload in ENTRY_LIST:
            c.put("answer", t, q, "b", payload)
    assert sorted(p.name for p in folder.iterdir()) == [FILENAME]  # a clean close leaves no -wal, -shm


def test_a_read_only_folder_still_serves_hits(shared_tmp: Path) -> None:
    cache_dir = shared_tmp / "cache"
    cache_dir.mkdir()
    populated_for_others(cache_dir)
    (cache_dir / FILENAME).chmod(0o644)
    cache_dir.chmod(0o555)
    before = snapshot(cache_dir)
    out, lines = run_unprivileged(cache_dir, ENTRY_LIST)
    assert out["hits"] == [payload for _, _, payload in ENTRY_LIST]
    assert out["readable"] and not out["writable"]
    assert len(out["warnings"]) == 1 and "storing no new ones" in out["warnings"][0]
    assert lines == out["warnings"]  # one line on stderr, for three rounds of puts
    assert snapshot(cache_dir) == before and sorted(p.name for p in cache_dir.iterdir()) == [FILENAME]


def test_a_read_only_file_in_a_writable_folder_still_serves_hits(shared_tmp: Path) -> None:
    cache_dir = shared_tmp / "cache"
    cache_dir.mkdir()
    populated_for_others(cache_dir)
    (cache_dir / FILENAME).chmod(0o444)
    cache_dir.chmod(0o777)
    before = snapshot(cache_dir)[FILENAME]
    out, lines = run_unprivileged(cache_dir, ENTRY_LIST)
    assert out["hits"] == [payload for _, _, payload in ENTRY_LIST]
    assert out["readable"] and not out["writable"]
    assert len(out["warnings"]) == 1 and len(lines) == 1
    assert snapshot(cache_dir)[FILENAME] == before


def test_a_read_only_folder_with_an_empty_file_runs_uncached(shared_tmp: Path) -> None:
    cache_dir = shared_tmp / "cache"
    cache_dir.mkdir()
    (cache_dir / FILENAME).write_bytes(b"")
    cache_dir.chmod(0o555)
    out, lines = run_unprivileged(cache_dir, ENTRY_LIST)
    assert out["hits"] == [None] * len(ENTRY_LIST) and not out["readable"]
    assert len(lines) == 1 and "running uncached" in lines[0]
    assert (cache_dir / FILENAME).read_bytes() == b""


def test_a_read_only_folder_without_the_file_runs_uncached(shared_tmp: Path) -> None:
    cache_dir = shared_tmp / "cache"
    cache_dir.mkdir()
    cache_dir.chmod(0o555)
    out, lines = run_unprivileged(cache_dir, ENTRY_LIST)
    assert out["hits"] == [None] * len(ENTRY_LIST) and not out["readable"]
    assert len(lines) == 1 and "cannot be created" in lines[0]
    assert list(cache_dir.iterdir()) == []


def test_a_missing_folder_under_a_read_only_parent_runs_uncached(shared_tmp: Path) -> None:
    shared_tmp.chmod(0o555)
    out, lines = run_unprivileged(shared_tmp / "deep" / "cache", ENTRY_LIST)
    assert out["hits"] == [None] * len(ENTRY_LIST) and not out["readable"]
    assert len(lines) == 1 and "cannot create the folder" in lines[0]
    assert list(shared_tmp.iterdir()) == []


def test_opening_an_existing_cache_writes_nothing(tmp_path: Path) -> None:
    populate(tmp_path)
    before = snapshot(tmp_path)
    with AnswerCache(tmp_path) as c:
        for (text, question), payload in ENTRIES.items():
            assert c.get("answer", text, question, BACKEND) == payload
    assert snapshot(tmp_path) == before


# --- locked -----------------------------------------------------------------------------------


def test_a_held_write_lock_stops_writes_after_a_short_wait(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    populate(tmp_path)
    holder = sqlite3.connect(tmp_path / FILENAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(tmp_path, busy_timeout_s=0.5) as c:
            start = time.monotonic()
            seen = exercise(c)  # nine puts: the first waits out the busy timeout, the rest do not wait
            assert time.monotonic() - start < 0.5 + 2
            assert seen == ENTRIES  # in WAL mode, readers do not wait for a writer: hits still served
            assert c.readable and not c.writable
    finally:
        holder.rollback()
        holder.close()
    [line] = cache_lines(caplog)
    assert "locked" in line and "storing no new answers" in line


def test_a_lock_that_stops_reads_too_runs_uncached(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    populate(tmp_path)
    holder = sqlite3.connect(tmp_path / FILENAME, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM answers WHERE question = 'question 0?'")
    holder.execute("COMMIT")  # exclusive locking mode keeps the lock after the commit
    try:
        with caplog.at_level("WARNING", logger="engines.llm.cache"):
            start = time.monotonic()
            for _ in range(2):
                with AnswerCache(tmp_path, busy_timeout_s=0.5) as c:
                    assert all(v is None for v in exercise(c).values())
            assert time.monotonic() - start < 2 * 0.5 + 2
    finally:
        holder.close()
    [line] = cache_lines(caplog)
    assert "locked" in line and "running uncached" in line
    with AnswerCache(tmp_path) as c:  # the lock gone, the next run uses the cache again
        assert c.get("answer", *list(ENTRIES)[1], BACKEND) == ENTRIES[list(ENTRIES)[1]]


# --- a full disk ------------------------------------------------------------------------------


def test_a_full_database_stops_writes_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLITE_FULL, as SQLite reports a full disk: the file may not grow past its current pages."""
    populate(tmp_path)
    real_connect = sqlite3.connect

    def capped(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        conn.execute("PRAGMA max_page_count = 1")  # clamped to the pages the file has now
        return conn

    monkeypatch.setattr(cache_module.sqlite3, "connect", capped)
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(tmp_path) as c:
        for i in range(200):
            c.put("answer", f"new text {i}", "q", BACKEND, {"value": "x" * 2000})
        assert not c.writable and c.readable
        assert exercise(c) == ENTRIES
    [line] = cache_lines(caplog)
    assert "disk is full" in line


FULL_DISK_RUN = textwrap.dedent(
    """
    import json, logging, resource, signal, sys
    sys.path.insert(0, sys.argv[2])
    from engines.llm.cache import AnswerCache
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
    limit = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    with AnswerCache(sys.argv[1]) as c:
        for i in range(300):
            c.put("answer", f"text {i}", "q", "b", {"value": "x" * 2000})
        kept = [c.get("answer", f"text {i}", "q", "b") is not None for i in range(300)]
        print(json.dumps({"kept": sum(kept), "writable": c.writable, "readable": c.readable}))
    """
)


def test_writes_that_the_file_system_refuses(tmp_path: Path) -> None:
    """A real refusal by the operating system (a file-size limit), in a process of its own."""
    with AnswerCache(tmp_path):
        pass  # a new, empty cache
    limit = 64 * 1024
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK_RUN, str(tmp_path), str(ROOT), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = json.loads(done.stdout)
    assert 0 < out["kept"] < 300 and not out["writable"]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "storing no new answers" in lines[0], lines
    with AnswerCache(tmp_path) as c:  # what was stored is intact
        assert c.get("answer", "text 0", "q", "b") == {"value": "x" * 2000}


# --- one line per problem per run -------------------------------------------------------------


def test_each_problem_is_reported_once_per_run_and_to_the_listener(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / FILENAME).mkdir()
    heard: list[str] = []
    with caplog.at_level("WARNING", logger="engines.llm.cache"):
        for _ in range(3):
            with AnswerCache(tmp_path, on_warning=heard.append) as c:
                exercise(c, rounds=2)
    assert len(heard) == 1 and cache_lines(caplog) == heard
    # another problem on another file is its own line
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(blocker, on_warning=heard.append):
        pass
    assert len(heard) == 2 and cache_lines(caplog) == heard


def test_a_failing_listener_does_not_break_the_cache(tmp_path: Path) -> None:
    (tmp_path / FILENAME).mkdir()

    def broken(_line: str) -> None:
        raise RuntimeError("listener bug")

    with AnswerCache(tmp_path, on_warning=broken) as c:
        exercise(c, rounds=1)


def test_a_path_with_a_newline_still_gives_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "two\nlines"
    folder.mkdir()
    (folder / FILENAME).mkdir()
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(folder):
        pass
    [line] = cache_lines(caplog)
    assert "\n" not in line


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX only")
def test_the_unprivileged_runs_really_are_unprivileged(shared_tmp: Path) -> None:
    """The read-only tests mean something only if the child cannot write where root could."""
    shared_tmp.chmod(0o555)
    probe = textwrap.dedent(
        """
        import os, sys
        if os.geteuid() == 0:
            os.setgroups([]); os.setgid(65534); os.setuid(65534)
        try:
            open(os.path.join(sys.argv[1], "probe"), "w")
        except PermissionError:
            print("refused")
        """
    )
    done = subprocess.run([sys.executable, "-c", probe, str(shared_tmp)], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "refused", done.stderr
