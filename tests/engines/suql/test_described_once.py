"""A world table is described once per RowNames (its columns feed the id column and the label column of every
question on it), precheck binds a query once where one binding tells all it needs, and a SELECT's values and the
rows its WHERE keeps are one scratch table."""

from __future__ import annotations

import pytest
from sqlglot import exp

from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.compiler.identity import RowNames
from engines.suql.execute import RowDecided, SuqlEngine

ROMANTIC = "answer(reviews, 'is it romantic?') = 'Yes'"
COZY = "answer(reviews, 'is it cozy?') = 'Yes'"


class Described:
    """The sandbox as RowNames sees it, counting what it asks ``columns_of``."""

    def __init__(self, sandbox) -> None:
        self._sandbox = sandbox
        self.asked: list[str] = []

    def columns_of(self, expression: exp.Expression):
        self.asked.append(expression.sql(dialect="duckdb"))
        return self._sandbox.columns_of(expression)

    def __getattr__(self, name: str):
        return getattr(self._sandbox, name)


def test_a_tables_columns_are_described_once_across_questions(sandbox, world):
    names = RowNames(sandbox)
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)), names=names)
    names.sandbox = described = Described(sandbox)
    labels = []
    for cond in (ROMANTIC, COZY, ROMANTIC):
        events = []
        engine.run(f"SELECT _id FROM restaurants WHERE location = 'Palo Alto' AND {cond}", mode="C", emit=events.append)
        labels += [e.row_key for e in events if isinstance(e, RowDecided)]
    # each row is still labelled with its own id and name (the label column)
    assert labels and all(world.by_id(int(lab[1:].split(" ", 1)[0])).name == lab.split(" ", 1)[1] for lab in labels)
    # one description of restaurants' columns for its id column and every question's label column
    assert described.asked.count("SELECT * FROM restaurants") == 1


def test_precheck_binds_a_query_of_one_table_once(sandbox, monkeypatch):
    from engines.suql import language
    from engines.suql.compiler.precheck import precheck

    bound = []
    columns_of = sandbox.columns_of
    monkeypatch.setattr(sandbox, "columns_of", lambda e: bound.append(e) or columns_of(e))
    precheck(sandbox, language.parse(f"SELECT name FROM restaurants WHERE location = 'Palo Alto' AND {ROMANTIC}"))
    assert len(bound) == 1


@pytest.mark.parametrize(
    "sql, refused",
    [
        # the same refusals as binding the query, then its calls' arguments
        (
            "SELECT name FROM restaurants WHERE answer(rating, 'is it romantic?') = 'Yes'",
            "reads text: rating is DECIMAL",
        ),
        ("SELECT nme FROM restaurants WHERE " + ROMANTIC, 'column "nme" not found'),
        ("SELECT name FROM restaurants WHERE answer(reviews, 'q') = 'Yes' ORDER BY 2", "ORDER term out of range"),
        # an argument naming a SELECT alias is not read over the sources (there it does not bind: not refused)
        ("SELECT rating AS r, answer(r, 'is it romantic?') FROM restaurants", None),
        ("SELECT name FROM restaurants ORDER BY CAST(answer(reviews, 'when did it open?') AS DATE) LIMIT 1", None),
    ],
)
def test_precheck_in_one_binding_refuses_what_two_refuse(sandbox, sql, refused):
    from engines.errors import EngineError
    from engines.suql import language
    from engines.suql.compiler.precheck import precheck

    if refused is None:
        precheck(sandbox, language.parse(sql))
    else:
        with pytest.raises(EngineError, match=refused):
            precheck(sandbox, language.parse(sql))


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT name FROM restaurants WHERE location = 'Palo Alto' AND {ROMANTIC}",
        # output_keys' table (its ORDER BY) is the final query's: no value came between them
        f"SELECT name FROM restaurants WHERE location = 'Palo Alto' AND {ROMANTIC} "
        "ORDER BY answer(reviews, 'what is its best dish?') DESC LIMIT 2",
    ],
)
def test_one_scratch_table_holds_a_selects_values_and_its_matches(sandbox, world, monkeypatch, sql):
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224, error_on_topic=0, error_off_topic=0)))
    made = []
    scratch_table = sandbox.scratch_table
    monkeypatch.setattr(sandbox, "scratch_table", lambda cols, rows: made.append(rows) or scratch_table(cols, rows))
    events = []
    result = engine.run(sql, mode="C", emit=events.append)
    matched = {e.row_key.split(" ", 1)[1] for e in events if isinstance(e, RowDecided) and e.truth == "match"}
    assert result.rows and {r[0] for r in result.rows} <= matched
    if "LIMIT" not in sql:
        assert {r[0] for r in result.rows} == matched
    # one table for the values and the matches (and the rows to verify's own, when some are unknown)
    assert len(made) == 1 + bool(result.to_verify)
