"""`cs224v-tui suql --compare QUERY`: the query in all six modes, as a table or JSON; exit 0 when every mode
ran, 1 when one failed, 2 for bad input.  Hermetic: the paid backend points at a closed port on 127.0.0.1."""

from __future__ import annotations

import json
import socket

import pytest

from tui.cli import main

ROMANTIC = (
    "SELECT name, rating FROM restaurants WHERE location = 'Mountain View' AND (answer(reviews, 'is it romantic?') "
    "= 'Yes' OR answer(reviews, 'does it have a great view?') = 'Yes') ORDER BY rating DESC LIMIT 3"
)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json(capsys):
    code, out, err = run(capsys, "suql", "--compare", ROMANTIC, "--json")
    assert code == 0 and "Traceback" not in err
    data = json.loads(out)
    assert data["query"] == ROMANTIC and data["reference"] == "A" and data["failed"] == []
    modes = {m["mode"]: m for m in data["modes"]}
    assert list(modes) == list("ABCDEFG")
    assert all(m["status"] == "ok" and m["rows"] == 3 for m in modes.values())
    assert modes["A"]["agrees"] is None and all(modes[m]["agrees"] is True for m in "BCDE")
    assert modes["A"]["answer_calls"] > modes["C"]["answer_calls"] > modes["E"]["answer_calls"]
    assert modes["F"]["approximate"] is True
    fewest = min(m["answer_calls"] for m in modes.values())
    assert data["fewest_answer_calls"]["calls"] == fewest


def test_compare_table(capsys):
    code, out, _ = run(capsys, "suql", "--compare", ROMANTIC)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "mode",
        "answer()",
        "summary()",
        "cached",
        "examined",
        "rows",
        "verify",
        "=",
        "A",
        "wall",
    ]
    table = {line.split()[0]: line.split() for line in lines[1:7]}
    assert list(table) == list("ABCDEF")
    assert table["A"][7] == "ref" and [table[m][7] for m in "BCDE"] == ["yes"] * 4
    assert table["F"][6] == "≈"  # the approximate mode's rows are marked
    assert any(line.startswith("fewest answer() calls:") for line in lines)
    assert "LIMIT without ORDER BY" not in out


@pytest.mark.parametrize(
    "argv, said",
    [
        (["suql", "--compare"], "--compare compares the modes on one QUERY"),
        (["suql", "--compare", "--workload"], "--compare compares the modes on one QUERY"),
        (
            ["suql", "--compare", "SELECT name FROM restaurants WHERE answer(reviews) = 'Yes'"],
            "answer() takes a text and a question",
        ),
        (["suql", "--compare", "DROP TABLE restaurants"], "DROP TABLE statements are refused"),
    ],
)
def test_bad_input_exits_2(capsys, argv, said):
    code, out, err = run(capsys, *argv)
    assert code == 2 and said in err and out == "" and "Traceback" not in err


def test_bad_query_json(capsys):
    code, out, _ = run(capsys, "suql", "--compare", "DROP TABLE restaurants", "--json")
    assert code == 2 and "DROP TABLE statements are refused" in json.loads(out)["error"]


@pytest.fixture
def claude(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("CS224V_BACKEND", "claude")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-tests")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("CS224V_CLAUDE_MAX_RETRIES", "0")
    monkeypatch.setenv("CS224V_SUQL_CONFIRM_CALLS", "50")


def test_a_paid_backend_asks_first(claude, capsys):
    code, out, err = run(capsys, "suql", "--compare", ROMANTIC)
    assert code == 2 and "may make up to" in err and "in mode A" in err and "--yes" in err and out == ""


def test_failed_modes_exit_1(claude, capsys):
    code, out, err = run(capsys, "suql", "--compare", ROMANTIC, "--yes", "--json")
    assert code == 1 and "Traceback" not in err
    data = json.loads(out)
    assert data["failed"] == list("ABCDEFG") and data["fewest_answer_calls"] is None
    assert all("Could not reach the Anthropic API" in m["error"] for m in data["modes"])
    code, out, _ = run(capsys, "suql", "--compare", ROMANTIC, "--yes")
    assert code == 1 and "A: failed: Could not reach the Anthropic API" in out
