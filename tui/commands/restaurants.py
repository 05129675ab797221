"""Restaurant commands: ``ask`` (the Text-to-SQL agent) and ``sql`` (the sandbox)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tui.commands import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_REFUSED,
    BadInput,
    add_out_option,
    add_read_options,
    nonempty_text,
    print_table,
    write_out,
)
from tui.commands.usage_json import metered, take_usage

if TYPE_CHECKING:
    from engines.api import CourseSession, RestaurantSession


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    ask = sub.add_parser(
        "ask",
        parents=[common],
        help="ask the Text-to-SQL agent (restaurants, or your own data with --db)",
        description="Run the Text-to-SQL agent. Several questions run as turns of one dialogue.",
    )
    ask.add_argument("questions", nargs="+", metavar="QUESTION")
    ask.add_argument(
        "--json",
        action="store_true",
        help='print {"sql", "readback", "reply", "rows", "calls", "not_understood"} (a list for several questions)',
    )
    ask.add_argument(
        "--suql",
        action="store_true",
        help="the SUQL agent (lecture 7 §4): text-only wishes become answer() conditions, run by the SUQL compiler",
    )
    ask.add_argument(
        "--world",
        choices=("restaurants", "courses"),
        default="restaurants",
        help="what the agent talks about: the restaurants (default) or the course assistant's C1-C6 "
        "(notes 002-003; always the SUQL agent)",
    )
    add_db_option(ask)
    add_out_option(ask)
    ask.set_defaults(
        handler=metered(
            lambda settings, args: _ask(
                settings,
                args.questions,
                as_json=args.json,
                suql=args.suql,
                world=args.world,
                db=args.db,
                out=args.out,
            )
        )
    )

    sql = sub.add_parser(
        "sql",
        parents=[common],
        help="run one read-only SQL statement through the sandbox",
        description="Run SQL on the restaurant database (or your own data with --db) through the sandbox. "
        "A refused or invalid statement exits 2.",
    )
    sql.add_argument("statement", metavar="SQL")
    sql.add_argument("--json", action="store_true", help='print {"rows": [...]} or {"error": "..."}')
    add_db_option(sql)
    add_out_option(sql)
    sql.set_defaults(
        handler=lambda settings, args: _sql(settings, args.statement, as_json=args.json, db=args.db, out=args.out)
    )


DB_HELP = (
    "your own data instead of the built-in world: a CSV, TSV, Parquet or JSON-lines file, a folder of them "
    "(one table per file, named after the file), a DuckDB database file, or a postgresql:// URL; opened read-only"
)


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="SOURCE", default=None, help=DB_HELP)
    add_read_options(parser)


def open_data(settings, db: str):
    """The user's data source (a TableSource), or BadInput saying why it cannot be opened (exit 2, never a
    traceback)."""
    from engines.api import DataSourceError, open_tables

    try:
        return open_tables(settings, db=db)
    except DataSourceError as e:
        raise BadInput(str(e)) from e


# --- ask ---------------------------------------------------------------------------------------


def _ask(
    settings,
    questions: Sequence[str],
    *,
    as_json: bool,
    suql: bool = False,
    world: str = "restaurants",
    db: str | None = None,
    out=None,
) -> int:
    from engines.api import CallFinished, CallStarted, Event

    for q in questions:
        nonempty_text("question", q)
    if db is not None:
        if world != "restaurants":
            raise BadInput("--db replaces the built-in world: give --db or --world, not both")
        from engines.api import open_source_agent

        data = open_data(settings, db)
        session: RestaurantSession | CourseSession = open_source_agent(data, settings, suql=suql)
    elif world == "courses":
        from engines.api import open_courses_agent

        session = open_courses_agent(settings)
    else:
        from engines.api import open_restaurants

        session = open_restaurants(settings, suql=suql)
    agent = session.agent
    results = []
    usages: list[dict] = []
    try:
        for q in questions:
            if as_json:
                turn = agent.ask(q)
            else:
                print(f"\n> {q}")

                def show(event: Event) -> None:
                    if isinstance(event, CallFinished):
                        cached = ", cached" if event.cached else ""
                        print(f"  · {event.function}: {event.verdict}  [{event.latency_s * 1000:.0f} ms{cached}]")
                    elif isinstance(event, CallStarted) and settings.sim_latency_s > 0:
                        print(f"  · {event.function} …", end="\r")

                turn = agent.ask(q, emit=show)
                _print_turn(turn)
            results.append(turn)
            usages.append(take_usage())  # the calls of this question
    finally:
        session.close()
    if out is not None:  # the rows of the last question that returned a table
        last = next((t for t in reversed(results) if t.columns), None)
        if last is None:
            raise BadInput("--out: no question returned rows to write")
        write_out(out, last.columns, last.rows)
    if as_json:
        payload = [{**t.to_json(), "usage": u} for t, u in zip(results, usages)]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, ensure_ascii=False))
    return EXIT_ERROR if any(t.error for t in results) else EXIT_OK


def _print_turn(turn) -> None:
    print(f"  classifier: {'database' if turn.needs_database else 'no database'} — {turn.route_reason}")
    if turn.parsed_sql:
        print(f"  parsed SQL: {turn.parsed_sql}")
    if turn.sql and turn.sql != turn.parsed_sql:
        print(f"  after classify(): {turn.sql}")
    if turn.readback:
        print(f"  read-back: {turn.readback}")
    if turn.not_understood:
        said = ", ".join(f"'{p}'" for p in turn.not_understood)
        print(f"  not understood: {said} (the rows below leave it out)")
    if turn.columns:
        print_table(turn.columns, turn.rows)
    print(f"\n{turn.reply}")


# --- sql ---------------------------------------------------------------------------------------


def _sql(settings, statement: str, *, as_json: bool, db: str | None = None, out=None) -> int:
    from engines.api import SqlError, open_tables, run_sql

    tables = open_data(settings, db) if db is not None else open_tables(settings, world="restaurants")
    try:
        # run_sql is annotated with the DuckDB Sandbox but uses only the SqlGate's check, run and column_types
        result, sentence = run_sql(tables.sandbox, statement)  # type: ignore[arg-type]
    except SqlError as e:
        if as_json:
            print(json.dumps({"error": str(e)}, ensure_ascii=False))
        else:
            print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        tables.close()
    write_out(out, result.columns, result.rows)
    if as_json:
        print(json.dumps({"rows": result.records(), "truncated": result.truncated}, indent=2, ensure_ascii=False))
    else:
        print(sentence)
        print_table(result.columns, result.rows)
        if result.truncated:
            print(f"  (stopped at the row cap of {settings.row_cap})")
    return EXIT_OK
