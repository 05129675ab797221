"""The compiler's pure passes on their own: Kleene logic against DuckDB's, lazy CASE, the cost model,
and the package's shape (frozen contexts; no pass imports the orchestrator)."""

from __future__ import annotations

import ast
import dataclasses
import itertools
from pathlib import Path

import duckdb
import pytest
import sqlglot

import engines.suql.compiler as compiler
from engines.suql.compiler.context import RunContext, SelectContext
from engines.suql.compiler.cost import CostModel, PredicateEstimate
from engines.suql.compiler.kleene import and_, lazy_truth, not_, number_leaves, or_, written_truth

TRUTHS = (True, False, None)


def _sql(v: bool | None) -> str:
    return "NULL::BOOLEAN" if v is None else str(v).upper()


def test_and_or_not_are_sqls_three_valued_logic() -> None:
    con = duckdb.connect()
    for a, b in itertools.product(TRUTHS, TRUTHS):
        got_and, got_or = con.execute(f"SELECT {_sql(a)} AND {_sql(b)}, {_sql(a)} OR {_sql(b)}").fetchone()
        assert and_(a, b) is got_and, (a, b)
        assert or_(a, b) is got_or, (a, b)
    for a in TRUTHS:
        assert not_(a) is con.execute(f"SELECT NOT {_sql(a)}").fetchone()[0]


def _asked(truths: dict[str, bool | None]) -> tuple[list[str], object]:
    asked: list[str] = []

    def leaf(node: sqlglot.exp.Expression) -> bool | None:
        name = node.sql()
        asked.append(name)
        return truths[name]

    return asked, leaf


def test_lazy_case_asks_only_the_branch_the_row_takes() -> None:
    tree = sqlglot.parse_one("CASE WHEN x = 1 THEN answer(t, 'a') = 'Yes' ELSE answer(t, 'b') = 'Yes' END")
    asked, leaf = _asked({"x = 1": True, "ANSWER(t, 'a') = 'Yes'": None, "ANSWER(t, 'b') = 'Yes'": False})
    assert lazy_truth(tree, leaf, structured_first=True, short_circuit=True) is None
    assert asked == ["x = 1", "ANSWER(t, 'a') = 'Yes'"]


def test_lazy_or_tries_the_side_without_a_call_first_and_stops_there() -> None:
    tree = sqlglot.parse_one("answer(t, 'a') = 'Yes' OR x = 1")
    asked, leaf = _asked({"x = 1": True, "ANSWER(t, 'a') = 'Yes'": False})
    assert lazy_truth(tree, leaf, structured_first=True, short_circuit=True) is True
    assert asked == ["x = 1"]
    asked, leaf = _asked({"x = 1": True, "ANSWER(t, 'a') = 'Yes'": False})
    assert lazy_truth(tree, leaf, structured_first=False, short_circuit=False) is True
    assert asked == ["ANSWER(t, 'a') = 'Yes'", "x = 1"]


def test_the_written_where_is_left_to_right_and_stops_at_the_deciding_value() -> None:
    where = (
        sqlglot.parse_one("SELECT 1 WHERE (answer(t, 'a') = 'Yes' OR answer(t, 'b') = 'Yes') AND x = 1")
        .args["where"]
        .this
    )
    tree, leaves = number_leaves(where)  # the structured leaves carry their number, not their id()
    assert [leaf.sql() for leaf in leaves] == ["x = 1"] and tree is not where
    asked, leaf = _asked({"ANSWER(t, 'a') = 'Yes'": True, "ANSWER(t, 'b') = 'Yes'": False})
    assert written_truth(tree, [None], leaf) is None  # TRUE AND UNKNOWN
    assert asked == ["ANSWER(t, 'a') = 'Yes'"]  # OR stopped at the first TRUE; x = 1 was known


def test_expected_cost_and_rank_order() -> None:
    cheap_stops = PredicateEstimate("a", 0, 1.0, 0.2, "")
    dear_passes = PredicateEstimate("b", 1, 2.0, 0.9, "")
    model = CostModel()
    assert model.expected_cost([cheap_stops, dear_passes]) == pytest.approx(1.0 + 0.2 * 2.0)
    assert model.order([dear_passes, cheap_stops], by_rank=True) == [1, 0]
    assert model.order([dear_passes, cheap_stops], by_rank=False) == [0, 1]


def test_the_contexts_are_frozen() -> None:
    for cls in (RunContext, SelectContext):
        assert cls.__dataclass_params__.frozen, cls
    sel = SelectContext(sqlglot.parse_one("SELECT 1"), sqlglot.exp.column("rowid"), {}, {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        sel.key = sqlglot.exp.column("other")  # type: ignore[misc]


def test_no_pass_imports_the_orchestrator() -> None:
    for path in Path(compiler.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module]
                if isinstance(node, ast.ImportFrom)
                else ([a.name for a in node.names] if isinstance(node, ast.Import) else [])
            )
            assert "engines.suql.execute" not in names, path.name
