"""Knowledge-graph commands: ``sparql`` (Wikidata-dialect SPARQL), ``score`` (row-wise EM/F1) and
``spinach`` (the agent, or the evaluation of §2.5/§4/§5)."""

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
    nonempty_text,
    output_file,
    print_table,
    read_json,
    shown,
    write_out,
)
from tui.commands import add_batch_option as _batch
from tui.commands.usage_json import metered, with_usage


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser(
        "sparql",
        parents=[common],
        help="run Wikidata-dialect SPARQL on the knowledge-graph world, your RDF files or an endpoint",
        description="Run one SPARQL query (Wikidata's dialect: built-in prefixes, SERVICE wikibase:label, "
        "named subqueries) on the fictional knowledge graph, on your own RDF files (--rdf; the Wikidata "
        "dialect only if they use Wikidata's vocabulary, otherwise standard SPARQL with the files' prefixes) "
        "or on a remote SPARQL 1.1 endpoint (--endpoint). Exit 0 with rows or no rows, 1 on a "
        "syntax error or timeout, 2 when the query is refused (updates, LOAD, remote SERVICE).",
    )
    s.add_argument("query", nargs="?", metavar="QUERY")
    s.add_argument(
        "--check-dialect",
        type=Path,
        metavar="FILE",
        help="parse and plan every query of a SPINACH dataset file (a JSON list of {id, sparql})",
    )
    _add_sources(s)
    s.add_argument("--json", action="store_true", help='print {"feedback", "rows"} (or the dialect report)')
    add_out_option(s)
    s.set_defaults(handler=_sparql)

    sc = sub.add_parser(
        "score",
        parents=[common],
        help="row-wise EM and F1 of two SPARQL JSON results",
        description="Score predicted rows against gold rows with SPINACH's row-wise EM and F1 (Hungarian "
        "matching). Each file holds a list of SPARQL JSON bindings or a SPARQL JSON results document.",
    )
    sc.add_argument("predicted", type=Path, metavar="PRED.json")
    sc.add_argument("gold", type=Path, metavar="GOLD.json")
    sc.add_argument("--json", action="store_true", help='print {"em", "f1", "set_f1"}')
    sc.set_defaults(handler=_score)

    sp = sub.add_parser(
        "spinach",
        parents=[common],
        help="ask the SPINACH agent, or evaluate it against the baselines",
        description="Run the SPINACH agent on one question, printing every step, or (--eval) run it and the "
        "four baselines on the simple and forum-style question sets.",
    )
    sp.add_argument("question", nargs="?", metavar="QUESTION")
    sp.add_argument(
        "--policy", choices=("sim", "claude", "openai"), help="the policy's LLM (default: the --backend setting)"
    )
    sp.add_argument("--save", type=Path, metavar="FILE", help="save the trajectory as JSON")
    sp.add_argument("--eval", action="store_true", help="evaluate on the question sets")
    sp.add_argument(
        "--limit", type=int_at_least(1), metavar="N", help="with --eval: only the first N questions of each category"
    )
    sp.add_argument("--no-rollback", action="store_true", help="switch loop detection and rollback off")
    _add_sources(sp)
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp.add_argument(
        "--replay",
        type=Path,
        metavar="LOG",
        help="replay a trajectory file (--save's JSON, or SPINACH's own run log) headless: every step in full "
        "and the logged answer rows; nothing is run",
    )
    sp.add_argument(
        "--index", type=int_at_least(1), metavar="N", help="with --replay: only the N-th trajectory (1-based)"
    )
    sp.set_defaults(handler=metered(_spinach))
    _batch(sp, lambda a: None if a.eval else "is for long runs: use it with --eval")


# --- sparql ----------------------------------------------------------------------------------------


def _add_sources(p: argparse.ArgumentParser) -> None:
    """--store, and the graph to query instead of the built-in world: --rdf FILE… or --endpoint URL."""
    p.add_argument(
        "--store",
        choices=("memory", "oxigraph"),
        default=None,
        help="the triple store (default oxigraph; memory is rdflib's own)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--rdf",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="query your own graph: Turtle, N-Triples, N-Quads, TriG or RDF/XML files (.ttl .nt .nq .trig .rdf .owl)",
    )
    where.add_argument(
        "--endpoint",
        metavar="URL",
        help="query a remote SPARQL 1.1 endpoint, e.g. https://query.wikidata.org/sparql (the only address contacted)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="with --endpoint: seconds a query may take (default 60, Wikidata's own limit)",
    )


def _check_sources(args: argparse.Namespace) -> None:
    if getattr(args, "timeout", None) is not None and (args.timeout <= 0 or getattr(args, "endpoint", None) is None):
        raise BadInput("--timeout is for --endpoint and must be positive (local queries use settings.query_timeout_s)")
    if getattr(args, "endpoint", None) and args.store is not None:
        raise BadInput("--store chooses a local triple store: it does not go with --endpoint")


def _endpoint(settings, args: argparse.Namespace):
    """The graph the arguments name (a GraphSource): the --rdf files, the --endpoint URL, else the built-in world
    (the settings' kg_endpoint / kg_rdf are the app's)."""
    _check_sources(args)
    from engines.api import RdfFileError, RemoteError, arguments_graph, open_graph

    try:
        return open_graph(
            arguments_graph(settings), rdf=args.rdf, endpoint=args.endpoint, store=args.store, timeout_s=args.timeout
        )
    except (RdfFileError, RemoteError) as e:
        raise BadInput(str(e)) from None


def _sparql(settings, args: argparse.Namespace) -> int:
    if args.check_dialect is not None:
        return _check_dialect(
            args.check_dialect, as_json=args.json, timeout_s=settings.query_timeout_s, max_mb=settings.input_file_max_mb
        )
    if not args.query:
        print("cs224v-tui sparql: give a QUERY or --check-dialect FILE", file=sys.stderr)
        return EXIT_REFUSED
    from engines.api import RdfFileError, RemoteError, SparqlRefused, sparql_once

    _check_sources(args)
    try:
        result = sparql_once(
            settings, args.query, rdf=args.rdf, endpoint=args.endpoint, store=args.store, timeout_s=args.timeout
        )
    except (RdfFileError, RemoteError) as e:
        raise BadInput(str(e)) from None
    except SparqlRefused as e:
        if args.json:
            print(json.dumps({"error": str(e)}, ensure_ascii=False))
        else:
            print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_REFUSED
    if result.columns:
        write_out(getattr(args, "out", None), result.columns, result.rows())
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print(f"feedback: {result.feedback.value}  ({result.elapsed_s * 1000:.0f} ms)")
        for note in result.notes:
            print(f"  dialect: {note}")
        if result.message:
            print(f"  {result.message}")
        if result.columns and result.bindings:
            print_table(result.columns, result.rows())
    return EXIT_OK if result.feedback.value in ("rows", "empty") else EXIT_ERROR


def _check_dialect(path: Path, *, as_json: bool, timeout_s: float, max_mb: int) -> int:
    """Each query parsed and planned in a SPARQL worker (bounded by ``timeout_s`` each, as a query)."""
    from engines.api import CheckUnavailable, check_dialect

    data = read_json(path, max_mb=max_mb)
    items = data if isinstance(data, list) else data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise BadInput(f'{shown(path)}: expected a JSON list of {{"id", "sparql"}} objects (or {{"data": [...]}})')
    try:
        report = check_dialect(items, timeout_s)
    except CheckUnavailable as e:
        raise BadInput(str(e)) from None
    if not report.total:
        raise BadInput(f'{shown(path)} holds no queries: expected objects with a "sparql" string')
    if as_json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(f"{report.accepted} of {report.total} queries accepted (parsed and planned after dialect handling)")
        if report.skipped:
            print(f'  ({report.skipped} items without a "sparql" string skipped)')
        for item_id, reason in report.failures:
            print(f"  {item_id}: {reason}")
    return EXIT_OK


# --- score -----------------------------------------------------------------------------------------


_CELL_KEYS = ("type", "value", "xml:lang", "datatype")


def _read_rows(path: Path, max_mb: int) -> Any:
    """A list of SPARQL JSON bindings (or a boolean) from ``path``; :class:`BadInput` names what is wrong."""
    from engines.api import results_from_json

    doc = read_json(path, max_mb=max_mb)
    where = shown(path)
    if isinstance(doc, dict) and "boolean" in doc:
        if not isinstance(doc["boolean"], bool):
            raise BadInput(f'{where}: "boolean" must be true or false')
        return doc["boolean"]
    if isinstance(doc, dict) and "results" in doc and not isinstance(doc["results"], dict):
        raise BadInput(f'{where}: "results" must be an object holding "bindings", a list of rows')
    try:
        rows = results_from_json(doc)
    except ValueError as e:
        raise BadInput(f"{where}: {e}") from None
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise BadInput(
                f'{where}: row {n} is not an object; every row must map variables to {{"type", "value"}} objects'
            )
        for var, cell in row.items():
            problem = _cell_problem(cell)
            if problem:
                raise BadInput(f"{where}: row {n}, variable ?{var[:60]}: {problem}")
    return rows


def _cell_problem(cell: Any) -> str | None:
    """What makes ``cell`` not a SPARQL JSON term (``{"type": "uri", "value": "..."}``), or None."""
    if not isinstance(cell, dict):
        return f'expected a {{"type", "value"}} object, got {_json_kind(cell)}'
    for key in ("type", "value"):
        if key not in cell:
            return f'the term has no "{key}"'
    for key, v in cell.items():
        if key not in _CELL_KEYS:
            return f'unknown field "{key[:60]}" (a term has {", ".join(_CELL_KEYS)})'
        if not isinstance(v, str):
            return f'"{key}" must be a string, got {_json_kind(v)}'
    return None


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    kinds: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    return kinds.get(type(v), type(v).__name__)


def _score(settings, args: argparse.Namespace) -> int:
    from engines.api import TooManyRows, check_size, em_of, row_f1, set_f1

    cap = settings.input_file_max_mb
    pred, gold = _read_rows(args.predicted, cap), _read_rows(args.gold, cap)
    try:
        check_size(pred, gold)
    except TooManyRows as e:
        raise BadInput(str(e)) from None
    f1 = row_f1(pred, gold)
    out = {"em": em_of(f1), "f1": f1, "set_f1": set_f1(pred, gold)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"row-wise EM {out['em']:.3f}  row-wise F1 {out['f1']:.3f}  (set F1 {out['set_f1']:.3f})")
    return EXIT_OK


# --- spinach -----------------------------------------------------------------------------------------


def _llm(settings, policy: str | None):
    from engines.api import llm_from_settings

    if policy:
        settings = settings.model_copy(update={"backend": policy})
    return llm_from_settings(settings)


def _spinach(settings, args: argparse.Namespace) -> int:
    from engines.api import AgentOptions

    if args.replay is not None or args.index is not None:
        return _replay(settings, args)
    options = AgentOptions(rollback=not args.no_rollback)
    if args.eval and (args.rdf or args.endpoint):
        raise BadInput("--eval scores the built-in world's question sets: it does not go with --rdf or --endpoint")
    if args.eval:
        return _evaluate(settings, args, options)
    if args.question is None:
        print("cs224v-tui spinach: give a QUESTION or --eval", file=sys.stderr)
        return EXIT_REFUSED
    nonempty_text("question", args.question)
    if args.save is not None:
        output_file(args.save)  # before the run: a path that cannot be written loses nothing
    from engines.api import CallStarted, Event, RolledBack, SpinachAgent, StepTaken
    from engines.api import save_trajectory as save

    llm = _llm(settings, args.policy)
    endpoint = _endpoint(settings, args)
    agent = SpinachAgent(endpoint, llm, options)

    def show(event: Event) -> None:
        if isinstance(event, StepTaken):
            s = event.step
            mark = "↺" if s.rolled_back else " "
            print(
                f"[{s.index:2d}]{mark} ({s.in_state}/{options.budget}, {s.total}/{options.total_budget}) Thought: {s.thought}"
            )
            print(f"      {s.action}({_one_line(s.argument, 200)})")
            for line in s.observation.splitlines()[:12]:
                print(f"      │ {line}")
        elif isinstance(event, RolledBack):
            print(f"      rolled back ({event.reason}) to step {event.to_step}")
        elif isinstance(event, CallStarted) and settings.sim_latency_s > 0:
            print("      …", end="\r")

    trajectory = agent.run(args.question, emit=ignore_json if args.json else show)
    save_error = None
    if args.save is not None:
        try:
            save(trajectory, args.save)
        except OSError as e:  # the disk filled, the folder went away: the trajectory is still printed
            save_error = f"could not save the trajectory to {shown(args.save)}: {e.strerror or e}"
    if args.json:
        print(json.dumps(with_usage(trajectory.to_json()), indent=2, ensure_ascii=False))
    else:
        print(
            f"\nfinished: {trajectory.finish}  ({trajectory.actions_in_state} actions in the state, "
            f"{len(trajectory.steps)} in all, {trajectory.rollbacks} rolled back)"
        )
        if trajectory.error:
            print(f"error: {trajectory.error}")
        if trajectory.finish == "declined":  # a stop with no answer: its thought says why
            print(f"no answer: {trajectory.steps[-1].thought}")
        if trajectory.final_sparql:
            print("final SPARQL:\n  " + trajectory.final_sparql.replace("\n", "\n  "))
            rows = [[b.get(c, {}).get("value") for c in trajectory.columns] for b in trajectory.answer]
            print_table(trajectory.columns, rows)
        if args.save is not None and save_error is None:
            print(f"saved to {shown(args.save)}")
    if save_error:
        print(f"cs224v-tui: {save_error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR if trajectory.finish == "error" else EXIT_OK


def _replay(settings, args: argparse.Namespace) -> int:
    """``spinach --replay LOG [--index N] [--json]``: the file's trajectories as they were, complete."""
    if args.replay is None:
        raise BadInput("--index is for --replay: give the trajectory file with --replay LOG")
    if args.question is not None or args.eval or args.save is not None:
        raise BadInput("--replay shows a file: it takes no QUESTION, --eval or --save")
    from engines.api import TrajectoryError, pick, replay_json, replay_lines
    from engines.api import load_trajectories as load

    try:  # read at most input_file_max_mb, nested at most MAX_JSON_DEPTH: a file that is not a log is bad input
        trajectories = load(args.replay, max_bytes=settings.input_file_max_mb << 20)
    except TrajectoryError as e:
        raise BadInput(str(e)) from None
    if args.json:
        print(json.dumps(replay_json(trajectories, args.index, shown(args.replay)), indent=2, ensure_ascii=False))
        return EXIT_OK
    chosen = [(args.index, pick(trajectories, args.index))] if args.index else list(enumerate(trajectories, 1))
    if not chosen:
        print(f"{shown(args.replay)} holds no trajectory")
    for n, trajectory in chosen:
        if n != chosen[0][0]:
            print("\n" + "─" * 80 + "\n")
        for line in replay_lines(trajectory, n, len(trajectories)):
            print(line)
    return EXIT_OK


def ignore_json(_event: Any) -> None:
    """Events are not printed when the output is JSON."""


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _evaluate(settings, args: argparse.Namespace, options) -> int:
    from engines.api import evaluate_spinach as evaluate
    from engines.api import open_kg
    from worlds import kg

    llm = _llm(settings, args.policy)
    world, truth = kg.build(kg.DEFAULT_SEED)
    endpoint = open_kg(settings, store=args.store or "oxigraph", world=world)

    def progress(qid: str, done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"  {done}/{total} {qid}   ", end="\r", file=sys.stderr)

    sets = kg.questions(world, truth)
    if args.limit is not None:
        n = args.limit
        sets = kg.QuestionSets(
            sets.simple[:n], tuple(q for c in kg.CATEGORIES for q in [x for x in sets.forum if x.category == c][:n])
        )
    report = evaluate(endpoint, sets, llm, options=options, world=world, seed=settings.seed, progress=progress)
    out = report.to_json()
    if args.json:
        print(json.dumps(with_usage(out), indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"SPINACH ({llm.backend.name} policy), row-wise EM / F1 (set F1 for contrast):")
    for name, s in out["sets"].items():
        ci = s.get("f1_ci95")
        print(
            f"  {name:7s} EM {s['em']:5.1f}  F1 {s['f1']:5.1f}  [{ci[0]:.1f}, {ci[1]:.1f}]  set F1 {s['set_f1']:5.1f}  (n={s['n']})"
        )
        for cat, c in s.get("by_category", {}).items():
            print(f"    {cat}  EM {c['em']:5.1f}  F1 {c['f1']:5.1f}  (n={c['n']})")
    print("baselines (F1 simple / forum):")
    for name, b in out["baselines"].items():
        print(f"  {name:9s} {b['simple']['f1']:5.1f} / {b['forum']['f1']:5.1f}")
    syn = out["template_parser_synthetic"]
    print(f"  template parser on its own synthetic test set: {syn['right']}/{syn['total']} properties right")
    print("actions per forum question (in the state): " + ", ".join(f"{k}: {v}%" for k, v in out["actions"].items()))
    print(
        f"mean actions {out['mean_actions']}, mean rollbacks {out['mean_rollbacks']}, budget exhausted {out['budget_exhausted']}%"
    )
    return EXIT_OK
