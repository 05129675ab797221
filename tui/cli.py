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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui.commands import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_REFUSED,
    BadInput,
    add_read_options,
    check_outputs,
)

REPORT_HINT = "this is a bug in cs224v-tui; please report it with the command line that caused it"

COMMAND_MODULES = (
    "tui.commands.restaurants",
    "tui.commands.suql",
    "tui.commands.courses",
    "tui.commands.kg",
    "tui.commands.hybridqa",
    "tui.commands.lab",
    "tui.commands.data",
    "tui.commands.describe",
)


def _common_options() -> argparse.ArgumentParser:
    # Options may stand before or after the command; SUPPRESS keeps a subparser from
    # overwriting a value given before it with its own default.
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    g = common.add_argument_group("LLM and data (also settable as CS224V_* environment variables)")
    g.add_argument(
        "--backend",
        choices=("sim", "claude", "openai"),
        help="the LLM: sim (offline, default), claude (needs ANTHROPIC_API_KEY) or openai (any OpenAI-compatible "
        "server: Ollama, vLLM, llama.cpp, LM Studio)",
    )
    g.add_argument(
        "--base-url",
        dest="base_url",
        metavar="URL",
        help="openai backend: the server's base URL, up to /v1 (default http://localhost:11434/v1, Ollama)",
    )
    g.add_argument(
        "--model", metavar="MODEL", help="the model of the real backend (openai: both roles; claude: the planner role)"
    )
    g.add_argument("--seed", type=int, help="seed of the simulated LLM (default 224)")
    g.add_argument("--latency", type=float, metavar="SECONDS", help="simulated seconds per LLM call (sim backend)")
    g.add_argument(
        "--classify",
        choices=("exact", "similarity", "llm_all", "retrieve_llm"),
        help="how enum values are classified (default llm_all)",
    )
    g.add_argument("--no-cache", action="store_true", help="do not read or write the persistent answer cache")
    return common


class _NotTheAppAlone(Exception):
    """The command line holds more than the app's options: a command, --help or an error."""


class _AppOptionsParser(argparse.ArgumentParser):
    def error(self, message: str):  # the full parser reads the line again and says what is wrong
        raise _NotTheAppAlone(message)


def _parser(commands: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; ``commands=False``: the app's options alone (no help, no commands, an
    error raises _NotTheAppAlone), which the app's start reads without building every command's parser."""
    common = _common_options()
    p = (argparse.ArgumentParser if commands else _AppOptionsParser)(
        prog="cs224v-tui",
        description="Watch LLM agents query structured and hybrid data. With no command, opens the app.",
        parents=[common],
        add_help=commands,
    )
    kg = p.add_argument_group("the app's Knowledge-graph tab (instead of the built-in world)")
    kg.add_argument(
        "--rdf",
        dest="app_rdf",
        nargs="+",
        type=Path,
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="open your RDF files (.ttl .nt .nq .trig .rdf .owl); the sparql and spinach commands take --rdf too",
    )
    kg.add_argument(
        "--endpoint",
        dest="app_endpoint",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="open a remote SPARQL 1.1 endpoint, e.g. https://query.wikidata.org/sparql",
    )
    tables = p.add_argument_group("the app's Restaurants and SUQL tabs (instead of the built-in worlds)")
    tables.add_argument(
        "--db",
        dest="app_db",
        metavar="SOURCE",
        default=argparse.SUPPRESS,
        help="open your own tables: a CSV, TSV, Parquet or JSON-lines file, a folder of them, a DuckDB file or a "
        "postgresql:// URL, read-only; the ask, sql and suql commands take --db too",
    )
    add_read_options(tables)  # --null TOKEN, --type COLUMN=TYPE
    if not commands:
        return p
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, common)
    shots = sub.add_parser("screenshots", parents=[common], help="write an SVG screenshot of every tab")
    shots.add_argument(
        "--out",
        type=Path,
        default=Path("screenshots"),
        help="folder for the SVG files (default: screenshots/); created if its parent folder exists",
    )
    shots.set_defaults(handler=_screenshots)
    return p


def _the_app_alone(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, argparse.Namespace] | None:
    """The parser and options when ``argv`` only opens the app (options, no command), else None."""
    parser = _parser(commands=False)
    try:
        args, extra = parser.parse_known_args(argv)
    except _NotTheAppAlone:
        return None
    return None if extra else (parser, args)


def _settings(args: argparse.Namespace):
    from engines.api import Settings

    given = vars(args)
    names = {"backend": "backend", "seed": "seed", "latency": "sim_latency_s", "classify": "classify_method"}
    overrides: dict[str, Any] = {field: given[opt] for opt, field in names.items() if opt in given}
    if given.get("no_cache"):
        overrides["cache_enabled"] = False
    if "base_url" in given or "model" in given:
        backend = overrides.get("backend") or Settings().backend
        if "base_url" in given:
            if backend != "openai":
                raise BadInput("--base-url is for --backend openai (the claude backend reads ANTHROPIC_BASE_URL)")
            overrides["openai_base_url"] = given["base_url"]
        if "model" in given:
            if backend == "sim":
                raise BadInput("--model names a real model: use it with --backend openai or --backend claude")
            overrides["openai_model" if backend == "openai" else "claude_model"] = given["model"]
    if "app_rdf" in given or "app_endpoint" in given:  # the app's KG tab opens this graph
        if "app_rdf" in given and "app_endpoint" in given:
            raise BadInput("give --rdf FILE… or --endpoint URL, not both")
        from engines.api import RdfFileError, media_type
        from tui.commands import shown

        url = given.get("app_endpoint")
        if url is not None:
            from urllib.parse import urlsplit

            if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
                raise BadInput(f"{url!r} is not an endpoint URL: give an http:// or https:// address")
        for path in given.get("app_rdf", ()):
            try:
                media_type(path)
            except RdfFileError as e:
                raise BadInput(str(e)) from None
            if not path.is_file():
                raise BadInput(f"{shown(path)}: no such file")
        overrides["kg_rdf"] = tuple(given.get("app_rdf", ()))
        overrides["kg_endpoint"] = given.get("app_endpoint")
    if "app_db" in given:  # the app's agent and SUQL tabs open these tables
        overrides["db"] = given["app_db"]
    reading = [option for dest, option in (("db_nulls", "--null"), ("db_types", "--type")) if dest in given]
    for dest in ("db_nulls", "db_types"):  # how --db CSV and TSV files are read
        if dest in given:
            overrides[dest] = tuple(given[dest])
    settings = Settings(**overrides)  # validated; the environment fills what the command line leaves
    command = given.get("handler") is not None
    if reading and not (given.get("db") if command else settings.db):
        raise BadInput(
            f"{' and '.join(reading)} {'say' if len(reading) > 1 else 'says'} how a --db CSV or TSV file is read: give --db SOURCE too"
        )
    return settings


def _screenshots(settings, args: argparse.Namespace) -> int:
    from tui.commands import shown
    from tui.screenshots import export_screenshots

    for path in export_screenshots(args.out, settings):
        print(shown(path))
    return EXIT_OK


def _not_unicode(value: str) -> str | None:
    """Why ``value`` is not text that can be printed or passed on (None when it is).

    Bytes of the command line that are not UTF-8 reach Python as lone surrogates (``\\udcff``)."""
    for ch in value:
        if "\ud800" <= ch <= "\udfff":
            if "\udc80" <= ch <= "\udcff":
                return f"it is not valid UTF-8 (the byte 0x{ord(ch) - 0xDC00:02x})"
            return f"it holds a lone surrogate (U+{ord(ch):04X}), which is not text"
    return None


def _check_text_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Text arguments must be text.  File names (``Path`` values) may hold any bytes the file system allows."""
    names = {a.dest: (a.option_strings[0] if a.option_strings else a.metavar or a.dest) for a in _actions(parser, args)}
    for dest, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and (why := _not_unicode(item)):
                raise BadInput(f"argument {names.get(dest, dest)}: {why}")


def _actions(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """The actions of ``parser`` and of the subcommands ``args`` chose (dests repeat across commands)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                yield from _actions(chosen, args)
        else:
            yield action


def _fail(args: argparse.Namespace | None, message: str) -> None:
    if args is not None and getattr(args, "json", False):
        import json

        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        print(f"cs224v-tui: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    0 done, 1 the work failed (an engine error, a syntax error of the query), 2 the input was
    refused (argparse's usage errors included), 70 a bug of ours (one line, no traceback), 130
    interrupted."""
    argv = sys.argv[1:] if argv is None else list(argv)
    app_alone = _the_app_alone(argv)  # opening the app needs none of the commands' parsers
    if app_alone is not None:
        parser, args = app_alone
    else:
        parser = _parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help (0) and usage errors (2): argparse has printed them
            return e.code if isinstance(e.code, int) else (EXIT_OK if e.code is None else EXIT_REFUSED)
    from contextlib import nullcontext

    from tui.terminal import escaped_output

    # a command's text output (and every message on stderr) shows control characters of the data escaped;
    # --json keeps its document's bytes, and the app draws its own screen
    headless = getattr(args, "handler", None) is not None
    with escaped_output(stdout=not getattr(args, "json", False)) if headless else nullcontext():
        try:
            return _run(parser, args)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
        except Exception as e:
            first = (str(e).strip().splitlines() or [""])[0][:300]
            print(
                f"cs224v-tui: internal error: {type(e).__name__}{': ' + first if first else ''} ({REPORT_HINT})",
                file=sys.stderr,
            )
            return EXIT_INTERNAL


# app options checked before the app starts (a file or URL to look at); without them, the app builds the
# settings itself after its first frame, so pydantic-settings is not on the start path
_APP_OPTIONS_CHECKED_FIRST = ("app_rdf", "app_endpoint", "base_url", "model", "db_nulls", "db_types")


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from engines.api import EngineError

    try:
        _check_text_arguments(parser, args)
        handler = getattr(args, "handler", None)
        if handler is None:
            from tui.app import run_app

            checked_first = any(name in vars(args) for name in _APP_OPTIONS_CHECKED_FIRST)
            run_app(_settings(args) if checked_first else lambda: _settings(args))
            return EXIT_OK
        settings = _settings(args)
        check_outputs(args)  # --out / --save: a name that can be written, and no file the command reads
        if getattr(args, "batch", False):  # --batch: the run in rounds through the Message Batches API
            from tui.commands import run_batched

            return run_batched(settings, args, handler)
        return handler(settings, args)
    except BadInput as e:
        _fail(args, str(e))
        return EXIT_REFUSED
    except EngineError as e:
        print(f"cs224v-tui: {e}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:
        pydantic = sys.modules.get("pydantic")  # not imported: nothing was validated, so no ValidationError
        if pydantic is None or not isinstance(e, pydantic.ValidationError):
            raise
        first = e.errors()[0]
        print(f"cs224v-tui: invalid setting {'.'.join(map(str, first['loc']))}: {first['msg']}", file=sys.stderr)
        return EXIT_REFUSED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
