"""The headless CLI: JSON for scripts, exit codes, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

from tui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_cafe_in_palo_alto_json(capsys):
    code, out, _ = run(capsys, "ask", "Show me a café in Palo Alto", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"sql", "readback", "reply", "rows", "calls"} <= set(data)
    assert data["rows"]
    for row in data["rows"]:
        assert row["location"] == "Palo Alto"
        assert {"cafe", "coffee & tea"} & set(row["cuisines"])
    # 'café' folds to the enum value 'cafe': an exact match, so classify() asks no LLM
    assert [c["function"] for c in data["calls"]] == ["route", "parse", "respond"]


def test_ask_several_questions_is_one_dialogue(capsys):
    code, out, _ = run(capsys, "ask", "Show me restaurants in Menlo Park.", "What about italian ones?", "--json")
    first, second = json.loads(out)
    assert code == 0 and "'italian' = ANY(cuisines)" in second["sql"] and "Menlo Park" in second["sql"]


def test_ask_human_output(capsys):
    code, out, _ = run(capsys, "ask", "Show me luxury vegan places in Sunnyvale with at least 4.5 stars.")
    assert code == 0 and "read-back:" in out and "no results" in out


def test_sql_json_and_refusals(capsys):
    code, out, _ = run(
        capsys, "sql", "SELECT name, rating FROM restaurants ORDER BY rating DESC, name LIMIT 2", "--json"
    )
    assert code == 0 and len(json.loads(out)["rows"]) == 2
    code, out, _ = run(capsys, "sql", "DROP TABLE restaurants", "--json")
    assert code == 2 and "DROP" in json.loads(out)["error"]
    code, out, _ = run(capsys, "sql", "SELECT nme FROM restaurants", "--json")
    assert code == 2 and "nme" in json.loads(out)["error"]
    code, _, err = run(capsys, "sql", "SELEC 1")
    assert code == 2 and "Traceback" not in err and err.strip()


def test_claude_without_a_key_says_so_plainly(capsys):
    code, _, err = run(capsys, "--backend", "claude", "ask", "hi")
    assert code == 1 and "ANTHROPIC_API_KEY" in err and "Traceback" not in err


def test_console_script_help():
    out = subprocess.run([sys.executable, "-m", "tui.cli", "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("ask", "sql", "screenshots"):
        assert command in out


def test_ask_suql_agent(capsys):
    code, out, _ = run(capsys, "ask", "--suql", "Find me a spicy Chinese restaurant in Palo Alto!", "--json")
    data = json.loads(out)
    assert code == 0 and "answer(reviews, 'is it spicy?') = 'Yes'" in data["sql"]  # the user's word, asked
    assert "where the reviews say it is spicy" in data["readback"]
    assert all(r["location"] == "Palo Alto" for r in data["rows"])


def test_ask_the_course_assistant(capsys):
    code, out, _ = run(
        capsys,
        "ask",
        "--world",
        "courses",
        "hello",
        "Which autumn courses fit my schedule and are practical?",
        "--json",
    )
    hello, plan = json.loads(out)
    assert code == 0 and not hello["needs_database"] and "courses" in hello["reply"]
    assert [r["course_id"] for r in plan["rows"]] == ["C1", "C3"] and [r["course_id"] for r in plan["to_verify"]] == [
        "C6"
    ]
    assert "where there is no row of meetings joined with busy" in plan["readback"]


def test_suql_json_refusal_and_workload(capsys):
    code, out, _ = run(
        capsys,
        "suql",
        "SELECT name FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is it romantic?') = 'Yes' LIMIT 1",
        "--mode",
        "D",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and {"mode", "dnf", "plan", "readback", "rows", "to_verify", "stats"} <= set(data)
    assert data["mode"] == "D" and set(data["stats"]) >= {"answer_calls", "summary_calls", "wall_s"}
    code, out, _ = run(
        capsys, "suql", "SELECT * FROM restaurants WHERE ST_Distance_Sphere(location, 'x') < 1", "--json"
    )
    assert code == 2 and "st_distance_sphere" in json.loads(out)["error"]
    code, out, _ = run(capsys, "suql", "--workload", "--seed", "3", "--queries", "4", "--json")
    data = json.loads(out)
    assert data["queries"] == 4 and set(data["modes"]) == set("ABCDEFG")
    assert set(data["modes"]["E"]) == {
        "answer_calls_mean",
        "summary_calls_mean",
        "precision",
        "recall",
        "precision_list_all",
    }
