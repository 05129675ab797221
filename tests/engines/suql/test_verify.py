"""Rows to verify, settled on demand (issue 29.0): lazy verification against eager.

Lazily, a row whose WHERE can no longer be True stops at its first Unknown condition and is listed to verify
unsettled; ``SuqlEngine.settle`` asks the rest.  Over the benchmark's workload (benchmarks/suql_bench.py: the
600-restaurant world, workload seed 7) in modes A–F:

- lazy, then settling every row, returns exactly the eager result: the rows, the rows to verify, the answers;
- lazy never asks a (text, question) eager does not, and its rows to verify are a superset of eager's;
- the calls settling makes are counted as verification calls, and so are eager's calls on rows already Unknown.
"""

from __future__ import annotations

import pytest

from engines.events import CallFinished
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.sql.sandbox import Sandbox
from engines.suql.execute import SuqlEngine
from engines.suql.workload import generate
from worlds.restaurants import build

WORKLOAD = generate(7, 60)  # the benchmark's queries
# modes C-F on a sixth of the workload (list-all and LIMIT, one and two conditions); A and B decide every row in
# full by definition (A asks every condition, B reads the WHERE as written), checked on a few queries
CASES = [(q, m) for q in WORKLOAD[::6] for m in "CDEF"] + [(q, m) for q in WORKLOAD[:2] for m in "AB"]


@pytest.fixture(scope="module")
def bench_sandbox():
    world, _ = build(n=600)
    sb = Sandbox.create(world.load)
    yield sb
    sb.close()


def _verify_rows(result) -> set[tuple]:
    """The rows to verify, as rows (what is known of them differs: lazy has asked less)."""
    return {
        tuple(sorted((k, str(v)) for k, v in rec.items() if k not in ("unknown", "not_asked", "settled")))
        for rec in result.to_verify
    }


@pytest.mark.parametrize(("query", "mode"), CASES, ids=[f"{m}-{i}" for i, (_, m) in enumerate(CASES)])
def test_lazy_then_settling_everything_is_the_eager_result(bench_sandbox, query, mode) -> None:
    engine = SuqlEngine(bench_sandbox, LLM(SimBackend()))
    eager = engine.run(query.sql, mode=mode, verify="eager")
    lazy = engine.run(query.sql, mode=mode, verify="lazy")
    settled = engine.settle(lazy)

    assert settled.rows == eager.rows
    assert settled.to_verify == eager.to_verify
    assert settled.settled and settled.unsettled == 0 and settled.verify == "eager"
    eager_answers, lazy_answers = eager.known[0], lazy.known[0]
    assert settled.known[0] == eager_answers  # the same answers, no more, no fewer
    # lazy asks nothing eager does not; what it leaves is what settling asks, all of it verification
    assert lazy_answers.keys() <= eager_answers.keys()
    assert lazy.stats.answer_calls + settled.stats.answer_calls == len(eager_answers)
    assert settled.stats.verification_calls == settled.stats.answer_calls
    assert lazy.stats.verification_calls == 0
    # the matches come first: lazy's rows are eager's; its rows to verify a superset until settled
    if query.limit is None:
        assert lazy.rows == eager.rows
    assert _verify_rows(eager) <= _verify_rows(lazy)
    assert lazy.unsettled == sum(1 for r in lazy.to_verify if r.get("settled") is False)
    if mode in "AB":
        assert lazy.unsettled == 0 and lazy.known[0] == eager_answers


LIST_ALL_TWO = next(q for q in WORKLOAD if q.limit is None and len(q.features) == 2)


def test_an_unsettled_row_says_what_is_known_and_settling_one_row_asks_only_its_conditions(bench_sandbox) -> None:
    engine = SuqlEngine(bench_sandbox, LLM(SimBackend()))
    lazy = engine.run(LIST_ALL_TWO.sql, mode="E", verify="lazy")
    assert not lazy.settled and lazy.unsettled > 0
    assert any("verify lazy" in n and "not yet settled" in n for n in lazy.plan.notes)
    first = next(i for i, r in enumerate(lazy.to_verify) if r.get("settled") is False)
    row = lazy.to_verify[first]
    assert len(row["unknown"]) == 1 and len(row["not_asked"]) == 1  # one asked (Unknown), one not asked
    assert set(row["unknown"]).isdisjoint(row["not_asked"])
    asked: list[CallFinished] = []
    one = engine.settle(lazy, [first], emit=lambda e: asked.append(e) if isinstance(e, CallFinished) else None)
    assert one.stats.answer_calls == one.stats.verification_calls == 1  # the row's one condition not asked
    assert [e.verification for e in asked] == [True]
    assert asked[0].row_key == f"#{row['_row']} {row['name']}"  # the row settled, none other
    assert one.unsettled == lazy.unsettled - 1
    assert one.rows == lazy.rows or len(one.rows) == len(lazy.rows) + 1  # it matched, or it did not
    # settling the rest from there is the eager result
    eager = engine.run(LIST_ALL_TWO.sql, mode="E", verify="eager")
    rest = engine.settle(one)
    assert rest.rows == eager.rows and rest.to_verify == eager.to_verify


def test_eager_counts_its_calls_on_rows_already_unknown(bench_sandbox) -> None:
    engine = SuqlEngine(bench_sandbox, LLM(SimBackend()))
    eager = engine.run(LIST_ALL_TWO.sql, mode="E", verify="eager")
    lazy = engine.run(LIST_ALL_TWO.sql, mode="E", verify="lazy")
    assert 0 < eager.stats.verification_calls == eager.stats.answer_calls - lazy.stats.answer_calls
    assert any(n.startswith("verification:") for n in eager.plan.notes)
    assert eager.to_json()["stats"]["verification_calls"] == eager.stats.verification_calls
    assert lazy.to_json()["settled"] is False and eager.to_json()["settled"] is True


def test_a_bad_verification_is_refused(bench_sandbox) -> None:
    from engines.suql.language import SuqlError

    with pytest.raises(SuqlError, match="lazy or eager"):
        SuqlEngine(bench_sandbox, LLM(SimBackend()), verify="sometimes")
