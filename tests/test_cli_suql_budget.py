"""`cs224v-tui suql` with a paid backend: a query expected to exceed CS224V_SUQL_CONFIRM_CALLS is refused
before any call unless --yes is given; the per-query budget's message reaches the output.  Hermetic:
the claude backend gets a dummy key and points at a closed port on 127.0.0.1."""

from __future__ import annotations

import json
import socket

import pytest

from tui.cli import main

EVERY_ROW = "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes'"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def claude(monkeypatch, tmp_path):
    monkeypatch.setenv("CS224V_BACKEND", "claude")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-tests")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("CS224V_CLAUDE_MAX_RETRIES", "0")
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CS224V_SUQL_CONFIRM_CALLS", "50")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_large_run_is_refused_before_any_call(claude, capsys):
    code, out, err = run(capsys, "suql", EVERY_ROW, "--mode", "A")
    assert code == 2
    assert "may make up to 600 LLM calls" in err and "--yes" in err and "CS224V_SUQL_CONFIRM_CALLS" in err
    assert "nothing was sent" in err and "Traceback" not in err
    code, out, _ = run(capsys, "suql", EVERY_ROW, "--mode", "F", "--json")  # F's cap: 20 candidates, under 50
    assert code == 2 and "may make up to" not in out  # not refused: it ran and failed to reach the backend


def test_json_refusal_and_a_file_of_queries(claude, capsys, tmp_path):
    code, out, _ = run(capsys, "suql", EVERY_ROW, "--json")
    assert code == 2 and "may make up to" in json.loads(out)["error"]
    queries = tmp_path / "q.txt"
    queries.write_text("SELECT name FROM restaurants LIMIT 1\n" + EVERY_ROW + "\n", encoding="utf-8")
    code, out, err = run(capsys, "suql", "--file", str(queries))
    assert code == 2 and "may make up to" in err and out == ""  # nothing ran


def test_yes_goes_ahead(claude, capsys):
    code, out, err = run(capsys, "suql", EVERY_ROW, "--mode", "A", "--yes")
    assert code == 2  # it tried the (closed) backend: a plain error, not the refusal
    assert "may make up to" not in err and "Traceback" not in err
    assert "Could not reach the Anthropic API" in err


def test_a_small_run_or_the_threshold_off_is_not_refused(claude, capsys, monkeypatch):
    code, _, err = run(capsys, "suql", "SELECT name FROM restaurants WHERE rating > 4.5 LIMIT 2")
    assert code == 0, err  # no LLM call at all
    monkeypatch.setenv("CS224V_SUQL_CONFIRM_CALLS", "0")
    code, _, err = run(capsys, "suql", EVERY_ROW, "--mode", "A")
    assert "may make up to" not in err


def test_the_sim_backend_is_never_asked_and_the_budget_message_is_shown(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CS224V_SUQL_CONFIRM_CALLS", "1")
    monkeypatch.setenv("CS224V_SUQL_CALL_BUDGET", "3")
    code, out, err = run(capsys, "suql", EVERY_ROW, "--mode", "C")
    assert code == 0, err
    assert "Stopped after 3 LLM calls (the per-query budget, CS224V_SUQL_CALL_BUDGET): the results are partial." in out
    code, out, _ = run(capsys, "suql", EVERY_ROW, "--mode", "C", "--json")
    data = json.loads(out)
    stats = data["stats"]
    assert data["budget_exhausted"] is True and stats["answer_calls"] - stats["cached_calls"] == 3  # 3 new, real calls
