"""Course-assistant commands: the three-valued plan for C1-C6 and note 002's top-k trap."""

from __future__ import annotations

import argparse
import json

from tui.commands import EXIT_OK, int_at_least
from tui.commands.usage_json import metered, with_usage


def clock_time(text: str) -> tuple[int, int]:
    """An argparse ``type``: ``HH:MM`` (or ``HH``) on a 24-hour clock."""
    hours, sep, minutes = text.strip().partition(":")
    try:
        h, m = int(hours), int(minutes) if sep else 0
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a time as HH:MM (e.g. 16:00), got {text[:40]!r}") from None
    if not (0 <= h <= 23 and 0 <= m <= 59) or (sep and not minutes.strip()):
        raise argparse.ArgumentTypeError(f"expected a time of day from 00:00 to 23:59, got {text[:40]!r}")
    return h, m


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "courses",
        parents=[common],
        help="the course assistant: confirmed, to verify, excluded",
        description="Plan the student's courses C1-C6: hard conditions in SQL, 'is it practical?' through SUQL's "
        "answer(); each course ends confirmed, to verify (with what is unknown) or excluded (with the reason).",
    )
    p.add_argument("--plan", action="store_true", help="print the plan (the default)")
    p.add_argument(
        "--top-k",
        type=int_at_least(1),
        metavar="K",
        help="also show note 002's trap: rank by review similarity, keep K, then filter",
    )
    p.add_argument(
        "--credit-cap",
        type=int_at_least(0, 1000),
        help="change the student's credit cap (a metamorphic test of the notes)",
    )
    p.add_argument("--c2-start", type=clock_time, metavar="HH:MM", help="move C2's Wednesday meeting (e.g. 16:00)")
    p.add_argument("--json", action="store_true", help='print {"confirmed", "to_verify", "excluded"}')
    p.set_defaults(handler=metered(_courses))


def _courses(settings, args: argparse.Namespace) -> int:
    from engines.api import WORLDS, llm_from_settings, top_k_trap
    from engines.api import course_plan as plan
    from worlds.courses import build, hm

    knobs = {}
    if args.credit_cap is not None:
        knobs["credit_cap"] = args.credit_cap
    if args.c2_start is not None:
        knobs["c2_start"] = hm(*args.c2_start)
    world = build(**knobs)
    llm = llm_from_settings(settings)
    with WORLDS["courses"].open(settings, world) as tables:  # the world in its own sandbox
        result = plan(world, tables.sandbox, llm)
        trap = top_k_trap(world, tables.sandbox, llm, k=args.top_k) if args.top_k is not None else None
    if args.json:
        payload = result.to_json()
        if trap is not None:
            payload["top_k"] = {
                "k": trap.k,
                "ranking": [c for c, _ in trap.ranking],
                "rank_then_filter": list(trap.rank_then_filter),
                "filter_then_rank": list(trap.filter_then_rank),
            }
        print(json.dumps(with_usage(payload), indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"confirmed: {', '.join(result.confirmed) or '(none)'}")
    print("to verify:")
    for course, what in result.to_verify.items():
        print(f"  {course}: {what}")
    print("excluded:")
    for course, why in result.excluded.items():
        print(f"  {course}: {why}")
    print(f"answer() calls: {result.answer_calls}")
    if trap is not None:
        print(f"\ntop-{trap.k} by review similarity: {', '.join(c for c, _ in trap.ranking[: trap.k])}")
        print(f"  rank, keep {trap.k}, then filter: {', '.join(trap.rank_then_filter) or '(nothing)'}")
        print(f"  filter, then rank:        {', '.join(trap.filter_then_rank) or '(nothing)'}")
    return EXIT_OK
