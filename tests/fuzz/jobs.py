"""Jobs the fuzz worker runs (see :mod:`tests.fuzz.harness`).  Each opens its session once per
worker (a module's examples share it) and returns plain data.  An ``EngineError`` is a documented
outcome and comes back as data; any other exception escapes to the harness as a traceback."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import duckdb
from sqlglot import exp

from engines.errors import EngineError

_STATE: dict[str, Any] = {}


def _settings():
    from engines.settings import Settings

    return Settings()  # the worker's environment is hermetic: sim backend, temporary cache, 1 s timeout


def _once(key: str, make):
    if key not in _STATE:
        _STATE[key] = make()
    return _STATE[key]


# --- data intact -------------------------------------------------------------------------------

SCRATCH = ("scratch", "temp")


def _raw_connection(sandbox) -> duckdb.DuckDBPyConnection:
    con = getattr(sandbox, "_con", None)
    if isinstance(con, duckdb.DuckDBPyConnection):
        return con
    for value in vars(sandbox).values():  # the sandbox's layout may change; any connection it holds
        if isinstance(value, duckdb.DuckDBPyConnection):
            return value
    raise AssertionError("cannot find the sandbox's DuckDB connection to fingerprint its data")


def fingerprint(sandbox) -> dict[str, Any]:
    """Everything a query could change: each table's row count and row-hash sum, the views, the
    user-defined functions and macros, the attached databases and the locked settings."""
    cur = _raw_connection(sandbox).cursor()
    try:

        def is_scratch(*names: str) -> bool:
            return any(n and any(s in n.lower() for s in SCRATCH) for n in names)

        tables = cur.execute(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() WHERE NOT internal ORDER BY ALL"
        ).fetchall()
        out: dict[str, Any] = {"tables": {}, "leftover_scratch_tables": []}
        for db, schema, name in tables:
            if is_scratch(db, schema):
                out["leftover_scratch_tables"].append(f"{db}.{schema}.{name}")
                continue
            table = exp.table_(name, db=schema, catalog=db, quoted=True, alias=exp.to_identifier("t", quoted=True))
            query = exp.select("count(*)", 'sum(hash("t"))').from_(table).sql("duckdb")
            count, digest = cur.execute(query).fetchone()
            out["tables"][f"{db}.{schema}.{name}"] = (int(count), str(digest))
        out["views"] = [
            tuple(map(str, r))
            for r in cur.execute(
                "SELECT database_name, schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY ALL"
            ).fetchall()
            if not is_scratch(str(r[0]), str(r[1]))
        ]
        out["functions"] = [
            tuple(map(str, r))
            for r in cur.execute(
                "SELECT DISTINCT database_name, schema_name, function_name, function_type FROM duckdb_functions() "
                "WHERE NOT internal ORDER BY ALL"
            ).fetchall()
        ]
        out["databases"] = [
            str(r[0])
            for r in cur.execute(
                "SELECT database_name FROM duckdb_databases() WHERE NOT internal ORDER BY 1"
            ).fetchall()
            if not is_scratch(str(r[0]))
        ]
        out["settings"] = [
            tuple(map(str, r))
            for r in cur.execute(
                "SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', 'lock_configuration', "
                "'autoload_known_extensions', 'autoinstall_known_extensions', 'allow_community_extensions') ORDER BY 1"
            ).fetchall()
        ]
        return out
    finally:
        cur.close()


def _check_intact(key: str, sandbox) -> dict[str, Any]:
    """The difference between the sandbox now and when its session opened ({} when intact)."""
    base_key = f"{key}:fingerprint"
    now = fingerprint(sandbox)
    before = _STATE.setdefault(base_key, now)
    diff = {k: {"before": before[k], "after": now[k]} for k in before if before[k] != now[k]}
    if diff:  # start the next example on fresh data (so hypothesis can replay and shrink this one)
        _STATE.pop(base_key, None)
        session = _STATE.pop(key, None)
        try:
            session.close()
        except Exception:
            pass
    return diff


def _error(e: EngineError) -> dict[str, Any]:
    return {"outcome": "error", "error_type": f"{type(e).__module__}.{type(e).__qualname__}", "message": str(e)[:500]}


# --- the restaurant sandbox (sql) -----------------------------------------------------------------


def _restaurant_sandbox():
    from engines.sql.sandbox import Sandbox
    from worlds import restaurants

    settings = _settings()
    world = restaurants.build().world
    return Sandbox.create(
        world.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s
    )  # as `cs224v-tui sql` does


def sql(statement: str) -> dict[str, Any]:
    from engines.sql.agent import run_sql

    sandbox = _once("sql", _restaurant_sandbox)
    _check_intact("sql", sandbox)  # the baseline, on the first call
    try:
        result, sentence = run_sql(sandbox, statement)
        out: dict[str, Any] = {
            "outcome": "rows",
            "rows": len(result.rows),
            "sentence": sentence[:200],
            "text": json.dumps(result.records(), default=str, ensure_ascii=False)[:20000],
        }
    except EngineError as e:
        out = _error(e)
    out["changed"] = _check_intact("sql", sandbox)
    return out


# --- SUQL ----------------------------------------------------------------------------------------


def suql(query: str, mode: str) -> dict[str, Any]:
    from engines.compose import open_suql

    session = _once("suql", lambda: open_suql(_settings()))
    _check_intact("suql", session.sandbox)
    try:
        result = session.engine.run(query, mode=mode)
        json.dumps(result.to_json(), default=str)  # what `suql --json` prints must serialise
        out: dict[str, Any] = {"outcome": "rows", "rows": len(result.rows), "answer_calls": result.stats.answer_calls}
    except EngineError as e:
        out = _error(e)
    out["changed"] = _check_intact("suql", session.sandbox)
    return out


# --- the agents (ask) ----------------------------------------------------------------------------


def ask(utterances: list[str], use_suql: bool) -> dict[str, Any]:
    from engines.compose import open_restaurants

    key = "ask-suql" if use_suql else "ask"
    session = _once(key, lambda: open_restaurants(_settings(), suql=use_suql))
    _check_intact(key, session.sandbox)
    session.agent.reset()
    turns = []
    try:
        for u in utterances:
            turn = session.agent.ask(u)
            json.dumps(turn.to_json(), default=str)  # what `ask --json` prints must serialise
            turns.append({"error": turn.error, "sql": turn.sql, "rows": len(turn.rows)})
        out: dict[str, Any] = {"outcome": "ok", "turns": turns}
    except EngineError as e:
        out = _error(e)
        out["turns"] = turns
    out["changed"] = _check_intact(key, session.sandbox)
    return out


# --- SPARQL ----------------------------------------------------------------------------------------


def sparql(query: str, store: str) -> dict[str, Any]:
    from engines.kg import open_kg

    endpoint = _once(f"kg-{store}", lambda: open_kg(_settings(), store=store))
    try:
        result = endpoint.execute(query)
        return {
            "outcome": result.feedback.value,
            "message": result.message[:300],
            "text": json.dumps(result.to_json(), ensure_ascii=False)[:50000],
        }
    except EngineError as e:
        return _error(e)


# --- SPINACH -------------------------------------------------------------------------------------


def spinach(question: str, store: str, budget: int, total_budget: int) -> dict[str, Any]:
    from engines.kg import open_kg
    from engines.llm.client import llm_from_settings
    from engines.spinach.agent import AgentOptions, SpinachAgent

    endpoint = _once(f"kg-{store}", lambda: open_kg(_settings(), store=store))
    llm = _once("llm", lambda: llm_from_settings(_settings()))
    agent = SpinachAgent(endpoint, llm, AgentOptions(budget=budget, total_budget=total_budget))
    try:
        trajectory = agent.run(question)
        text = json.dumps(trajectory.to_json(), ensure_ascii=False)
        return {
            "outcome": trajectory.finish,
            "error": trajectory.error,
            "steps": len(trajectory.steps),
            "text": text[:20000],
        }
    except EngineError as e:
        return _error(e)


# --- the CLI ---------------------------------------------------------------------------------------


def cli(argv: list[str]) -> dict[str, Any]:
    """``cs224v-tui ARGV`` in-process.  stdout is strict UTF-8 and stderr backslash-escaping, as a
    real UTF-8 terminal or pipe is, so printing what cannot be encoded shows up as it would."""
    from tui.cli import main

    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace", write_through=True)
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        finally:
            out.flush()
            err.flush()
    return {
        "code": code,
        "stdout": out_bytes.getvalue().decode("utf-8", "replace"),
        "stderr": err_bytes.getvalue().decode("utf-8", "replace"),
    }


def ping() -> str:
    return "pong"


def sleep(seconds: float) -> None:  # the harness's own test: a job that outlasts its limit
    import time

    time.sleep(seconds)


def abort() -> None:  # the harness's own test: a process that dies
    import os

    os.abort()


def raise_plain() -> None:  # the harness's own test: a traceback
    raise KeyError("not an EngineError")


__all__ = ["sql", "suql", "ask", "sparql", "spinach", "cli", "fingerprint", "ping"]
