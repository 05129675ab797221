"""Fuzz ``sql``: hostile statements through the sandbox (as ``cs224v-tui sql`` runs them) and the
CLI command itself.  No traceback, no hang, no network, no file read, the world's data intact."""

from __future__ import annotations

from hypothesis import example, given

from tests.fuzz.properties import assert_cli, assert_engine_outcome, assert_offline, fuzz_settings
from tests.fuzz.strategies import fill, sql_statement


@fuzz_settings(80)
@given(statement=sql_statement())
@example(statement="SELECT unnest(range(1000000000))")  # issue 10 item 3: a memory bomb
@example(statement="SELECT repeat('x', 1000000000)")  # issue 10 item 3: ran past timeout + 5 s (found here)
@example(statement="SELECT * FROM read_csv('{URL}/x.csv')")
@example(statement='SELECT name AS "x"" VARCHAR); UPDATE restaurants SET name = \'PWNED\'; --" FROM restaurants')
def test_sql_statements(worker, recorder, canary, statement):
    q = fill(statement, recorder.url, str(canary))
    before = recorder.count()
    out = worker.call("sql", q).result
    assert_engine_outcome(out, q)
    assert_offline(recorder, before, q)


@fuzz_settings(6)
@given(statement=sql_statement())
def test_cli_sql(worker, recorder, canary, statement):
    q = fill(statement, recorder.url, str(canary))
    argv = ["sql", q, "--json"]
    before = recorder.count()
    assert_cli(worker.call("cli", argv).result, argv, as_json=True)
    assert_offline(recorder, before, q)
