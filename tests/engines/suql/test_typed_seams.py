"""engines/suql's typed seams (mypy strict, tests/test_types.py): what changed in behaviour with the types.

- The paper's queries are read from the data folder the caller's settings name (no ``Settings()`` built
  inside the package).
- ``sqlparts.transformed``: a rewrite typed as its input is, refusing one that changed the root's kind.
- The sentinels of Kleene evaluation are enum members (mypy narrows ``is DEFERRED``), still singletons.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from engines.settings import Settings
from engines.suql.compiler import kleene
from engines.suql.compiler.sqlparts import transformed, without_calls
from engines.suql.examples import PAPER_QUERIES, paper_queries, read_paper_queries

SUQL = Path(__file__).resolve().parents[3] / "engines" / "suql"

CSV = (
    "Unique ID,Utterance,Predicted SUQL\n"
    "1,a thai place,\"SELECT name FROM restaurants WHERE 'thai' = ANY (cuisines) LIMIT 1\"\n"
    "2,no query,\n"
    "3,\"a quiet, romantic one\",\"SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes'\"\n"
)


def test_the_paper_queries_come_from_the_data_folder_of_the_settings_given(tmp_path):
    assert paper_queries(Settings(data_dir=tmp_path)) == []  # the folder holds no copy: none, no error
    folder = tmp_path.joinpath(*PAPER_QUERIES[:-1])
    folder.mkdir(parents=True)
    (folder / PAPER_QUERIES[-1]).write_text(CSV, encoding="utf-8")
    got = paper_queries(Settings(data_dir=tmp_path))
    assert [(e.title, e.source) for e in got] == [
        ("a thai place", "SUQL paper #1"),
        ("a quiet, romantic one", "SUQL paper #3"),
    ]
    assert read_paper_queries(folder / PAPER_QUERIES[-1]) == got
    assert read_paper_queries(tmp_path / "missing.csv") == []


def test_no_module_of_the_package_builds_its_own_settings():
    """Settings are passed in, typed: no call of ``Settings(...)`` in engines/suql (read from the parsed modules)."""
    built = [
        f"{path.relative_to(SUQL)}:{node.lineno}"
        for path in sorted(SUQL.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Settings")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Settings")
        )
    ]
    assert len(list(SUQL.rglob("*.py"))) > 25 and built == []


def test_transformed_keeps_the_kind_of_its_root_and_refuses_a_rewrite_that_changes_it():
    select = sqlglot.parse_one("SELECT name FROM restaurants WHERE answer(reviews, 'is it quiet?') = 'Yes'")
    assert isinstance(select, exp.Select)
    out = transformed(select, lambda n: exp.column("x") if isinstance(n, exp.Column) else n)
    assert isinstance(out, exp.Select) and out is not select
    assert out.sql() == "SELECT x FROM restaurants WHERE ANSWER(x, 'is it quiet?') = 'Yes'"
    assert select.sql().startswith("SELECT name")  # the input is not changed
    with pytest.raises(TypeError, match="a rewrite of a Select returned a Column"):
        transformed(select, lambda n: exp.column("x") if isinstance(n, exp.Select) else n)
    assert without_calls(select).sql() == ("SELECT name FROM restaurants WHERE CAST(NULL AS VARCHAR) = 'Yes'")


def test_the_kleene_sentinels_are_singletons_that_survive_a_copy():
    assert kleene.DEFERRED is kleene.Deferred.DEFERRED and repr(kleene.DEFERRED) == "DEFERRED"
    assert copy.deepcopy(kleene.DEFERRED) is kleene.DEFERRED and copy.copy(kleene.NO_FAST) is kleene.NO_FAST
    where = sqlglot.parse_one("SELECT 1 WHERE answer(reviews, 'q') = 'Yes' AND rating > 4").args["where"].this
    assert kleene.fast_truth(where, lambda _n: "Yes") is kleene.NO_FAST  # an AND is not a fast shape
    eq = where.this
    assert kleene.fast_truth(eq, lambda _n: "Yes") is True and kleene.fast_truth(eq, lambda _n: None) is None
