"""--batch: a run's Claude calls through the Message Batches API, against a stub on 127.0.0.1
(tests/engines/llm/batches_stub.py) with the real ``anthropic`` SDK pointed at it.

Covered: the calls of a run go out as one batch per round (none directly), a call that depends on
an earlier reply comes in the next round, the answers are the replies (and land in the answer
cache), the round cap sends the rest directly, and a run interrupted while polling resumes from
the batch id it saved without submitting the same requests again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from engines.errors import ConfigurationError
from engines.llm.batch import BatchRun, BatchStore, Deferred
from engines.llm.cache import AnswerCache
from engines.llm.client import llm_from_settings
from engines.settings import Settings
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput
from tests.engines.llm.batches_stub import BatchesStub, prompt_text

TEXTS = [f"Review {n}: " + ("candles and a quiet room." if n % 2 else "loud and bright.") for n in range(6)]


def reply(params: dict) -> str:
    text = prompt_text(params)
    if "Question:" in text:  # answer()
        return '{"value": "Yes", "evidence": []}' if "candles" in text else '{"value": "No", "evidence": []}'
    return "A summary."


@pytest.fixture
def stub(monkeypatch) -> Iterator[BatchesStub]:
    server = BatchesStub(reply, polls=2)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    yield server
    server.close()


def settings(tmp_path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "backend": "claude",
        "ANTHROPIC_API_KEY": "sk-test",
        "cache_dir": tmp_path / "cache",
        "batch_poll_s": 0.01,
        "claude_max_retries": 0,
    }
    values.update(overrides)
    return Settings(**values)


def batch_run(stub: BatchesStub, s: Settings, **kw: Any) -> tuple[BatchRun, list[str]]:
    lines: list[str] = []
    client = anthropic.Anthropic(api_key="sk-test", base_url=stub.url, max_retries=0)
    return BatchRun(s, client=client, progress=lines.append, sleep=lambda _s: None, **kw), lines


def workload(s: Settings) -> list[tuple[str | None, str | None]]:
    """answer() for every text, then summary() of the texts that are Yes: a call that depends on a reply."""
    llm = llm_from_settings(s)
    out = []
    for text in TEXTS:
        value = llm.run(ANSWER, AnswerInput(text, "is it romantic?")).value
        out.append((value, llm.run(SUMMARY, SummaryInput(text)) if value == "Yes" else None))
    return out


def test_the_calls_go_out_in_one_batch_a_round_and_the_answers_are_the_replies(stub, tmp_path):
    s = settings(tmp_path)
    run, lines = batch_run(stub, s)
    result = run.run(lambda: workload(s))
    assert result == [("No", None), ("Yes", "A summary.")] * 3
    assert stub.direct == []  # nothing went to /v1/messages
    first, second = run.submitted
    assert len(stub.requests_in(first)) == 6  # every answer() of the run
    assert len(stub.requests_in(second)) == 3  # the summaries, known only once the answers were in
    assert all("Question:" not in prompt_text(p) for p in stub.requests_in(second))
    assert any("in_progress" in line for line in lines) and any("ended" in line for line in lines)
    assert stub.retrievals >= 2 * 3  # polled until ended
    # the answers are cached as direct ones would be: a plain run afterwards asks nothing
    with AnswerCache(s.cache_dir) as cache:
        assert len(cache) == 9
    assert workload(s) == result and stub.direct == []


def test_past_the_round_cap_the_calls_go_directly(stub, tmp_path):
    s = settings(tmp_path, batch_rounds=1)
    run, lines = batch_run(stub, s)
    assert run.run(lambda: workload(s)) == [("No", None), ("Yes", "A summary.")] * 3
    assert len(run.submitted) == 1 and len(stub.direct) == 3 and run.direct == 3
    assert any("went directly" in line for line in lines)


class Interrupted(Exception):
    pass


def test_a_run_interrupted_while_polling_resumes_from_the_saved_batch(stub, tmp_path):
    s = settings(tmp_path)

    def restart(_seconds: float) -> None:
        raise Interrupted()  # the process dies during the first wait

    client = anthropic.Anthropic(api_key="sk-test", base_url=stub.url, max_retries=0)
    first = BatchRun(s, client=client, sleep=restart)
    with pytest.raises(Interrupted):
        first.run(lambda: workload(s))
    first.store.close()
    (saved,) = stub.batches
    assert BatchStore(s.cache_dir).pending() == [(saved, 6)]

    again, lines = batch_run(stub, s)
    assert again.run(lambda: workload(s)) == [("No", None), ("Yes", "A summary.")] * 3
    assert any(f"resuming message batch {saved}" in line for line in lines)
    assert again.submitted[0] != saved and len(again.submitted) == 1  # only the summaries were new
    assert len(stub.requests_in(again.submitted[0])) == 3
    assert BatchStore(s.cache_dir).pending() == [] and stub.direct == []


def test_a_queued_call_is_a_deferred_reply_with_the_tasks_fallback(stub, tmp_path):
    s = settings(tmp_path)
    run, _ = batch_run(stub, s)
    seen: list[Any] = []

    def work() -> None:
        llm = llm_from_settings(s)
        if run.collecting and not run.submitted:  # the first round: nothing is answered yet
            with pytest.raises(Deferred):
                llm.backend.run(ANSWER, AnswerInput(TEXTS[1], "is it romantic?"))
            seen.append(llm.run(ANSWER, AnswerInput(TEXTS[1], "is it romantic?")).value)  # the fallback: Unknown

    run.run(work)
    assert seen == [None] and len(run.submitted) == 1


def test_batch_needs_the_claude_backend(tmp_path):
    with pytest.raises(ConfigurationError, match="--backend claude"):
        BatchRun(Settings(backend="sim", cache_dir=tmp_path))


# --- the command line ----------------------------------------------------------------------------


def test_suql_file_with_batch_prints_the_rows_of_a_direct_run_and_sends_nothing_directly(
    stub, tmp_path, monkeypatch, capsys
):
    import json

    from tui.cli import main

    queries = tmp_path / "queries.txt"
    queries.write_text(
        # ORDER BY: on a pool, LIMIT alone may return other (equally valid) matches from run to run
        "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' ORDER BY name LIMIT 4\n"
        "SELECT name, answer(reviews, 'is it romantic?') AS r FROM restaurants "
        "WHERE cuisines @> ARRAY['italian'] LIMIT 3\n",
        encoding="utf-8",
    )
    stub.answer = lambda params: '{"value": "%s", "evidence": []}' % ("Yes" if len(prompt_text(params)) % 3 else "No")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("CS224V_BATCH_POLL_S", "0.01")
    monkeypatch.setenv("CS224V_CLAUDE_MAX_RETRIES", "0")

    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "direct"))
    code = main(["suql", "--file", str(queries), "--backend", "claude", "--json", "--yes"])
    direct_out = capsys.readouterr().out
    assert code == 0 and stub.direct and not stub.batches
    sent_directly = len(stub.direct)

    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "batched"))
    code = main(["suql", "--file", str(queries), "--backend", "claude", "--batch", "--json", "--yes"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert len(stub.direct) == sent_directly  # nothing more went directly
    assert stub.batches and "submitted message batch" in captured.err
    batched, direct = json.loads(captured.out), json.loads(direct_out)  # one JSON document: the rounds printed nothing
    assert [item["rows"] for item in batched] == [item["rows"] for item in direct]
    assert all(item["rows"] for item in batched)
    assert (tmp_path / "batched" / "batches.sqlite3").exists()


def test_batch_refuses_what_it_does_not_fit(capsys, tmp_path):
    from tui.cli import main

    assert main(["suql", "SELECT 1", "--batch"]) == 2
    assert "use it with --file" in capsys.readouterr().err
    q = tmp_path / "q.txt"
    q.write_text("SELECT 1\n", encoding="utf-8")
    assert main(["suql", "--file", str(q), "--batch"]) == 2
    assert "--backend claude" in capsys.readouterr().err


def test_the_usage_of_a_batched_run_is_the_final_runs_at_the_batch_price(stub, tmp_path):
    from engines.llm.usage import take_run_usage

    s = settings(tmp_path, llm_prices={"claude-haiku-4-5": {"input": 3.0, "output": 7.0}})  # the row model's price
    stub.answer = reply
    run, _ = batch_run(stub, s)
    take_run_usage()
    totals: list[Any] = []

    def work() -> Any:
        llm = llm_from_settings(s)
        out = [llm.run(ANSWER, AnswerInput(t, "is it romantic?")).value for t in TEXTS]
        totals.append(llm.usage)
        return out

    run.run(work)
    final = totals[-1]  # the run whose output is shown: every answer served from the batch results, once
    assert (final.calls, final.input_tokens, final.output_tokens) == (6, 6 * 30, 6 * 8)
    assert final.cost_usd == pytest.approx(6 * (30 * 3.0 + 8 * 7.0) / 1e6 / 2)  # half price
    assert all(t.input_tokens == 0 for t in totals[:-1])  # the collect rounds count nothing
    with AnswerCache(s.cache_dir) as cache:
        assert len(cache) == 6  # stored by the final run


def test_an_interrupted_batch_run_says_how_to_resume(stub, tmp_path, monkeypatch, capsys):
    from anthropic.resources.messages.batches import Batches

    from tui.cli import main

    queries = tmp_path / "queries.txt"
    queries.write_text(
        "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' LIMIT 2\n", encoding="utf-8"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")

    def interrupted(*_args: Any, **_kw: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Batches, "retrieve", interrupted)
    code = main(["suql", "--file", str(queries), "--backend", "claude", "--batch", "--yes"])
    err = capsys.readouterr().err
    (saved,) = stub.batches
    assert code == 130 and f"interrupted; {saved} saved in" in err and "run the same command again" in err
