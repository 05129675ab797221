"""One HybridQA question through the pipeline of lecture 7 §6.2.

1. **parse** — the LLM is shown the question and this table's schema only (zero-shot) and writes SUQL;
2. **execute** — the SUQL compiler runs it; ``answer()`` goes through :class:`PassageReader`, which
   reports each passage read and, with improvement 1, falls back to the row's other passage columns;
3. **retry** — improvement 2: when nothing comes back (no row, no value in any row, or a query that
   cannot run) the question is parsed again, at most twice, the parser being shown the queries that
   failed (the simulated parser resamples its mistakes);
4. **short answer** — the LLM turns the rows into the one short entity HybridQA's gold answers are.

Every step is an event (``engines.hybridqa.events``); :class:`HybridAnswer` is the whole record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from engines.errors import Cancelled, ConfigurationError, EngineError, LLMError, ReplyError
from engines.events import Emit, ignore
from engines.hybridqa.events import (
    AnswerShortened,
    AttemptExecuted,
    QuestionAnswered,
    QuestionParsed,
    QuestionReceived,
    Retried,
)
from engines.hybridqa.reader import PassageDirectory, PassageReader
from engines.hybridqa.tasks import HYBRID_PARSE, SHORT_ANSWER, ParseInput, ShortAnswerInput
from engines.llm.client import LLM
from engines.llm.protocol import Results
from engines.retrieval.bm25 import IndexCache
from engines.sql.sandbox import Sandbox, to_jsonable
from engines.suql.compiler.identity import RowNames
from engines.suql.execute import SuqlEngine
from engines.suql.plan import DEFAULT_MODE, Plan

MAX_RETRIES = 2
ROWS_SHOWN = 20  # rows the short-answer step is shown


@dataclass(frozen=True)
class Improvements:
    """The two improvements of §6.2, each switchable for the ablation."""

    fallback: bool = True  # 1: answer() tries the row's other passage columns when it finds nothing
    retry: bool = True  # 2: parse again when nothing comes back (at most ``max_retries`` times)
    max_retries: int = MAX_RETRIES

    @property
    def label(self) -> str:
        on = [n for n, v in (("fallback", self.fallback), ("retry", self.retry)) if v]
        return " + ".join(on) if on else "neither"


@dataclass(frozen=True)
class Attempt:
    number: int  # 1-based
    suql: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    readback: str = ""
    plan: Plan | None = field(default=None, repr=False)
    error: str | None = None
    answer_calls: int = 0

    @property
    def empty(self) -> bool:
        return is_empty(self.rows) or self.error is not None

    # Hand-written: computed values (empty, the plan's lines, rows as records by column) in an order of its own.
    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.number,
            "suql": self.suql,
            "readback": self.readback,
            "error": self.error,
            "empty": self.empty,
            "answer_calls": self.answer_calls,
            "plan": self.plan.lines() if self.plan is not None else [],
            "rows": [dict(zip(self.columns, (to_jsonable(v) for v in row))) for row in self.rows],
        }


@dataclass(frozen=True)
class HybridAnswer:
    table: str
    question: str
    attempts: tuple[Attempt, ...]
    short: str  # the short answer; "" when nothing came back
    value: str | None  # the first value of the final rows (what the short answer was made from)
    answer_calls: int  # every answer() call, retries and fallbacks included
    fallback_calls: int  # of which made by improvement 1
    improvements: Improvements

    @property
    def final(self) -> Attempt:
        return self.attempts[-1]

    @property
    def retries(self) -> int:
        return len(self.attempts) - 1

    @property
    def no_result(self) -> bool:
        return self.final.empty

    # Hand-written: the final attempt's query and read-back and the retry count are computed, not fields.
    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "question": self.question,
            "short_answer": self.short,
            "value": self.value,
            "suql": self.final.suql,
            "readback": self.final.readback,
            "retries": self.retries,
            "answer_calls": self.answer_calls,
            "fallback_calls": self.fallback_calls,
            "attempts": [a.to_json() for a in self.attempts],
        }


def is_empty(rows: tuple[tuple[Any, ...], ...]) -> bool:
    """No row, or no value in any row: "nothing came back"."""
    return not any(v is not None and str(v).strip() != "" for row in rows for v in row)


def first_value(rows: tuple[tuple[Any, ...], ...]) -> str | None:
    for row in rows:
        for v in row:
            if v is not None and str(v).strip():
                return str(v)
    return None


class HybridQA:
    """The pipeline over the tables of one sandbox."""

    def __init__(self, sandbox: Sandbox, llm: LLM, *, mode: str = DEFAULT_MODE, pool: int = 1) -> None:
        self.sandbox = sandbox
        self.llm = llm
        self.mode = mode
        self.pool = pool
        self._indexes = IndexCache()  # BM25 indexes, shared by every question
        self.refusal: str | None = None  # set when this LLM cannot answer these tables (sim on real ones)
        self._directories: dict[str, PassageDirectory] = {}
        self._schemas: dict[str, str] = {}
        self._names = RowNames(sandbox)  # each table's id column and rowid, described once for every question

    def directory(self, table: str) -> PassageDirectory:
        if table not in self._directories:
            self._directories[table] = PassageDirectory.read(self.sandbox, table)
        return self._directories[table]

    def schema(self, table: str, given: str | None = None) -> str:
        if given is not None:
            return given
        if table not in self._schemas:
            from worlds.hybridqa import quote_ident

            cols = self.sandbox.columns_of(self.sandbox.check(f"SELECT * FROM {quote_ident(table)}"))
            body = ",\n".join(f"    {quote_ident(c)} TEXT" for c, _ in cols)
            self._schemas[table] = f"CREATE TABLE {quote_ident(table)} (\n{body}\n);"
        return self._schemas[table]

    def ask(
        self,
        table: str,
        question: str,
        *,
        improvements: Improvements = Improvements(),
        schema: str | None = None,
        emit: Emit = ignore,
        cancel: threading.Event | None = None,
    ) -> HybridAnswer:
        """Answer one question over one table.  ``schema`` is what the parser is shown (default:
        the table's CREATE TABLE, no rows)."""
        if self.refusal is not None:
            raise ConfigurationError(self.refusal)
        if not question or not question.strip():
            raise EngineError("The question is empty.")
        shown = self.schema(table, schema)
        llm = self.llm.bind(emit, cancel)
        reader = PassageReader(llm, self.directory(table), fallback=improvements.fallback, emit=emit, cancel=cancel)
        engine = SuqlEngine(self.sandbox, reader, pool=self.pool, names=self._names, indexes=self._indexes)
        counter = llm.counter
        start_calls = counter.counts.get("answer", 0)
        emit(QuestionReceived(table, question))
        attempts: list[Attempt] = []
        budget = 1 + (improvements.max_retries if improvements.retry else 0)
        while True:
            number = len(attempts) + 1
            failed = tuple(a.suql for a in attempts if a.suql)
            parse_error: str | None
            try:
                suql = llm.run(HYBRID_PARSE, ParseInput(question, shown, failed))
            except ReplyError as e:  # one unusable parse reply is a failed attempt, not the end of the evaluation
                suql, parse_error = "", f"the parser's reply could not be used: {e}"
            else:
                parse_error = None
            emit(QuestionParsed(number, suql))
            before = counter.counts.get("answer", 0)
            try:
                if parse_error is not None:
                    raise EngineError(parse_error)
                r = engine.run(suql, mode=self.mode, emit=emit, cancel=cancel)
                attempt = Attempt(
                    number, suql, r.columns, r.rows, r.readback, r.plan, None, counter.counts.get("answer", 0) - before
                )
            except Cancelled:
                raise
            except LLMError:
                raise
            except EngineError as e:
                attempt = Attempt(number, suql, error=str(e), answer_calls=counter.counts.get("answer", 0) - before)
            attempts.append(attempt)
            emit(
                AttemptExecuted(
                    number, suql, attempt.columns, attempt.rows, attempt.empty, attempt.error, attempt.answer_calls
                )
            )
            if not attempt.empty or len(attempts) >= budget:
                break
            reason = (
                f"the query could not run: {attempt.error}"
                if attempt.error
                else (
                    "the query returned no rows"
                    if not attempt.rows
                    else "the rows hold no value (the passages did not say)"
                )
            )
            emit(Retried(number + 1, reason, tuple(a.suql for a in attempts)))
        final = attempts[-1]
        value = None if final.empty else first_value(final.rows)
        short = ""
        if value is not None:
            shown_rows = final.rows[:ROWS_SHOWN]
            short = llm.run(
                SHORT_ANSWER,
                ShortAnswerInput(question, Results(final.readback, final.columns, shown_rows, len(final.rows))),
            )
        emit(AnswerShortened(short, value))
        result = HybridAnswer(
            table=table,
            question=question,
            attempts=tuple(attempts),
            short=short,
            value=value,
            answer_calls=counter.counts.get("answer", 0) - start_calls,
            fallback_calls=reader.fallback_calls,
            improvements=improvements,
        )
        emit(QuestionAnswered(result))
        return result
