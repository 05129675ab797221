"""`--db SOURCE` on ask, sql and suql: the agents and the SUQL compiler on a user's own files, read-only,
with clear errors for bad input."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.engines.data.conftest import HOSTILE, hotel_rows, write_csv, write_duckdb, write_parquet
from tui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_suql_with_answer_on_a_users_csv(capsys, tmp_path):
    path = write_csv(tmp_path / "my.csv", hotel_rows())
    before = sha(path)
    code, out, err = run(
        capsys,
        "suql",
        "SELECT id, city, answer(notes, 'does the text mention a pool?') AS pool FROM my "
        "WHERE city = 'Rome' AND answer(notes, 'does the text mention a pool?') = 'Yes' ORDER BY id",
        "--db",
        str(path),
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    expected = [r["id"] for r in hotel_rows() if r["city"] == "Rome" and "pool" in r["notes"]]
    assert [r["id"] for r in data["rows"]] == expected and {r["pool"] for r in data["rows"]} == {"Yes"}
    assert data["stats"]["answer_calls"] >= 1
    assert sha(path) == before


def test_ask_on_a_duckdb_file(capsys, tmp_path):
    path = write_duckdb(tmp_path / "file.duckdb", hotel_rows())
    before = sha(path)
    code, out, err = run(capsys, "ask", "how many hotels in Paris with price under 100?", "--db", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["sql"] == 'SELECT COUNT(*) FROM "hotels" WHERE "city" = \'Paris\' AND "price" < 100'
    assert data["rows"] == [{"count_star()": sum(1 for r in hotel_rows() if r["city"] == "Paris" and r["price"] < 100)}]
    assert [c["function"] for c in data["calls"]] == ["route", "parse", "respond"]
    assert sha(path) == before


def test_ask_suql_on_a_parquet_file(capsys, tmp_path):
    path = write_parquet(tmp_path / "hotels.parquet", hotel_rows())
    code, out, err = run(
        capsys, "ask", "hotels in Berlin whose notes mention the garden", "--suql", "--db", str(path), "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert "answer(\"notes\", 'does the text mention garden?') = 'Yes'" in data["sql"]
    expected = sorted(r["id"] for r in hotel_rows() if r["city"] == "Berlin" and "garden" in r["notes"])
    assert sorted(r["id"] for r in data["rows"]) == expected


def test_sql_on_a_folder_and_a_refused_statement(capsys, tmp_path):
    write_csv(tmp_path / "hotels.csv", hotel_rows())
    code, out, _ = run(capsys, "sql", "SELECT COUNT(*) AS n FROM hotels", "--db", str(tmp_path), "--json")
    assert code == 0 and json.loads(out)["rows"] == [{"n": 24}]
    before = sha(tmp_path / "hotels.csv")
    code, out, _ = run(capsys, "sql", f"COPY hotels TO '{tmp_path / 'hotels.csv'}'", "--db", str(tmp_path), "--json")
    assert code == 2 and "error" in json.loads(out)
    assert sha(tmp_path / "hotels.csv") == before


def test_sql_human_output_reads_back(capsys, tmp_path):
    path = write_csv(tmp_path / "hotels.csv", hotel_rows())
    code, out, _ = run(capsys, "sql", "SELECT name FROM hotels WHERE price > 150", "--db", str(path))
    assert code == 0 and "whose price is above 150" in out and "Hotel 23" in out


def test_hostile_names_through_the_cli(capsys, tmp_path):
    path = write_csv(tmp_path / f"{HOSTILE}.csv", [{HOSTILE: 7}])
    quoted = '"' + HOSTILE.replace('"', '""') + '"'
    # the table follows the naming rule (a character that is not a letter, digit or _ becomes _); the column
    # keeps its name
    code, out, err = run(capsys, "sql", f"SELECT {quoted} FROM ___DROP_TABLE_x____", "--db", str(path), "--json")
    assert code == 0, err
    assert json.loads(out)["rows"] == [{HOSTILE: 7}]


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: p / "missing.csv", "No such file"),
        (lambda p: ((p / "empty.csv").write_bytes(b""), p / "empty.csv")[1], "empty"),
        (lambda p: ((p / "x.parquet").write_text("nope"), p / "x.parquet")[1], "could not be read"),
        (lambda p: ((p / "x.xlsx").write_text("nope"), p / "x.xlsx")[1], "Cannot tell the format"),
    ],
)
@pytest.mark.parametrize("command", ["ask", "sql", "suql"])
def test_bad_sources_are_clear_errors(capsys, tmp_path, make, words, command):
    path = make(tmp_path)
    argv = {"ask": ["ask", "how many rows?"], "sql": ["sql", "SELECT 1"], "suql": ["suql", "SELECT 1"]}[command]
    code, out, err = run(capsys, *argv, "--db", str(path), "--json")
    assert code == 2
    assert words in json.loads(out)["error"]
    assert "Traceback" not in err + out


def test_db_and_another_world_do_not_mix(capsys, tmp_path):
    path = write_csv(tmp_path / "h.csv", hotel_rows(3))
    code, _, err = run(capsys, "ask", "hi", "--db", str(path), "--world", "courses")
    assert code == 2 and "--db or --world" in err
    code, _, err = run(capsys, "suql", "--workload", "--db", str(path))
    assert code == 2 and "--workload" in err
