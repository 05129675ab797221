"""The persistent answer cache."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from engines.llm.cache import FILENAME, AnswerCache, text_digest
from engines.settings import Settings

TEXT = "The patio is heated. Dogs are welcome."
QUESTION = "Is there a patio?"
BACKEND = "claude|claude-sonnet-5-5,row=claude-haiku-4-5|p1"
PAYLOAD = {"value": "Yes", "evidence": ["The patio is heated."]}
FN = "answer"

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def cache(tmp_path: Path):
    with AnswerCache(tmp_path) as c:
        yield c


def corrupt_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(FILENAME + ".corrupt-*"))


# --- keys ------------------------------------------------------------------


def test_text_digest_is_sha256_hex() -> None:
    assert text_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_hit_and_miss_on_each_key_part(cache: AnswerCache) -> None:
    assert cache.get(FN, TEXT, QUESTION, BACKEND) is None
    cache.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
    assert cache.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD
    # each part of the key matters, and the question is taken exactly as asked: a backend is shown
    # the exact text, so another spelling may get another answer
    assert cache.get("summary", TEXT, QUESTION, BACKEND) is None
    assert cache.get(FN, TEXT, "is there a patio?", BACKEND) is None
    assert cache.get(FN, TEXT, "Is there a patio", BACKEND) is None
    assert cache.get(FN, TEXT, "Is there a  patio?", BACKEND) is None
    assert cache.get(FN, TEXT, "Is there a patio?".replace("a", "\u0430", 1), BACKEND) is None  # Cyrillic a
    assert cache.get(FN, TEXT + " ", QUESTION, BACKEND) is None  # the text is hashed exactly
    assert cache.get(FN, "Dogs are welcome.", QUESTION, BACKEND) is None
    assert cache.get(FN, TEXT, "Is there a garden?", BACKEND) is None
    assert cache.get(FN, TEXT, QUESTION, "claude|claude-sonnet-5-5,row=claude-haiku-4-5|p2") is None
    assert cache.get(FN, TEXT, QUESTION, "sim|sim|p1") is None
    assert len(cache) == 1


def test_put_replaces_and_clear_empties(cache: AnswerCache) -> None:
    cache.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
    cache.put(FN, TEXT, QUESTION, BACKEND, {"value": None, "evidence": []})
    assert len(cache) == 1
    assert cache.get(FN, TEXT, QUESTION, BACKEND) == {"value": None, "evidence": []}
    cache.put(FN, "other", QUESTION, BACKEND, PAYLOAD)
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0 and cache.get(FN, TEXT, QUESTION, BACKEND) is None


def test_payload_must_be_a_json_object(cache: AnswerCache) -> None:
    with pytest.raises(TypeError):
        cache.put(FN, TEXT, QUESTION, BACKEND, ["Yes"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cache.put(FN, TEXT, QUESTION, BACKEND, {"value": object()})
    assert len(cache) == 0


def test_unicode_payload_round_trips(cache: AnswerCache) -> None:
    payload = {"value": "Crème brûlée 🍮", "evidence": ["Try the crème brûlée."], "n": 3, "ok": True}
    cache.put(FN, "Try the crème brûlée.", "Which dessert?", BACKEND, payload)
    assert cache.get(FN, "Try the crème brûlée.", "Which dessert?", BACKEND) == payload


# --- persistence -----------------------------------------------------------


def test_entries_persist_across_instances(tmp_path: Path) -> None:
    first = AnswerCache(tmp_path)
    first.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
    first.close()
    first.close()  # idempotent
    with AnswerCache(tmp_path) as second:
        assert second.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD
        assert len(second) == 1
    assert (tmp_path / FILENAME).is_file()


def test_two_open_instances_see_each_other(tmp_path: Path) -> None:
    with AnswerCache(tmp_path) as a, AnswerCache(tmp_path) as b:
        a.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
        assert b.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD


def test_the_folder_is_created(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "er"
    with AnswerCache(folder) as c:
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
    assert (folder / FILENAME).is_file()


def test_default_folder_comes_from_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "from-env"))
    with AnswerCache.from_settings(Settings()) as c:
        assert c.folder == tmp_path / "from-env"
        assert c.path.parent.is_dir()


def test_an_unusable_folder_is_one_warning_and_no_cache(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with caplog.at_level("WARNING", logger="engines.llm.cache"), AnswerCache(blocker) as c:
        assert not c.readable and not c.writable
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
        assert c.get(FN, TEXT, QUESTION, BACKEND) is None and len(c) == 0
    [line] = caplog.messages
    assert "cannot create the folder" in line and "running uncached" in line
    assert blocker.read_text() == "not a folder"


def test_using_a_closed_cache_raises(tmp_path: Path) -> None:
    c = AnswerCache(tmp_path)
    c.close()
    with pytest.raises(ValueError, match="closed"):
        c.get(FN, TEXT, QUESTION, BACKEND)


# --- damage ----------------------------------------------------------------


def test_a_garbage_file_is_moved_aside(tmp_path: Path) -> None:
    garbage = b"this is not an sqlite database\n" * 200
    (tmp_path / FILENAME).write_bytes(garbage)
    with AnswerCache(tmp_path) as c:
        assert len(c) == 0
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
        assert c.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD
    [aside] = corrupt_files(tmp_path)
    assert aside.read_bytes() == garbage


def test_a_truncated_file_is_moved_aside(tmp_path: Path) -> None:
    with AnswerCache(tmp_path) as c:
        for i in range(500):
            c.put(FN, f"text {i} " + "x" * 500, QUESTION, BACKEND, PAYLOAD)
    path = tmp_path / FILENAME
    size = path.stat().st_size
    assert size > 16_384
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with AnswerCache(tmp_path) as c:
        assert len(c) == 0
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
        assert c.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD
    assert len(corrupt_files(tmp_path)) == 1


def test_a_file_of_another_layout_is_moved_aside(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / FILENAME)
    with conn:
        conn.execute("CREATE TABLE answers (k TEXT, v TEXT)")
    conn.close()
    with AnswerCache(tmp_path) as c:
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
        assert c.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD
    assert len(corrupt_files(tmp_path)) == 1


def test_an_empty_file_is_a_fresh_cache(tmp_path: Path) -> None:
    (tmp_path / FILENAME).write_bytes(b"")
    with AnswerCache(tmp_path) as c:
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
        assert len(c) == 1
    assert corrupt_files(tmp_path) == []


CRASHING_WRITER = textwrap.dedent(
    """
    import json, sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA cache_size = 2")  # small page cache: uncommitted pages spill into the WAL
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE answers SET payload = '{\\"value\\": \\"half-written\\"}'")
    conn.execute("DELETE FROM answers WHERE question = 'q 0'")
    for i in range(3000):
        conn.execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("answer", "%064x" % i, "new question", "b", json.dumps({"value": "x" * 300}), "", 0.0),
        )
    print("mid-write", flush=True)
    time.sleep(60)  # killed here, inside the transaction
    """
)


def test_a_crash_mid_write_leaves_previous_entries_intact(tmp_path: Path) -> None:
    with AnswerCache(tmp_path) as c:
        for i in range(20):
            c.put(FN, TEXT, f"q {i}", BACKEND, {"value": str(i), "evidence": []})
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHING_WRITER, str(tmp_path / FILENAME)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "mid-write"
        assert (tmp_path / (FILENAME + "-wal")).stat().st_size > 0  # the write had reached the disk
    finally:
        proc.kill()  # SIGKILL: no cleanup, no rollback by the writer
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    with AnswerCache(tmp_path) as c:
        assert len(c) == 20
        for i in range(20):
            assert c.get(FN, TEXT, f"q {i}", BACKEND) == {"value": str(i), "evidence": []}
        c.put(FN, TEXT, "after the crash", BACKEND, PAYLOAD)
        assert c.get(FN, TEXT, "after the crash", BACKEND) == PAYLOAD
    assert corrupt_files(tmp_path) == []
    conn = sqlite3.connect(tmp_path / FILENAME)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()


def test_a_process_exiting_inside_a_put_leaves_the_cache_intact(tmp_path: Path) -> None:
    """The cache's own write path, interrupted by ``os._exit`` between the insert and the commit."""
    script = textwrap.dedent(
        """
        import os, sqlite3, sys
        sys.path.insert(0, sys.argv[2])
        from engines.llm import cache as cache_module

        class DyingConnection(sqlite3.Connection):
            armed = False

            def __exit__(self, *exc):  # `with conn:` commits here
                if DyingConnection.armed:
                    os._exit(3)
                return super().__exit__(*exc)

        real_connect = sqlite3.connect
        sqlite3.connect = lambda *a, **k: real_connect(*a, factory=DyingConnection, **k)
        c = cache_module.AnswerCache(sys.argv[1])
        DyingConnection.armed = True
        c.put("answer", "text", "new question", "b", {"value": "never committed"})
        """
    )
    with AnswerCache(tmp_path) as c:
        c.put(FN, TEXT, QUESTION, BACKEND, PAYLOAD)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(ROOT)], timeout=30)
    assert done.returncode == 3
    with AnswerCache(tmp_path) as c:
        assert len(c) == 1
        assert c.get(FN, TEXT, QUESTION, BACKEND) == PAYLOAD
        assert c.get(FN, "text", "new question", "b") is None
    assert corrupt_files(tmp_path) == []


# --- threads ---------------------------------------------------------------


def test_concurrent_puts_and_gets_from_threads(cache: AnswerCache) -> None:
    threads, per_thread = 8, 40
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                cache.put(FN, f"text {t} {i}", QUESTION, BACKEND, {"value": f"{t}/{i}"})
                assert cache.get(FN, f"text {t} {i}", QUESTION, BACKEND) == {"value": f"{t}/{i}"}
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    assert errors == []
    assert len(cache) == threads * per_thread
    assert cache.get(FN, "text 7 39", QUESTION, BACKEND) == {"value": "7/39"}
