"""Every ``--json`` output of a command that calls a model carries ``"usage"``: the tokens the API
reported (claude, against the stub Messages API on 127.0.0.1 through ANTHROPIC_BASE_URL) or the
sim's estimate on its rendered prompts (which costs nothing: cost_usd null), and the estimated cost of a real
backend's calls from the settings' price table."""

from __future__ import annotations

import json

import pytest

from engines.settings import Settings
from engines.suql.tasks import ANSWER, AnswerInput
from tests.engines.llm.test_claude import message
from tests.engines.llm.test_claude_faults import Step, StubAPI
from tui.cli import main

QUERY = "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' LIMIT 3"
KEYS = {"input_tokens", "output_tokens", "cached_input_tokens", "cost_usd"}


def run(capsys, *argv: str) -> tuple[int, dict | list]:
    code = main(list(argv))
    out, _err = capsys.readouterr()
    return code, json.loads(out)


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "cache"))


def test_a_sim_run_reports_the_tokens_its_prompts_would_have_used(capsys) -> None:
    from engines.llm.client import llm_from_settings

    # calls made in this process before the command (another test's, or the app's) are not its own
    llm_from_settings(Settings(cache_enabled=False)).run(
        ANSWER, AnswerInput("The patio is heated.", "Is there a patio?")
    )
    code, data = run(capsys, "suql", QUERY, "--json", "--no-cache")
    assert code == 0
    usage = data["usage"]
    assert KEYS <= set(usage) and usage["estimated"] is True
    # estimates cost nothing: no dollar figure for the simulated backend
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0 and usage["cost_usd"] is None
    # a second run in the same process reports its own calls, not the sum of both
    _, again = run(capsys, "suql", QUERY, "--json", "--no-cache")
    assert again["usage"] == usage


def test_each_question_of_several_carries_its_own_usage(capsys) -> None:
    code, data = run(capsys, "ask", "Show me a café in Palo Alto", "hello", "--json", "--no-cache")
    assert code == 0 and isinstance(data, list) and len(data) == 2
    assert all(KEYS <= set(item["usage"]) for item in data)
    assert data[0]["usage"]["input_tokens"] != data[1]["usage"]["input_tokens"]


def test_a_claude_run_reports_the_api_s_usage_and_its_cost(capsys, monkeypatch) -> None:
    stub = StubAPI()
    try:
        body = message('{"value": "Yes", "evidence": []}', input_tokens=40, output_tokens=5)
        body["usage"]["cache_read_input_tokens"] = 60
        body["model"] = Settings().claude_row_model  # the model that answered, as the API names it
        stub.script(Step(body))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, data = run(capsys, "suql", QUERY, "--json", "--no-cache", "--backend", "claude", "--yes")
        assert code == 0
        calls = len(stub.requests)
        assert calls > 0
        usage = data["usage"]
        assert usage["estimated"] is False
        assert (usage["input_tokens"], usage["output_tokens"], usage["cached_input_tokens"]) == (
            100 * calls,
            5 * calls,
            60 * calls,
        )
        price = Settings().llm_prices[Settings().claude_row_model]  # answer() is a per-row call
        expected = calls * (40 * price.input + 60 * price.cache_read + 5 * price.output) / 1e6
        assert usage["cost_usd"] == pytest.approx(expected, abs=1e-6)
    finally:
        stub.close()
