"""The harness itself: it must see a hang, a crash, a traceback and a change of data, or the fuzz
tests could not fail."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.fuzz import jobs
from tests.fuzz.harness import FuzzFailure


def test_the_worker_reports_hangs_crashes_and_tracebacks_and_recovers(worker):
    assert worker.call("ping").result == "pong"
    with pytest.raises(FuzzFailure, match="^hang"):
        worker.call("sleep", 30.0, limit_s=0.5)
    with pytest.raises(FuzzFailure, match="^crash"):
        worker.call("abort")
    with pytest.raises(FuzzFailure, match="(?s)^traceback.*KeyError"):
        worker.call("raise_plain")
    assert worker.call("ping").result == "pong" and worker.restarts == 2


def test_the_fingerprint_sees_every_kind_of_change():
    import duckdb

    con = duckdb.connect(":memory:")
    holder = SimpleNamespace(_con=con)  # fingerprint() reads the sandbox's connection; any holder of one will do
    try:
        con.execute("CREATE TABLE t (a INT, b VARCHAR[])")
        con.execute("INSERT INTO t VALUES (1, ['x']), (2, NULL)")
        base = jobs.fingerprint(holder)
        assert jobs.fingerprint(holder) == base
        for change in (
            "UPDATE t SET b = ['y'] WHERE a = 1",
            "INSERT INTO t VALUES (3, [])",
            "CREATE TABLE u (x INT)",
            "CREATE VIEW v AS SELECT 1",
            "CREATE MACRO lower(x) AS 'PWNED'",
            "ATTACH ':memory:' AS pwned",
            "CREATE TABLE pwned.main.w (x INT)",
            "DROP TABLE u",
            "SET enable_external_access = false",
        ):
            con.execute(change)
            now = jobs.fingerprint(holder)
            assert now != base, change
            base = now
    finally:
        con.close()
