"""The simulated LLM's work that repeats is done once: a text's sentences and the sentences touching a topic
(a review is read for many questions), a question's topic (a question is put to many texts), and the token
estimate of a per-row prompt (the same text and question, asked in another mode).  The answers and the
estimates are what doing the work afresh gives."""

from __future__ import annotations

from engines.llm import client, prompting
from engines.llm.client import LLM, estimated_usage
from engines.llm.protocol import Answer
from engines.llm.sim import SimBackend
from engines.sql import sim
from engines.sql.tasks import ROUTE, Dialogue
from engines.suql.tasks import ANSWER, AnswerInput


def test_a_text_read_for_several_questions_is_split_and_searched_once():
    text = "We came with our kids for a birthday (reading caches test). The patio was lovely. Parking is not easy."
    before_split = sim._sentences_of.cache_info()
    before_topic = sim._topic_sentences.cache_info()
    first = sim._read(text, "is it family-friendly?")
    again = sim._read(text, "good for kids?")  # the same topic, another question
    other = sim._read(text, "is there outdoor seating?")
    assert first == again == Answer("Yes", ("We came with our kids for a birthday (reading caches test).",))
    assert other == Answer("Yes", ("The patio was lovely.",))
    assert sim._sentences_of.cache_info().misses == before_split.misses + 1
    topic = sim._topic_sentences.cache_info()
    assert topic.misses == before_topic.misses + 2 and topic.hits == before_topic.hits + 1
    # a list the caller gets is its own: changing it changes no later reading
    sim.sentences(text).clear()
    assert sim._read(text, "is it family-friendly?") == first


def _count_renders(monkeypatch) -> list[str]:
    """The prompts rendered from now on, by template (the system prompt, estimated once per process, left out)."""
    rendered: list[str] = []
    render = prompting.render_prompt

    def spy(function, **kw):
        if function != "_system":
            rendered.append(function)
        return render(function, **kw)

    monkeypatch.setattr(prompting, "render_prompt", spy)
    return rendered


def test_a_row_prompt_asked_again_is_estimated_without_rendering_it_again(monkeypatch):
    rendered = _count_renders(monkeypatch)
    client._text_prompt_tokens.cache_clear()
    llm = LLM(SimBackend())
    question = AnswerInput("Came for dinner (estimate test). Our children loved it.", "is it family-friendly?")
    value = llm.run(ANSWER, question)
    usage = llm.usage.input_tokens
    llm.run(ANSWER, question)
    assert rendered == ["answer"] and llm.usage.input_tokens == 2 * usage
    fresh = estimated_usage(ANSWER, question, value)
    assert fresh.input_tokens == usage and rendered == ["answer"]
    # another question on the same text is another prompt
    llm.run(ANSWER, AnswerInput(question.text, "is it romantic?"))
    assert rendered == ["answer", "answer"]


def test_a_prompt_with_other_values_than_text_is_rendered_every_time(monkeypatch):
    rendered = _count_renders(monkeypatch)
    llm = LLM(SimBackend())
    turn = Dialogue("hi there", (), "CREATE TABLE t (a TEXT);")  # its history is a list: not keyed, rendered
    llm.run(ROUTE, turn)
    first = llm.usage.input_tokens
    llm.run(ROUTE, turn)
    assert rendered == ["route", "route"] and llm.usage.input_tokens == 2 * first > 0
