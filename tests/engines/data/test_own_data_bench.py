"""benchmarks/own_data_ask.py as a test: on its five real public tables no question gets a confident wrong
answer, the reader's goal holds (at least 70% right with nothing flagged), false alarms stay under 10% of the
right answers, and the gold queries agree with their separate pandas computation (on the smallest table)."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("own_data_ask_bench", ROOT / "benchmarks" / "own_data_ask.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["own_data_ask_bench"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("own_data_ask_bench", None)


def test_no_confident_wrong_answer_on_the_benchmark(bench, tmp_path):
    outcomes = bench.run(list(bench.TABLES), tmp_path)
    wrong = [(o.table, o.question, o.sql) for o in outcomes if o.outcome == "confidently wrong"]
    assert wrong == []
    answerable = [o for o in outcomes if o.gold is not None]
    seen = Counter(o.outcome for o in answerable)
    assert seen["correct"] >= 0.7 * len(answerable), seen
    right = seen["correct"] + seen["right but flagged"]
    assert seen["right but flagged"] < 0.1 * right, seen
    # every question no column can express is flagged or declined
    assert all(o.outcome == "flagged or declined" for o in outcomes if o.gold is None)


def test_the_gold_queries_agree_with_pandas(bench, tmp_path, capsys):
    bench.verify(["penguins", "la_riots"], tmp_path)
    assert "gold queries agree" in capsys.readouterr().out
