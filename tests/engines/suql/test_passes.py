"""The SUQL planner's passes one by one, on small trees: what each returns, and that it leaves its input as it
was; the plan as data (the executor runs the plan it is handed); the query text read once per run."""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp
from sqlglot import parser as sqlglot_parser

from engines.events import CallStarted
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.retrieval.bm25 import IndexCache
from engines.suql import language
from engines.suql.compiler.asker import Asker
from engines.suql.compiler.context import RunContext, RunState
from engines.suql.compiler.evidence import read_evidence
from engines.suql.compiler.executor import execute_select
from engines.suql.compiler.identity import RowNames
from engines.suql.compiler.passes import (
    PASSES,
    Evidence,
    Normalised,
    Ordered,
    PlanContext,
    Pushed,
    SelectPlan,
    SelectQuery,
    Split,
    normalise,
    order_predicates,
    plan,
    plan_select,
    push_down,
    select_query,
    split_conjuncts,
)
from engines.suql.compiler.pipeline import analyse
from engines.suql.compiler.records import Row
from engines.suql.execute import SuqlEngine
from engines.suql.language import CALL_KEY, call_key
from engines.suql.plan import DUCKDB_UDF, MODES

KIDS = "answer(reviews, 'good for kids?') = 'Yes'"
QUIET = "answer(reviews, 'is it quiet?') = 'Yes'"


def _select(sql: str) -> exp.Select:
    tree = sqlglot.parse_one(sql, read="postgres")
    assert isinstance(tree, exp.Select)
    return tree


def _snapshot(value: Any) -> Any:
    """Everything a value holds, trees in full (their structure, SQL and every node's meta): two snapshots
    differ when anything in it was changed."""
    if isinstance(value, exp.Expression):
        return (repr(value), value.sql(), [dict(n.meta) for n in value.walk()])
    if isinstance(value, Row):
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple((f.name, _snapshot(getattr(value, f.name))) for f in dataclasses.fields(value))
    if isinstance(value, (list, tuple)):
        return tuple(_snapshot(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _snapshot(v)) for k, v in value.items())
    return repr(value)


def _pure(pass_: Any, value: Any, ctx: PlanContext) -> Any:
    """``pass_(value, ctx)``, checked to leave ``value`` and ``ctx`` as they were."""
    before = _snapshot(value), _snapshot(ctx)
    out = pass_(value, ctx)
    assert (_snapshot(value), _snapshot(ctx)) == before, f"{pass_.__name__} changed its input"
    assert out is not value
    return out


def _split(sql: str, mode: str = "E") -> tuple[Split, PlanContext]:
    ctx = PlanContext(MODES[mode])
    return split_conjuncts(normalise(select_query(_select(sql)), ctx), ctx), ctx


def _row(key: int, flags: list[bool | None], text: str = "", score: float = 0.0) -> Row:
    return Row(key=key, label=f"#{key}", flags=flags, texts={"reviews": text}, score=score)


# --- the passes in order, as sqlglot's optimizer keeps its RULES -----------------------------------------


def test_the_passes_are_a_named_tuple_in_order() -> None:
    assert PASSES._fields == ("normalise", "split_conjuncts", "push_down", "order_predicates", "plan")
    assert PASSES == (normalise, split_conjuncts, push_down, order_predicates, plan)


def test_plan_select_runs_the_passes_in_order_and_reads_the_evidence_between_push_down_and_order() -> None:
    ran: list[str] = []

    def traced(name: str, pass_: Any) -> Any:
        def run(value: Any, ctx: PlanContext) -> Any:
            ran.append(f"{name}{'+evidence' if ctx.evidence is not None else ''}")
            return pass_(value, ctx)

        return run

    passes = PASSES._make(traced(n, p) for n, p in zip(PASSES._fields, PASSES))
    query = select_query(_select(f"SELECT name FROM t WHERE rating > 4 AND {KIDS} LIMIT 2"))

    def read(pushed: Pushed) -> Evidence:
        ran.append("read")
        return Evidence((_row(1, [True], "Kids love it."),))

    out = plan_select(query, PlanContext(MODES["D"]), read, passes)
    assert ran == [
        "normalise",
        "split_conjuncts",
        "push_down",
        "read",
        "order_predicates+evidence",
        "plan+evidence",
    ]
    assert isinstance(out, SelectPlan) and [r.key for r in out.visit] == [1]


# --- select_query: the first pass's input -------------------------------------------------------------


def test_select_query_reads_key_calls_and_clauses_and_annotates_a_copy() -> None:
    select = _select(
        "SELECT name, summary(reviews) FROM t WHERE x IN (SELECT y FROM u WHERE answer(d, 'inner?') = 'Yes') "
        f"AND {KIDS} ORDER BY rating DESC LIMIT 5 OFFSET 2"
    )
    before = _snapshot(select)
    q = select_query(select)
    assert _snapshot(select) == before  # the input keeps no annotation
    assert q.select is not select
    assert q.key.sql() == "t.rowid"
    assert [c.sql() for c in q.calls.values()] == ["summary(reviews)", "answer(reviews, 'good for kids?')"]
    assert list(q.index_of.values()) == [0, 1]  # the nested SELECT's call is not this SELECT's
    assert (q.limit, q.offset, q.aggregated, q.order, q.order_dep) == (5, 2, False, None, False)
    own = language.calls_in(q.select)
    assert [n.meta[CALL_KEY] for n in own] == list(q.calls)  # the copy's calls carry their keys
    assert call_key(own[1]) == language.as_call(own[1]).key


def test_select_query_refuses_a_select_whose_rows_have_no_key() -> None:
    with pytest.raises(language.SuqlError, match="need a FROM clause"):
        select_query(_select("SELECT summary('x')"))


def test_select_query_sees_aggregation() -> None:
    assert select_query(_select(f"SELECT count(*) FROM t WHERE {KIDS}")).aggregated
    assert select_query(_select(f"SELECT DISTINCT city FROM t WHERE {KIDS}")).aggregated


# --- normalise ----------------------------------------------------------------------------------------


def test_normalise_puts_a_where_that_asks_an_llm_in_dnf() -> None:
    query = select_query(_select(f"SELECT name FROM t WHERE rating > 4 AND ({KIDS} OR cuisine = 'thai')"))
    out = _pure(normalise, query, PlanContext(MODES["E"]))
    assert isinstance(out, Normalised) and out.text_where and out.in_dnf
    assert isinstance(out.where, exp.Or)  # (rating > 4 AND kids) OR (rating > 4 AND thai)
    assert out.where.sql().count("rating > 4") == 2
    assert query.select.args["where"].this.sql().count("rating > 4") == 1


def test_normalise_leaves_a_where_without_llm_calls_as_written() -> None:
    query = select_query(_select("SELECT summary(reviews) FROM t WHERE a = 1 OR b = 2"))
    out = _pure(normalise, query, PlanContext(MODES["E"]))
    assert not out.text_where and out.where.sql() == "a = 1 OR b = 2"


def test_normalise_keeps_a_where_too_large_for_dnf_as_written() -> None:
    pairs = " AND ".join(f"(a{i} = 1 OR b{i} = 1)" for i in range(8))  # 2^8 = 256 conjuncts in DNF
    query = select_query(_select(f"SELECT name FROM t WHERE {pairs} AND {KIDS}"))
    out = _pure(normalise, query, PlanContext(MODES["E"]))
    assert out.text_where and not out.in_dnf
    assert out.where.sql() == query.select.args["where"].this.sql()


# --- split_conjuncts ----------------------------------------------------------------------------------


def test_split_conjuncts_splits_each_branch_into_structured_and_text_literals() -> None:
    normalised = normalise(
        select_query(_select(f"SELECT name FROM t WHERE rating > 4 AND ({KIDS} OR cuisine = 'thai')")),
        PlanContext(MODES["E"]),
    )
    out = _pure(split_conjuncts, normalised, PlanContext(MODES["E"]))
    assert [([s.sql() for s in c.structured], [t.sql() for t in c.text]) for c in out.conjuncts] == [
        (["rating > 4"], ["ANSWER(reviews, 'good for kids?') = 'Yes'"]),
        (["cuisine = 'thai'", "rating > 4"], []),  # in the order sqlglot's normaliser writes them
    ]
    assert out.dnf == f"(rating > 4 AND {KIDS})\nOR (cuisine = 'thai' AND rating > 4)"


def test_split_conjuncts_drops_a_repeated_branch() -> None:
    query = select_query(_select(f"SELECT name FROM t WHERE a = 1 AND {KIDS}"))
    branch = query.select.args["where"].this
    twice = Normalised(
        **{f.name: getattr(query, f.name) for f in dataclasses.fields(query)},
        where=exp.or_(branch.copy(), branch.copy()),
        text_where=True,
        in_dnf=True,
    )
    out = _pure(split_conjuncts, twice, PlanContext(MODES["E"]))
    assert len(out.conjuncts) == 1 and out.dnf == f"a = 1 AND {KIDS}"


def test_split_conjuncts_of_a_where_too_large_for_dnf_is_one_conjunct_of_its_top_level_and() -> None:
    pairs = " AND ".join(f"(a{i} = 1 OR b{i} = 1)" for i in range(8))
    split, _ = _split(f"SELECT name FROM t WHERE {pairs} AND {KIDS}")
    assert len(split.conjuncts) == 1
    assert len(split.conjuncts[0].structured) == 8 and len(split.conjuncts[0].text) == 1


def test_split_conjuncts_without_llm_calls_shows_the_where() -> None:
    split, _ = _split("SELECT summary(reviews) FROM t WHERE a = 1")
    assert split.conjuncts == () and split.dnf == "a = 1"


# --- push_down ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def con() -> Any:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (name VARCHAR, rating DOUBLE, cuisine VARCHAR, reviews VARCHAR)")
    con.execute(
        "INSERT INTO t VALUES ('a', 4.5, 'thai', 'Kids love it.'), ('b', 3.0, 'thai', 'Quiet.'), "
        "('c', 4.8, 'pizza', NULL), ('d', 2.0, 'pizza', 'Loud.')"
    )
    yield con
    con.close()


def test_push_down_runs_the_structured_part_in_one_query(con: Any) -> None:
    split, ctx = _split(f"SELECT name FROM t WHERE rating > 4 AND ({KIDS} OR cuisine = 'thai')")
    out = _pure(push_down, split, ctx)
    assert isinstance(out, Pushed) and not out.lazy and out.lazy_reason == "no LIMIT: every match is needed"
    assert out.text_sqls == ("reviews",) and out.written is None
    got = con.execute(out.candidates.sql(dialect="duckdb")).fetchall()
    # _k, _d, _s0 (rating > 4), _s1 (rating > 4 AND thai), _t0; 'b' and 'd' are ruled out in DuckDB
    assert got == [(0, 0, True, True, "Kids love it."), (2, 2, True, False, None)]


def test_push_down_in_mode_a_reads_every_row() -> None:
    split, ctx = _split(f"SELECT name FROM t WHERE rating > 4 AND {KIDS}", "A")
    out = push_down(split, ctx)
    assert out.candidates.args.get("where") is None
    assert out.lazy_reason == "mode A examines every candidate"


def test_push_down_pushes_a_structured_order_when_the_visit_may_stop(con: Any) -> None:
    split, ctx = _split(f"SELECT name FROM t WHERE {KIDS} ORDER BY rating DESC LIMIT 1", "D")
    out = push_down(dataclasses.replace(split, order=split.select.args["order"]), ctx)
    assert out.lazy and out.ordered
    assert [r[0] for r in con.execute(out.candidates.sql(dialect="duckdb")).fetchall()] == [2, 0, 1, 3]


def test_push_down_orders_by_row_key_when_the_order_asks_an_llm() -> None:
    split, ctx = _split(f"SELECT name FROM t WHERE {KIDS} ORDER BY summary(reviews) LIMIT 1", "D")
    order = split.select.args["order"]
    out = push_down(dataclasses.replace(split, order=order, order_dep=True), ctx)
    assert not out.lazy and not out.ordered
    assert [o.this.sql() for o in out.candidates.args["order"].expressions] == ["t.rowid"]


def test_push_down_in_mode_b_numbers_the_structured_leaves_as_written(con: Any) -> None:
    split, ctx = _split(f"SELECT name FROM t WHERE {KIDS} OR rating > 4 AND cuisine = 'thai'", "B")
    out = _pure(push_down, split, ctx)
    assert out.written is not None and [leaf.sql() for leaf in out.leaves] == ["rating > 4", "cuisine = 'thai'"]
    assert [leaf.meta["suql_leaf"] for leaf in out.leaves] == [0, 1]
    got = con.execute(out.candidates.sql(dialect="duckdb")).fetchall()
    assert [(r[0], r[-3], r[-2]) for r in got] == [
        (0, True, True),
        (1, False, True),
        (2, True, False),
        (3, False, False),
    ]


# --- order_predicates --------------------------------------------------------------------------------


def _two_predicates(mode: str) -> tuple[Pushed, PlanContext]:
    split, ctx = _split(f"SELECT name FROM t WHERE rating > 1 AND {KIDS} AND {QUIET}", mode)
    return push_down(split, ctx), ctx


def test_order_predicates_asks_the_likelier_no_first() -> None:
    pushed, ctx = _two_predicates("C")
    rows = tuple(_row(k, [True]) for k in range(4))
    kids, quiet = "answer(reviews, 'good for kids?')", "answer(reviews, 'is it quiet?')"
    # every row mentions quiet, one mentions kids: 'is it quiet?' stops more rows
    scores = {kids: {0: 2.0, 1: 0.0, 2: 0.0, 3: 0.0}, quiet: {k: 2.0 for k in range(4)}}
    with_evidence = dataclasses.replace(ctx, evidence=Evidence(rows, scores))
    out = _pure(order_predicates, pushed, with_evidence)
    assert isinstance(out, Ordered)
    assert out.orders == ((1, 0),)
    assert [p.written_position for p in out.conjunct_plans[0].predicates] == [1, 0]
    assert out.conjunct_plans[0].candidates == 4
    assert [e.sql for e in out.estimates[0]] == [KIDS, QUIET]  # the prior, as written
    as_written = order_predicates(pushed, dataclasses.replace(with_evidence, mode=MODES["A"]))
    assert as_written.orders == ((0, 1),)


def test_order_predicates_counts_only_the_candidates_a_conjunct_may_match() -> None:
    pushed, ctx = _two_predicates("D")
    rows = (_row(0, [True]), _row(1, [False]), _row(2, [None]))
    out = order_predicates(pushed, dataclasses.replace(ctx, evidence=Evidence(rows)))
    assert out.conjunct_plans[0].candidates == 2


def test_order_predicates_in_mode_b_orders_nothing() -> None:
    pushed, ctx = _two_predicates("B")
    out = _pure(order_predicates, pushed, ctx)  # reads no evidence: there is nothing to order
    assert out.conjunct_plans == () and out.orders == ((),)


def test_order_predicates_needs_the_evidence() -> None:
    pushed, ctx = _two_predicates("E")
    with pytest.raises(ValueError, match="evidence"):
        order_predicates(pushed, ctx)


# --- plan ---------------------------------------------------------------------------------------------


def _planned(sql: str, mode: str, rows: tuple[Row, ...], scores: dict | None = None, **query: Any) -> Ordered:
    split, ctx = _split(sql, mode)
    if query:
        split = dataclasses.replace(split, **query)
    evidence = Evidence(rows, scores or {})
    ctx = dataclasses.replace(ctx, evidence=evidence)
    return order_predicates(push_down(split, ctx), ctx), ctx


def test_plan_visits_by_retrieval_score_and_scores_copies_of_the_rows() -> None:
    rows = (_row(0, [True]), _row(1, [True]), _row(2, [False]), _row(3, [True]))
    scores = {"answer(reviews, 'good for kids?')": {0: 0.5, 1: 2.0, 2: 9.0, 3: 1.0}}
    ordered, ctx = _planned(f"SELECT name FROM t WHERE rating > 4 AND {KIDS} LIMIT 2", "E", rows, scores)
    out = _pure(plan, ordered, ctx)
    assert isinstance(out, SelectPlan)
    assert [(r.key, r.score) for r in out.visit] == [(1, 2.0), (3, 1.0), (0, 0.5)]  # row 2 is ruled out
    assert [r.score for r in rows] == [0.0] * 4  # the evidence's rows keep theirs
    assert out.adaptive and out.needed == 2 and not out.capped
    lines = out.shown.lines()
    assert lines[0].startswith("mode E") and "lazy: stop after 2 matching row(s)" in "\n".join(lines)
    assert out.shown.visit_order.startswith("retrieval score (BM25")
    assert out.shown.dnf == f"rating > 4 AND {KIDS}"


def test_plan_in_mode_d_visits_in_table_order() -> None:
    rows = (_row(2, [True]), _row(0, [True]))
    ordered, ctx = _planned(f"SELECT name FROM t WHERE {KIDS}", "D", rows, {})
    out = plan(ordered, ctx)
    assert [r.key for r in out.visit] == [2, 0] and out.shown.visit_order == "table order" and not out.adaptive


def test_plan_caps_the_visit_in_mode_f_but_never_drops_a_row_decided_without_a_call() -> None:
    rows = tuple(_row(k, [True, k == 0]) for k in range(30))
    scores = {"answer(reviews, 'good for kids?')": {k: float(k) for k in range(30)}}
    ordered, ctx = _planned(f"SELECT name FROM t WHERE ({KIDS} AND a = 1) OR b = 2", "F", rows, scores)
    out = plan(ordered, ctx)
    assert out.capped and len(out.visit) == 21  # the cap of 20, and row 0 (b = 2 holds: no call needed)
    assert {r.key for r in out.visit} == {0} | set(range(10, 30))
    assert out.shown.cap == 20


def test_plan_asks_select_list_calls_of_the_output_rows_and_order_calls_of_every_match() -> None:
    sql = f"SELECT name, summary(reviews) AS s FROM t WHERE {KIDS} ORDER BY answer(reviews, 'rank?') LIMIT 3"
    select = _select(sql)
    rows = (_row(0, [True]),)
    ordered, ctx = _planned(sql, "E", rows, {}, order=select.args["order"], order_dep=True)
    out = plan(ordered, ctx)
    assert [c.sql() for c in out.select_list_calls] == ["summary(reviews)", "answer(reviews, 'rank?')"]
    assert [c.sql() for c in out.first_calls] == ["answer(reviews, 'rank?')"]
    assert [c.sql() for c in out.rest_calls] == ["summary(reviews)"]
    assert out.shown.select_calls_for == "every matching row for ORDER BY, then the output rows"
    naive = plan(*_planned(sql, "A", rows, {}, order=select.args["order"], order_dep=True))
    assert naive.need_all and naive.first_calls == naive.select_list_calls and naive.rest_calls == ()


def test_the_plan_is_frozen_data() -> None:
    ordered, ctx = _planned(f"SELECT name FROM t WHERE {KIDS}", "E", (_row(0, [True]),), {})
    out = plan(ordered, ctx)
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.lazy = True  # type: ignore[misc]
    for cls in (SelectQuery, Normalised, Split, Pushed, Ordered, SelectPlan, PlanContext, Evidence):
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
    assert out.shown.to_json()["lines"] == out.shown.lines()


# --- the executor runs the plan it is handed ---------------------------------------------------------------


def _run_context(sandbox: Any, mode: str, stack: ExitStack, asked: list[str]) -> RunContext:
    def emit(event: Any) -> None:
        if isinstance(event, CallStarted):
            asked.append(event.row_key or "")

    llm = LLM(SimBackend(seed=224))
    return RunContext(
        sandbox=sandbox,
        mode=MODES[mode],
        emit=emit,
        cancel=None,
        stack=stack,
        asker=Asker(llm, emit, None, 2000),
        names=RowNames(sandbox),
        indexes=IndexCache(),
        pool=1,
        state=RunState(),
    )


def test_the_executor_runs_the_plan_it_is_handed(sandbox: Any) -> None:
    select = _select(
        "SELECT name FROM restaurants WHERE rating >= 4.5 AND answer(reviews, 'is it good for kids?') = 'Yes'"
    )
    asked: list[str] = []
    with ExitStack() as stack:
        ctx = _run_context(sandbox, "D", stack, asked)
        full = plan_select(analyse(ctx, select), PlanContext(ctx.mode), lambda p: read_evidence(ctx, p))
        assert len(full.visit) > 3
        two = dataclasses.replace(full, visit=full.visit[:2])  # the plan is data: visit two rows only
        compiled = execute_select(ctx, two, top=True)
        result = sandbox.run_tree(compiled.tree)
    assert asked == [r.label for r in full.visit[:2]]  # one answer() per visited row, in the plan's order
    assert ctx.state.rows_examined == 2 and ctx.state.plan is not None
    labels = {r.label.split(" ", 1)[1] for r in full.visit[:2]}
    assert {name for (name,) in result.rows} <= labels


# --- the query text is read once per run -------------------------------------------------------------------


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text sqlglot parses while the test runs."""
    texts: list[str] = []
    real = sqlglot_parser.Parser.parse

    def parse(self: Any, raw_tokens: Any, sql: str | None = None) -> Any:
        texts.append(sql or "")
        return real(self, raw_tokens, sql)

    monkeypatch.setattr(sqlglot_parser.Parser, "parse", parse)
    return texts


QUERIES = (
    "SELECT name, summary(reviews) FROM restaurants WHERE rating >= 4.5 "
    "AND answer(reviews, 'is it good for kids?') = 'Yes' ORDER BY rating DESC LIMIT 2",
    "WITH kids AS (SELECT name, rating FROM restaurants WHERE answer(reviews, 'is it good for kids?') = 'Yes' "
    "AND rating >= 4.5) SELECT name FROM kids WHERE rating >= 4.6 AND name IN (SELECT name FROM restaurants "
    "WHERE answer(popular_dishes, 'is there a noodle dish?') = 'Yes' AND rating >= 4.5)",
    "SELECT name FROM restaurants WHERE rating >= 4.7 AND answer(reviews, 'is it good for kids?') = 'Yes' "
    "UNION SELECT name FROM restaurants WHERE rating >= 4.6 AND answer(reviews, 'is it quiet?') = 'Yes'",
)


@pytest.mark.parametrize("sql", QUERIES, ids=["select", "cte-subquery", "union"])
def test_a_run_parses_the_query_text_once_and_no_piece_of_it_again(
    engine: SuqlEngine, parsed: list[str], sql: str
) -> None:
    texts = {
        c.text.sql(dialect=d)
        for c in map(language.as_call, language.calls_in(language.parse(sql), own_scope=False))
        for d in ("postgres", "duckdb")
    }
    for mode in (*MODES, DUCKDB_UDF.name):
        parsed.clear()
        engine.run(sql, mode=mode)
        assert parsed.count(sql) == 1, mode
        assert not texts & set(parsed), (mode, texts & set(parsed))  # no text argument read again


def test_a_query_read_once_serves_the_estimate_and_every_run(engine: SuqlEngine, parsed: list[str]) -> None:
    sql = QUERIES[1]
    query = engine.parse(sql)
    shape = repr(query.tree)
    parsed.clear()
    assert engine.estimate_calls(query, "E") > 0
    by_text = {m: engine.run(sql, mode=m) for m in ("C", "E")}
    parsed.clear()
    for mode in ("C", "E"):
        got = engine.run(query, mode=mode)
        assert got.query == sql and got.rows == by_text[mode].rows and got.to_verify == by_text[mode].to_verify
        assert got.plan.lines() == by_text[mode].plan.lines()
    assert engine.compile(query)[0] is query.tree
    assert sql not in parsed  # never read again
    assert repr(query.tree) == shape  # and never changed
