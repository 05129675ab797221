"""The real HybridQA dev tables (``hybridqa/`` of the data folder): header, rows with cell links and passages, read
into :class:`~worlds.hybridqa.model.HybridTable` with their questions and gold answers.  No hidden truth."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from worlds.data import locate, missing_message, search_roots
from worlds.hybridqa.model import INFO_SUFFIX, HybridDataError, HybridQuestion, HybridTable, HybridWorld, _slug


def real_data_dir(data_dir: Path | None = None) -> Path | None:
    """``hybridqa/`` under ``data_dir`` (default: the user data folder, then ``../shared/data`` beside the
    checkout; see :mod:`worlds.data`), if present.  The engines pass the ``data_dir`` setting."""
    path = locate(search_roots(Path(data_dir) if data_dir is not None else None), "hybridqa")
    return path if path is not None and path.is_dir() else None


def _identifier(table_id: str, taken: set[str]) -> str:
    base = _slug(table_id) or "table"
    if base[0].isdigit():
        base = "t_" + base
    base = base[:60]
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _unique_columns(names: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for raw in names:
        n = " ".join(str(raw).split()) or "column"
        c = seen.get(n, 0)
        seen[n] = c + 1
        out.append(n if c == 0 else f"{n} ({c + 1})")
    return out


def real_table(data: Mapping[str, Any], *, name: str, file: str = "") -> HybridTable:
    """One HybridQA table (its JSON object) as a :class:`HybridTable`.

    Every column with at least one linked cell gains an ``_Info`` column right after it: the
    passages of the cell's links, in link order, separated by a blank line (NULL when the
    cell links nowhere).
    """
    where = file or str(data.get("table_id", "?"))
    try:
        header = [h["name"] if isinstance(h, Mapping) else str(h) for h in data["header"]]
        raw_rows = data["rows"]
        passages = data.get("passages") or {}
        table_id = str(data.get("table_id") or name)
    except (KeyError, TypeError) as e:
        raise HybridDataError(f"{where}: not a HybridQA table (missing {e}).") from e
    if not isinstance(raw_rows, list) or not header:
        raise HybridDataError(f"{where}: a HybridQA table needs a header and a list of rows.")
    width = len(header)
    cells: list[list[tuple[str, list[str]]]] = []
    for i, row in enumerate(raw_rows):
        if not isinstance(row, list) or len(row) != width:
            raise HybridDataError(
                f"{where}: row {i} has {len(row) if isinstance(row, list) else 'no'} cells, the header {width}."
            )
        parsed = []
        for cell in row:
            if isinstance(cell, Mapping):
                parsed.append((str(cell.get("text", "")), [str(link) for link in cell.get("links") or []]))
            else:  # the older [text, links] pair form
                text, links = (cell[0], cell[1]) if isinstance(cell, list) and len(cell) == 2 else (cell, [])
                parsed.append((str(text), [str(link) for link in links or []]))
        cells.append(parsed)
    base_names = _unique_columns(header)
    linked = [any(r[j][1] for r in cells) for j in range(width)]
    columns: list[str] = []
    for j, n in enumerate(base_names):
        columns.append(n)
        if linked[j]:
            columns.append(n + INFO_SUFFIX)
    columns = _unique_columns(columns)
    rows = []
    for r in cells:
        out: list[str | None] = []
        for j, (text, links) in enumerate(r):
            out.append(text)
            if linked[j]:
                found = [str(passages[link]) for link in links if link in passages and passages[link]]
                out.append("\n\n".join(found) if found else None)
        rows.append(tuple(out))
    questions = tuple(
        HybridQuestion(
            str(q.get("question_id", f"{table_id}-{k}")),
            name,
            str(q.get("question", "")),
            str(q.get("answer-text", "")),
            None,
        )
        for k, q in enumerate(data.get("questions") or [])
        if isinstance(q, Mapping) and q.get("question")
    )
    title = " — ".join(p for p in (data.get("title"), data.get("section_title")) if p) or table_id
    return HybridTable(
        name, table_id, str(title), tuple(columns), tuple(rows), questions, "real", str(data.get("url") or "")
    )


MAX_TABLE_FILE_BYTES = 64 << 20
"""The most bytes of one HybridQA table file or manifest (the real ones are 10-30 KB): a bigger file, a FIFO or a
device is refused before it is read."""


def _read_bounded(path: Path, what: str) -> Any:
    """``path``'s JSON: a regular file of at most :data:`MAX_TABLE_FILE_BYTES`, nested no deeper than Python's
    parser can take (a RecursionError is a bad file, not a crash)."""
    try:
        mode = path.stat()
    except FileNotFoundError:
        raise
    except OSError as e:
        raise HybridDataError(f"{path.name}: cannot be read ({e.strerror or e}).") from e
    if not stat.S_ISREG(mode.st_mode):
        raise HybridDataError(f"{path.name}: not a regular file; {what} must be a JSON file.")
    if mode.st_size > MAX_TABLE_FILE_BYTES:
        raise HybridDataError(
            f"{path.name} is {mode.st_size:,} bytes: larger than the {MAX_TABLE_FILE_BYTES:,} bytes {what} may have."
        )
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_TABLE_FILE_BYTES + 1)
        if len(raw) > MAX_TABLE_FILE_BYTES:
            raise HybridDataError(f"{path.name} grew past {MAX_TABLE_FILE_BYTES:,} bytes while it was read.")
        return json.loads(raw.decode("utf-8"))
    except RecursionError as e:
        raise HybridDataError(f"{path.name}: JSON nested too deeply to be {what}.") from e
    except UnicodeDecodeError as e:
        raise HybridDataError(f"{path.name}: not UTF-8 text ({e.reason} at byte {e.start}).") from e


def _listed_file(folder: Path, name: str) -> Path:
    """A file the manifest lists: a plain name in ``folder`` (no path: a manifest never reaches outside it)."""
    if not name or name != Path(name).name or name in (".", ".."):
        raise HybridDataError(f"manifest.json lists {name!r}: a table must be a file name in {folder.name}/.")
    return folder / name


def load_real(directory: Path | str | None = None) -> HybridWorld:
    """Every HybridQA table of ``directory`` (default: ``hybridqa/`` of ``../shared/data`` beside the checkout).

    Reads ``manifest.json`` when present (its table order), otherwise every ``*.json`` file.
    Raises :class:`HybridDataError` with a plain message for a missing folder or a bad file.
    """
    folder = Path(directory) if directory is not None else real_data_dir()
    if folder is None:
        raise HybridDataError(f"No HybridQA data found. {missing_message('hybridqa')}")
    if not folder.is_dir():
        raise HybridDataError(f"{folder} is not a folder of HybridQA tables.")
    manifest = folder / "manifest.json"
    files: list[Path]
    if manifest.is_file():
        try:
            listed = _read_bounded(manifest, "a manifest").get("tables", [])
            files = [_listed_file(folder, str(t["file"])) for t in listed]
        except HybridDataError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise HybridDataError(f"{manifest}: not a readable manifest ({e}).") from e
    else:
        files = sorted(p for p in folder.glob("*.json"))
    if not files:
        raise HybridDataError(f"{folder} holds no HybridQA tables (*.json).")
    taken: set[str] = set()
    tables = []
    for path in files:
        try:
            data = _read_bounded(path, "a HybridQA table")
        except HybridDataError:
            raise
        except FileNotFoundError as e:
            raise HybridDataError(f"{path.name} is listed in the manifest but missing.") from e
        except (OSError, ValueError) as e:
            raise HybridDataError(f"{path.name}: not readable JSON ({e}).") from e
        if not isinstance(data, Mapping):
            raise HybridDataError(f"{path.name}: not a HybridQA table (a JSON object is expected).")
        tables.append(real_table(data, name=_identifier(str(data.get("table_id") or path.stem), taken), file=path.name))
    return HybridWorld("hybridqa-real", tuple(tables))
