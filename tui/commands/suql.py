"""SUQL commands: run a query in a mode, a file of queries, or the 60-query workload."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tui.commands import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_REFUSED,
    BadInput,
    add_out_option,
    int_at_least,
    print_table,
    read_text,
    shown,
    write_out,
)
from tui.commands import add_batch_option as _batch
from tui.commands.restaurants import add_db_option, open_data
from tui.commands.usage_json import metered, take_usage, with_usage

MAX_WORKLOAD = 1000


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "suql",
        parents=[common],
        help="run SUQL (SQL + answer() + summary()) with the optimising compiler",
        description="Run a SUQL query in one of the seven execution modes (A naive ... F retrieval cap, G cascade), "
        "a file of queries, or the seeded 60-query workload of lecture 7 §3.4.",
    )
    p.add_argument("query", nargs="?", metavar="QUERY", help="one SUQL query")
    p.add_argument(
        "--mode",
        default="E",
        type=str.upper,
        choices=[*"ABCDEFG", "B-DUCKDB"],
        help="execution mode (default E); B-duckdb: the query as written, run by DuckDB with answer() "
        "as a per-row function, for comparison with B",
    )
    p.add_argument("--world", default="restaurants", help="the world to query (default restaurants)")
    add_db_option(p)
    p.add_argument("--file", type=Path, help="run one query per line, or the 'Predicted SUQL' column of a CSV")
    p.add_argument("--workload", action="store_true", help="run the seeded 60-query workload in every mode")
    p.add_argument(
        "--compare",
        action="store_true",
        help="run QUERY in all seven modes A-G and tabulate calls, rows, rows to verify, wall time and "
        "whether each mode's rows agree with mode A's (exit 1 when a mode failed)",
    )
    p.add_argument(
        "--workload-seed",
        dest="workload_seed",
        type=int,
        default=None,
        help="seed of the workload alone (default: --seed when given, else 7)",
    )
    p.add_argument(
        "--queries",
        type=int_at_least(1, MAX_WORKLOAD),
        default=60,
        help=f"workload size (default 60, at most {MAX_WORKLOAD:,}: each query runs in all seven modes)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="settle the rows to verify: after the query (lazy by default, CS224V_SUQL_VERIFY), ask the "
        "remaining conditions of the rows whose WHERE is Unknown, their calls counted apart as verification calls",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--yes",
        action="store_true",
        help="with a paid backend, run even a query expected to make more LLM calls than "
        "CS224V_SUQL_CONFIRM_CALLS (each run still stops at CS224V_SUQL_CALL_BUDGET)",
    )
    add_out_option(p)
    p.set_defaults(handler=metered(_suql))
    _batch(p, lambda a: None if a.file is not None else "is for long runs: use it with --file")


def confirmation_needed(session, query: str, mode: str) -> str | None:
    """Why ``query`` must not run without ``--yes`` (see SuqlSession.calls_to_confirm); ``None`` when it may."""
    expected = session.calls_to_confirm(query, mode)
    if expected is None:
        return None
    settings = session.settings
    paid = "paid " if settings.backend == "claude" else ""  # a local model costs time, not money
    return (
        f"this query may make up to {expected:,} LLM calls to the {paid}{settings.backend} backend in mode {mode} "
        f"(more than CS224V_SUQL_CONFIRM_CALLS={settings.suql_confirm_calls:,}); nothing was sent. Run it again "
        f"with --yes to go ahead, or raise CS224V_SUQL_CONFIRM_CALLS (0: never ask)"
    )


def _suql(settings, args: argparse.Namespace) -> int:
    from engines.api import WORLDS, open_suql

    if args.compare and args.query is None:
        print("cs224v-tui suql: --compare compares the modes on one QUERY (not --file or --workload)", file=sys.stderr)
        return EXIT_REFUSED
    chosen = sum(x is not None and x is not False for x in (args.query, args.file, args.workload or None))
    if chosen != 1:
        print("cs224v-tui suql: give exactly one of QUERY, --file F or --workload", file=sys.stderr)
        return EXIT_REFUSED
    if args.world not in WORLDS:
        raise BadInput(f"unknown world {args.world[:60]!r} for --world: choose one of {', '.join(WORLDS)}")
    db = getattr(args, "db", None)
    if db is not None and args.world != "restaurants":
        raise BadInput("--db replaces the built-in world: give --db or --world, not both")
    if db is not None and args.workload:
        raise BadInput("--workload is the restaurant world's seeded workload: it does not run on --db")
    if getattr(args, "out", None) is not None and (args.compare or args.file or args.workload):
        raise BadInput("--out writes the rows of one QUERY: not with --compare, --file or --workload")
    if args.file is not None:  # read once, capped: a missing, unreadable or non-UTF-8 file says so before any work
        args.file_text = read_text(args.file, max_mb=settings.input_file_max_mb)
    if db is not None:
        session = open_suql(settings, source=open_data(settings, db))
    else:
        session = open_suql(settings, world=args.world)
    try:
        if args.workload:
            return _workload(session, args)
        if args.file:
            return _file(session, args)
        if args.compare:
            return _compare(session, args)
        return _one(session, args)
    finally:
        session.close()


def _one(session, args) -> int:
    from engines.api import CallFinished, Cancelled, EngineError

    def show(event) -> None:
        if not args.json and isinstance(event, CallFinished) and event.function in ("answer", "summary"):
            cached = " (cached)" if event.cached else ""
            verifying = " (verification)" if event.verification else ""
            step = f" ({event.phase})" if event.phase else ""  # mode G: the cascade's pilot, sample or band
            print(f"  · {event.row_key or ''} {event.function}: {event.verdict[:90]}{cached}{verifying}{step}")

    refusal = None if args.yes else confirmation_needed(session, args.query, args.mode)
    if refusal is not None:
        if args.json:
            print(json.dumps(with_usage({"error": refusal}), ensure_ascii=False))
        else:
            print(f"cs224v-tui: {refusal}", file=sys.stderr)
        return EXIT_REFUSED
    lazy = None
    try:
        result = session.engine.run(args.query, mode=args.mode, emit=show)
        if args.verify and not result.settled:
            lazy = result
            if not args.json:
                print(f"settling {result.unsettled} row(s) to verify (--verify):")
            result = session.engine.settle(result, emit=show)
    except Cancelled:
        return 130
    except EngineError as e:
        if args.json:
            print(json.dumps(with_usage({"error": str(e)}), ensure_ascii=False))
        else:
            print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_REFUSED
    write_out(getattr(args, "out", None), result.columns, result.rows)
    if args.json:
        out = result.to_json()
        if lazy is not None:  # what the lazy run asked, and what settling added
            out["settled_from"] = {"stats": lazy.stats.to_json(), "to_verify": len(lazy.to_verify)}
        print(json.dumps(with_usage(out), indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"DNF: {result.dnf or '(no answer() in the WHERE)'}")
    print("plan:")
    for line in result.plan.lines():
        print(f"  {line}")
    print(f"read-back: {result.readback}")
    if result.decided_by:  # mode G: who decided each row; the proxy's are never the LLM's verdict
        print_table((*result.columns, "decided by"), [(*r, by) for r, by in zip(result.rows, result.decided_by)])
        print(f"  ({result.decided_by.count('proxy')} rows matched by the proxy without an LLM call: see the plan)")
    else:
        print_table(result.columns, result.rows)
    if result.approximate:
        print("  (approximate: the retrieval cap of mode F left candidates unexamined)")
    if result.budget_exhausted:
        print(f"  ({result.message})")
    if result.to_verify:
        if result.settled:
            print(f"to verify ({len(result.to_verify)} rows whose condition is unknown):")
        else:
            print(
                f"to verify ({len(result.to_verify)} rows, {result.unsettled} not yet settled (lazy): may shrink when "
                "verified; --verify settles them):"
            )
        for rec in result.to_verify[:10]:
            label = rec.get("name") or next(
                (v for k, v in rec.items() if k not in ("_row", "unknown", "approximate", "not_asked", "settled")),
                rec.get("_row"),
            )
            not_asked = rec.get("not_asked")
            rest = f"; not asked {'; '.join(not_asked)}" if not_asked else ""
            print(f"  {label}: unknown {'; '.join(rec.get('unknown', []))}{rest}")
        if len(result.to_verify) > 10:
            print(f"  … and {len(result.to_verify) - 10} more")
    if lazy is not None:
        ls = lazy.stats
        print(
            f"lazy run: answer() calls {ls.answer_calls}, summary() calls {ls.summary_calls}, "
            f"{len(lazy.to_verify)} to verify unsettled; settling:"
        )
    s = result.stats
    print(
        f"answer() calls {s.answer_calls}, summary() calls {s.summary_calls}, cached {s.cached_calls}, "
        f"verification calls {s.verification_calls}, rows examined {s.rows_examined}, {s.wall_s:.2f} s"
    )
    return EXIT_OK


def _compare(session, args) -> int:
    """``suql --compare QUERY``: the query in every mode, one line a mode (see engines.suql.compare)."""
    from engines.api import MODES, Cancelled, EngineError, ModeCompared, compare_modes

    def fail(message: str) -> int:
        if args.json:
            print(json.dumps(with_usage({"error": message}), ensure_ascii=False))
        else:
            print(f"cs224v-tui: {message}", file=sys.stderr)
        return EXIT_REFUSED

    def show(event) -> None:
        if not args.json and isinstance(event, ModeCompared) and sys.stderr.isatty():
            print(f"\r  mode {event.outcome.mode} done", end="", file=sys.stderr, flush=True)

    try:
        refusal = (
            None
            if args.yes
            else next((r for r in (confirmation_needed(session, args.query, m) for m in MODES) if r is not None), None)
        )
        if refusal is not None:
            return fail(refusal)
        comparison = compare_modes(session.engine, args.query, emit=show)
    except Cancelled:
        return 130
    except EngineError as e:  # the query cannot compile: no mode ran
        return fail(str(e))
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(with_usage(comparison.to_json()), indent=2, ensure_ascii=False))
    else:
        print(compare_text(comparison))
    return EXIT_ERROR if comparison.failed else EXIT_OK


def compare_text(comparison) -> str:
    """A comparison as a plain-text table, then what it shows in a line or two."""
    header = (
        "mode",
        "answer()",
        "summary()",
        "cached",
        "examined",
        "rows",
        "verify",
        f"= {comparison.reference}",
        "wall",
    )
    lines = []
    for o in comparison.modes:
        if not o.ok:
            lines.append((o.mode, "—", "—", "—", "—", "—", "—", "—", "failed"))
            continue
        agrees = "ref" if o.mode == comparison.reference else {True: "yes", False: "no", None: "?"}[o.agrees]
        lines.append(
            (
                o.mode,
                f"{o.answer_calls:,}",
                f"{o.summary_calls:,}",
                f"{o.cached_calls:,}",
                f"{o.rows_examined:,}",
                f"{o.rows:,}" + (" ≈" if o.approximate else ""),
                f"{o.to_verify:,}",
                agrees,
                f"{o.wall_s:.2f} s",
            )
        )
    widths = [max(len(row[i]) for row in (header, *lines)) for i in range(len(header))]
    out = ["  " + "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    out += [
        "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        for row in lines
    ]
    for o in comparison.modes:
        if o.ok:
            out.append(f"  {o.mode}: {o.title}")
        else:
            out.append(f"  {o.mode}: failed: {o.error}")
    best = comparison.fewest_answer_calls()
    if best is not None:
        out.append(f"fewest answer() calls: {', '.join(best[0])} ({best[1]:,})")
    if comparison.approximate:
        out.append("≈ approximate: the retrieval cap left candidates unexamined")
    if comparison.limit_without_order:
        out.append(
            f"LIMIT without ORDER BY: any qualifying rows will do, so a mode may return other rows than "
            f"{comparison.reference} and still be right"
        )
    return "\n".join(out)


def _file(session, args) -> int:
    import csv

    from engines.api import EngineError, read_query_file

    try:
        queries = read_query_file(args.file, getattr(args, "file_text", None))
    except OSError as e:
        raise BadInput(f"cannot read {shown(args.file)}: {e.strerror or e}") from None
    except csv.Error as e:
        raise BadInput(f"{shown(args.file)} is not a readable CSV: {e}") from None
    except ValueError as e:  # no 'Predicted SUQL' column: the message names the file
        raise BadInput(str(e)) from None
    if not queries:
        raise BadInput(f"{shown(args.file)} holds no queries (one per line, or a CSV with a 'Predicted SUQL' column)")
    if not args.yes:
        for q in queries:
            refusal = confirmation_needed(session, q, args.mode)
            if refusal is not None:
                print(f"cs224v-tui: {q[:90]}: {refusal}", file=sys.stderr)
                return EXIT_REFUSED
    out: list[dict[str, Any]] = []
    for q in queries:
        try:
            r = session.engine.run(q, mode=args.mode)
            out.append(
                {
                    "query": q,
                    "status": "ok",
                    "message": r.message,
                    "rows": r.records(),
                    "stats": r.stats.to_json(),
                    "budget_exhausted": r.budget_exhausted,
                    "usage": take_usage(),
                }
            )
        except EngineError as e:
            out.append(
                {"query": q, "status": "refused", "message": str(e), "rows": [], "stats": None, "usage": take_usage()}
            )
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
    else:
        for item in out:
            tag = "ok " if item["status"] == "ok" else "REFUSED"
            detail = (
                f"{len(item['rows'])} rows, {item['stats']['answer_calls']} answer() calls"
                if item["stats"]
                else item["message"]
            )
            if item.get("budget_exhausted"):
                detail += f" — {item['message']}"
            print(f"{tag} {item['query'][:90]}\n     {detail}")
        ok = sum(i["status"] == "ok" for i in out)
        print(f"{ok} ran, {len(out) - ok} refused")
    return EXIT_OK


def _workload(session, args) -> int:
    from engines.api import evaluate_workload as evaluate
    from engines.api import generate_workload as generate
    from worlds import restaurants

    if session.world_name != "restaurants":
        print("cs224v-tui: the workload is defined on the restaurant world", file=sys.stderr)
        return EXIT_REFUSED
    seed = args.workload_seed if args.workload_seed is not None else getattr(args, "seed", 7)
    queries = generate(seed, args.queries)

    def progress(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r  {done}/{total} runs", end="", file=sys.stderr, flush=True)

    # The evaluator's side: the session holds only the visible world, so the truth is built apart from it.
    truth = restaurants.build(session.world.seed).truth
    scores = evaluate(session.engine, session.world, truth, queries, progress=progress)
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    modes = {m: s.to_json() for m, s in scores.items()}
    payload = {"queries": len(queries), "modes": modes}
    if args.json:
        print(json.dumps(with_usage(payload), indent=2))
        return EXIT_OK
    print(f"{len(queries)} queries (seed {seed}); precision over returned rows, recall over list-all queries")
    print("  mode  answer()/query  summary()/query  precision  recall")
    for m, s in modes.items():
        print(
            f"  {m}     {s['answer_calls_mean']:>10.1f}  {s['summary_calls_mean']:>15.1f}  {s['precision']:>9.3f}  {s['recall']:>6.3f}"
        )
    return EXIT_OK
