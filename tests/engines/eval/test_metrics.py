"""Row-wise EM/F1 exactly as SPINACH's, set F1 for contrast, bootstrap intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.eval.metrics import bootstrap, bootstrap_difference, row_em, row_f1, set_f1

CASES = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "spinach" / "row_f1_cases.json"


def u(v: str) -> dict:
    return {"type": "uri", "value": v}


@pytest.mark.skipif(not CASES.exists(), reason="SPINACH's test cases are not beside the checkout")
def test_every_case_of_spinachs_tests():
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    assert len(cases) == 14
    for case in cases:
        assert row_f1(case["predicted"], case["gold"]) == pytest.approx(case["expected_f1"], abs=1e-9), case["name"]


def test_exercise_4_by_hand():
    gold = [{"a": u("A"), "b": u("x")}, {"a": u("B"), "b": u("y")}, {"a": u("C"), "b": u("z")}]
    pred = [{"a": u("A"), "b": u("x")}, {"a": u("B"), "b": u("z")}, {"a": u("D"), "b": u("w")}]
    assert row_f1(pred, gold) == pytest.approx(3 / 5.5)
    assert row_em(pred, gold) == 0.0


def test_extra_columns_cost_nothing_but_set_f1_punishes_them():
    gold = [{"county": u("c1")}]
    pred = [{"county": u("c1"), "population": {"type": "literal", "value": "1000"}}]
    assert row_f1(pred, gold) == 1.0 and row_em(pred, gold) == 1.0
    assert set_f1(pred, gold) < 1.0


def test_mixed_up_rows_fool_set_f1_not_row_f1():
    gold = [{"p": u("A"), "c": u("x")}, {"p": u("B"), "c": u("y")}]
    pred = [{"p": u("A"), "c": u("y")}, {"p": u("B"), "c": u("x")}]
    assert set_f1(pred, gold) == 1.0
    assert row_f1(pred, gold) == pytest.approx(2 / 3)


def test_labels_and_descriptions_of_gold_are_ignored_and_variable_names_do_not_matter():
    gold = [
        {
            "item": u("a"),
            "itemLabel": {"type": "literal", "value": "A"},
            "itemDescription": {"type": "literal", "value": "d"},
        }
    ]
    assert row_f1([{"whatever": u("a")}], gold) == 1.0


def test_edge_cases():
    assert row_f1(None, [{"a": u("x")}]) == 0.0
    assert row_f1(True, True) == 1.0 and row_f1(False, True) == 0.0
    assert row_f1([], [{"a": u("x")}]) == 0.0 and row_f1([{"a": u("x")}], []) == 0.0
    assert row_f1([], []) == 1.0


def test_bootstrap():
    scores = [1.0] * 28 + [0.0] * 28
    ci = bootstrap(scores, seed=1)
    assert ci.low < 0.5 < ci.high and ci.mean == 0.5
    assert 0.08 < ci.half_width < 0.18  # about 1.96 * sqrt(.25 / 56) = 0.13
    wide = bootstrap([1.0, 0.0] * 500, seed=1)
    assert wide.half_width < ci.half_width
    assert bootstrap([], seed=1).n == 0
    diff = bootstrap_difference([1.0] * 50, [0.0] * 50)
    assert diff.low == diff.high == 1.0
    with pytest.raises(ValueError):
        bootstrap_difference([1.0], [])
