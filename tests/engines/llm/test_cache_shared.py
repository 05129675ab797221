"""Several processes on one answer cache (every cs224v-tui process shares the folder by default): a
layout another process is setting up is waited for, never moved aside; a damaged file another
process uses is left alone; nothing committed is lost, whatever starts, stops or dies at the same time."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from engines.llm import cache as cache_module
from engines.llm.cache import FILENAME, AnswerCache

ROOT = Path(__file__).resolve().parents[3]


def corrupt_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(FILENAME + ".corrupt-*"))


def integrity(folder: Path) -> list[tuple]:
    conn = sqlite3.connect(folder / FILENAME)
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()


# --- a reader meets a layout half set up: deterministic, through the module's hook ------------------


def test_a_layout_being_set_up_by_another_cache_is_waited_for_not_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race of the issue, made to happen every time: a writer has set up the file's layout but not
    committed it; a reader starts reading the layout; the writer commits while the reader is reading.
    Read in two statements, the reader saw version 0 and then the writer's table, called the file "not
    an answer cache" and moved it aside under the writer.  Read in one transaction, it sees one state."""
    folder = tmp_path / "cache"
    writer_paused, writer_go = threading.Event(), threading.Event()
    writer_done: dict[str, AnswerCache] = {}

    def hook(step: str, cache: AnswerCache) -> None:
        me = threading.current_thread().name
        if me == "writer" and step == "layout-write":
            writer_paused.set()  # the table is created, the version set, nothing committed
            assert writer_go.wait(10)
        elif me == "MainThread" and step == "layout-read" and not writer_go.is_set():
            writer_go.set()  # in the middle of the reader's look at the layout, the writer finishes
            writer.join(10)
            assert "cache" in writer_done

    def open_writer() -> None:
        c = AnswerCache(folder, busy_timeout_s=10)
        c.put("answer", "the writer's text", "q", "b", {"value": "kept"})
        writer_done["cache"] = c

    monkeypatch.setattr(cache_module, "_hook", hook)
    writer = threading.Thread(target=open_writer, name="writer")
    writer.start()
    try:
        assert writer_paused.wait(10)
        with AnswerCache(folder, busy_timeout_s=10) as reader:
            assert reader.warnings == []
            assert reader.readable and reader.writable
            assert reader.get("answer", "the writer's text", "q", "b") == {"value": "kept"}
            reader.put("answer", "the reader's text", "q", "b", {"value": "also kept"})
    finally:
        writer_go.set()
        writer.join(10)
    writer_cache = writer_done["cache"]
    assert writer_cache.warnings == [] and writer_cache.writable
    assert writer_cache.get("answer", "the reader's text", "q", "b") == {"value": "also kept"}
    writer_cache.close()
    assert corrupt_files(folder) == []
    assert integrity(folder) == [("ok",)]


# --- a damaged file another process has open is left alone ---------------------------------------------

HOLDER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from engines.llm.cache import AnswerCache
    c = AnswerCache(sys.argv[1])
    for i in range(40):
        c.put("answer", f"text {i}", "q", "b", {"value": "x" * 200})
    c._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    print("open", flush=True)
    sys.stdin.read()  # until the test is done with it
    c.close()
    """
)


def test_a_damaged_file_another_process_uses_is_not_moved_aside(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), str(ROOT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "open"
        path = tmp_path / FILENAME
        size = path.stat().st_size
        with open(path, "r+b") as f:  # damage every b-tree page but the first, under the holder's feet
            f.seek(4096)
            f.write(b"\xa5" * (size - 4096))
        start = time.monotonic()
        with AnswerCache(tmp_path, busy_timeout_s=0.3) as c:
            assert not c.readable and c.get("answer", "text 1", "q", "b") is None
            [line] = c.warnings
        assert time.monotonic() - start < 10
        assert "another process is using it" in line and "running uncached" in line, line
        assert corrupt_files(tmp_path) == []  # left where the holder has it open
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    with AnswerCache(tmp_path) as c:  # nobody else uses it now: set aside, and a fresh file
        assert c.readable and c.writable
        assert len(c.warnings) == 1 and "moved it to" in c.warnings[0]
    assert len(corrupt_files(tmp_path)) == 1


# --- two caches in one process: reading the header by hand would drop SQLite's locks --------------------

OTHER_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from engines.llm.cache import AnswerCache
    with AnswerCache(sys.argv[1]) as c:
        c.put("answer", sys.argv[3], "q", "b", {"value": sys.argv[3]})
        assert c.warnings == [], c.warnings
    """
)


def write_elsewhere(folder: Path, text: str) -> None:
    subprocess.run([sys.executable, "-c", OTHER_WRITER, str(folder), str(ROOT), text], check=True, timeout=60)


def test_two_caches_in_one_process_lose_no_other_process_entry(tmp_path: Path) -> None:
    """A second cache of a process read the file's header through a descriptor of its own; closing it
    dropped the process's POSIX locks on the file (SQLite's among them), so another process closing its
    cache believed it was the last one and deleted the write-ahead log this process was still writing
    to: what was committed after that was lost."""
    first = AnswerCache(tmp_path)
    first.put("answer", "first", "q", "b", {"value": "first"})
    second = AnswerCache(tmp_path)
    try:
        write_elsewhere(tmp_path, "elsewhere 1")
        first.put("answer", "first again", "q", "b", {"value": "first again"})
        write_elsewhere(tmp_path, "elsewhere 2")
    finally:
        first.close()
        second.close()
    with AnswerCache(tmp_path) as c:
        for text in ("first", "first again", "elsewhere 1", "elsewhere 2"):
            assert c.get("answer", text, "q", "b") == {"value": text}, text
        assert c.warnings == []
    assert integrity(tmp_path) == [("ok",)]


# --- eight processes at once on fresh caches, one killed mid-write ------------------------------------

ENTRIES = 12
WORKER = textwrap.dedent(
    f"""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from engines.llm import cache as cache_module
    folder, name, pause_at = sys.argv[2], sys.argv[3], sys.argv[4]
    stored = []
    if pause_at:
        def hook(step, cache):  # the victim stops where it is told to (else at its third put)
            if step == pause_at or (step == "put" and len(stored) == 2):
                print(json.dumps({{"paused": step, "stored": stored}}), flush=True)
                time.sleep(120)  # killed here, inside the transaction
        cache_module._hook = hook
    sys.stdin.read(1)  # the start, given to all at once
    with cache_module.AnswerCache(folder, busy_timeout_s=30) as c:
        for i in range({ENTRIES}):
            c.put("answer", f"{{name}} {{i}}", "q", "b", {{"value": i, "by": name}})
            stored.append(i)
            c.get("answer", f"w0 {{i}}", "q", "b")  # and reads another's
        mine = [c.get("answer", f"{{name}} {{i}}", "q", "b") for i in range({ENTRIES})]
        print(json.dumps({{"stored": stored, "mine": mine, "warnings": c.warnings, "writable": c.writable}}))
    """
)


def run_round(folder: Path, pause_at: str) -> None:
    """Eight processes; the victim (w7) is killed paused inside a put, or inside setting the layout up
    (then it starts first, alone, and the other seven start while it holds the half-made layout)."""
    names = [f"w{i}" for i in range(8)]
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-S", "-c", WORKER, str(ROOT), str(folder), name, pause_at if name == "w7" else ""],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    }
    victim = procs["w7"]
    try:
        assert victim.stdin is not None and victim.stdout is not None
        order = ["w7"] + names[:7] if pause_at == "layout-write" else names
        for name in order:
            stdin = procs[name].stdin
            assert stdin is not None
            stdin.write("g")
            stdin.close()
            procs[name].stdin = None  # (communicate() would flush it)
            if name == "w7" and pause_at == "layout-write":
                paused = json.loads(victim.stdout.readline())
                assert paused["paused"] == "layout-write"
        if pause_at != "layout-write":
            paused = json.loads(victim.stdout.readline())
            assert paused["paused"] == "put"
        time.sleep(0.05)  # let the others get into their opening and writing
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(timeout=10) == -signal.SIGKILL
        results = {}
        for name in names[:7]:
            out, err = procs[name].communicate(timeout=120)
            assert procs[name].returncode == 0 and "Traceback" not in err, (name, err)
            results[name] = json.loads(out.strip().splitlines()[-1])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
    for name, result in results.items():
        assert result["warnings"] == [] and result["writable"], (name, result)
        assert result["mine"] == [{"value": i, "by": name} for i in range(ENTRIES)], name
    assert corrupt_files(folder) == []
    assert integrity(folder) == [("ok",)]
    with AnswerCache(folder) as c:
        assert c.warnings == []
        for name in names[:7]:
            for i in range(ENTRIES):
                assert c.get("answer", f"{name} {i}", "q", "b") == {"value": i, "by": name}
        for i in paused["stored"]:  # what the victim committed before it died
            assert c.get("answer", f"w7 {i}", "q", "b") == {"value": i, "by": "w7"}
        assert c.get("answer", f"w7 {len(paused['stored'])}", "q", "b") is None  # the write it died in
        assert len(c) == 7 * ENTRIES + len(paused["stored"])


def test_eight_processes_at_once_on_fresh_caches_one_killed_mid_write() -> None:
    for round_ in range(10):
        with tempfile.TemporaryDirectory() as name:
            run_round(Path(name) / "cache", "layout-write" if round_ % 2 else "put")
