"""The data sets: ``data where`` (which was found where, which are missing and how to get them) and
``data fetch`` (download them, checked, into the user data folder)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tui.commands import EXIT_OK, BadInput, shown


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    d = sub.add_parser(
        "data",
        parents=[common],
        help="the real data sets: where they were found, and fetching them",
        description="The real data sets the app uses (HybridQA tables, the SPINACH dev set and row-F1 cases, the "
        "SUQL paper's queries). Each is looked for in CS224V_DATA (when set, only there), then the user data "
        "folder, then ../shared/data beside a source checkout.",
    )
    dsub = d.add_subparsers(dest="data_command", metavar="ACTION")
    w = dsub.add_parser(
        "where", parents=[common], help="which data set was found where, which are missing and how to get them"
    )
    w.add_argument("--json", action="store_true", help="print a JSON list, one object per data set")
    w.set_defaults(handler=_where)
    f = dsub.add_parser(
        "fetch",
        parents=[common],
        help="download the data sets (checked against their SHA-256) into the user data folder",
        description="Download the data sets from their public sources upstream, pinned to commits "
        "(CS224V_DATA_UPSTREAM_URL serves them, raw.githubusercontent.com by default), or from a mirror of the shared "
        "data folder (--from or CS224V_DATA_URL). The HybridQA sample and the row-F1 cases are built from their "
        "upstream files (HybridQA, WikiTables-WithLinks, SPINACH's tests/test_eval.py) and checked against their "
        "SHA-256 before anything is written. Every file is checked against its SHA-256 and written atomically; a "
        "server that sends more bytes than the file has is cut off, each file has an overall deadline "
        "(CS224V_DATA_FETCH_DEADLINE_S, 300 s), redirects to another origin are refused and no proxy is taken from "
        "the environment. An interrupted download continues where it stopped; files already there and intact "
        "are kept.",
    )
    f.add_argument("names", nargs="*", metavar="NAME", help="only these data sets (default: all); see `data where`")
    f.add_argument("--to", type=Path, metavar="DIR", help="the folder to fill (default: the user data folder)")
    f.add_argument(
        "--from", dest="mirror", metavar="URL", help="a mirror of the shared data folder (default: CS224V_DATA_URL)"
    )
    f.add_argument("--json", action="store_true", help="print what was fetched as JSON")
    f.set_defaults(handler=_fetch)
    d.set_defaults(handler=_no_action)


def _no_action(settings, args: argparse.Namespace) -> int:
    raise BadInput("give an action: `cs224v-tui data where` or `cs224v-tui data fetch`")


def _where(settings, args: argparse.Namespace) -> int:
    from engines.api import datasets_where as where
    from worlds.data import user_data_folder

    found = where(settings)
    if args.json:
        print(json.dumps([f.to_json() for f in found], indent=2, ensure_ascii=False))
        return EXIT_OK
    print("Looked in, in order: " + "; ".join(f"{how} {shown(root)}" for how, root in settings.data_roots()))
    if "data_dir" not in settings.model_fields_set:
        print(f"  (data fetch writes to the user data folder {shown(user_data_folder())})")
    for f in found:
        d = f.entry.dataset
        print(f"\n{d.name}: {d.title}")
        print(f"  used by {d.used_by}")
        if f.path is None:
            print(f"  MISSING — {f.message}")
            continue
        print(f"  found in the {f.how}: {shown(f.path)}")
        files = len(f.entry.files)
        state = f"  {f.ok} of {files} files match their checksums"
        if f.differ:
            state += (
                f"; {len(f.differ)} differ (" + ", ".join(f.differ[:3]) + (", …" if len(f.differ) > 3 else "") + ")"
            )
        if f.missing:
            state += (
                f"; {len(f.missing)} missing (" + ", ".join(f.missing[:3]) + (", …" if len(f.missing) > 3 else "") + ")"
            )
        print(state)
    return EXIT_OK


def _fetch(settings, args: argparse.Namespace) -> int:
    from engines.api import Progress
    from engines.api import dataset_entry as entry
    from engines.api import fetch_datasets as fetch

    for name in args.names:
        entry(name)  # an unknown name fails before anything is downloaded
    quiet = args.json
    tty = sys.stderr.isatty()

    def progress(p: Progress) -> None:
        if quiet:
            return
        if p.state == "present":
            print(f"  {p.path}: already there, checksum ok", file=sys.stderr)
        elif p.state == "start":
            print(f"  {p.path} ← {p.url}", file=sys.stderr)
        elif p.state == "bytes" and tty:
            print(f"    {p.done:>10,} of {p.total:,} bytes", end="\r", file=sys.stderr)
        elif p.state == "done":
            print(f"    {p.total:>10,} bytes, SHA-256 ok", file=sys.stderr)
        elif p.state == "input":
            checked = "SHA-256 ok" if p.checked else "checked through the files built from it"
            print(f"    {p.done:>10,} bytes (upstream), {checked}", file=sys.stderr)
        elif p.state == "built":
            print(f"  {p.path}: built from upstream, {p.total:,} bytes, SHA-256 ok", file=sys.stderr)
        elif p.state == "kept":
            print(f"    the file that was there (other bytes) is kept as {p.path}", file=sys.stderr)

    result = fetch(settings, args.names or None, to=args.to, mirror=args.mirror, progress=progress)
    if args.json:
        print(
            json.dumps(
                {
                    "folder": str(result.target),
                    "downloaded": result.downloaded,
                    "built": result.built,
                    "present": result.present,
                    "kept": result.kept,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        built = f", {len(result.built)} built from upstream" if result.built else ""
        print(
            f"{len(result.downloaded)} files downloaded{built}, {len(result.present)} already there, "
            f"in {shown(result.target)}"
        )
        if result.kept:
            print(f"  Files that were there with other bytes were kept, renamed: {', '.join(result.kept)}")
        if args.to is not None:
            print(f"  (a folder of your choosing: set CS224V_DATA={shown(result.target)} for the app to read it)")
    return EXIT_OK
