"""The pipeline's questions share one description of each table (its id column, its rowid): a table asked about
again is not described again (each description is a few sandbox queries, a sixth of the ablation's time)."""

from __future__ import annotations

import pytest

from engines.hybridqa.pipeline import HybridQA
from engines.llm.client import LLM
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.identity import RowNames
from engines.suql.execute import SuqlEngine

from .conftest import careful_backend

T = "veloria_flag_bearers"


def test_a_table_is_described_once_for_every_question_on_it(world, sandbox, monkeypatch):
    pipeline = HybridQA(sandbox, LLM(careful_backend()))
    described = []
    run = sandbox.run

    def spy(sql: str):
        if "duckdb_constraints" in sql:  # RowNames.id_column: the table's one-column primary key
            described.append(sql)
        return run(sql)

    monkeypatch.setattr(sandbox, "run", spy)
    names = [r[0] for r in world.table(T).rows[:3]]
    answers = [pipeline.ask(T, f"When was the flag bearer of the {n} Olympics born?") for n in names]
    assert all(a.final.error is None and not a.no_result for a in answers)
    assert len(described) == 1


def test_an_engine_refuses_the_row_names_of_another_sandbox(world, sandbox):
    with Sandbox.create(world.load) as other:
        with pytest.raises(ValueError, match="own sandbox"):
            SuqlEngine(sandbox, LLM(careful_backend()), names=RowNames(other))
    assert SuqlEngine(sandbox, LLM(careful_backend()), names=(n := RowNames(sandbox)))._names is n
