"""The answer cache's key holds everything that shapes an answer: the function, the exact question,
the backend with every setting that changes its outputs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engines.llm.cache import FILENAME, AnswerCache
from engines.llm.claude import ClaudeBackend
from engines.llm.client import LLM, backend_from_settings
from engines.llm.protocol import backend_id
from engines.llm.sim import SimBackend
from engines.settings import Settings
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput

TEXT = "Came for dinner. Our children loved it. Romantic candlelit tables, an intimate room."


def cached_llm(folder: Path, backend: SimBackend | None = None) -> LLM:
    return LLM(backend or SimBackend(), cache=AnswerCache(folder))


def fresh(backend: SimBackend | None = None) -> LLM:
    return LLM(backend or SimBackend())  # no cache: what the backend really says


# --- the function is part of the key ------------------------------------------------------


def test_answer_with_the_summary_question_does_not_poison_summary(tmp_path: Path) -> None:
    llm = cached_llm(tmp_path)
    asked = llm.run(ANSWER, AnswerInput(TEXT, "summary()"))
    summary = llm.run(SUMMARY, SummaryInput(TEXT))
    assert asked == fresh().run(ANSWER, AnswerInput(TEXT, "summary()"))
    assert summary == fresh().run(SUMMARY, SummaryInput(TEXT))
    assert summary.startswith("Summary:")
    assert llm.counter.cached == 0  # two functions, two entries
    # and each is a hit for itself afterwards, in this run and the next
    assert llm.run(ANSWER, AnswerInput(TEXT, "summary()")) == asked and llm.run(SUMMARY, SummaryInput(TEXT)) == summary
    assert llm.counter.cached == 2
    later = cached_llm(tmp_path)
    assert (
        later.run(SUMMARY, SummaryInput(TEXT)) == summary and later.run(ANSWER, AnswerInput(TEXT, "summary()")) == asked
    )
    assert later.counter.cached == 2


def test_summary_does_not_poison_answer_with_the_summary_question(tmp_path: Path) -> None:
    llm = cached_llm(tmp_path)
    summary = llm.run(SUMMARY, SummaryInput(TEXT))
    asked = llm.run(ANSWER, AnswerInput(TEXT, "summary()"))
    assert summary == fresh().run(SUMMARY, SummaryInput(TEXT))
    assert asked == fresh().run(ANSWER, AnswerInput(TEXT, "summary()"))
    assert llm.counter.cached == 0


# --- the question is taken exactly as asked ----------------------------------------------

SPELLINGS = ("IS IT ROMANTIC", "is it romantic?", "Is it romantic", "is it  romantic?", "is it romantic?!")


def test_spellings_of_a_question_keep_their_own_answers(tmp_path: Path) -> None:
    """The simulated LLM draws its seeded mistakes from the exact question, as a real model reads
    the exact text: a cache that folded spellings together would hand one spelling's verdict to
    another."""
    texts = [f"Table {i} by the window. A romantic candlelit dinner for two." for i in range(120)]
    truth = {(t, q): fresh().run(ANSWER, AnswerInput(t, q)) for t in texts for q in SPELLINGS}
    differing = [t for t in texts if len({truth[t, q].value for q in SPELLINGS}) > 1]
    assert len(differing) >= 3  # the case the key must keep apart really occurs
    llm = cached_llm(tmp_path)
    for t in differing:
        for q in SPELLINGS:
            assert llm.run(ANSWER, AnswerInput(t, q)) == truth[t, q], (t, q)
    assert llm.counter.cached == 0
    # each spelling is a hit for itself
    again = cached_llm(tmp_path)
    for t in differing:
        for q in SPELLINGS:
            assert again.run(ANSWER, AnswerInput(t, q)) == truth[t, q]
    assert again.counter.cached == len(differing) * len(SPELLINGS)


# --- the backend and every setting that changes its outputs --------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"seed": 1}, {"seed": 2}),
        ({"sim_error_on_topic": 0.0}, {"sim_error_on_topic": 1.0}),
        ({"sim_error_off_topic": 0.0}, {"sim_error_off_topic": 1.0}),
    ],
)
def test_sim_settings_that_change_answers_are_in_the_key(tmp_path: Path, first: dict, second: dict) -> None:
    a, b = backend_from_settings(Settings(**first)), backend_from_settings(Settings(**second))
    assert backend_id(a) != backend_id(b)
    questions = ("is it family-friendly?", "is it romantic?", "does it have a view?", "is it spicy?")
    texts = [f"Visit {i}. Our children loved it. Window tables with a view." for i in range(30)]
    first_llm = LLM(a, cache=AnswerCache(tmp_path))
    for t in texts:
        for q in questions:
            first_llm.run(ANSWER, AnswerInput(t, q))
    second_llm = LLM(b, cache=AnswerCache(tmp_path))
    truth = LLM(backend_from_settings(Settings(**second)))
    for t in texts:
        for q in questions:
            assert second_llm.run(ANSWER, AnswerInput(t, q)) == truth.run(ANSWER, AnswerInput(t, q))
    assert second_llm.counter.cached == 0


def test_other_sim_knobs_and_the_prompt_version_change_the_backend_id() -> None:
    base = backend_id(SimBackend())
    assert backend_id(SimBackend(parse_drop_rate=0.5)) != base
    misread = SimBackend()
    misread.misread_rate = 0.5
    assert backend_id(misread) != base
    bumped = SimBackend()
    bumped.prompt_version = "sim-next"
    assert backend_id(bumped) != base
    # latency changes no answer: the same key, so cached answers are reused across latencies
    assert backend_id(SimBackend(latency_s=0.5)) == base


def test_claude_model_and_prompt_version_are_in_the_key() -> None:
    def claude(model: str) -> ClaudeBackend:
        return ClaudeBackend(Settings(backend="claude", claude_model=model, ANTHROPIC_API_KEY="sk-test"))

    a, b = claude("claude-sonnet-5-5"), claude("claude-opus-4-1")
    assert backend_id(a) != backend_id(b)
    assert a.prompt_version in backend_id(a)
    assert backend_id(a) != backend_id(SimBackend())


# --- an older file's entries are not trusted -----------------------------------------------


def test_a_cache_of_the_old_layout_is_dropped_not_served(tmp_path: Path) -> None:
    """Layout 1 keyed entries without the function and on folded questions: its entries may be
    poisoned, so they are dropped (the file is set up afresh, not moved aside)."""
    conn = sqlite3.connect(tmp_path / FILENAME)
    with conn:
        conn.execute(
            "CREATE TABLE answers (text_sha256 TEXT NOT NULL, question TEXT NOT NULL, backend TEXT NOT NULL, "
            "payload TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (text_sha256, question, backend)) WITHOUT ROWID"
        )
        conn.execute("INSERT INTO answers VALUES ('x', 'summary()', 'b', '{\"value\": \"poisoned\"}', 0)")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    with AnswerCache(tmp_path) as c:
        assert c.readable and c.writable and len(c) == 0 and c.warnings == []
        c.put("summary", "x", "summary()", "b", {"value": "fine"})
        assert c.get("summary", "x", "summary()", "b") == {"value": "fine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILENAME]
