"""`cs224v-tui … --backend openai --base-url URL --model M`: the CLI end to end against a stub
OpenAI-compatible chat-completions server on 127.0.0.1 (tests/engines/llm/openai_stub.py)."""

from __future__ import annotations

import json

import pytest

from tests.engines.llm.openai_stub import StubServer, ok
from tui.cli import main

QUERY = "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' LIMIT 3"


@pytest.fixture
def stub(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "cache"))
    server = StubServer()
    server.responder = lambda request: ok('{"value": "Yes", "evidence": []}', prompt_tokens=21, completion_tokens=6)
    yield server
    server.close()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_suql_runs_its_per_row_calls_on_the_server(stub, capsys, monkeypatch):
    # one worker: with a pool, the repeat may ask one more speculative row than the first run did
    monkeypatch.setenv("CS224V_SUQL_POOL", "1")
    code, out, err = run(
        capsys, "suql", QUERY, "--backend", "openai", "--base-url", stub.url, "--model", "M", "--json", "--yes"
    )
    assert code == 0, err
    result = json.loads(out)
    assert len(result["rows"]) == 3
    assert result["stats"]["answer_calls"] == len(stub.requests) >= 3
    assert {r["model"] for r in stub.requests} == {"M"}  # --model sets both roles
    assert all(r["response_format"]["type"] == "json_schema" for r in stub.requests)
    assert all("is it romantic?" in r["messages"][1]["content"] for r in stub.requests)
    # the answers were cached under this server and model: a second run asks nothing
    before = len(stub.requests)
    code, out, _ = run(
        capsys, "suql", QUERY, "--backend", "openai", "--base-url", stub.url, "--model", "M", "--json", "--yes"
    )
    assert code == 0 and len(json.loads(out)["rows"]) == 3 and len(stub.requests) == before
    # another model is another cache key
    code, out, _ = run(
        capsys, "suql", QUERY, "--backend", "openai", "--base-url", stub.url, "--model", "M2", "--json", "--yes"
    )
    assert code == 0 and len(stub.requests) > before


def test_the_environment_chooses_the_server_as_the_flags_do(stub, capsys, monkeypatch):
    monkeypatch.setenv("CS224V_BACKEND", "openai")
    monkeypatch.setenv("CS224V_OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("CS224V_OPENAI_MODEL", "env-model")
    code, _out, err = run(capsys, "suql", QUERY, "--json", "--yes", "--no-cache")
    assert code == 0, err
    assert {r["model"] for r in stub.requests} == {"env-model"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--base-url", "http://127.0.0.1:1/v1"], "--base-url is for --backend openai"),
        (["--model", "M"], "--model names a real model"),
        (["--backend", "openai", "--base-url", "ftp://x"], "openai_base_url"),
    ],
)
def test_flags_that_cannot_apply_are_refused(capsys, argv, message):
    code, out, err = run(capsys, "suql", QUERY, *argv)
    assert code == 2 and message in out + err and "Traceback" not in err


def test_a_server_that_is_not_running_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setenv("CS224V_OPENAI_MAX_RETRIES", "0")
    _code, out, err = run(capsys, "suql", QUERY, "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--yes")
    assert "Traceback" not in err
    assert "Could not reach the model server at http://127.0.0.1:9/v1" in out + err


def test_a_large_run_on_a_local_model_asks_first_without_calling_it_paid(stub, capsys):
    code, _out, err = run(
        capsys,
        "suql",
        "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes'",
        "--backend",
        "openai",
        "--base-url",
        stub.url,
        "--model",
        "M",
    )
    assert code == 2 and "LLM calls to the openai backend" in err and "paid" not in err and not stub.requests


def test_a_reply_that_cannot_be_used_names_the_openai_backend_not_claude(stub, capsys):
    """Issue 25: under --backend openai a bad reply said "Claude's route() reply"."""
    stub.responder = lambda request: ok("Sure! Here are some restaurants you might like.")
    code, out, err = run(
        capsys, "ask", "any thai food?", "--backend", "openai", "--base-url", stub.url, "--model", "M", "--no-cache"
    )
    assert code == 1 and "Traceback" not in err
    assert "The OpenAI-compatible model M's route() reply is not the JSON object asked for" in err
    assert "Claude" not in out + err
