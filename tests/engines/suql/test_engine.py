"""The SUQL compiler: modes, DNF, lazy evaluation, three-valued results, calls only where needed."""

from __future__ import annotations

import threading

import pytest

from engines.errors import Cancelled, EngineError
from engines.events import CallStarted
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.execute import PlanBuilt, QueryFinished, RowDecided, SuqlEngine
from engines.suql.language import SuqlError
from engines.suql.plan import MODES
from engines.suql.tasks import ANSWER, AnswerInput

FAMILY_PA = "SELECT name, summary(reviews) FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' AND location = 'Palo Alto' LIMIT 1"
MV_DATE = (
    "SELECT name, rating FROM restaurants WHERE location = 'Mountain View' AND (answer(reviews, 'is it romantic?') = 'Yes' "
    "OR answer(reviews, 'does it have a great view?') = 'Yes') ORDER BY rating DESC LIMIT 3"
)
LIST_ALL = (
    "SELECT _id FROM restaurants WHERE location = 'Menlo Park' AND answer(reviews, 'is it good for groups?') = 'Yes'"
)


def ids(result) -> set:
    return {r[0] for r in result.rows}


def test_six_modes_on_the_lecture_query(engine, world):
    runs = {m: engine.run(FAMILY_PA, mode=m) for m in MODES}
    palo_alto = sum(r.location == "Palo Alto" for r in world.rows)
    assert runs["A"].stats.answer_calls == len(world.rows)  # answer() on every row
    assert runs["A"].stats.summary_calls > 1  # summaries for every passing row
    assert runs["C"].stats.answer_calls == palo_alto  # structured first, no laziness
    assert runs["D"].stats.answer_calls < runs["C"].stats.answer_calls  # lazy: stops at LIMIT 1
    assert runs["E"].stats.answer_calls <= runs["D"].stats.answer_calls  # retrieval: promising rows first
    for m in "BCDEF":
        assert runs[m].stats.summary_calls == 1  # summary() only for the output row
    # LIMIT without ORDER BY: every mode's row is one of A's full answer
    full = engine.run(FAMILY_PA.replace(" LIMIT 1", ""), mode="A")
    for m in "BCDE":
        assert len(runs[m].rows) == 1 and runs[m].rows[0][0] in {r[0] for r in full.rows}
    assert runs["F"].approximate and not runs["E"].approximate


def test_mode_b_runs_the_where_as_written_row_by_row(sandbox, world):
    """B is a row-at-a-time engine (the notes' SQLite): the written order decides which rows are asked,
    AND stops at the first False, OR at the first True, and the scan stops once LIMIT is met."""
    sequential = SuqlEngine(sandbox, LLM(SimBackend(seed=224)), pool=1)
    first = sequential.run(FAMILY_PA, mode="B")
    # answer() written first: every row up to the first match is asked, in table order
    assert first.stats.answer_calls == first.stats.rows_examined > 1
    assert first.plan.conjuncts == () and "as written" in " ".join(first.plan.lines())
    swapped = FAMILY_PA.replace(
        "answer(reviews, 'is it family-friendly?') = 'Yes' AND location = 'Palo Alto'",
        "location = 'Palo Alto' AND answer(reviews, 'is it family-friendly?') = 'Yes'",
    )
    second = sequential.run(swapped, mode="B")
    examined = world.rows[: second.stats.rows_examined]
    assert second.stats.answer_calls == sum(r.location == "Palo Alto" for r in examined) < first.stats.answer_calls
    assert second.rows == first.rows  # the same first match, found more cheaply

    # OR: a row the structured side already accepts is never asked
    either = "SELECT _id FROM restaurants WHERE location = 'Palo Alto' OR answer(reviews, 'is it romantic?') = 'Yes'"
    r = sequential.run(either, mode="B")
    assert r.stats.answer_calls == sum(row.location != "Palo Alto" for row in world.rows)
    assert ids(r) == ids(sequential.run(either, mode="A"))

    # an ORDER BY on a structured column: a row-at-a-time engine filters every row, then sorts
    ordered = sequential.run(
        "SELECT name FROM restaurants WHERE location = 'Palo Alto' "
        "AND answer(reviews, 'is it romantic?') = 'Yes' ORDER BY rating DESC LIMIT 1",
        mode="B",
    )
    palo_alto = sum(row.location == "Palo Alto" for row in world.rows)
    assert not ordered.plan.lazy and ordered.stats.answer_calls == palo_alto


def test_mode_b_keeps_three_valued_logic(careful_engine, world):
    """NOT over an unknown answer stays unknown in B too: such rows are to verify, not matches."""
    q = "SELECT _id FROM restaurants WHERE location = 'Sunnyvale' AND NOT (answer(reviews, 'is parking easy?') = 'Yes')"
    b, c = careful_engine.run(q, mode="B"), careful_engine.run(q, mode="C")
    assert ids(b) == ids(c)
    assert {v["_id"] for v in b.to_verify} == {v["_id"] for v in c.to_verify} != set()
    assert all(v["unknown"] for v in b.to_verify)


def test_duckdb_as_is_orders_filters_itself_but_never_stops_at_limit(engine, world):
    from engines.suql.plan import DUCKDB_UDF

    r = engine.run(FAMILY_PA, mode=DUCKDB_UDF.name)
    assert r.mode == DUCKDB_UDF.name and len(r.rows) == 1
    assert r.stats.answer_calls == sum(row.location == "Palo Alto" for row in world.rows)


def test_modes_a_to_e_return_exactly_the_same_rows_with_an_order(engine):
    results = {m: engine.run(MV_DATE, mode=m) for m in "ABCDE"}
    first = results["A"].rows
    assert len(first) == 3
    for m in "BCDE":
        assert results[m].rows == first, m
    assert results["E"].stats.answer_calls < results["C"].stats.answer_calls < results["A"].stats.answer_calls


def test_list_all_queries_agree_across_modes(engine):
    rows = {m: ids(engine.run(LIST_ALL, mode=m)) for m in "ABCDE"}
    assert rows["A"] and all(rows[m] == rows["A"] for m in "BCDE")


def test_dnf_and_plan(engine):
    events: list = []
    result = engine.run(MV_DATE, mode="E", emit=events.append)
    assert result.dnf.count("OR") == 1 and result.dnf.count("location = 'Mountain View'") == 2
    plans = [e.plan for e in events if isinstance(e, PlanBuilt)]
    assert plans and len(plans[0].conjuncts) == 2
    assert plans[0].lazy and "ORDER BY" in plans[0].visit_order
    assert any(isinstance(e, QueryFinished) for e in events)
    decided = [e for e in events if isinstance(e, RowDecided)]
    assert len(decided) == result.stats.rows_examined


def test_or_never_pushes_a_structured_predicate_into_the_wrong_branch(careful_engine, world):
    q = (
        "SELECT _id FROM restaurants WHERE (location = 'Sunnyvale' AND answer(reviews, 'is it romantic?') = 'Yes') "
        "OR name = '" + world.rows[0].name + "'"
    )
    got = ids(careful_engine.run(q, mode="E"))
    assert world.rows[0]._id - 1 in {r._id - 1 for r in world.rows}  # sanity
    assert world.rows[0]._id in got  # the second branch has no Sunnyvale condition
    assert all(world.by_id(i).location == "Sunnyvale" for i in got - {world.rows[0]._id})


def test_unknown_is_null_and_rows_go_to_verify(careful_engine, world):
    q = "SELECT _id, name FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is parking easy?') = 'Yes'"
    r = careful_engine.run(q, mode="C")
    verify = {v["_id"] for v in r.to_verify}
    assert verify and not verify & ids(r)
    assert all(v["unknown"] for v in r.to_verify)
    # every to-verify row is one whose reviews the same reader, asked directly, cannot decide
    reader = LLM(SimBackend(seed=224, error_on_topic=0, error_off_topic=0))
    for rid in verify:
        text = "\n".join(world.by_id(rid).reviews)
        assert reader.run(ANSWER, AnswerInput(text, "is parking easy?")).value is None, rid
    # NOT (unknown) stays unknown: the same rows are to verify, not matches
    neg = careful_engine.run(
        q.replace("answer(reviews, 'is parking easy?') = 'Yes'", "NOT (answer(reviews, 'is parking easy?') = 'Yes')"),
        mode="C",
    )
    assert {v["_id"] for v in neg.to_verify} == verify
    assert not ids(neg) & ids(r)


def test_lazy_never_stops_early_when_order_depends_on_answer(engine):
    q = "SELECT name FROM restaurants WHERE location = 'Palo Alto' ORDER BY answer(reviews, 'is it romantic?') DESC LIMIT 1"
    r = engine.run(q, mode="E")
    palo_alto = engine.run("SELECT count(*) FROM restaurants WHERE location = 'Palo Alto'").rows[0][0]
    assert r.stats.answer_calls == palo_alto


def test_select_list_calls_only_for_output_rows(engine):
    r = engine.run(
        "SELECT name, answer(reviews, 'is it romantic?') AS romantic, summary(reviews) FROM restaurants "
        "WHERE location = 'Sunnyvale' ORDER BY rating DESC LIMIT 2",
        mode="E",
    )
    assert len(r.rows) == 2 and r.stats.answer_calls == 2 and r.stats.summary_calls == 2


def test_aggregates_over_answer(engine, careful_engine):
    r = careful_engine.run(
        "SELECT location, COUNT(*) AS n FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' GROUP BY location ORDER BY location",
        mode="E",
    )
    assert len(r.rows) == 6 and sum(row[1] for row in r.rows) > 50
    case = careful_engine.run(
        "SELECT CASE WHEN answer(reviews, 'is parking easy?') = 'Yes' THEN 'easy' ELSE 'unknown or hard' END AS parking, COUNT(*) "
        "FROM restaurants WHERE location = 'Menlo Park' GROUP BY 1 ORDER BY 1",
        mode="E",
    )
    assert {row[0] for row in case.rows} <= {"easy", "unknown or hard"} and sum(row[1] for row in case.rows) > 50


def test_ctes_and_subqueries_compile_innermost_first(careful_engine):
    sub = careful_engine.run(
        "SELECT name FROM restaurants WHERE _id IN (SELECT _id FROM restaurants WHERE location = 'Sunnyvale' "
        "AND answer(reviews, 'is it romantic?') = 'Yes') ORDER BY name",
        mode="E",
    )
    flat = careful_engine.run(
        "SELECT name FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is it romantic?') = 'Yes' ORDER BY name",
        mode="E",
    )
    assert sub.rows == flat.rows and sub.rows
    cte = careful_engine.run(
        "WITH r AS (SELECT _id, name, rating FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is it romantic?') = 'Yes') "
        "SELECT name FROM r ORDER BY name",
        mode="E",
    )
    assert cte.rows == flat.rows
    derived = careful_engine.run(
        "SELECT t.name, summary(t.reviews) FROM (SELECT * FROM restaurants WHERE location = 'Sunnyvale') AS t ORDER BY t.rating DESC, t._id LIMIT 1",
        mode="E",
    )
    assert len(derived.rows) == 1 and derived.stats.summary_calls == 1


def test_joins(careful_engine):
    r = careful_engine.run(
        "SELECT a.name, b.name FROM restaurants a JOIN restaurants b ON a.location = b.location AND a._id < b._id "
        "WHERE a._id < 4 AND b._id < 30 AND answer(a.reviews, 'is it romantic?') = 'Yes'",
        mode="D",
    )
    assert isinstance(r.rows, tuple)


def test_common_sense_beats_like(engine):
    like = engine.run(
        "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND array_to_string(popular_dishes, ' ') LIKE '%pasta%'"
    )
    suql = engine.run(
        "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND answer(popular_dishes, 'does this restaurant serve pasta?') = 'Yes'"
    )
    assert like.rows == () and len(suql.rows) > 0


def test_written_order_versus_cost_based_order(careful_engine):
    # parking is the condition reviews most often say no to ("Parking can be tricky."):
    # written second, the compiler learns from its sample to ask it first
    q = (
        "SELECT name FROM restaurants WHERE location IN ('Palo Alto', 'Sunnyvale') AND answer(reviews, 'is it romantic?') = 'Yes' "
        "AND answer(reviews, 'is parking easy?') = 'Yes'"
    )
    events: list = []
    ordered = careful_engine.run(q, mode="C", emit=events.append)
    written = careful_engine.run(q, mode="C", order_predicates=False)
    assert ordered.rows == written.rows
    assert ordered.stats.answer_calls < written.stats.answer_calls
    final_plan = [e.plan for e in events if isinstance(e, PlanBuilt)][-1]
    assert "parking" in final_plan.conjuncts[0].predicates[0].sql


def test_refusals_name_the_construct(engine):
    with pytest.raises(SuqlError, match="st_distance_sphere"):
        engine.run("SELECT * FROM restaurants WHERE ST_Distance_Sphere(location, 'x') < 5")
    with pytest.raises(EngineError, match="DROP"):
        engine.run("DROP TABLE restaurants")
    with pytest.raises(SuqlError, match="question"):
        engine.run("SELECT * FROM restaurants WHERE answer(reviews, name) = 'Yes'")
    with pytest.raises(SuqlError, match="one text argument"):
        engine.run("SELECT summary(reviews, 'x') FROM restaurants")
    with pytest.raises(SuqlError, match="Unknown execution mode"):
        engine.run("SELECT 1", mode="Z")
    with pytest.raises(SuqlError, match="empty"):
        engine.run("   ")


def test_scratch_tables_are_gone_afterwards(engine, sandbox):
    engine.run(MV_DATE, mode="E")
    left = sandbox.run("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'scratch'").rows[0][0]
    assert left == 0
    assert sandbox.run("SELECT count(*) FROM restaurants").rows == ((600,),)


def test_cancel_stops_further_calls(sandbox):
    cancel = threading.Event()
    started: list = []

    def on(event):
        if isinstance(event, CallStarted):
            started.append(event)
            if len(started) == 3:
                cancel.set()

    engine = SuqlEngine(sandbox, LLM(SimBackend()))
    with pytest.raises(Cancelled):
        engine.run(LIST_ALL, mode="C", emit=on, cancel=cancel)
    assert len(started) == 3


class _GatedSim(SimBackend):
    """A sim that counts calls in flight: the first calls wait (up to 10 s) until `pool` of them run at once."""

    def __init__(self, pool: int, **kw):
        super().__init__(**kw)
        self.pool = pool
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.gate = threading.Event()
        self.gave_up = False

    def run(self, task, input):
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            if self.in_flight >= self.pool:
                self.gate.set()
        try:
            if not self.gave_up and not self.gate.wait(10):
                self.gave_up = True  # sequential after all: the later calls need not wait too
            return super().run(task, input)
        finally:
            with self.lock:
                self.in_flight -= 1


def test_bounded_pool_with_latency(sandbox):
    # Behaviour, not timing: the per-row calls overlap, up to the pool's size and never beyond it.
    pool = 4
    q = "SELECT _id FROM restaurants WHERE location = 'Sunnyvale' AND price = 'cheap' AND answer(reviews, 'is the food spicy?') = 'Yes'"
    gated = _GatedSim(pool, latency_s=0.005)
    r = SuqlEngine(sandbox, LLM(gated), pool=pool).run(q, mode="E")
    assert r.stats.answer_calls >= 20
    assert gated.gate.is_set() and not gated.gave_up  # `pool` calls were in flight at once: parallel, not sequential
    assert gated.most == pool  # and never more than the pool allows
    engine = SuqlEngine(sandbox, LLM(SimBackend(latency_s=0.005)), pool=pool)
    sequential = SuqlEngine(sandbox, LLM(SimBackend(latency_s=0.0)), pool=1).run(q + " LIMIT 1", mode="E")
    speculative = engine.run(q + " LIMIT 1", mode="E")
    assert speculative.stats.answer_calls - sequential.stats.answer_calls <= pool - 1
    assert speculative.rows == sequential.rows


_CONDITIONS = (
    "answer(reviews, 'is it romantic?') = 'Yes'",
    "location = 'Palo Alto'",
    "rating > 4",
    "NOT (answer(reviews, 'is the food spicy?') = 'Yes')",
    "'thai' = ANY(cuisines)",
    "answer(reviews, 'does it have a great view?') = 'Yes'",
)


def _random_where(rng) -> str:
    where = rng.choice(_CONDITIONS)
    for _ in range(rng.randint(0, 3)):
        op, other = rng.choice((" AND ", " OR ")), rng.choice(_CONDITIONS)
        where = f"({where}){op}{other}" if rng.random() < 0.5 else f"{where}{op}({other})"
    return f"NOT ({where})" if rng.random() < 0.3 else where


def test_the_order_of_evaluation_never_changes_a_verdict(engine):
    """Random AND / OR / NOT mixes of structured and answer() conditions (Kleene logic, unknowns included):
    the naive plan, the query as written, the compiler without and with retrieval order return the same
    rows and the same rows to verify."""
    import random

    rng = random.Random(2)
    for _ in range(12):
        sql = f"SELECT _id FROM restaurants WHERE {_random_where(rng)}"
        runs = {m: engine.run(sql, mode=m) for m in "ABCE"}
        rows = {m: sorted(r[0] for r in run.rows) for m, run in runs.items()}
        verify = {m: sorted(v["_id"] for v in run.to_verify) for m, run in runs.items()}
        assert rows["A"] == rows["B"] == rows["C"] == rows["E"], sql
        assert verify["A"] == verify["B"] == verify["C"] == verify["E"], sql
