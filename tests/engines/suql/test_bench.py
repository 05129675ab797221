"""The SUQL benchmark (benchmarks/suql_bench.py) on a tiny world: the shape of its JSON, and the oracle is a
lower bound of every exact mode — behaviour, never timings."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("suql_bench", ROOT / "benchmarks" / "suql_bench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["suql_bench"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("suql_bench", None)


@pytest.fixture(scope="module")
def figures(bench):
    return bench.run(["--queries", "8", "--rows", "90", "--latency", "0.002", "--pool", "3"])


def test_the_json_has_the_issues_keys(figures):
    json.dumps(figures)  # serialisable as it is
    for key in ("modes", "e_over_b_by_order", "e_over_bduckdb", "e_over_c", "e_over_oracle", "pool", "compile"):
        assert key in figures, key
    assert set(figures["modes"]) >= {"A", "B", "C", "D", "E", "F", "B-duckdb", "E-static"}
    for shape in ("limit", "list_all"):
        assert set(figures["e_over_oracle"][shape]) >= {"median", "p90"}
    assert set(figures["e_over_b_by_order"]) >= {"answer_first", "filters_first"}
    assert figures["e_over_b_by_order"]["answer_first"]["queries"] + figures["e_over_b_by_order"]["filters_first"][
        "queries"
    ] == len(figures["oracle"]["calls"])
    assert {"median", "p90"} <= set(figures["compile"])
    pool = figures["pool"]
    for name in ("list_all", "limit"):
        assert pool[name]["calls"] > 0 and pool[name]["ideal_s"] > 0
        assert pool[name]["same_rows_cached"] and pool[name]["executor_s"] >= 0
        assert 0 < pool[name]["calls_span_s"] <= pool[name]["wall_s"]
    assert pool["limit_rows_repeatable"] is True
    assert pool["limit1_wasted"]["max"] <= pool["limit1_wasted"]["bound"] == 2
    # both rankers side by side: the sentence ranker measured exactly when its extra is installed
    from engines.llm import sentence_vectors

    installed = sentence_vectors.missing() is None
    assert set(figures["rankers"]) == {"static", "sentence"}
    assert (figures["rankers"]["sentence"] is not None) == installed == ("E-sentence" in figures["modes"])
    if installed:
        assert {"median", "p90"} <= set(figures["rankers"]["sentence"]["limit"])


def test_every_exact_mode_returns_the_llms_matches(figures):
    # precision unchanged: all the matches without a LIMIT, and only matches (as many as mode A) under one
    same = figures["workload"]["rows_are_the_llms_matches"]
    assert set(same) >= {"A", "B", "C", "D", "E", "B-duckdb", "E-static"}
    assert all(same.values()), same


def test_the_oracle_bounds_every_exact_mode(figures):
    oracle = figures["oracle"]["calls"]
    assert any(o > 0 for o in oracle)
    for mode, m in figures["modes"].items():
        # B-duckdb returns the matches only (DuckDB drops an Unknown row unexamined), and E-lazy the matches with
        # its rows to verify unsettled: the bound of that result
        bounds = figures["oracle"]["matches_only"] if mode in ("B-duckdb", "E-lazy") else oracle
        for q, (calls, bound) in enumerate(zip(m["answer_calls"], bounds)):
            if m["approximate"][q]:  # mode F's cap: an approximate answer is not held to the exact bound
                continue
            assert calls >= bound, (mode, q, calls, bound)


def test_the_oracle_counts_what_must_be_asked(bench):
    yes, no, unknown = "Yes", "No", None
    rows = [("t1", [yes, yes]), ("t2", [no, yes]), ("t3", [yes, unknown]), ("t4", [yes, yes]), ("t5", [unknown, no])]
    # LIMIT 2, two matches: each needs both answers, nothing else needs asking
    assert bench.oracle_calls(rows, 2) == 4
    # LIMIT 3, only two matches: every row must be decided: 2 per match, 1 per row with a 'No', 2 per unknown row
    assert bench.oracle_calls(rows, 3) == 2 + 1 + 2 + 2 + 1
    assert bench.oracle_calls(rows, None) == bench.oracle_calls(rows, 3)
    # rows with the same text share their calls
    assert bench.oracle_calls([("t", [yes, yes]), ("t", [yes, yes])], 2) == 2
    assert bench.oracle_calls(rows, 0) == 0
    # matches only (no rows to verify): one call rules out a row that is no match
    assert bench.oracle_calls(rows, None, to_verify=False) == 2 + 1 + 1 + 2 + 1
    assert bench.oracle_calls(rows, 2, to_verify=False) == 4


def test_every_call_of_e_is_put_down_to_an_outcome(figures):
    by_class = figures["workload"]["by_class"]
    counted = sum(sum(c["E_calls_by_outcome"].values()) for c in by_class.values())
    assert counted == sum(figures["modes"]["E"]["answer_calls"])
    for c in by_class.values():  # the queries whose LIMIT can be met are some of the class's
        assert c["queries_limit_met"] <= c["queries"]
        assert all(c["E_calls_by_outcome_limit_met"][o] <= n for o, n in c["E_calls_by_outcome"].items())
    for q in figures["workload"]["worst_limit_queries"]:
        assert sum(q["E_calls_by_outcome"].values()) == q["E"]


def test_call_outcomes_follow_the_rows_answers(bench):
    verdicts = {
        "#1": ["Yes", "Yes"],  # a match: 2 calls
        "#2": ["Unknown"],  # silent on the condition asked first: 1
        "#3": ["No"],  # out at its first answer: 1
        "#4": ["Yes", "No"],  # the second condition failed: 2
        "#5": ["Unknown", "Yes"],  # decided in full once the LIMIT was not met: 2
        "#6": ["Yes", "Unknown"],  # 2
    }
    assert bench.call_outcomes(verdicts, 2) == {
        "match": 2,
        "silent_first": 1,
        "no_first": 1,
        "yes_then_not": 4,
        "decided_in_full": 2,
    }
    assert bench.call_outcomes({"#1": ["Yes"], "#2": ["Unknown"]}, 1) == dict(
        match=1, silent_first=1, no_first=0, yes_then_not=0, decided_in_full=0
    )


def test_the_peers_strategies_ask_what_their_documented_order_asks(bench):
    yes, no, unknown = "Yes", "No", None
    rows = [("t1", [unknown, yes]), ("t2", [yes, no]), ("t1", [unknown, yes]), ("t3", [yes, yes]), ("t4", [yes, yes])]
    # BlendSQL: the first map over the distinct texts (4), the second over the rows it kept (t2, t3, t4)
    assert bench.peer_calls(rows, None, "BlendSQL-1") == (4 + 3, 2)
    # under LIMIT 1 the last map stops at its first match (t2 'No', t3 'Yes'); 32 in flight ask the whole batch
    assert bench.peer_calls(rows, 1, "BlendSQL-1") == (4 + 2, 1)
    assert bench.peer_calls(rows, 1, "BlendSQL-32") == (4 + 3, 1)
    # LOTUS: one call per row (t1 twice), every filter in full, then the first k
    assert bench.peer_calls(rows, None, "LOTUS") == (5 + 3, 2)
    assert bench.peer_calls(rows, 1, "LOTUS") == (5 + 3, 1)


def test_lazy_verification_is_set_against_the_matches_only_bound_and_the_peers(figures):
    v = figures["workload"]["verify"]
    for shape in ("limit", "list_all"):
        side = v[shape]
        assert set(side["calls"]) == {"E-lazy", "E-eager", "matches_only", "BlendSQL-1", "BlendSQL-32", "LOTUS"}
        assert side["calls"]["E-lazy"] >= side["calls"]["matches_only"]  # a bound
        assert side["calls"]["E-lazy"] <= side["calls"]["E-eager"]  # lazy asks a prefix of eager
        assert side["peers_same_rows_as_A"] and side["E-lazy_same_rows_as_A"]
    assert set(v["targets"]) == {"list_all_at_most_0.95x_best_peer", "limit_at_most_0.3x_best_peer"}
