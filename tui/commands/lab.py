"""Lab commands: list the experiments of lectures 6-8, run one or all of them, print tables or JSON."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui.commands import EXIT_OK, EXIT_REFUSED, terminal_width
from tui.commands import add_batch_option as _batch
from tui.commands.usage_json import metered, take_usage

if TYPE_CHECKING:
    from engines.api import LabSize

MAX_CELL = 60  # characters of a cell in the human table; --json prints everything


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "lab",
        parents=[common],
        help="the Lab: every experiment of lectures 6-8, computed by running the engines",
        description="List the Lab's experiments, or run one (or all) and print its table and notes.",
    )
    lab_sub = p.add_subparsers(dest="lab_command", metavar="ACTION")
    ls = lab_sub.add_parser("list", parents=[common], help="list the experiments")
    ls.add_argument("--lecture", type=int, choices=(6, 7, 8), help="only this lecture's experiments")
    ls.add_argument("--json", action="store_true", help='print [{"name", "lecture", "title"}]')
    ls.set_defaults(handler=_list)
    run = lab_sub.add_parser("run", parents=[common], help="run an experiment (or --all) and print its table")
    run.add_argument("name", nargs="?", metavar="NAME", help="the experiment (see `lab list`)")
    run.add_argument("--all", action="store_true", help="run every experiment (of --lecture, if given)")
    run.add_argument("--lecture", type=int, choices=(6, 7, 8), help="with --all: only this lecture")
    run.add_argument("--small", action="store_true", help="the reduced size the tests use")
    run.add_argument(
        "--json", action="store_true", help='print {"name", "columns", "rows", "notes"} (a list with --all)'
    )
    run.set_defaults(handler=metered(_run))
    _batch(run, lambda _a: None)
    p.set_defaults(handler=lambda settings, args: _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_REFUSED


def _list(settings, args: argparse.Namespace) -> int:
    from engines.api import lab

    found = lab.experiments(args.lecture)
    if args.json:
        print(json.dumps([e.to_json() for e in found], indent=2, ensure_ascii=False))
        return EXIT_OK
    for lecture in sorted({e.lecture for e in found}):
        print(f"lecture {lecture}")
        for e in (x for x in found if x.lecture == lecture):
            print(f"  {e.name:<26} {e.section:<18} {e.title}")
    return EXIT_OK


def _run(settings, args: argparse.Namespace) -> int:
    from engines.api import EngineError, lab

    if bool(args.name) == bool(args.all):
        print("cs224v-tui lab run: give an experiment NAME or --all", file=sys.stderr)
        return EXIT_REFUSED
    if args.all:
        chosen = lab.experiments(args.lecture)
    else:
        try:
            chosen = [lab.get(args.name)]
        except EngineError as e:
            print(f"cs224v-tui: {e}", file=sys.stderr)
            return EXIT_REFUSED
    size: LabSize = "small" if args.small else "full"
    if settings.backend != "sim":
        print(
            f"cs224v-tui lab: note — the experiments make thousands of LLM calls each; with --backend {settings.backend} "
            "they are slow and cost money, and the simulation parameters of the captions no longer apply.",
            file=sys.stderr,
        )
    out: list[dict[str, Any]] = []
    for i, experiment in enumerate(chosen):
        progress = _Progress(experiment.name, i, len(chosen))
        started = time.perf_counter()
        try:
            table = experiment.run(size, progress=progress, settings=settings)
        finally:
            progress.clear()
        took = time.perf_counter() - started
        if args.json:
            out.append({**table.to_json(experiment.name), "usage": take_usage()})
        else:
            if i:
                print()
            _print_experiment(experiment, table, took)
    if args.json:
        print(json.dumps(out if args.all else out[0], indent=2, ensure_ascii=False))
    return EXIT_OK


class _Progress:
    """One line on stderr, rewritten in place — only when stderr is a terminal."""

    def __init__(self, name: str, index: int, count: int) -> None:
        self.name = name
        self.prefix = f"[{index + 1}/{count}] " if count > 1 else ""
        self.live = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int, message: str) -> None:
        if not self.live:
            return
        now = time.monotonic()
        if now - self._last < 0.05 and done < total:
            return
        self._last = now
        width = max(20, terminal_width() - 1)
        line = f"{self.prefix}{self.name}: {done}/{total} {message}"
        sys.stderr.write("\r")  # alone: stderr shows control characters inside text escaped (tui.terminal)
        print(line[:width].ljust(width), end="", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.live:
            sys.stderr.write("\r")
            print(" " * max(20, terminal_width() - 1), end="", file=sys.stderr)
            sys.stderr.write("\r")
            sys.stderr.flush()


def _print_experiment(experiment, table, took: float) -> None:
    width = max(40, terminal_width())
    print(f"{experiment.name} — {experiment.title} (lecture {experiment.lecture}, {experiment.section})")
    caption = table.caption or experiment.caption_for()
    print(textwrap.fill(caption, width=width, initial_indent="  ", subsequent_indent="  "))
    print()
    print_aligned(table.columns, table.rows)
    if table.notes:
        print()
        for note in table.notes:
            print(textwrap.fill(note, width=width, initial_indent="  • ", subsequent_indent="    "))
    print(f"  ({took:.1f} s)")


def format_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") or "0"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def print_aligned(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[format_cell(v) for v in row] for row in rows]
    head = [str(c) for c in columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(head)]
    numeric = [
        all(isinstance(row[i], (int, float)) and not isinstance(row[i], bool) or row[i] is None for row in rows)
        for i in range(len(head))
    ]

    def line(values: Sequence[str]) -> str:
        return (
            "  " + "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()
        )

    print(line(head))
    print("  " + "  ".join("─" * w for w in widths))
    for r in cells:
        print(line(r))
