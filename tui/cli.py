"""The ``cs224v-tui`` command: the app with no arguments, headless subcommands for scripts.

    cs224v-tui                         open the app
    cs224v-tui ask "QUESTION" [...]    run the Text-to-SQL agent (several questions = one dialogue)
    cs224v-tui sql "SQL"               run SQL through the sandbox
    cs224v-tui screenshots [--out D]   write an SVG of every tab

Each area's subcommands live in one module of ``tui.commands`` (listed in
``COMMAND_MODULES``); a module has ``register(subparsers, common)`` and handlers
that take ``(settings, args)`` and return an exit code.  Engines are imported
lazily, so ``--help`` is instant and headless commands never load textual.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any, Sequence

from tui.commands import EXIT_ERROR, EXIT_OK, EXIT_REFUSED

COMMAND_MODULES = ("tui.commands.restaurants", "tui.commands.suql", "tui.commands.courses", "tui.commands.kg", "tui.commands.hybridqa", "tui.commands.lab")


def _common_options() -> argparse.ArgumentParser:
    # Options may stand before or after the command; SUPPRESS keeps a subparser from
    # overwriting a value given before it with its own default.
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    g = common.add_argument_group("LLM and data (also settable as CS224V_* environment variables)")
    g.add_argument("--backend", choices=("sim", "claude"), help="the LLM: sim (offline, default) or claude (needs ANTHROPIC_API_KEY)")
    g.add_argument("--seed", type=int, help="seed of the simulated LLM (default 224)")
    g.add_argument("--latency", type=float, metavar="SECONDS", help="simulated seconds per LLM call (sim backend)")
    g.add_argument("--classify", choices=("exact", "similarity", "llm_all", "retrieve_llm"), help="how enum values are classified (default llm_all)")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the persistent answer cache")
    return common


def _parser() -> argparse.ArgumentParser:
    common = _common_options()
    p = argparse.ArgumentParser(
        prog="cs224v-tui",
        description="Watch LLM agents query structured and hybrid data. With no command, opens the app.",
        parents=[common],
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, common)
    shots = sub.add_parser("screenshots", parents=[common], help="write an SVG screenshot of every tab")
    shots.add_argument("--out", type=Path, default=Path("screenshots"), help="folder for the SVG files (default: screenshots/)")
    shots.set_defaults(handler=_screenshots)
    return p


def _settings(args: argparse.Namespace):
    from engines.settings import Settings

    given = vars(args)
    names = {"backend": "backend", "seed": "seed", "latency": "sim_latency_s", "classify": "classify_method"}
    overrides: dict[str, Any] = {field: given[opt] for opt, field in names.items() if opt in given}
    if given.get("no_cache"):
        overrides["cache_enabled"] = False
    return Settings(**overrides)  # validated; the environment fills what the command line leaves


def _screenshots(settings, args: argparse.Namespace) -> int:
    from tui.screenshots import export_screenshots

    for path in export_screenshots(args.out, settings):
        print(path)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from pydantic import ValidationError

    from engines.errors import EngineError

    try:
        settings = _settings(args)
        handler = getattr(args, "handler", None)
        if handler is None:
            from tui.app import run_app

            run_app(settings)
            return EXIT_OK
        return handler(settings, args)
    except ValidationError as e:
        first = e.errors()[0]
        print(f"cs224v-tui: invalid setting {'.'.join(map(str, first['loc']))}: {first['msg']}", file=sys.stderr)
        return EXIT_REFUSED
    except EngineError as e:
        print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
