"""The knowledge-graph commands: sparql, sparql --check-dialect, score, spinach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli import main

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "spinach" / "dev.json"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_sparql_json_rows(capsys):
    code, out, _ = run(
        capsys,
        "sparql",
        'SELECT ?m ?mLabel WHERE { ?m wdt:P31 wd:Q1007 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } } LIMIT 2',
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["feedback"] == "rows" and len(data["rows"]) == 2
    assert set(data["rows"][0]) == {"m", "mLabel"}


def test_sparql_feedbacks_and_exit_codes(capsys):
    code, out, _ = run(capsys, "sparql", "SELECT ?x WHERE { ?x wdt:P31 wd:Q424242 }", "--json")
    assert code == 0 and json.loads(out) == {"feedback": "empty", "columns": ["x"], "rows": []}
    code, out, _ = run(capsys, "sparql", "SELECT ?x WHERE { ?x wdt:P31 ", "--json")
    assert code == 1 and json.loads(out)["feedback"] == "syntax_error"
    code, out, _ = run(capsys, "sparql", "LOAD <http://example.org/x.ttl>", "--json")
    assert code == 2 and "error" in json.loads(out)
    code, _out, err = run(capsys, "sparql", "SELECT * WHERE { SERVICE <http://dbpedia.org/sparql> { ?s ?p ?o } }")
    assert code == 2 and "refused" in err


def test_sparql_human_output(capsys):
    code, out, _ = run(capsys, "sparql", "SELECT ?c WHERE { ?c wdt:P31 wd:Q1001 }", "--store", "oxigraph")
    assert code == 0 and out.startswith("feedback: rows") and "(6 rows)" in out


@pytest.mark.skipif(not DEV.exists(), reason="the SPINACH dev set is not beside the checkout")
def test_check_dialect(capsys, tmp_path):
    # the whole file is counted in tests/engines/kg/test_dialect.py; here a slice with named subqueries
    items = json.loads(DEV.read_text(encoding="utf-8"))
    part = [q for q in items if "WITH" in q["sparql"] or "hint:" in q["sparql"]][:6] + items[:4]
    f = tmp_path / "part.json"
    f.write_text(json.dumps(part))
    code, out, _ = run(capsys, "sparql", "--check-dialect", str(f), "--json")
    data = json.loads(out)
    assert code == 0 and data["total"] == len(part) == data["accepted"] and data["failures"] == []


def test_check_dialect_reports_failures(capsys, tmp_path):
    f = tmp_path / "set.json"
    f.write_text(json.dumps([{"id": "a", "sparql": "SELECT ?x WHERE { ?x ?p ?o }"}, {"id": "b", "sparql": "DROP ALL"}]))
    code, out, _ = run(capsys, "sparql", "--check-dialect", str(f), "--json")
    data = json.loads(out)
    assert data["total"] == 2 and data["accepted"] == 1 and data["failures"][0]["id"] == "b"
    code, _out, err = run(capsys, "sparql", "--check-dialect", str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in err


def test_score(capsys, tmp_path):
    u = lambda v: {"type": "uri", "value": v}  # noqa: E731
    pred = tmp_path / "pred.json"
    gold = tmp_path / "gold.json"
    pred.write_text(json.dumps([{"a": u("A"), "b": u("x")}, {"a": u("B"), "b": u("z")}, {"a": u("D"), "b": u("w")}]))
    gold.write_text(
        json.dumps(
            {
                "head": {"vars": ["a", "b"]},
                "results": {
                    "bindings": [{"a": u("A"), "b": u("x")}, {"a": u("B"), "b": u("y")}, {"a": u("C"), "b": u("z")}]
                },
            }
        )
    )
    code, out, _ = run(capsys, "score", str(pred), str(gold), "--json")
    data = json.loads(out)
    assert code == 0 and data["em"] == 0 and data["f1"] == pytest.approx(3 / 5.5)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"a": 1}]')
    code, _out, err = run(capsys, "score", str(bad), str(gold))
    assert code == 2 and "type" in err


def test_spinach_question_and_save(capsys, tmp_path):
    path = tmp_path / "t.json"
    code, out, _ = run(
        capsys, "spinach", "What is the highest mountain in Pallasca, and how high is it?", "--save", str(path)
    )
    assert code == 0 and "finished: stop" in out and "final SPARQL" in out and "search_wikidata" in out
    saved = json.loads(path.read_text())
    assert saved["question"].startswith("What is the highest") and saved["steps"]
    code, out, _ = run(capsys, "spinach", "Who directed Night Ferry?", "--json", "--policy", "sim")
    assert code == 0 and json.loads(out)["finish"] in ("stop", "budget")


def test_spinach_claude_without_key_is_a_clear_error(capsys):
    code, _out, err = run(capsys, "spinach", "Who directed Night Ferry?", "--policy", "claude")
    assert code == 1 and "ANTHROPIC_API_KEY" in err


def test_spinach_eval_json(capsys):
    code, out, _ = run(capsys, "spinach", "--eval", "--json", "--limit", "1", "--store", "oxigraph")
    data = json.loads(out)
    assert code == 0
    assert set(data["sets"]) == {"simple", "forum"} and {"em", "f1"} <= set(data["sets"]["simple"])
    assert {"em", "f1", "by_category"} <= set(data["sets"]["forum"]) and len(data["sets"]["forum"]["by_category"]) == 8
    assert set(data["baselines"]) == {"direct", "one_shot", "template", "tog"}
    assert all(set(b) == {"simple", "forum"} for b in data["baselines"].values())
    assert set(data["actions"]) == {"0-5", "6-8", "9-11", "12-14", "15"}
