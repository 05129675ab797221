"""HybridQA commands (lecture 7 §6): evaluate on the generated tables, list real tables, ask one question."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tui.commands import EXIT_ERROR, EXIT_OK, EXIT_REFUSED, int_at_least, shown
from tui.commands import add_batch_option as _batch
from tui.commands.usage_json import metered, with_usage


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "hybridqa",
        parents=[common],
        help="HybridQA: questions over tables with linked passages (lecture 7 §6)",
        description="Evaluate the HybridQA pipeline (zero-shot SUQL parse -> execute -> retry -> short answer) on "
        "the 300 generated flag-bearer questions, list real HybridQA tables, or ask one question.",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--eval", action="store_true", help="evaluate on the generated questions: EM, F1, judged, by type, errors"
    )
    what.add_argument("--ablation", action="store_true", help="evaluate with each setting of the two improvements")
    what.add_argument(
        "--tables",
        nargs="?",
        const="",
        metavar="DIR",
        type=str,
        help="load the real HybridQA tables of DIR (default: the hybridqa data set, see `data where`) and list them",
    )
    what.add_argument("--ask", metavar="QUESTION", help="ask one question over --table")
    p.add_argument(
        "--table", metavar="ID", help="the table --ask asks over (a generated table name, or a real table id)"
    )
    p.add_argument(
        "--real",
        nargs="?",
        const="",
        metavar="DIR",
        help="with --ask or --eval: use the real tables of DIR (default: the hybridqa data set, see `data where`); needs the claude backend",
    )
    p.add_argument("--no-fallback", action="store_true", help="switch off improvement 1 (other passage columns)")
    p.add_argument(
        "--no-retry", action="store_true", help="switch off improvement 2 (parse again when nothing comes back)"
    )
    p.add_argument(
        "--limit", type=int_at_least(1), metavar="N", help="only the first N tables (more than there are: all of them)"
    )
    p.add_argument("--world-seed", type=int, default=None, help="seed of the generated world (default 7)")
    p.add_argument(
        "--format-rate",
        type=float,
        metavar="P",
        help="sim backend: the chance the short answer changes format (default 0.3; exercise 4 sets 0)",
    )
    p.add_argument("--questions", action="store_true", help="with --eval --json: include every question's record")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=metered(_hybridqa))
    _batch(p, lambda a: None if a.eval else "is for long runs: use it with --eval")


def _fail(args: argparse.Namespace, message: str, code: int = EXIT_REFUSED) -> int:
    if args.json:
        print(json.dumps(with_usage({"error": message}), ensure_ascii=False))
    else:
        print(f"cs224v-tui hybridqa: {message}", file=sys.stderr)
    return code


def _hybridqa(settings, args: argparse.Namespace) -> int:
    from engines.api import Cancelled, EngineError
    from worlds.hybridqa import HybridDataError

    if args.ask is not None and not args.ask.strip():
        return _fail(args, "the question of --ask is empty")
    if args.ask is not None and len(args.ask) > 100_000:
        return _fail(args, f"the question of --ask is {len(args.ask):,} characters long; the most accepted is 100,000")
    if args.format_rate is not None and not 0 <= args.format_rate <= 1:
        return _fail(args, "--format-rate must be between 0 and 1")
    if args.format_rate is not None and settings.backend != "sim":
        return _fail(args, "--format-rate sets a rate of the simulated LLM; it has no meaning with a real backend")
    try:
        if args.tables is not None:
            return _tables(settings, args)
        return _run(settings, args)
    except Cancelled:
        return 130
    except HybridDataError as e:  # the user's folder of tables is not usable: bad input
        return _fail(args, str(e))
    except (OSError, RecursionError) as e:  # the folder given (a name too long, a file nested too deeply)
        given = args.tables if args.tables is not None else args.real
        if not given:
            raise
        why = "a file in it nests arrays or objects too deeply" if isinstance(e, RecursionError) else e.strerror or e
        return _fail(args, f"cannot read the HybridQA tables of {shown(Path(given))}: {why}")
    except EngineError as e:
        return _fail(args, str(e), EXIT_ERROR)


# --- listing real tables ------------------------------------------------------------------------


def _tables(settings, args: argparse.Namespace) -> int:
    from engines.api import SIM_KNOWS_GENERATED_ONLY, real_tables_dir
    from worlds.hybridqa import load_real

    world = load_real(Path(args.tables) if args.tables else real_tables_dir(settings))
    tables = world.tables[: args.limit] if args.limit else world.tables
    note = SIM_KNOWS_GENERATED_ONLY if settings.backend == "sim" else None
    if args.json:
        payload: dict[str, Any] = {"tables": [t.to_summary() for t in tables]}
        if note:
            payload["note"] = note
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    for t in tables:
        linked = ", ".join(c.removesuffix("_Info") for c in t.info_columns) or "none"
        print(f"{t.table_id}  ({len(t.rows)} rows, {len(t.questions)} questions; passages linked from: {linked})")
        print(f"  table {t.name}: {', '.join(t.columns)}")
        for q in t.questions:
            print(f"  · {q.question}  → {q.gold}")
    print(f"{len(tables)} tables, {sum(len(t.questions) for t in tables)} questions")
    if note:
        print(f"note: {note}")
    return EXIT_OK


# --- evaluating and asking ----------------------------------------------------------------------------


def _open(settings, args: argparse.Namespace):
    from engines.api import llm_from_settings, open_hybridqa

    sim_params: dict[str, Any] = {}  # keyword arguments of the sim backend
    if args.format_rate is not None:  # a rate of the simulated LLM, given at construction
        from dataclasses import replace

        from engines.api import HYBRID_SIM_RATES as DEFAULT_RATES

        sim_params["hybrid_params"] = replace(DEFAULT_RATES, format_rate=args.format_rate)
    llm = llm_from_settings(settings, **sim_params)
    if args.real is not None:
        return open_hybridqa(settings, source="real", directory=Path(args.real) if args.real else None, llm=llm)
    from worlds.hybridqa import N_TABLES

    return open_hybridqa(
        settings, seed=args.world_seed, n_tables=min(args.limit, N_TABLES) if args.limit else None, llm=llm
    )


def _run(settings, args: argparse.Namespace) -> int:
    from engines.api import SIM_KNOWS_GENERATED_ONLY, Improvements

    if args.real is not None and settings.backend == "sim" and (args.eval or args.ablation or args.ask is not None):
        return _fail(args, SIM_KNOWS_GENERATED_ONLY)
    improvements = Improvements(fallback=not args.no_fallback, retry=not args.no_retry)
    session = _open(settings, args)
    try:
        if args.ask is not None:
            return _ask(session, args, improvements)
        if args.ablation:
            return _ablation(session, args)
        return _eval(session, args, improvements)
    finally:
        session.close()


def _progress(args: argparse.Namespace):
    def show(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r  {done}/{total} questions", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return show


def _questions(session, args: argparse.Namespace):
    if args.real is not None and args.limit:
        names = {t.name for t in session.world.tables[: args.limit]}
        return [q for q in session.world.questions if q.table in names]
    return None


def _eval(session, args: argparse.Namespace, improvements) -> int:
    from engines.api import evaluate_hybridqa as evaluate

    report = evaluate(session, _questions(session, args), improvements=improvements, progress=_progress(args))
    payload = report.to_json(questions=args.questions)
    if args.json:
        print(json.dumps(with_usage(payload), indent=2, ensure_ascii=False))
        return EXIT_OK
    _print_report(payload, session)
    return EXIT_OK


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}"


def _print_report(p: dict[str, Any], session) -> None:
    imp = p["improvements"]
    which = "real HybridQA tables" if session.source == "real" else "generated flag-bearer tables"
    print(
        f"{p['questions']} questions on {len(session.world.tables)} {which}; "
        f"fallback {'on' if imp['fallback'] else 'off'}, retry {'on' if imp['retry'] else 'off'}"
    )
    print(f"  EM {_pct(p['em'])}   F1 {_pct(p['f1'])}   judged correct {_pct(p['judged'])}")
    if p["by_type"]:
        print("  type  questions     EM     F1  judged")
        for t, s in p["by_type"].items():
            print(f"  {t:<4}  {s['questions']:>9}  {_pct(s['em'])}  {_pct(s['f1'])}  {_pct(s['judged'])}")
    if p["errors"]:
        missed = sum(p["errors"].values())
        print(f"  not an exact match: {missed}")
        for name, n in p["errors"].items():
            print(f"    {name:<16} {n:>4}")
        if "evaluation_share_of_misses" in p:
            print(
                f"  of those, the evaluation's fault (format, incomplete or wrong gold): {_pct(p['evaluation_share_of_misses'])}%"
            )
    print(f"  answer() calls {p['answer_calls']} (fallback {p['fallback_calls']}); questions retried {p['retried']}")


def _ablation(session, args: argparse.Namespace) -> int:
    from engines.api import ablation

    reports = ablation(session, _questions(session, args), progress=_progress(args))
    payload = {label: r.to_json() for label, r in reports.items()}
    if args.json:
        print(json.dumps(with_usage(payload), indent=2, ensure_ascii=False))
        return EXIT_OK
    first = next(iter(payload.values()))
    print(f"{first['questions']} questions; the two improvements of §6.2 switched on and off")
    print("  setting              EM     F1  judged  answer()  retried  no result")
    for label, p in payload.items():
        no_result = p["errors"].get("no result", 0)
        print(
            f"  {label:<18} {_pct(p['em'])}  {_pct(p['f1'])}  {_pct(p['judged'])}  {p['answer_calls']:>8}  {p['retried']:>7}  {no_result:>9}"
        )
    return EXIT_OK


def _ask(session, args: argparse.Namespace, improvements) -> int:
    from engines.api import CallFinished, EngineError
    from engines.api import hybridqa_events as E

    if not args.table:
        return _fail(args, "--ask needs --table ID (see --tables, or a generated table such as veloria_flag_bearers)")
    try:
        table = session.world.table(args.table)
    except LookupError as e:  # worlds.hybridqa.UnknownTable
        return _fail(args, str(e), EXIT_ERROR)

    def show(event) -> None:
        if args.json:
            return
        if isinstance(event, E.QuestionParsed):
            print(f"SUQL (attempt {event.attempt}): {event.suql}")
        elif isinstance(event, E.PassageRead):
            value = "Unknown" if event.value is None else event.value
            print(f"  · {event.row_key or ''} {event.column or '?'}: {event.question} → {value}  ({event.reason})")
        elif isinstance(event, E.Retried):
            print(f"retry: {event.reason}")
        elif isinstance(event, CallFinished) and event.function == "short_answer":
            print(f"short answer: {event.verdict}")

    try:
        answer = session.pipeline.ask(table.name, args.ask, improvements=improvements, emit=show)
    except EngineError as e:
        return _fail(args, str(e))
    gold = next((q for q in table.questions if q.question.strip() == args.ask.strip()), None)
    graded = session.grade(gold, answer) if gold is not None else None
    if args.json:
        out = answer.to_json()
        if gold is not None and graded is not None:
            out.update({"gold": gold.gold, "type": gold.qtype, **graded.to_json()})
        print(json.dumps(with_usage(out), indent=2, ensure_ascii=False, default=str))
        return EXIT_OK
    print(f"read-back: {answer.final.readback}")
    print(
        f"answer: {answer.short or '(nothing came back)'}   answer() calls {answer.answer_calls} "
        f"(fallback {answer.fallback_calls}), retries {answer.retries}"
    )
    if gold is not None and graded is not None:
        judged = "" if graded.judged is None else f", judged {'correct' if graded.judged else 'wrong'}"
        why = f" ({graded.error})" if graded.error else ""
        print(f"gold: {gold.gold}   EM {graded.em:.0f}, F1 {graded.f1:.2f}{judged}{why}")
    return EXIT_OK
