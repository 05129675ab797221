"""--out FILE: the rows a command returns, written in the format its extension names, read back here."""

from __future__ import annotations

import csv
import json

import duckdb
import pytest

from tui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_sql_out_in_every_format_holds_every_row_in_full(tmp_path, capsys):
    sql = "SELECT _id, name, reviews FROM restaurants WHERE location = 'Palo Alto' ORDER BY _id"
    code, out, _ = run(capsys, "sql", sql, "--json")
    expected = json.loads(out)["rows"]
    for name in ("rows.csv", "rows.json", "rows.jsonl", "rows.parquet"):
        path = tmp_path / name
        code, _, err = run(capsys, "sql", sql, "--out", str(path))
        assert code == 0 and f"wrote {len(expected)} rows" in err
        if name.endswith(".csv"):
            with path.open(newline="", encoding="utf-8") as f:
                got = list(csv.DictReader(f))
            assert [int(r["_id"]) for r in got] == [r["_id"] for r in expected]
        elif name.endswith(".jsonl"):
            got = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            assert got == expected  # the reviews whole, not the table's cut cells
        elif name.endswith(".json"):
            assert json.loads(path.read_text(encoding="utf-8")) == expected
        else:
            got = duckdb.sql("SELECT _id, reviews FROM read_parquet(?)", params=[str(path)]).fetchall()
            assert [(r["_id"], r["reviews"]) for r in expected] == [(a, list(b)) for a, b in got]


def test_suql_ask_and_sparql_write_their_rows_and_json_stays_one_document(tmp_path, capsys):
    q = "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?') = 'Yes' LIMIT 2"
    code, out, _ = run(capsys, "suql", q, "--json", "--out", str(tmp_path / "s.json"))
    assert code == 0 and json.loads(out)["rows"]  # stdout is still one JSON document
    assert [r["name"] for r in json.loads((tmp_path / "s.json").read_text())] == [
        r["name"] for r in json.loads(out)["rows"]
    ]
    code, out, _ = run(capsys, "ask", "Show me a café in Palo Alto", "--json", "--out", str(tmp_path / "a.csv"))
    with (tmp_path / "a.csv").open(newline="", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == len(json.loads(out)["rows"]) > 0
    code, out, _ = run(
        capsys, "sparql", "SELECT ?p WHERE { ?p wdt:P31 ?c } LIMIT 3", "--json", "--out", str(tmp_path / "k.jsonl")
    )
    assert len((tmp_path / "k.jsonl").read_text().splitlines()) == len(json.loads(out)["rows"]) == 3


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sql", "SELECT 1", "--out", "rows.txt"], "end the name in one of"),
        (["suql", "--compare", "SELECT 1", "--out", "rows.csv"], "--out writes the rows of one QUERY"),
        (["ask", "What is dim sum?", "--out", "rows.csv"], "no question returned rows"),
    ],
)
def test_out_refuses_clearly(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own usage error
        code = e.code
    assert code == 2 and message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_out_into_a_folder_that_cannot_be_written_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "a-file"
    target.write_text("x")
    code, _, err = run(capsys, "sql", "SELECT 1 AS one", "--out", str(target / "rows.csv"))
    assert code == 2 and "Traceback" not in err and "rows.csv" in err
