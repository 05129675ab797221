"""Lecture 7's experiments at their reduced size: the shape of each table and the qualitative result."""

from __future__ import annotations

from engines import lab


def run(name: str, **params):
    return lab.get(name).run("small", params or None)


def test_six_modes_e_makes_far_fewer_calls_than_a():
    t = run("l7-modes")
    assert [r[0] for r in t.rows] == ["A", "B", "C", "D", "E", "F", "G", "B′", "B-duckdb"]
    calls = {r[0]: r[2] for r in t.rows}
    assert calls["A"] == 600 and calls["E"] * 20 <= calls["A"] and calls["D"] < calls["C"]
    # B runs the WHERE as written and stops at LIMIT: the written order matters; DuckDB never stops early
    assert calls["B′"] < calls["B"] < calls["C"] == calls["B-duckdb"]
    assert t.row("A")["summary() calls"] > 1 and t.row("E")["summary() calls"] == 1
    assert all(r[-1] is True for r in t.rows)  # every mode's answer is right
    # by tokens as well as by calls: the sim's are estimates, and it costs nothing (no cost column, no $)
    tokens = {r[0]: t.row(r[0])["tokens (estimated)"] for r in t.rows}
    assert tokens["A"] > tokens["C"] > tokens["E"] > 0 and tokens["C"] == tokens["B-duckdb"]
    assert not any("cost" in c or "$" in c for c in t.columns)


def test_workload_modes_precision_is_the_same_and_calls_fall():
    t = run("l7-workload")
    assert [r[0] for r in t.rows] == list("ABCDEFG")
    m = {r[0]: dict(zip(t.columns, r)) for r in t.rows}
    # on a few queries (here mostly list-all ones) the order of C, D and E can tie; E stays far below A and B
    assert m["E"]["answer() / query"] < m["B"]["answer() / query"] < m["A"]["answer() / query"]
    assert m["E"]["answer() / query"] * 10 <= m["A"]["answer() / query"]
    assert m["C"]["answer() / query"] * 2 <= m["B"]["answer() / query"]  # predicate ordering saves most of B's calls
    assert len({m[x]["precision"] for x in "ABCDE"}) == 1
    assert m["F"]["answer() / query"] <= m["E"]["answer() / query"] and m["F"]["recall"] <= m["E"]["recall"]
    assert m["A"]["calls / A's"] == 1.0
    assert m["E"]["tokens (estimated) / query"] * 10 <= m["A"]["tokens (estimated) / query"]
    assert not any("cost" in c for c in t.columns)  # the sim costs nothing


def test_cap_sweep_more_cap_more_calls_and_recall():
    t = run("l7-cap-sweep")
    assert [r[0] for r in t.rows] == [5, 20, 50, "none (mode E)"]
    calls = [r[1] for r in t.rows]
    recalls = [r[3] for r in t.rows]
    assert all(b >= a for a, b in zip(calls, calls[1:])) and all(b >= a for a, b in zip(recalls, recalls[1:]))


def test_similarity_is_not_satisfaction():
    t = run("l7-similarity")
    alone = next(r for r in t.rows if "score > 0" in r[0])
    then = next(r for r in t.rows if r[0].startswith("retrieval, then answer()"))
    assert alone[3] < then[3]  # precision of retrieval alone < precision after answer()
    assert then[5] == alone[1]  # answer() read exactly the retrieved rows
    assert alone[5] == 0


def test_table_tokens_the_whole_table_grows_and_suqls_schema_does_not():
    t = run("l7-table-tokens")
    measured = [r for r in t.rows if "arithmetic" not in r[0]]
    assert [r[0] for r in measured] == ["16", "1,000"]
    whole = [int(r[1].replace(",", "")) for r in measured]
    assert whole[1] > 50 * whole[0]  # 62.5x the rows: about as many times the tokens
    assert len({r[3] for r in measured}) == 1 and measured[0][3] < 100  # the schema does not grow
    assert all(int(r[4].split()[0]) <= 3 for r in measured)  # a type-I question reads a row or so, at any size
    assert all(n.startswith("holds") for n in t.notes[1:]), t.notes


def test_function_calling_agent_needs_the_right_k_and_suql_does_not():
    t = run("l7-agent-k")
    agent = [r for r in t.rows if r[0] == "function-calling agent"]
    suql = t.row("SUQL (mode E)")
    assert [r[1] for r in agent] == [5, 50, 200]
    assert agent[0][2] <= agent[-1][2] and suql["success"] >= max(r[2] for r in agent)
    assert agent[0][3] <= agent[-1][3]  # more retrieved rows, more calls


def test_yelp_precision_suql_beats_linearisation():
    t = run("l7-yelp-precision")
    assert [r[0] for r in t.rows] == [
        "SUQL agent (LIMIT 3)",
        "linearisation + BM25, top 1",
        "linearisation + BM25, top 3",
    ]
    all_p = {r[0]: r[3] for r in t.rows}
    assert all_p["SUQL agent (LIMIT 3)"] > all_p["linearisation + BM25, top 1"]
    assert t.rows[1][4] == 40 and t.rows[2][4] == 120  # restaurants returned: m per question
    assert all_p["linearisation + BM25, top 3"] < all_p["linearisation + BM25, top 1"]  # lower ranks satisfy less
    assert "reviews='realistic'" in t.caption


def test_yelp_false_negatives_add_up():
    t = run("l7-yelp-false-negatives")
    counts = {r[0]: r[1] for r in t.rows}
    assert counts["questions"] == 40
    assert counts["... and truly nothing satisfies them"] + counts["... false negatives"] == counts["returned nothing"]
    causes = [r[1] for r in t.rows if r[0].startswith("    ")]
    assert sum(causes) == counts["... false negatives"]
    # the Yelp world (reviews that hint or omit, intents from existing restaurants): both kinds of empty result occur
    assert counts["... and truly nothing satisfies them"] > 0 and counts["... false negatives"] > 0
    assert all(n.startswith("holds") for n in t.notes if n.startswith(("holds", "differs")))
    assert any("'near me'" in n for n in t.notes)


def test_yelp_recall_distribution_covers_every_question():
    t = run("l7-yelp-recall")
    assert sum(r[1] for r in t.rows) == 40
    assert t.chart is not None and t.chart.kind == "bar"


def test_hybridqa_ablation_errors_and_format():
    """One test for the three HybridQA tables: they share one simulation (computed once per process)."""
    t = run("l7-hybridqa-ablation")
    assert [r[0] for r in t.rows] == ["neither", "fallback", "retry", "fallback + retry"]
    s = {r[0]: dict(zip(t.columns, r)) for r in t.rows}
    assert s["fallback"]["wrong column"] < s["neither"]["wrong column"]
    assert s["retry"]["no result"] < s["neither"]["no result"]
    assert s["fallback + retry"]["judged"] >= max(s["fallback"]["judged"], s["retry"]["judged"])
    assert all(r["EM"] <= r["F1"] < r["judged"] for r in s.values())

    e = run("l7-hybridqa-errors")
    total = e.rows[-1]
    assert total[0] == "not an exact match" and sum(r[2] for r in e.rows[:-1]) == total[2]
    evaluation = sum(r[2] for r in e.rows if r[1] == "evaluation")
    assert evaluation / total[2] >= 0.4

    f = run("l7-hybridqa-format")
    by_rate = {r[0]: r for r in f.rows}
    assert by_rate[0.0][1] > by_rate[0.3][1] and by_rate[0.0][3] == by_rate[0.3][3]  # EM up, judgement unchanged


def test_exercise_1_written_order_matters_as_written_and_not_to_the_compiler():
    t = run("l7-exercise-1")
    calls = {(r[0], r[1]): r[3] for r in t.rows}
    date, parking = "'is it good for a date?' first", "'is parking easy?' first"
    assert [r[1] for r in t.rows] == ["B", "notes", "D", "E"] * 2
    # as written (mode B, and the notes' compiler), the order changes the calls; parking, which rules out more
    # rows (its reviews often say parking is hard), is the cheaper first condition, as in the notes (70 against 74)
    assert calls[(parking, "notes")] < calls[(date, "notes")] and calls[(parking, "B")] < calls[(date, "B")]
    # the second condition is asked only of the rows the first did not rule out
    second = {r[0]: (r[5] if r[0] == date else r[4]) for r in t.rows if r[1] == "notes"}
    first = {r[0]: (r[4] if r[0] == date else r[5]) for r in t.rows if r[1] == "notes"}
    assert all(second[k] <= first[k] for k in first) and second[parking] < second[date]
    # our compiler orders the answer() conditions itself: the same calls whatever the written order
    assert calls[(date, "D")] == calls[(parking, "D")]
    assert all(r[-1] is True for r in t.rows)
    assert all(n.startswith("holds") for n in t.notes if n.startswith(("holds", "differs")))


def test_slide_queries_the_laptop_or_over_two_text_columns():
    """§2.2's laptop query: the port may be written in either text column, so OR over both finds what each misses."""
    t = run("l7-slide-queries")
    lap = {r[1]: dict(zip(t.columns, r)) for r in t.rows if r[0] == "laptops"}
    about, desc, both = (
        lap[f"every match: {k}"]["recall"] for k in ("about only", "description only", "about OR description")
    )
    assert both > max(about, desc) and both >= 0.9
    assert lap["the slide's query: about OR description, LIMIT 3"]["returned"] <= 3
    date = next(r for r in t.rows if r[0] == "restaurants")
    assert date[2] <= 5  # the structured filters leave few rows to read
    assert all(n.startswith("holds") for n in t.notes if n.startswith(("holds", "differs")))


def test_the_laptop_world_keeps_its_truth_apart():
    from worlds import laptops

    world, truth = laptops.build()
    assert not hasattr(world, "truth") and truth.thunderbolt
    says = [r for r in world.rows if "thunderbolt 3" in (r.about + r.description).lower()]
    assert {r._id for r in says} == truth.thunderbolt  # every port is written somewhere, in one column or both
    assert any("Thunderbolt 3" in r.about and "Thunderbolt 3" not in r.description for r in says)
    assert any("Thunderbolt 3" in r.description and "Thunderbolt 3" not in r.about for r in says)


def test_every_difference_from_the_notes_says_why_in_lectures_6_and_7():
    """A claim of lectures 6 and 7 that does not hold on the small run says why (our world, our simulation, or what
    so few questions can show), as lecture 8's do; the full runs are what the README and the Lab's notes quote."""
    for experiment in lab.experiments():
        if experiment.lecture == 8:
            continue  # tests/engines/lab/test_lecture8.py and test_lecture8_full.py
        for note in experiment.run("small").notes:
            assert not note.startswith("differs") or " Why: " in note, (experiment.name, note)


def test_cascade_calls_fall_as_the_target_loosens_and_every_target_is_met():
    t = run("l7-cascade")
    assert [r[0] for r in t.rows] == ["E (reference)", "G", "G", "G"]
    g = [dict(zip(t.columns, r)) for r in t.rows[1:]]
    assert [r["target"] for r in g] == [0.5, 0.9, 0.99]
    for r in g:
        assert r["recall vs LLM (worst)"] >= r["target"] and r["precision vs LLM (worst)"] >= r["target"]
    assert g[0]["calls / E's"] <= g[1]["calls / E's"] <= g[2]["calls / E's"] and g[0]["calls / E's"] < 0.8
    assert t.chart is not None and t.chart.x == ("0.5", "0.9", "0.99")
