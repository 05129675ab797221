"""The Lab's framework: the registry, running with progress and cancel, tables, charts, JSON."""

from __future__ import annotations

import json
import threading

import pytest

from engines import lab
from engines.errors import Cancelled, EngineError
from engines.lab.core import Chart, Experiment, Series, Table


def test_registry_lists_lectures_6_and_7_with_unique_names():
    found = lab.experiments()
    names = [e.name for e in found]
    assert len(names) == len(set(names))
    assert {6, 7} <= set(lab.lectures())
    assert [e.lecture for e in found] == sorted(e.lecture for e in found)  # grouped by lecture
    for e in found:
        assert e.lecture in (6, 7, 8) and e.title and e.section and e.caption
        assert e.to_json() == {"name": e.name, "lecture": e.lecture, "title": e.title}
        assert "Measured" in e.caption  # the caption says what is measured
    assert {e.name for e in lab.experiments(6)} >= {
        "l6-algebra",
        "l6-classify",
        "l6-exec-accuracy",
        "l6-hybrid",
        "l6-eval-metrics",
    }
    assert {e.name for e in lab.experiments(7)} >= {
        "l7-modes",
        "l7-workload",
        "l7-cap-sweep",
        "l7-similarity",
        "l7-agent-k",
        "l7-yelp-precision",
    }


def test_get_unknown_name_is_a_plain_error():
    with pytest.raises(EngineError, match="No experiment named"):
        lab.get("l6-nope")


def test_progress_is_reported_and_cancel_stops_a_run():
    seen: list[tuple[int, int, str]] = []
    table = lab.get("l6-classify-threshold").run("small", progress=lambda d, t, m: seen.append((d, t, m)))
    assert table.rows and seen and seen[-1][0] == seen[-1][1]
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        lab.get("l7-modes").run("small", cancel=cancel)

    # cancelled from inside, by the progress callback of a long run
    flag = threading.Event()
    with pytest.raises(Cancelled):
        lab.get("l6-exec-accuracy").run("small", progress=lambda d, t, m: flag.set() if d >= 2 else None, cancel=flag)


def test_parameters_of_the_two_sizes_and_unknown_parameters():
    e = lab.get("l6-exec-accuracy")
    assert e.parameters("full")["questions"] == 200 and e.parameters("small")["questions"] < 200
    assert e.parameters("small", {"questions": 7})["questions"] == 7
    with pytest.raises(EngineError, match="unknown parameter"):
        e.parameters("full", {"qestions": 7})


def test_table_and_chart_checks_and_json():
    with pytest.raises(ValueError):
        Table(("a", "b"), ((1,),))
    with pytest.raises(ValueError):
        Chart("bar", "t", "x", "y", ("p", "q"), (Series("s", (1.0,)),))
    t = Table(
        ("a", "b"),
        ((1, float("nan")), ("x", (1, 2))),
        ("a note",),
        Chart("line", "t", "x", "y", ("1",), (Series("s", (0.5,)),)),
    )
    payload = t.to_json("demo")
    assert payload["rows"] == [[1, None], ["x", [1, 2]]] and payload["notes"] == ["a note"]
    assert payload["chart"]["series"] == [{"name": "s", "values": [0.5]}]
    json.dumps(payload)  # strict JSON
    assert t.row("x") == {"a": "x", "b": (1, 2)} and t.column("a") == [1, "x"]


def test_a_new_experiment_is_one_function_and_one_entry():
    def count_rows(ctx):
        world, sandbox = ctx.restaurants()
        n = sandbox.run(f"SELECT COUNT(*) FROM restaurants WHERE location = '{ctx['location']}'").rows[0][0]
        ctx.claim("a location has restaurants", n > 0, f"{n} rows")
        return ctx.table(("location", "rows"), [(ctx["location"], n)])

    e = Experiment(
        "demo",
        8,
        "demo",
        "§0",
        "Measured: rows.",
        count_rows,
        full={"location": "Palo Alto"},
        small={"location": "Sunnyvale"},
    )
    t = e.run("small")
    assert t.rows[0][0] == "Sunnyvale" and t.rows[0][1] > 0 and t.notes[0].startswith("holds")


def test_every_experiment_has_a_small_size():
    for e in lab.experiments():
        # small only overrides full's parameters: it never adds one the experiment would not read
        assert set(e.small) <= set(e.full), (e.name, set(e.small) - set(e.full))
        assert set(e.parameters("small")) == set(e.parameters("full"))


def test_memo_key_tells_apart_what_changes_a_real_backends_answers():
    from contextlib import ExitStack

    from engines.lab.core import RunContext
    from engines.settings import Settings

    def key(**kw):
        return RunContext(None, {}, "small", lambda *a: None, None, Settings(**kw), ExitStack()).settings_key()

    assert key(backend="openai", openai_model="a") != key(backend="openai", openai_model="b")
    assert key(backend="openai", openai_base_url="http://127.0.0.1:1/v1") != key(
        backend="openai", openai_base_url="http://127.0.0.1:2/v1"
    )
    assert key(backend="claude", claude_row_model="x") != key(backend="claude", claude_row_model="y")
    assert key(backend="sim", openai_model="a") == key(backend="sim", openai_model="b")  # the sim ignores them


def test_captions_state_the_figures_of_the_run_not_literals():
    from engines.settings import Settings

    for e in lab.experiments():  # every caption can be filled, at both sizes
        assert e.caption_for("full") and e.caption_for("small")
        # a title is shown before any run (the experiment tree), as written: it holds no field to fill
        assert "{" not in e.title and "}" not in e.title, e.title
    ablation = lab.get("l8-ablation")
    assert "over 5 runs" in ablation.caption_for("full") and "over 1 run." in ablation.caption_for("small")
    assert "budgets of 8 and 25 actions" in ablation.caption_for("full")
    assert "budgets of 6 and 40" in ablation.caption_for("full", {"budgets": (6, 40)})
    hybrid = lab.get("l6-hybrid")
    assert "wrong 3.0% of the time" in hybrid.caption_for()
    assert "wrong 10.0% of the time" in hybrid.caption_for(settings=Settings(sim_error_on_topic=0.1))
    assert "BM25's k (10 and 30)" in hybrid.caption_for()
    assert "8 generated flag-bearer tables" in lab.get("l7-hybridqa-ablation").caption_for("small")

    def rows(ctx):
        return ctx.table(("n",), [(ctx["n"],)])

    e = Experiment(
        "demo",
        8,
        "demo",
        "§0",
        "Measured: {n} rows, {k} {fact}.",
        rows,
        full={"n": 3},
        facts={"k": lambda: 7, "fact": "x"},
    )
    assert e.run("full", {"n": 4}).caption == "Measured: 4 rows, 7 x."  # the table carries the caption it ran with
    bad = Experiment("bad", 8, "bad", "§0", "Measured: {missing}.", rows, full={"n": 1})
    with pytest.raises(EngineError, match="cannot be filled"):
        bad.caption_for()
