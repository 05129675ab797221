"""The hybridqa command: evaluation JSON, real tables, one question; clear messages, no traceback."""

from __future__ import annotations

import json
import re

import pytest

from tests.worlds.test_hybridqa import TABLE
from tui.cli import main
from worlds.hybridqa import real_data_dir


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_eval_json_on_a_few_tables(capsys):
    code, out, _ = run(capsys, "hybridqa", "--eval", "--limit", "3", "--json", "--no-cache")
    data = json.loads(out)
    assert code == 0
    assert {"questions", "em", "f1", "judged", "by_type", "errors", "answer_calls"} <= set(data)
    assert data["questions"] == 18 and list(data["by_type"]) == ["I", "II", "III", "IV", "V", "VI"]
    assert data["improvements"] == {"fallback": True, "retry": True}
    assert {"format variant", "gold incomplete", "gold wrong", "wrong column", "no result", "reader error"} <= set(
        data["errors"]
    )


def test_eval_without_the_improvements(capsys):
    code, out, _ = run(capsys, "hybridqa", "--eval", "--limit", "2", "--no-fallback", "--no-retry", "--json")
    data = json.loads(out)
    assert code == 0 and data["improvements"] == {"fallback": False, "retry": False}
    assert data["fallback_calls"] == 0 and data["retried"] == 0


def test_eval_human_output_and_format_rate(capsys):
    code, out, _ = run(capsys, "hybridqa", "--eval", "--limit", "2", "--format-rate", "0")
    assert code == 0 and "EM" in out and "judged correct" in out and re.search(r"format variant\s+0\n", out)


def test_tables_from_a_folder(capsys, tmp_path):
    (tmp_path / "Tiny_0.json").write_text(json.dumps(TABLE), encoding="utf-8")
    code, out, _ = run(capsys, "hybridqa", "--tables", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["tables"] == [
        {"table_id": "Tiny_0", "columns": ["Year", "Winner", "Winner_Info", "Winner (2)"], "rows": 2, "questions": 1}
    ]
    assert "simulated" in data["note"]
    code, out, _ = run(capsys, "hybridqa", "--tables", str(tmp_path))
    assert code == 0 and "Tiny_0" in out and "claude backend" in out


def test_the_shared_real_tables(capsys):
    if real_data_dir() is None:
        pytest.skip("../shared/data/hybridqa is not present")
    code, out, _ = run(capsys, "hybridqa", "--tables", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["tables"]) == 14 and sum(t["questions"] for t in data["tables"]) == 42


def test_bad_input_says_so_without_a_traceback(capsys, tmp_path):
    code, _, err = run(capsys, "hybridqa", "--tables", str(tmp_path / "nowhere"))
    assert code == 2 and "not a folder" in err and "Traceback" not in err
    code, out, _ = run(capsys, "hybridqa", "--ask", "Who?", "--table", "atlantis", "--json")
    assert code == 1 and "atlantis" in json.loads(out)["error"]
    code, _, err = run(capsys, "hybridqa", "--ask", "Who?")
    assert code == 2 and "--table" in err
    code, _, err = run(capsys, "hybridqa", "--eval", "--limit", "0")
    assert code == 2 and "--limit" in err


def test_real_tables_with_the_sim_backend_say_plainly_that_it_cannot(capsys, tmp_path):
    (tmp_path / "Tiny_0.json").write_text(json.dumps(TABLE), encoding="utf-8")
    code, _, err = run(capsys, "hybridqa", "--ask", "Who won in 2001?", "--table", "Tiny_0", "--real", str(tmp_path))
    assert code == 2 and "knows only the generated worlds" in err


def test_ask_one_generated_question(capsys):
    from worlds.hybridqa import build

    q = build(n_tables=1).world.tables[0].questions[0]
    code, out, _ = run(capsys, "hybridqa", "--ask", q.question, "--table", q.table, "--json", "--limit", "1")
    data = json.loads(out)
    assert code == 0 and data["gold"] == q.gold and data["type"] == "I" and data["attempts"]
    code, out, _ = run(capsys, "hybridqa", "--ask", q.question, "--table", q.table, "--limit", "1")
    assert code == 0 and "SUQL (attempt 1)" in out and "gold:" in out
