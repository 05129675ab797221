"""History files are hostile input too (issue 25): a symbolic link, a FIFO, a file of any size, a line nested past
the recursion limit, two app instances writing at once.  The store reads at most ``history_max_bytes``, never
follows a link nor waits on a FIFO, sets a bad file aside whole under a free name, and loses no instance's entry.

Headless: through :class:`tui.history.HistoryStore` directly (other processes where two instances are needed, or
where the peak memory of reading is measured)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from engines.settings import Settings
from tui.history import MAX_BYTES, HistoryStore

ROOT = Path(__file__).resolve().parents[2]


def line(text: str, box: str = "suql") -> str:
    return json.dumps({"box": box, "text": text}) + "\n"


# --- symbolic links ---------------------------------------------------------------------------------------------


def test_a_symlinked_history_file_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "history", tmp_path / "elsewhere.jsonl"
    folder.mkdir()
    elsewhere.write_text(line("SELECT 'not this history'"), encoding="utf-8")
    before = elsewhere.read_bytes()
    (folder / "suql.jsonl").symlink_to(elsewhere)
    store = HistoryStore(folder, "suql")
    assert store.entries == []
    [warning] = store.warnings
    assert str(folder / "suql.jsonl") in warning and "symbolic link" in warning and "session only" in warning
    assert store.add("suql", "SELECT 1") and store.texts("suql") == ["SELECT 1"]  # kept for the session
    assert elsewhere.read_bytes() == before
    assert (folder / "suql.jsonl").is_symlink()


def test_a_bad_file_is_set_aside_under_a_free_name_never_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"the user's own bytes")
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "kg.jsonl.bad").symlink_to(victim)  # a link where the copy used to go
    (folder / "kg.jsonl.bad.2").write_bytes(b"set aside by an earlier run\n")
    original = (line("ASK {}", "sparql") + "not json\n").encode()
    (folder / "kg.jsonl").write_bytes(original)
    store = HistoryStore(folder, "kg")
    assert store.texts("sparql") == ["ASK {}"]
    [warning] = store.warnings
    assert "1 of its lines" in warning and str(folder / "kg.jsonl.bad.3") in warning
    assert victim.read_bytes() == b"the user's own bytes"
    assert (folder / "kg.jsonl.bad").is_symlink()
    assert (folder / "kg.jsonl.bad.2").read_bytes() == b"set aside by an earlier run\n"
    assert (folder / "kg.jsonl.bad.3").read_bytes() == original  # the file as it was, whole
    assert (folder / "kg.jsonl").read_text(encoding="utf-8") == line("ASK {}", "sparql")
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


# --- a FIFO -------------------------------------------------------------------------------------------------------


def test_a_fifo_in_place_of_the_history_file_is_neither_read_nor_written(tmp_path: Path) -> None:
    path = tmp_path / "suql.jsonl"
    os.mkfifo(path)
    done = threading.Event()

    def rescue() -> None:  # should the store wait on the FIFO, set it free after 5 s (the test fails then)
        if done.wait(5):
            return
        while not done.is_set():
            for flags in (os.O_WRONLY, os.O_RDONLY):
                try:
                    os.close(os.open(path, flags | os.O_NONBLOCK))
                except OSError:
                    pass
            time.sleep(0.05)

    rescuer = threading.Thread(target=rescue, daemon=True)
    rescuer.start()
    start = time.monotonic()
    try:
        store = HistoryStore(tmp_path, "suql")
        added = store.add("suql", "SELECT 1")
        elapsed = time.monotonic() - start
    finally:
        done.set()
        rescuer.join(5)
    assert elapsed < 3, f"waited {elapsed:.1f} s on a FIFO"
    assert added and store.texts("suql") == ["SELECT 1"]
    [warning] = store.warnings
    assert "not a regular file" in warning and "session only" in warning
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


# --- lines ----------------------------------------------------------------------------------------------------------


def test_a_deeply_nested_line_is_a_bad_line_not_a_traceback(tmp_path: Path) -> None:
    nested = "[" * 100_000 + "]" * 100_000 + "\n"
    original = (line("SELECT 1") + nested + line("SELECT 2")).encode()
    (tmp_path / "suql.jsonl").write_bytes(original)
    store = HistoryStore(tmp_path, "suql")
    assert store.texts("suql") == ["SELECT 1", "SELECT 2"]
    [warning] = store.warnings
    assert "1 of its lines is not a history entry" in warning
    assert (tmp_path / "suql.jsonl.bad").read_bytes() == original


def test_any_text_comes_back_after_a_restart(tmp_path: Path) -> None:
    """An entry holding a line separator of Unicode's (U+2028, a form feed, a carriage return) is one line of
    the file; a lone surrogate (which UTF-8 cannot hold) is written as a JSON escape, not a traceback."""
    texts = ["SELECT 'a\u2028b'", "x\ry", "p\x0cq\x1cr\x85s", "lone \udc80 surrogate"]
    store = HistoryStore(tmp_path, "suql")
    for text in texts:
        assert store.add("suql", text)
    assert store.warnings == []
    again = HistoryStore(tmp_path, "suql")
    assert again.texts("suql") == texts and again.warnings == []


# --- size: a bound on what is read, and on the file --------------------------------------------------------------

READ_BIG = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[2])
    from engines.settings import Settings
    from tui.history import HistoryStore

    def peak_kb():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))

    before = peak_kb()
    store = HistoryStore(sys.argv[1], "suql", max_bytes=Settings().history_max_bytes)
    grew = peak_kb() - before
    print(json.dumps({"grew_kb": grew, "n": len(store.entries), "last": store.entries[-1].text,
                      "warnings": store.warnings}))
    """
)


def test_a_huge_history_file_is_read_in_bounded_memory_and_kept_whole(tmp_path: Path) -> None:
    """The issue's 1 GB of history took 4.3 GB of memory to read.  Here 40 MB, a bound of 2 MiB (through the
    setting): reading takes a few MB and keeps the newest entries; the file as it was is set aside, whole."""
    folder = tmp_path / "history"
    folder.mkdir()
    path = folder / "suql.jsonl"
    filler = "x" * 1000
    with open(path, "w", encoding="utf-8") as f:
        for i in range(40_000):
            f.write(line(f"SELECT {i} -- {filler}"))
    size = path.stat().st_size
    cap = 2 * 1024 * 1024
    env = {**os.environ, "CS224V_HISTORY_MAX_BYTES": str(cap)}
    done = subprocess.run(
        [sys.executable, "-c", READ_BIG, str(folder), str(ROOT)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["grew_kb"] * 1024 < 8 * cap, out["grew_kb"]  # (all of it: 40 MB, read and decoded, several times)
    assert out["last"] == f"SELECT 39999 -- {filler}" and 0 < out["n"] <= 500
    [warning] = out["warnings"]
    assert f"bigger than {cap} bytes" in warning and "history_max_bytes" in warning
    assert str(folder / "suql.jsonl.bad") in warning
    assert (folder / "suql.jsonl.bad").stat().st_size == size  # nothing lost
    assert path.stat().st_size <= cap // 2
    again = HistoryStore(folder, "suql", max_bytes=cap)
    assert again.warnings == [] and again.texts("suql")[-1] == f"SELECT 39999 -- {filler}"
    assert Settings().history_max_bytes == MAX_BYTES == 8 * 1024 * 1024


def test_the_store_keeps_its_file_under_the_bound(tmp_path: Path) -> None:
    cap = 16 * 1024
    store = HistoryStore(tmp_path, "suql", max_bytes=cap)
    for i in range(400):
        assert store.add("suql", f"SELECT {i} -- " + "y" * 200)
        assert (tmp_path / "suql.jsonl").stat().st_size <= cap
    assert store.warnings == []
    again = HistoryStore(tmp_path, "suql", max_bytes=cap)
    assert again.warnings == [] and again.texts("suql") == store.texts("suql")
    assert again.texts("suql")[-1].startswith("SELECT 399 ")
    assert not store.add("suql", "z" * (cap // 2))  # an entry the file could not keep is not recorded


# --- two app instances -----------------------------------------------------------------------------------------

INSTANCE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from tui.history import HistoryStore

    stores = {}
    for command in sys.stdin:
        verb, tab, limit, arg = command.split(maxsplit=3)
        store = stores.setdefault(tab, HistoryStore(sys.argv[1], tab, limit=int(limit)))
        if verb == "add":
            store.add("box", arg.strip())
        elif verb == "burst":
            for i in range(int(arg)):
                store.add("box", f"{sys.argv[3]} burst {i}")
        assert not store.warnings, store.warnings
        print("\\t".join(store.texts("box")), flush=True)
    """
)


def test_two_instances_share_the_history_and_lose_no_entry(tmp_path: Path) -> None:
    """Two app instances (two processes) take turns with one tab's history: each trim starts from the file as it
    is, not from an instance's own copy, so the file holds the newest entries of both; then both write as fast
    as they can at once: every entry is there, each line whole."""
    instances = {
        name: subprocess.Popen(
            [sys.executable, "-c", INSTANCE, str(tmp_path), str(ROOT), name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("A", "B")
    }

    def send(name: str, command: str) -> None:
        stdin = instances[name].stdin
        assert stdin is not None
        stdin.write(command + "\n")
        stdin.flush()

    def answer(name: str) -> list[str]:
        stdout = instances[name].stdout
        assert stdout is not None
        got = stdout.readline()
        assert got, instances[name].stderr.read() if instances[name].stderr else ""
        return got.rstrip("\n").split("\t")

    try:
        limit, turns = 30, 50
        order = []
        for i in range(turns):
            for name in ("A", "B"):
                send(name, f"add suql {limit} {name} run {i}")
                order.append(f"{name} run {i}")
                seen = answer(name)
                assert seen == order[-limit:]  # what this instance walks: both's runs, the newest
        for name in ("A", "B"):
            send(name, "burst kg 10000 300")
        bursts = {name: answer(name) for name in ("A", "B")}
    finally:
        for proc in instances.values():
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=30)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
    assert all(proc.returncode == 0 for proc in instances.values())
    assert HistoryStore(tmp_path, "suql", limit=limit).texts("box") == order[-limit:]
    kg = tmp_path / "kg.jsonl"
    runs = [json.loads(raw)["text"] for raw in kg.read_text(encoding="utf-8").splitlines()]  # each line whole
    assert sorted(runs) == sorted(f"{name} burst {i}" for name in "AB" for i in range(300))
    for name in ("A", "B"):
        mine = [r for r in runs if r.startswith(name)]
        assert mine == [f"{name} burst {i}" for i in range(300)]  # in order
        assert set(bursts[name]) <= set(runs)
