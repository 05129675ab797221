"""``score``'s maths (issue 10 item 5): the vectorised recall matrix gives exactly the scores of the
pair-by-pair definition, and tables beyond the bound are refused by the metric itself."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from engines.eval import metrics
from engines.eval.metrics import MAX_PAIRS, TooManyRows, _match_ratio, _recall_matrix, row_em, row_f1


def slow_row_f1(predicted, gold) -> float:
    """The implementation before vectorising, kept verbatim as the reference: one _match_ratio per pair."""
    if predicted is None:
        return 0.0
    if isinstance(predicted, bool) or isinstance(gold, bool):
        return float(predicted == gold)
    if gold is None:
        return 0.0
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    cost = np.empty((len(predicted), len(gold)))
    for i, p in enumerate(predicted):
        for j, g in enumerate(gold):
            cost[i, j] = _match_ratio(p, g)
    rows, cols = linear_sum_assignment(cost, maximize=True)
    assigned = cost[rows, cols]
    tp = float(assigned[assigned > 0].sum())
    partial = assigned[(assigned < 1) & (assigned > 0)]
    fp_or_fn = float((1 - partial).sum())
    fp_or_fn += 2 * int(np.sum(assigned <= 0))
    fp_or_fn += (len(predicted) - len(rows)) + (len(gold) - len(cols))
    if tp == 0:
        return 0.0
    return 2 * tp / (2 * tp + fp_or_fn)


COLUMNS = ("a", "b", "c", "itemLabel", "itemDescription")


def random_table(rng: random.Random, n: int) -> list[dict]:
    """Small value pools so rows share values, repeat a value within a row, and tie in the matching."""
    columns = rng.sample(COLUMNS, rng.randint(0, len(COLUMNS)))
    table = []
    for _ in range(n):
        row = {}
        for c in columns:
            if rng.random() < 0.85:
                cell = {"type": rng.choice(("uri", "literal")), "value": rng.choice("xyz")}
                if rng.random() < 0.2:
                    cell["xml:lang"] = rng.choice(("en", "fr"))
                row[c] = cell
        table.append(row)
    return table


def test_vectorised_scores_equal_the_pair_by_pair_reference():
    rng = random.Random(224)
    for _ in range(800):
        pred, gold = random_table(rng, rng.randint(0, 7)), random_table(rng, rng.randint(0, 7))
        if pred and gold:
            reference = np.array([[_match_ratio(p, g) for g in gold] for p in pred])
            assert np.array_equal(_recall_matrix(pred, gold), reference), (pred, gold)
        assert row_f1(pred, gold) == slow_row_f1(pred, gold), (pred, gold)  # exactly, not approximately


def test_repeated_values_count_as_a_multiset():
    u = lambda v: {"type": "uri", "value": v}  # noqa: E731
    gold = [{"a": u("x"), "b": u("x"), "c": u("y")}]
    assert _recall_matrix([{"p": u("x")}], gold)[0, 0] == pytest.approx(1 / 3)
    assert _recall_matrix([{"p": u("x"), "q": u("x")}], gold)[0, 0] == pytest.approx(2 / 3)
    assert _recall_matrix([{"p": u("x"), "q": u("x"), "r": u("x"), "s": u("y")}], gold)[0, 0] == 1.0
    assert _recall_matrix([{"p": u("x")}], [{"itemLabel": u("x")}])[0, 0] == 0.0  # a gold row of labels only


def test_the_metric_refuses_beyond_its_bound_before_building_anything(monkeypatch):
    def never(*_a):
        raise AssertionError("the matrix was built")

    monkeypatch.setattr(metrics, "_recall_matrix", never)
    row = {"a": {"type": "uri", "value": "x"}}
    side = MAX_PAIRS // 1000 + 1
    with pytest.raises(TooManyRows, match="cubic time"):
        row_f1([row] * 1000, [row] * side)
    with pytest.raises(TooManyRows):
        row_em([row] * side, [row] * 1000)
    assert row_f1([row] * side, []) == 0.0  # nothing to pair: no bound needed
