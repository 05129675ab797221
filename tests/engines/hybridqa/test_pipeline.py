"""The HybridQA pipeline: parse → execute → retry → short answer, each step an event."""

from __future__ import annotations

import threading

import pytest

from engines.errors import Cancelled, EngineError
from engines.events import CallStarted
from engines.hybridqa import events as E
from engines.hybridqa.pipeline import HybridQA, Improvements
from engines.hybridqa.tasks import HYBRID_PARSE
from engines.llm.client import LLM

from .conftest import Scripted

T = "veloria_flag_bearers"


def row(world, **match):
    t = world.table(T)
    return next(r for r in t.records() if all(r[k] == v for k, v in match.items()))


def test_a_type_i_question_reads_one_passage_and_reports_every_step(world, pipeline):
    r = row(world, Name=world.table(T).rows[3][0])
    events = []
    answer = pipeline.ask(T, f"When was the flag bearer of the {r['Name']} Olympics born?", emit=events.append)
    kinds = [type(e).__name__ for e in events if not isinstance(e, CallStarted)]
    assert kinds[0] == "QuestionReceived" and kinds[-1] == "QuestionAnswered"
    order = [
        k for k in kinds if k in ("QuestionParsed", "PlanBuilt", "PassageRead", "AttemptExecuted", "AnswerShortened")
    ]
    assert order == ["QuestionParsed", "PlanBuilt", "PassageRead", "AttemptExecuted", "AnswerShortened"]
    read = [e for e in events if isinstance(e, E.PassageRead)]
    assert len(read) == answer.answer_calls == 1 and read[0].column == "Flag Bearer_Info"
    assert answer.short in r["Flag Bearer_Info"] and answer.retries == 0 and not answer.no_result
    assert answer.to_json()["attempts"][0]["rows"]


def test_improvement_1_reads_the_rows_other_passage_column(world, sandbox):
    r = row(world, Name=world.table(T).rows[0][0])
    wrong = f"SELECT answer(\"Event year_Info\", 'when was this person born?') FROM {T} WHERE \"Name\" = '{r['Name']}'"
    events = []
    with_fallback = HybridQA(sandbox, LLM(Scripted(wrong))).ask(T, "When?", emit=events.append)
    tried = [e for e in events if isinstance(e, E.FallbackTried)]
    assert [(e.from_column, e.to_column) for e in tried] == [("Event year_Info", "Flag Bearer_Info")]
    assert with_fallback.value in r["Flag Bearer_Info"] and with_fallback.fallback_calls == 1
    assert with_fallback.answer_calls == 2 and with_fallback.final.suql == wrong  # the parser never knew
    reasons = [e.reason for e in events if isinstance(e, E.PassageRead)]
    assert reasons == ["the query's answer()", "fallback: Event year_Info did not say"]
    without = HybridQA(sandbox, LLM(Scripted(wrong))).ask(
        T, "When?", improvements=Improvements(fallback=False, retry=False)
    )
    assert without.no_result and without.short == "" and without.fallback_calls == 0


def test_improvement_2_parses_again_when_nothing_comes_back(world, sandbox):
    r = row(world, Name=world.table(T).rows[1][0])
    bad = f'SELECT "Flag Bearer" FROM {T} WHERE "Gender" = \'M\''
    good = f'SELECT "Flag Bearer" FROM {T} WHERE "Name" = \'{r["Name"]}\''
    backend = Scripted(bad, good)
    events = []
    answer = HybridQA(sandbox, LLM(backend)).ask(T, "Who?", emit=events.append)
    assert [a.suql for a in answer.attempts] == [bad, good] and answer.short == r["Flag Bearer"]
    retried = [e for e in events if isinstance(e, E.Retried)]
    assert len(retried) == 1 and retried[0].failed == (bad,) and "no rows" in retried[0].reason
    assert backend.shown == [(), (bad,)]  # the retry shows the parser what failed
    once = HybridQA(sandbox, LLM(Scripted(bad, good))).ask(T, "Who?", improvements=Improvements(retry=False))
    assert len(once.attempts) == 1 and once.no_result


def test_at_most_two_retries_and_a_query_that_cannot_run_counts_as_nothing(sandbox):
    answer = HybridQA(sandbox, LLM(Scripted(f'SELECT "Nmae" FROM {T}'))).ask(T, "Who?")
    assert len(answer.attempts) == 3 and all(a.error and "Nmae" in a.error for a in answer.attempts)
    assert answer.short == "" and answer.to_json()["attempts"][0]["error"]


def test_bad_input_is_a_clear_error(pipeline):
    with pytest.raises(EngineError, match="empty"):
        pipeline.ask(T, "  ")
    with pytest.raises(EngineError):
        pipeline.ask("no_such_table", "Who is the youngest flag bearer?")


def test_cancel(pipeline):
    flag = threading.Event()
    flag.set()
    with pytest.raises(Cancelled):
        pipeline.ask(T, "Who is the youngest flag bearer?", cancel=flag)


def test_superlative_reads_every_row_type_iv_only_the_filtered_ones(world, pipeline):
    t = world.table(T)
    youngest = pipeline.ask(T, "Who is the youngest flag bearer?")
    assert youngest.answer_calls == len(t.rows)
    best = max(
        t.records(),
        key=lambda r: (
            r["Flag Bearer_Info"].split("born on ")[-1][:10]
            if "born on" in r["Flag Bearer_Info"]
            else r["Flag Bearer_Info"].split("born ")[1][:10]
        ),
    )
    assert youngest.short == best["Flag Bearer"]
    males = sum(r[5] == "Male" for r in t.rows)
    iv = pipeline.ask(T, "Which male flag bearer competed in athletics?")
    assert iv.answer_calls == males


def test_the_simulated_llm_is_refused_on_real_tables_by_the_engine():
    from engines.errors import ConfigurationError
    from engines.hybridqa.session import SIM_KNOWS_GENERATED_ONLY, open_hybridqa
    from engines.settings import Settings

    with open_hybridqa(Settings(cache_enabled=False), source="real") as session:
        table = session.world.tables[0]
        assert session.simulated_on_real
        with pytest.raises(ConfigurationError) as err:
            session.pipeline.ask(table.name, table.questions[0].question)
        assert str(err.value) == SIM_KNOWS_GENERATED_ONLY


def test_an_unusable_parse_reply_is_a_failed_attempt_and_the_retry_goes_on(world, sandbox):
    """A real model's one malformed parse reply (or a call deferred to a message batch) fails its attempt only: the
    question is retried and the evaluation around it goes on, instead of ending at the first bad reply."""
    from engines.errors import ReplyError

    r = row(world, Name=world.table(T).rows[1][0])
    good = f'SELECT "Flag Bearer" FROM {T} WHERE "Name" = \'{r["Name"]}\''

    class FirstReplyBad(Scripted):
        def run(self, task, input):
            if task is HYBRID_PARSE and not self.shown:
                self.shown.append(tuple(input.failed))
                raise ReplyError("hybrid_parse: the reply is not JSON")
            return super().run(task, input)

    backend = FirstReplyBad(good)
    answer = HybridQA(sandbox, LLM(backend)).ask(T, "Who?")
    assert len(answer.attempts) == 2 and answer.short == r["Flag Bearer"]
    assert answer.attempts[0].suql == "" and "could not be used" in answer.attempts[0].error
    assert backend.shown == [(), ()]  # the failed reply is not shown to the parser as a query that failed
    once = HybridQA(sandbox, LLM(FirstReplyBad(good))).ask(T, "Who?", improvements=Improvements(retry=False))
    assert len(once.attempts) == 1 and once.no_result and once.attempts[0].error


def test_the_passage_reads_are_counted_as_every_other_call(world, sandbox):
    """The answer() calls of the passage reader (and its fallback) carry their tokens like the parse and short-answer
    calls; with the simulated backend they are estimates, and none has a cost (the sim costs nothing)."""
    from engines.events import CallFinished
    from engines.llm.client import llm_from_settings
    from engines.settings import Settings

    llm = llm_from_settings(Settings(cache_enabled=False))  # the sim: estimated tokens, no price
    r = row(world, Name=world.table(T).rows[3][0])
    events = []
    HybridQA(sandbox, llm).ask(T, f"When was the flag bearer of the {r['Name']} Olympics born?", emit=events.append)
    finished = [e for e in events if isinstance(e, CallFinished)]
    assert {e.function for e in finished} >= {"hybrid_parse", "answer", "short_answer"}
    assert all(e.input_tokens and e.estimated and e.cost_usd is None for e in finished), [
        (e.function, e.input_tokens, e.cost_usd) for e in finished
    ]
    assert llm.usage.unpriced == 0 and llm.usage.cost_usd is None and llm.usage.estimated == len(finished)
