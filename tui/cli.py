"""The ``cs224v-tui`` command: the app with no arguments, headless subcommands for scripts.

    cs224v-tui                         open the app
    cs224v-tui ask "QUESTION" [...]    run the Text-to-SQL agent (several questions = one dialogue)
    cs224v-tui sql "SQL"               run SQL through the sandbox
    cs224v-tui screenshots [--out D]   write an SVG of every tab

Engines are imported lazily, so ``--help`` is instant and the CLI never loads textual
unless it opens the app or takes screenshots.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

EXIT_OK, EXIT_ERROR, EXIT_REFUSED = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    # Options may stand before or after the command; SUPPRESS keeps a subparser from
    # overwriting a value given before it with its own default.
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    g = common.add_argument_group("LLM and data (also settable as CS224V_* environment variables)")
    g.add_argument("--backend", choices=("sim", "claude"), help="the LLM: sim (offline, default) or claude (needs ANTHROPIC_API_KEY)")
    g.add_argument("--seed", type=int, help="seed of the simulated LLM (default 224)")
    g.add_argument("--latency", type=float, metavar="SECONDS", help="simulated seconds per LLM call (sim backend)")
    g.add_argument("--classify", choices=("exact", "similarity", "llm_all", "retrieve_llm"), help="how enum values are classified (default llm_all)")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the persistent answer cache")

    p = argparse.ArgumentParser(
        prog="cs224v-tui",
        description="Watch LLM agents query structured and hybrid data. With no command, opens the app.",
        parents=[common],
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    ask = sub.add_parser("ask", parents=[common], help="ask the Text-to-SQL agent (restaurants)",
                         description="Run the Text-to-SQL agent. Several questions run as turns of one dialogue.")
    ask.add_argument("questions", nargs="+", metavar="QUESTION")
    ask.add_argument("--json", action="store_true", help='print {"sql", "readback", "reply", "rows", "calls"} (a list for several questions)')

    sql = sub.add_parser("sql", parents=[common], help="run one read-only SQL statement through the sandbox",
                         description="Run SQL on the restaurant database through the sandbox. A refused or invalid statement exits 2.")
    sql.add_argument("statement", metavar="SQL")
    sql.add_argument("--json", action="store_true", help='print {"rows": [...]} or {"error": "..."}')

    shots = sub.add_parser("screenshots", parents=[common], help="write an SVG screenshot of every tab")
    shots.add_argument("--out", type=Path, default=Path("screenshots"), help="folder for the SVG files (default: screenshots/)")
    return p


def _settings(args: argparse.Namespace):
    from engines.settings import Settings

    given = vars(args)
    names = {"backend": "backend", "seed": "seed", "latency": "sim_latency_s", "classify": "classify_method"}
    overrides: dict[str, Any] = {field: given[opt] for opt, field in names.items() if opt in given}
    if given.get("no_cache"):
        overrides["cache_enabled"] = False
    return Settings(**overrides)  # validated; the environment fills what the command line leaves


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from pydantic import ValidationError

    from engines.errors import EngineError

    try:
        settings = _settings(args)
        if args.command is None:
            from tui.app import run_app

            run_app(settings)
            return EXIT_OK
        if args.command == "ask":
            return _ask(settings, args.questions, as_json=args.json)
        if args.command == "sql":
            return _sql(settings, args.statement, as_json=args.json)
        if args.command == "screenshots":
            from tui.screenshots import export_screenshots

            for path in export_screenshots(args.out, settings):
                print(path)
            return EXIT_OK
    except ValidationError as e:
        print(f"cs224v-tui: invalid setting: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}", file=sys.stderr)
        return EXIT_REFUSED
    except EngineError as e:
        print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    return EXIT_OK


# --- ask ---------------------------------------------------------------------------------------


def _ask(settings, questions: Sequence[str], *, as_json: bool) -> int:
    from engines.events import CallFinished, CallStarted, Event
    from engines.sql.session import open_restaurants

    session = open_restaurants(settings)
    results = []
    try:
        for q in questions:
            if as_json:
                turn = session.agent.ask(q)
            else:
                print(f"\n> {q}")

                def show(event: Event) -> None:
                    if isinstance(event, CallFinished):
                        cached = ", cached" if event.cached else ""
                        print(f"  · {event.function}: {event.verdict}  [{event.latency_s * 1000:.0f} ms{cached}]")
                    elif isinstance(event, CallStarted) and settings.sim_latency_s > 0:
                        print(f"  · {event.function} …", end="\r")

                turn = session.agent.ask(q, emit=show)
                _print_turn(turn)
            results.append(turn)
    finally:
        session.close()
    if as_json:
        payload = [_turn_json(t) for t in results]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, ensure_ascii=False))
    return EXIT_ERROR if any(t.error for t in results) else EXIT_OK


def _turn_json(turn) -> dict[str, Any]:
    return {
        "question": turn.utterance,
        "needs_database": turn.needs_database,
        "classifier": turn.route_reason,
        "parsed_sql": turn.parsed_sql,
        "sql": turn.sql,
        "readback": turn.readback,
        "reply": turn.reply,
        "rows": turn.records(),
        "truncated": turn.truncated,
        "error": turn.error,
        "calls": [
            {"function": c.function, "output": c.verdict, "latency_s": round(c.latency_s, 4), "cached": c.cached}
            for c in turn.calls
        ],
    }


def _print_turn(turn) -> None:
    print(f"  classifier: {'database' if turn.needs_database else 'no database'} — {turn.route_reason}")
    if turn.parsed_sql:
        print(f"  parsed SQL: {turn.parsed_sql}")
    if turn.sql and turn.sql != turn.parsed_sql:
        print(f"  after classify(): {turn.sql}")
    if turn.readback:
        print(f"  read-back: {turn.readback}")
    if turn.columns:
        _print_table(turn.columns, turn.rows)
    print(f"\n{turn.reply}")


_KEY_COLUMNS = ("name", "cuisines", "price", "rating", "num_reviews", "location")


def _print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = 20) -> None:
    from engines.sql.sandbox import to_jsonable

    hidden = 0
    if len(columns) > 7 and all(c in columns for c in _KEY_COLUMNS):  # SELECT *: the columns that matter
        keep = [columns.index(c) for c in _KEY_COLUMNS]
        hidden = len(columns) - len(keep)
        columns = [columns[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    width = max(20, min(160, _terminal_width()))
    per = max(6, (width - 3 * len(columns)) // max(1, len(columns)))

    def cell(v: Any) -> str:
        v = to_jsonable(v)
        text = ", ".join(map(str, v)) if isinstance(v, list) else ("" if v is None else str(v))
        return text if len(text) <= per else text[: per - 1] + "…"

    print("  " + " | ".join(cell(c) for c in columns))
    for row in rows[:limit]:
        print("  " + " | ".join(cell(v) for v in row))
    if len(rows) > limit:
        print(f"  … {len(rows) - limit} more rows")
    more = f"; {hidden} more columns with --json" if hidden else ""
    print(f"  ({len(rows)} row{'s' if len(rows) != 1 else ''}{more})")


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120


# --- sql ---------------------------------------------------------------------------------------


def _sql(settings, statement: str, *, as_json: bool) -> int:
    from engines.sql.agent import run_sql
    from engines.sql.sandbox import SqlError, Sandbox
    from worlds import restaurants

    world = restaurants.build()
    sandbox = Sandbox.create(world.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s)
    try:
        result, sentence = run_sql(sandbox, statement)
    except SqlError as e:
        if as_json:
            print(json.dumps({"error": str(e)}, ensure_ascii=False))
        else:
            print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        sandbox.close()
    if as_json:
        print(json.dumps({"rows": result.records(), "truncated": result.truncated}, indent=2, ensure_ascii=False))
    else:
        print(sentence)
        _print_table(result.columns, result.rows)
        if result.truncated:
            print(f"  (stopped at the row cap of {settings.row_cap})")
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
