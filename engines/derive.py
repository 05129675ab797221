"""The two derived data sets, built from their upstream files: the HybridQA sample and SPINACH's row-F1 cases.

    hybridqa_sample(traced, tables, questions_commit)   # {"hybridqa/manifest.json": bytes, "hybridqa/<id>.json": ...}
    row_f1_cases(test_eval_py)                          # the bytes of spinach/row_f1_cases.json

Both write JSON as the course's shared copies are written (``indent=1``, UTF-8 as is, no final newline), so the
result can be checked byte for byte against the catalogue's SHA-256 (:mod:`engines.datasets` does).

What comes from upstream is treated as hostile: every input is parsed (``json``; Python's ``ast`` for SPINACH's
``tests/test_eval.py``, which is never executed: its lists are read with ``ast.literal_eval`` and its expected values
are evaluated from the parsed tree, numbers and ``+ - * /`` only) and checked for the shape the derivation needs;
anything else is a :class:`DeriveFailed` naming the upstream file.  The inputs' sizes are bounded by the caller.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engines.errors import EngineError

HYBRIDQA_SELECTION = "dev tables with >= 3 dev questions, smallest request_tok first, until >= 40 questions"
HYBRIDQA_QUESTIONS = "wenhuchen/HybridQA released_data/dev.traced.json"
ROW_F1_SOURCE = (
    "stanford-oval/spinach tests/test_eval.py (Apache-2.0): inputs and expected values of its 14 cases for "
    "eval.f1(predicted, gold, maximal_matching=True); rows are SPARQL JSON bindings; columns whose names end in "
    "Label or Description are ignored on the gold side"
)
_QUESTION_FIELDS = ("question_id", "question", "answer-text", "answer-node", "question_postag")
_TABLE_KEYS = {"url", "title", "header", "data", "section_title", "section_text", "uid", "intro"}


class DeriveFailed(EngineError):
    """An upstream file does not have the form the derived data set is built from."""


@dataclass(frozen=True)
class TableSource:
    """One HybridQA table's two upstream files (WikiTables-WithLinks ``tables_tok/`` and ``request_tok/``)."""

    table_id: str
    table: bytes
    table_commit: str
    passages: bytes
    passages_commit: str


def dumps(obj: Any) -> bytes:
    """JSON as the shared copies are written: one-space indent, non-ASCII as is, no final newline."""
    return json.dumps(obj, indent=1, ensure_ascii=False).encode("utf-8")


def _text(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DeriveFailed(f"{what} is not UTF-8 ({e}).") from None


def _json(data: bytes, what: str) -> Any:
    try:
        return json.loads(_text(data, what))
    except (ValueError, RecursionError) as e:
        raise DeriveFailed(f"{what} is not JSON ({e}).") from None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def _cells(value: Any, what: str) -> list[dict[str, Any]]:
    """``[[text, [link, …]], …]`` as ``[{"text", "links"}, …]``."""
    if not isinstance(value, list) or not all(
        isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and _strings(c[1]) for c in value
    ):
        raise DeriveFailed(f"{what} is not a list of [text, [links]] cells.")
    return [{"text": text, "links": links} for text, links in value]


def _table(src: TableSource, questions: list[dict[str, Any]], questions_commit: str) -> dict[str, Any]:
    where = f"WikiTables-WithLinks tables_tok/{src.table_id}.json"
    t = _json(src.table, where)
    if not isinstance(t, dict) or not set(t) <= _TABLE_KEYS or not set(t) >= _TABLE_KEYS - {"intro"}:
        raise DeriveFailed(f"{where} does not have the keys of a table ({', '.join(sorted(_TABLE_KEYS))}).")
    if t["uid"] != src.table_id:
        raise DeriveFailed(f"{where} is the table {t['uid']!r}, not {src.table_id!r}.")
    for key in ("url", "title", "section_title", "section_text"):
        if not isinstance(t[key], str):
            raise DeriveFailed(f"{where}: {key} is not a string.")
    intro = t.get("intro")
    if intro is not None and not isinstance(intro, str):
        raise DeriveFailed(f"{where}: intro is not a string.")
    header = _cells(t["header"], f"{where}: header")
    if not isinstance(t["data"], list):
        raise DeriveFailed(f"{where}: data is not a list of rows.")
    rows = [_cells(row, f"{where}: data") for row in t["data"]]
    where_p = f"WikiTables-WithLinks request_tok/{src.table_id}.json"
    passages = _json(src.passages, where_p)
    if not isinstance(passages, dict) or not all(isinstance(v, str) for v in passages.values()):
        raise DeriveFailed(f"{where_p} is not an object of passages (link: text).")
    links = {link for cell in header for link in cell["links"]} | {
        link for row in rows for cell in row for link in cell["links"]
    }
    answered = {node[2] for q in questions for node in q["answer-node"] if isinstance(node[2], str)}
    return {
        "table_id": src.table_id,
        "url": t["url"],
        "title": t["title"],
        "section_title": t["section_title"],
        "section_text": t["section_text"],
        "intro": intro,
        "header": [{"name": c["text"], "links": c["links"]} for c in header],
        "rows": rows,
        "passages": passages,
        "questions": questions,
        "stats": {
            "n_rows": len(rows),
            "n_cols": len(header),
            "n_distinct_links": len(links),
            "n_passages": len(passages),
            "links_without_passage": sorted(links - passages.keys()),
            "passages_not_linked_in_table": sorted(passages.keys() - links),
            "answer_node_links_missing_passage": sorted(answered - passages.keys()),
        },
        "source": {
            "questions": HYBRIDQA_QUESTIONS,
            "table": f"wenhuchen/WikiTables-WithLinks tables_tok/{src.table_id}.json",
            "passages": f"wenhuchen/WikiTables-WithLinks request_tok/{src.table_id}.json",
            "table_commit": src.table_commit,
            "passages_commit": src.passages_commit,
            "table_chars_verified": len(_text(src.table, where)),
            "passages_chars_verified": len(_text(src.passages, where_p)),
            "questions_commit": questions_commit,
        },
    }


def _questions_by_table(traced: bytes, wanted: set[str]) -> dict[str, list[dict[str, Any]]]:
    records = _json(traced, HYBRIDQA_QUESTIONS)
    if not isinstance(records, list):
        raise DeriveFailed(f"{HYBRIDQA_QUESTIONS} is not a list of questions.")
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in wanted}
    for n, r in enumerate(records):
        if not isinstance(r, dict) or not isinstance(r.get("table_id"), str):
            raise DeriveFailed(f"{HYBRIDQA_QUESTIONS}: record {n} is not a question with a table_id.")
        if r["table_id"] not in wanted:
            continue
        if not all(k in r for k in _QUESTION_FIELDS) or not isinstance(r["question_id"], str):
            raise DeriveFailed(f"{HYBRIDQA_QUESTIONS}: record {n} lacks one of {', '.join(_QUESTION_FIELDS)}.")
        nodes = r["answer-node"]
        if not isinstance(nodes, list) or not all(isinstance(x, list) and len(x) == 4 for x in nodes):
            raise DeriveFailed(f"{HYBRIDQA_QUESTIONS}: question {r['question_id']}'s answer-node is not a node list.")
        out[r["table_id"]].append({k: r[k] for k in _QUESTION_FIELDS})
    return out


def hybridqa_sample(traced: bytes, tables: Sequence[TableSource], questions_commit: str) -> dict[str, bytes]:
    """The HybridQA sample: one file per table (its cells, linked passages, dev questions, stats and sources) and
    ``manifest.json``, in the order of ``tables``; keys are paths under the data folder."""
    by_table = _questions_by_table(traced, {t.table_id for t in tables})
    out: dict[str, bytes] = {}
    listed = []
    for src in tables:
        questions = by_table[src.table_id]
        if not questions:
            raise DeriveFailed(f"{HYBRIDQA_QUESTIONS} has no question on the table {src.table_id}.")
        table = _table(src, questions, questions_commit)
        out[f"hybridqa/{src.table_id}.json"] = dumps(table)
        listed.append(
            {
                "table_id": src.table_id,
                "file": f"{src.table_id}.json",
                "n_questions": len(questions),
                "question_ids": [q["question_id"] for q in questions],
                "n_rows": table["stats"]["n_rows"],
                "n_passages": table["stats"]["n_passages"],
            }
        )
    manifest = {
        "n_tables": len(listed),
        "n_questions": sum(t["n_questions"] for t in listed),
        "selection": HYBRIDQA_SELECTION,
        "tables": listed,
    }
    return {"hybridqa/manifest.json": dumps(manifest), **out}


# --- SPINACH's row-F1 cases ---------------------------------------------------------------------------------

_ARITHMETIC: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_TEST_EVAL = "stanford-oval/spinach tests/test_eval.py"


def _number(node: ast.expr, where: str) -> int | float:
    """The value of an expression of number literals, ``+ - * /`` and parentheses: nothing else is evaluated."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and type(node.value) in (int, float):
        return node.value  # not a bool (an int's subclass)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_number(node.operand, where)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        try:
            return _ARITHMETIC[type(node.op)](_number(node.left, where), _number(node.right, where))
        except (ZeroDivisionError, OverflowError) as e:
            raise DeriveFailed(f"{where}: the expected value cannot be computed ({e}).") from None
    raise DeriveFailed(f"{where}: the expected value is not arithmetic on numbers ({ast.dump(node)[:80]}).")


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _case(fn: ast.FunctionDef) -> dict[str, Any]:
    where = f"{_TEST_EVAL} {fn.name}"
    values: dict[str, Any] = {}
    expected: int | float | None = None
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            try:
                values[name] = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise DeriveFailed(f"{where}: {name} is not a literal.") from None
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and _is_name(call.func.value, "self")
            and call.func.attr == "assertEqualRound"
            and len(call.args) == 2
            and not call.keywords
        ):
            inner = call.args[0]
            if not (
                isinstance(inner, ast.Call)
                and _is_name(inner.func, "f1")
                and [a.id if isinstance(a, ast.Name) else None for a in inner.args] == ["predicted", "gold"]
                and not inner.keywords
            ):
                raise DeriveFailed(f"{where}: the assertion does not compare f1(predicted, gold).")
            if expected is not None:
                raise DeriveFailed(f"{where}: more than one assertion.")
            expected = _number(call.args[1], where)
            continue
        raise DeriveFailed(f"{where}: line {stmt.lineno} is neither an assignment nor the f1 assertion.")
    if expected is None or not {"predicted", "gold"} <= values.keys():
        raise DeriveFailed(f"{where}: it does not set predicted and gold and assert f1.")
    for side in ("predicted", "gold"):
        rows = values[side]
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise DeriveFailed(f"{where}: {side} is not a list of rows.")
    return {"name": fn.name, "predicted": values["predicted"], "gold": values["gold"], "expected_f1": expected}


def row_f1_cases(test_eval_py: bytes) -> bytes:
    """``spinach/row_f1_cases.json``: every ``test_*`` method of SPINACH's ``tests/test_eval.py``, in file order,
    read from its syntax tree (the file is parsed, never run)."""
    try:
        tree = ast.parse(_text(test_eval_py, _TEST_EVAL), filename="tests/test_eval.py")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise DeriveFailed(f"{_TEST_EVAL} cannot be parsed as Python ({type(e).__name__}: {e}).") from None
    cases = [
        _case(fn)
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for fn in cls.body
        if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")
    ]
    if not cases:
        raise DeriveFailed(f"{_TEST_EVAL} has no test_ method.")
    return dumps({"source": ROW_F1_SOURCE, "cases": cases})


__all__ = ["DeriveFailed", "TableSource", "dumps", "hybridqa_sample", "row_f1_cases"]
