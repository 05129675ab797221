"""The Text-to-SQL agent of lecture 6 §3.4.

    utterance -> input classifier -(database)-> semantic parser -> classify() rewrite
              -> sandboxed execution -> read-back + reply built only from the rows
              -(no database)-> direct reply

Each step reports itself through ``emit`` (see ``engines.events``); ``ask`` returns
the whole turn as a :class:`TurnResult`.  The dialogue history (utterances and the SQL
that ran) is what the parser sees on the next turn, so follow-ups refine queries.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Mapping

import sqlglot
from sqlglot import exp

from engines.errors import Cancelled, EngineError
from engines.events import (
    CallFinished,
    CallStarted,
    Emit,
    Event,
    InputClassified,
    QueryExecuted,
    QueryFailed,
    QueryParsed,
    QueryRewritten,
    ReadBackWritten,
    TurnFinished,
    TurnStarted,
    ignore,
)
from engines.llm.client import LLM
from engines.llm.protocol import Results, Turn
from engines.sql.classify import Classifier, EnumSpec
from engines.sql.readback import readback as read_back
from engines.sql.sandbox import QueryResult, Sandbox, to_jsonable

REPLY_ROWS = 20  # rows the reply writer is shown



@dataclass(frozen=True)
class CallRecord:
    function: str
    prompt: str
    verdict: str
    latency_s: float
    cached: bool


@dataclass(frozen=True)
class TurnResult:
    """Everything one turn did, for the CLI, the app and the tests."""

    utterance: str
    needs_database: bool
    route_reason: str
    reply: str
    parsed_sql: str | None = None  # what the parser wrote
    sql: str | None = None  # after classify(): what ran (PostgreSQL dialect)
    readback: str | None = None
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    truncated: bool = False
    error: str | None = None
    calls: tuple[CallRecord, ...] = ()
    to_verify: tuple[dict[str, Any], ...] = ()  # SUQL: rows whose text condition is unknown

    def records(self) -> list[dict[str, Any]]:
        return [{c: to_jsonable(v) for c, v in zip(self.columns, row)} for row in self.rows]

    def to_json(self) -> dict[str, Any]:
        """The shape ``cs224v-tui ask --json`` prints."""
        return {
            "question": self.utterance,
            "needs_database": self.needs_database,
            "classifier": self.route_reason,
            "parsed_sql": self.parsed_sql,
            "sql": self.sql,
            "readback": self.readback,
            "reply": self.reply,
            "rows": self.records(),
            "truncated": self.truncated,
            "error": self.error,
            "calls": [
                {"function": c.function, "input": c.prompt, "output": c.verdict, "latency_s": round(c.latency_s, 4), "cached": c.cached}
                for c in self.calls
            ],
            "to_verify": [{k: to_jsonable(v) for k, v in r.items()} for r in self.to_verify],
        }


@dataclass(frozen=True)
class Executed:
    """What running the (rewritten) query gave."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    elapsed_s: float
    to_verify: tuple[dict[str, Any], ...] = ()


@dataclass
class TextToSQLAgent:
    """A dialogue with one database table."""

    sandbox: Sandbox
    llm: LLM
    schema: str
    enum_fields: Mapping[str, EnumSpec]
    classify_method: str = "llm_all"
    history: list[Turn] = field(default_factory=list)

    def reset(self) -> None:
        self.history.clear()

    def ask(self, utterance: str, *, emit: Emit = ignore, cancel: threading.Event | None = None) -> TurnResult:
        """Run one turn.  Errors of the query become part of the result, never an exception
        (except :class:`Cancelled`, which stops the turn)."""
        calls: list[CallRecord] = []
        prompts: dict[int, str] = {}

        def listen(event: Event) -> None:
            if isinstance(event, CallStarted):
                prompts[event.call_id] = event.prompt
            elif isinstance(event, CallFinished):
                calls.append(CallRecord(event.function, prompts.pop(event.call_id, ""), event.verdict, event.latency_s, event.cached))
            emit(event)

        llm = self.llm.bind(listen, cancel)
        emit(TurnStarted(utterance, len(self.history) + 1))
        routed = llm.route(utterance, self.history, self.schema)
        emit(InputClassified(routed.needs_database, routed.reason))
        if not routed.needs_database:
            reply = llm.respond(utterance, self.history, None, self.schema)
            return self._finish(emit, calls, TurnResult(utterance, False, routed.reason, reply), sql=None)

        parsed = llm.parse(utterance, self.history, self.schema)
        emit(QueryParsed(parsed))
        sql = parsed  # what failed, if something does: the parse, or the rewritten statement
        try:
            tree = self.sandbox.check(parsed)
            classifier = Classifier(self.enum_fields, self.classify_method, llm)
            rewritten = classifier.rewrite(tree, emit)
            sql = rewritten.sql(dialect="postgres", normalize_functions=False)
            emit(QueryRewritten(sql))
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            result = self.execute(sql, listen, cancel)
        except Cancelled:
            raise
        except EngineError as e:
            emit(QueryFailed(sql, str(e)))
            reply = f"I could not run the query I wrote for that: {e}"
            return self._finish(emit, calls, TurnResult(utterance, True, routed.reason, reply, parsed_sql=parsed, error=str(e)), sql=None)

        emit(QueryExecuted(result.columns, result.rows, result.truncated, result.elapsed_s))
        sentence = read_back(rewritten, types=self.sandbox.column_types(rewritten))
        emit(ReadBackWritten(sentence))
        shown = Results(sentence, result.columns, result.rows[:REPLY_ROWS], len(result.rows))
        reply = llm.respond(utterance, self.history, shown, self.schema)
        turn = TurnResult(
            utterance, True, routed.reason, reply, parsed_sql=parsed, sql=sql, readback=sentence,
            columns=result.columns, rows=result.rows, truncated=result.truncated, to_verify=result.to_verify,
        )
        return self._finish(emit, calls, turn, sql=sql)

    def execute(self, sql: str, emit: Emit, cancel: threading.Event | None) -> Executed:
        """Run the rewritten statement (SQL here; the SUQL agent runs its compiler)."""
        r = self.sandbox.run(sql)
        return Executed(r.columns, r.rows, r.truncated, r.elapsed_s)

    def _finish(self, emit: Emit, calls: list[CallRecord], turn: TurnResult, *, sql: str | None) -> TurnResult:
        turn = TurnResult(**{**turn.__dict__, "calls": tuple(calls)})
        self.history.append(Turn(turn.utterance, sql, turn.reply))
        emit(TurnFinished(turn))
        return turn


def run_sql(sandbox: Sandbox, sql: str) -> tuple[QueryResult, str]:
    """Raw-SQL mode: run a statement through the sandbox and read it back."""
    tree = sandbox.check(sql)
    result = sandbox.run(sql)
    try:
        sentence = read_back(tree, types=sandbox.column_types(tree))
    except (sqlglot.errors.SqlglotError, AttributeError, KeyError, TypeError):
        sentence = "I ran your query."
    return result, sentence


def is_select(tree: exp.Expression) -> bool:
    return isinstance(tree, (exp.Select, exp.Union, exp.Except, exp.Intersect))
