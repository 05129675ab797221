"""``describe --db SOURCE``: the engine's description of your own tables, as the parser and the schema pane see it.

For each table: its rows, the file it was read from and, for a CSV or TSV file, which fields were read as NULL;
for each column: its type, where the type came from (inferred from the values, given with ``--type``, declared by
the source), its role and how many of its values are NULL.  A PostgreSQL database is described lazily: only the
tables named here (all by default) are read.
"""

from __future__ import annotations

import argparse
import json

from tui.commands import EXIT_OK, BadInput, add_read_options

MAX_TABLES = 1000
"""At most this many TABLE names on the command line."""


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from tui.commands.restaurants import DB_HELP

    p = sub.add_parser(
        "describe",
        parents=[common],
        help="describe your own tables (--db): each column's type, where it came from, its role and its NULLs",
        description="Describe your own data as the engine reads it: each table's rows and file (a CSV or TSV "
        "file: the fields read as NULL), each column's type and where it came from (inferred from the values, "
        "given with --type, declared by the source), its role and how many values are NULL.",
    )
    p.add_argument("tables", nargs="*", metavar="TABLE", help="only these tables (default: all)")
    p.add_argument("--db", metavar="SOURCE", required=True, help=DB_HELP)
    add_read_options(p)
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"source", "kind", "tables": [{"name", "rows", "file", "null_tokens", "described", '
        '"columns": [{"name", "type", "type_from", "role", "nulls", "values"}]}], "notes"}',
    )
    p.set_defaults(handler=_describe)


def _describe(settings, args: argparse.Namespace) -> int:
    from tui.commands.restaurants import open_data

    if len(args.tables) > MAX_TABLES:
        raise BadInput(f"at most {MAX_TABLES} TABLE names")
    data = open_data(settings, args.db)
    try:
        known = {t.qualified for t in data.schema.tables}
        missing = [t for t in args.tables if t not in known]
        if missing:
            names = ", ".join(sorted(known)[:20]) + (", …" if len(known) > 20 else "")
            raise BadInput(f"{data.name} has no table {missing[0][:100]!r} (its tables: {names})")
        description = data.described(args.tables or None)
    finally:
        data.close()
    if args.tables:
        wanted = set(args.tables)
        description = type(description)(
            description.source,
            tuple(t for t in description.tables if t.qualified in wanted),
            description.kind,
            description.notes,
        )
    if args.json:
        print(json.dumps(description.to_json(), indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{description.source} ({description.kind})")
    for t in description.tables:
        rows = f"{t.rows:,} rows" if t.rows is not None else "rows not counted"
        if not t.described:
            rows = f"about {rows}, not described" if t.rows is not None else "not described"
        print(f"\n{t.qualified} — {rows}" + (f" — read from {t.file}" if t.file else ""))
        if t.null_tokens is not None:
            said = [repr(token) for token in t.null_tokens if token]
            print(f"  read as NULL: {', '.join([*said, 'empty fields'])}")
        width = min(max((len(c.name) for c in t.columns), default=0), 32)
        for c in t.columns:
            nulls = f"  {c.nulls:,} NULL" if c.nulls else ""
            origin = f" ({c.type_from})" if c.type_from else ""
            print(f"  {c.name:<{width}}  {c.type}{origin}  {c.role_words}{nulls}")
    for note in description.notes:
        print(f"\nnote: {note}")
    return EXIT_OK
