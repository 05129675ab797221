"""Headless subcommands, one module per area.  Shared helpers for printing, for reading the
user's files and for checking where output goes live here."""

from __future__ import annotations

import argparse
import errno
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.read_paths import db_files

if TYPE_CHECKING:
    from engines.api import Settings

EXIT_OK, EXIT_ERROR, EXIT_REFUSED = 0, 1, 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug of ours, not the user's input


class BadInput(Exception):
    """The user's input (an argument, a file, an output path) cannot be used; ``str(e)`` says why.

    ``tui.cli.main`` prints it and exits 2, like argparse's own usage errors."""


def shown(path: Path | str) -> str:
    """A path as text that prints anywhere: bytes that are not UTF-8 show as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


# --- arguments -------------------------------------------------------------------------------------

NULL_HELP = (
    "a field of a --db CSV or TSV file that means a missing value (repeatable; CS224V_DB_NULLS): given, the tokens "
    "replace the default NA, N/A, NaN, null and NULL; empty fields are always NULL (--null '' : only those)"
)
TYPE_HELP = (
    "the type of a column of a --db CSV or TSV file, a DuckDB type (repeatable; CS224V_DB_TYPES), e.g. "
    "zip=VARCHAR, day=DATE, price=DECIMAL(10,2); TABLE.COLUMN=TYPE for one file of a folder"
)


def add_read_options(parser: Any) -> None:
    """``--null TOKEN`` and ``--type COLUMN=TYPE``: how a ``--db`` CSV or TSV file is read (the settings
    ``db_nulls`` and ``db_types``); given only when used, so the environment's settings stand otherwise."""
    parser.add_argument(
        "--null", dest="db_nulls", action="append", metavar="TOKEN", default=argparse.SUPPRESS, help=NULL_HELP
    )
    parser.add_argument(
        "--type", dest="db_types", action="append", metavar="COLUMN=TYPE", default=argparse.SUPPRESS, help=TYPE_HELP
    )


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in [low, high]; anything else is a usage error (exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {_excerpt(text)}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}, got {value:,}")
        return value

    return parse


def _excerpt(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def nonempty_text(what: str, text: str, *, limit: int = 100_000) -> str:
    """``text`` unless it is blank or longer than ``limit`` characters (then :class:`BadInput`)."""
    if not text.strip():
        raise BadInput(f"the {what} is empty")
    if len(text) > limit:
        raise BadInput(f"the {what} is {len(text):,} characters long; the most accepted is {limit:,}")
    return text


# --- files the user gives --------------------------------------------------------------------------


def _no_nul(path: Path) -> None:
    if "\x00" in str(path):
        raise BadInput(f"the file name {shown(path)!r} holds a NUL byte")


DEFAULT_MAX_MB = 64
"""The cap of :func:`read_text` when the caller gives none (the setting ``input_file_max_mb``'s default)."""


def read_text(path: Path, *, max_mb: int = DEFAULT_MAX_MB) -> str:
    """The UTF-8 text of ``path``, at most ``max_mb`` MiB of it (the setting ``input_file_max_mb``), or
    :class:`BadInput` saying plainly why it cannot be read.  A stream (``/dev/zero``, a pipe) is read to the
    cap and no further."""
    from engines.api import TooLarge, read_capped

    _no_nul(path)
    try:
        data = read_capped(path, max_mb << 20)
    except TooLarge as e:
        raise BadInput(f"cannot read {shown(path)}: {e.describe()} (CS224V_INPUT_FILE_MAX_MB)") from None
    except IsADirectoryError:
        raise BadInput(f"cannot read {shown(path)}: it is a folder, not a file") from None
    except OSError as e:
        raise BadInput(f"cannot read {shown(path)}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{shown(path)} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None


def read_json(path: Path, *, max_mb: int = DEFAULT_MAX_MB) -> Any:
    """The JSON document of ``path`` (see :func:`read_text`), nested at most ``engines.reading.MAX_JSON_DEPTH``
    levels; every way it can fail is a :class:`BadInput` with a clear message."""
    from engines.api import MAX_JSON_DEPTH, too_deep

    text = read_text(path, max_mb=max_mb)
    if not text.strip():
        raise BadInput(f"{shown(path)} is empty (expected JSON)")
    deep = f"{shown(path)} nests arrays or objects too deeply to read (more than {MAX_JSON_DEPTH} levels)"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{shown(path)} is not JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        raise BadInput(deep) from None
    except MemoryError:
        raise BadInput(f"{shown(path)} is too large to hold in memory once read") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise BadInput(f"{shown(path)}: a number is too long to read ({str(e).split(';')[0]})") from None
    if too_deep(doc):  # json reads ~990 levels; walking them later (repr, dumps) would recurse past the limit
        raise BadInput(deep)
    return doc


# --- where output goes -----------------------------------------------------------------------------


def _probe_folder(folder: Path) -> None:
    """Create and remove a file in ``folder``: the one sure test that writing works (root passes
    ``os.access`` everywhere; a read-only mount or a full quota does not)."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".cs224v-write-test-"):
            pass
    except OSError as e:
        raise BadInput(f"cannot write into the folder {shown(folder)}: {e.strerror or e}") from None


def _name_problem(path: Path, e: OSError) -> str:
    """What an ``OSError`` from looking at an output path means, in words (a name too long names its limit)."""
    if e.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
        try:
            limit = os.pathconf(_existing_folder(path), "PC_NAME_MAX")
        except (OSError, ValueError):
            limit = 255
        return (
            f"the file name is too long ({longest:,} bytes in one part of the path; this file system takes at most "
            f"{limit:,}): give a shorter name"
        )
    return str(e.strerror or e)


def _existing_folder(path: Path) -> Path:
    for folder in path.absolute().parents:
        try:
            if folder.is_dir():
                return folder
        except OSError:
            continue
    return Path("/")


def _abbreviated(path: Path, width: int = 100) -> str:
    text = shown(path)
    return text if len(text) <= width else text[: width // 2 - 1] + "…" + text[-(width // 2) :]


def output_file(path: Path, option: str = "") -> Path:
    """Check, before any long work, that ``path`` can be written: a name the file system takes, its folder
    exists and is writable, and ``path`` is not a folder nor anything but a regular file.  An existing file is
    replaced later, not now.  ``option`` (``--out``) names where the path came from in the messages."""
    _no_nul(path)
    try:
        return _output_file(path)
    except OSError as e:  # a name too long, a folder that cannot be searched: no traceback
        where = f"{option} " if option else ""
        raise BadInput(f"cannot save to {where}{_abbreviated(path)}: {_name_problem(path, e)}") from None


def _output_file(path: Path) -> Path:
    if path.is_dir():
        raise BadInput(f"cannot save to {shown(path)}: it is a folder; give a file name")
    folder = path.parent
    if not folder.exists():
        raise BadInput(f"cannot save to {shown(path)}: the folder {shown(folder)} does not exist")
    if not folder.is_dir():
        raise BadInput(f"cannot save to {shown(path)}: {shown(folder)} is a file, not a folder")
    if path.exists():
        if not path.is_file():  # a FIFO or a device: opening it would block, or write somewhere else
            raise BadInput(f"cannot save to {shown(path)}: it is not a regular file")
        try:
            with path.open("ab"):  # opening to append changes nothing
                pass
        except OSError as e:
            raise BadInput(f"cannot save to {shown(path)}: {e.strerror or e}") from None
    else:
        _probe_folder(folder)
    return path


OUTPUT_OPTIONS = {"out": "--out", "save": "--save"}
"""The arguments a command writes to; every other path argument (and ``--db``) is something it reads."""
_DB_OPTIONS = {"db": "--db", "app_db": "--db"}


def source_files(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(option, path) of every file the command reads: each path argument (``--rdf``, ``--file``, ``--replay``,
    ``--check-dialect``, score's files) and ``--db``'s file, or every file directly in its folder."""
    found: list[tuple[str, Path]] = []
    for dest, value in vars(args).items():
        if dest in OUTPUT_OPTIONS:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, Path):
                found.append(("--" + dest.removeprefix("app_").replace("_", "-"), item))
    for dest, option in _DB_OPTIONS.items():
        found += [(option, path) for path in db_files(getattr(args, dest, None))]
    return found


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)  # follows symlinks: a link to a source is the source
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def check_outputs(args: argparse.Namespace) -> None:
    """Before any work: ``--out`` and ``--save`` must be names that can be written (:func:`output_file`) and
    none of the files the command reads (compared by device and inode, so a symlink or a hard link to a source
    counts as the source): writing the output would replace the person's data."""
    outputs = [
        (option, getattr(args, dest))
        for dest, option in OUTPUT_OPTIONS.items()
        if isinstance(getattr(args, dest, None), Path) and (dest != "out" or getattr(args, "out_is_rows_file", False))
    ]
    if not outputs:
        return
    sources = source_files(args)
    for option, path in outputs:
        target = path.expanduser()  # as engines.export writes it
        output_file(target, option)
        identity = _identity(target)
        if identity is None:
            continue
        for source_option, source in sources:
            if _identity(source) == identity:
                also = "" if shown(source) == shown(path) else f" (the same file as {shown(source)})"
                raise BadInput(
                    f"{option} {shown(path)} is a file this command reads ({source_option}){also}: writing there "
                    "would replace your data; give another file name"
                )


def output_folder(path: Path, names: Sequence[str] = ()) -> Path:
    """Check, before any long work, that files ``names`` can be written into the folder ``path``.

    A missing folder is created when its parent exists (``--out newdir``); a missing parent is an
    error naming it (a typo should not grow a tree of folders), and so is a file where the folder
    should be or a folder where one of the files should be."""
    _no_nul(path)
    try:
        return _output_folder(path, names)
    except OSError as e:  # a name too long, a folder that cannot be searched: no traceback
        raise BadInput(f"cannot write into {_abbreviated(path)}: {_name_problem(path, e)}") from None


def _output_folder(path: Path, names: Sequence[str]) -> Path:
    if path.exists() and not path.is_dir():
        raise BadInput(f"cannot write into {shown(path)}: it is a file, not a folder")
    if not path.exists():
        parent = path.parent
        if not parent.is_dir():
            what = "is a file, not a folder" if parent.exists() else "does not exist"
            raise BadInput(f"cannot create the folder {shown(path)}: {shown(parent)} {what}")
        try:
            path.mkdir()
        except FileExistsError:
            pass
        except OSError as e:
            raise BadInput(f"cannot create the folder {shown(path)}: {e.strerror or e}") from None
    for name in names:
        target = path / name
        if target.exists() and not target.is_file():
            raise BadInput(f"cannot write {shown(target)}: something other than a file is in the way")
        if target.exists():
            try:
                with target.open("ab"):
                    pass
            except OSError as e:
                raise BadInput(f"cannot write {shown(target)}: {e.strerror or e}") from None
    _probe_folder(path)
    return path


_KEY_COLUMNS = ("name", "cuisines", "price", "rating", "num_reviews", "location")


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = 20) -> None:
    """A plain-text table that fits the terminal; wide restaurant rows show their key columns."""
    from engines.api import to_jsonable
    from tui.terminal import terminal_safe

    hidden = 0
    if len(columns) > 7 and all(c in columns for c in _KEY_COLUMNS):  # SELECT *: the columns that matter
        keep = [list(columns).index(c) for c in _KEY_COLUMNS]
        hidden = len(columns) - len(keep)
        columns = [columns[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    width = max(20, min(160, terminal_width()))
    per = max(6, (width - 3 * len(columns)) // max(1, len(columns)))

    def cell(v: Any) -> str:
        v = to_jsonable(v)
        text = ", ".join(map(str, v)) if isinstance(v, list) else ("" if v is None else str(v))
        # one line (line breaks and tabs as spaces, as the app's tables show them), control characters escaped
        text = terminal_safe(" ".join(text.split()) if not text.isprintable() else text)
        return text if len(text) <= per else text[: per - 1] + "…"

    print("  " + " | ".join(cell(c) for c in columns))
    for row in rows[:limit]:
        print("  " + " | ".join(cell(v) for v in row))
    if len(rows) > limit:
        print(f"  … {len(rows) - limit} more rows")
    more = f"; {hidden} more columns with --json" if hidden else ""
    print(f"  ({len(rows)} row{'s' if len(rows) != 1 else ''}{more})")


def terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120


# --- --batch ---------------------------------------------------------------------------------------


def add_batch_option(parser: argparse.ArgumentParser, applies: Callable[[argparse.Namespace], str | None]) -> None:
    """``--batch`` on a long headless run; ``applies(args)`` says why it does not fit these
    arguments (``None`` when it does)."""
    parser.add_argument(
        "--batch",
        action="store_true",
        help="claude backend: send the calls through the Message Batches API (half the price; "
        "answered within hours), polling with progress; resumable: run the same command again",
    )
    parser.set_defaults(batch_applies=applies)


def run_batched(
    settings: Settings, args: argparse.Namespace, handler: Callable[[Settings, argparse.Namespace], int]
) -> int:
    """Run ``handler`` as a batched run (engines.llm.batch): collect rounds with their output hidden,
    message batches polled with progress on stderr, then the run whose output is printed."""
    import contextlib
    import io
    import sys

    from engines.api import BatchRun

    why = args.batch_applies(args)
    if why is not None:
        raise BadInput(f"--batch {why}")
    if settings.backend != "claude":
        raise BadInput(
            f"--batch sends the calls through Anthropic's Message Batches API: use it with --backend claude "
            f"(the backend is {settings.backend})"
        )

    def progress(line: str) -> None:
        print(f"cs224v-tui batch: {line}", file=sys.stderr, flush=True)

    def quiet():
        stack = contextlib.ExitStack()
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        return stack

    def reset() -> None:
        # the Lab shares results within a process: each round computes its experiments afresh
        from engines.api import clear_memo

        clear_memo()

    batch = BatchRun(settings, progress=progress)
    try:
        return batch.run(lambda: handler(settings, args), before_round=reset, quiet=quiet)
    except KeyboardInterrupt:
        pending = [batch_id for batch_id, _count in batch.store.pending()]
        if pending:
            progress(
                f"interrupted; {', '.join(pending)} saved in {batch.store.path}: run the same command again to "
                "resume (what was answered is not sent again)"
            )
        raise
    finally:
        batch.store.close()


# --- --out FILE: the rows a command returns, written as CSV, JSON, JSON Lines or Parquet ----------


def _out_path(text: str) -> Path:
    """An argparse ``type`` for ``--out``: a path whose extension names a format (checked before anything runs)."""
    from engines.api import ExportError, format_for

    path = Path(text)
    try:
        format_for(path)
    except ExportError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if "\x00" in text:
        raise argparse.ArgumentTypeError("the file name holds a NUL byte")
    return path


def add_out_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=_out_path,
        metavar="FILE",
        help="also write the rows to FILE, every row with full values: .csv, .json, .jsonl or .parquet by its "
        "extension (an existing file is replaced; never a file the command reads)",
    )
    parser.set_defaults(out_is_rows_file=True)  # checked before any work (check_outputs), with --save


def write_out(path: Path | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Write ``rows`` to ``--out`` ``path`` (nothing when it is None); :class:`BadInput` when it cannot be written.
    Says on stderr what was written, so a --json output on stdout stays one JSON document."""
    if path is None:
        return
    import sys

    from engines.api import ExportError, export_rows

    try:
        done = export_rows(path, columns, rows, overwrite=True)
    except ExportError as e:
        raise BadInput(str(e)) from None
    print(f"cs224v-tui: wrote {done.rows:,} row{'s' if done.rows != 1 else ''} to {shown(done.path)}", file=sys.stderr)
