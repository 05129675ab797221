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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
from engines.sources import SqlGate
from engines.sql.classify import Classifier, EnumSpec
from engines.sql.coverage import DataWords, carried_over_dropped, schema_names
from engines.sql.coverage import not_understood as phrases_not_understood
from engines.sql.readback import condition as condition_phrase
from engines.sql.readback import readback as read_back
from engines.sql.sandbox import QueryResult, to_jsonable
from engines.sql.tasks import SQL_TASKS, Dialogue, DialogueTasks, RespondInput

REPLY_ROWS = 20  # rows the reply writer is shown
MAX_VARIANTS = 6  # an empty result: at most this many queries, each without one of its conditions
LLM_FUNCTIONS = ("answer", "summary")


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
    emptied: Emptied | None = None  # no rows: the condition without which the query returns some
    not_understood: tuple[str, ...] = ()  # phrases of the question the query does not use (engines.sql.coverage)

    def records(self) -> list[dict[str, Any]]:
        return [{c: to_jsonable(v) for c, v in zip(self.columns, row)} for row in self.rows]

    # Hand-written: the rows as records, the calls and the keys `ask --json` has always printed, not its fields.
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
                {
                    "function": c.function,
                    "input": c.prompt,
                    "output": c.verdict,
                    "latency_s": round(c.latency_s, 4),
                    "cached": c.cached,
                }
                for c in self.calls
            ],
            "to_verify": [{k: to_jsonable(v) for k, v in r.items()} for r in self.to_verify],
            "why_empty": self.emptied.sentence if self.emptied is not None else None,
            "not_understood": list(self.not_understood),
        }


@dataclass(frozen=True)
class Emptied:
    """Why a query returned no rows: the first of its top-level conditions without which it returns some.

    Found by running the query again without each condition (built on the tree, run through the same
    sandbox or engine), at most :data:`MAX_VARIANTS` times."""

    condition: str | None  # that condition's SQL (PostgreSQL dialect); None when leaving out any one finds nothing
    phrase: str  # the condition in the read-back's words ("in Tokyo")
    rows: int  # rows the query returns without it
    at_least: bool  # ``rows`` stopped at the variant's LIMIT (SUQL runs a bounded variant)
    alone_empty: bool | None  # the condition by itself matches no row (None: not checked)
    text: bool  # the condition asks an LLM (answer() / summary())
    tried: int  # variants run
    conditions: int  # top-level conditions of the query
    sentence: str  # the finding (``ask --json``'s why_empty)
    match_nothing: tuple[str, ...] = ()  # no single condition found: those of the table's own that match no row at all

    @property
    def reply_hint(self) -> str:
        """The finding as the reply is handed it: with the offer to relax the one condition, when one would do."""
        return self.sentence + (" Would you like me to relax it?" if self.condition is not None else "")


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

    sandbox: SqlGate  # a DuckDB Sandbox or PostgreSQL's gate: checked, read-only SELECTs
    llm: LLM
    schema: str
    enum_fields: Mapping[str, EnumSpec]
    classify_method: str = "llm_all"
    history: list[Turn] = field(default_factory=list)
    _schema_words: tuple[str, DataWords] | None = field(default=None, init=False, repr=False, compare=False)
    diagnose_empty: bool = True  # an empty result: find the condition that emptied it (explain_empty)
    check_question: bool = True  # check the query against the question (engines.sql.coverage), on every world
    schema_for: Callable[[str], tuple[str, Mapping[str, EnumSpec]]] | None = None
    """A source described lazily (PostgreSQL): the schema text and enumerations for a question, the tables it
    mentions described first (engines.data.source.agent_schema); None: ``schema`` and ``enum_fields`` as given."""
    offered: str | None = field(default=None, init=False, repr=False, compare=False)
    """The condition (PostgreSQL SQL) the last reply offered to relax ("Would you like me to relax it?"): the
    dialogue's state, shown to the next turn's route and parse so a "yes" accepts the offer; None after any
    other reply."""
    tasks: DialogueTasks = SQL_TASKS
    """The LLM tasks of a turn (route, parse, respond): the Text-to-SQL agent's, or those of an agent package that
    simulates them with its own reader (the course assistant's, engines.courses.tasks.COURSE_TASKS)."""

    def reset(self) -> None:
        self.history.clear()
        self.offered = None

    def ask(self, utterance: str, *, emit: Emit = ignore, cancel: threading.Event | None = None) -> TurnResult:
        """Run one turn.  Errors of the query become part of the result, never an exception
        (except :class:`Cancelled`, which stops the turn)."""
        calls: list[CallRecord] = []
        prompts: dict[int, str] = {}

        def listen(event: Event) -> None:
            if isinstance(event, CallStarted):
                prompts[event.call_id] = event.prompt
            elif isinstance(event, CallFinished):
                calls.append(
                    CallRecord(
                        event.function, prompts.pop(event.call_id, ""), event.verdict, event.latency_s, event.cached
                    )
                )
            emit(event)

        llm = self.llm.bind(listen, cancel)
        if self.schema_for is not None:  # the tables this question mentions, described before it is read
            self.schema, self.enum_fields = self.schema_for(utterance)
        emit(TurnStarted(utterance, len(self.history) + 1))
        offer, self.offered = self.offered, None
        routed = llm.run(self.tasks.route, Dialogue(utterance, tuple(self.history), self.schema, offer))
        emit(InputClassified(routed.needs_database, routed.reason))
        if not routed.needs_database:
            reply = llm.run(self.tasks.respond, RespondInput(utterance, tuple(self.history), None, self.schema))
            return self._finish(emit, calls, TurnResult(utterance, False, routed.reason, reply), sql=None)

        parsed = llm.run(self.tasks.parse, Dialogue(utterance, tuple(self.history), self.schema, offer))
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
            return self._finish(
                emit,
                calls,
                TurnResult(utterance, True, routed.reason, reply, parsed_sql=parsed, error=str(e)),
                sql=None,
            )

        emit(QueryExecuted(result.columns, result.rows, result.truncated, result.elapsed_s))
        sentence = read_back(rewritten, types=self.sandbox.column_types(rewritten))
        # a "yes" to the offer to relax a condition: the query is the previous one without it, and the message's
        # words ask for no condition of their own
        accepted = offer is not None and is_relaxed(self.history, offer, rewritten)
        missing = () if accepted else self.unused_phrases(utterance, parsed, rewritten)
        emit(ReadBackWritten(sentence, missing))
        emptied = None
        if not result.rows and self.diagnose_empty:
            emptied = self.explain_empty(rewritten, listen, cancel)
        if missing:  # never the rows as the answer: say what was left out, and what the query found without it
            reply = flagged_reply(missing, rewritten, result, emptied)
        else:
            shown = Results(
                sentence,
                result.columns,
                result.rows[:REPLY_ROWS],
                len(result.rows),
                why_empty=emptied.reply_hint if emptied is not None else None,
            )
            reply = llm.run(self.tasks.respond, RespondInput(utterance, tuple(self.history), shown, self.schema))
        turn = TurnResult(
            utterance,
            True,
            routed.reason,
            reply,
            parsed_sql=parsed,
            sql=sql,
            readback=sentence,
            columns=result.columns,
            rows=result.rows,
            truncated=result.truncated,
            to_verify=result.to_verify,
            emptied=emptied,
            not_understood=missing,
        )
        return self._finish(emit, calls, turn, sql=sql)

    def unused_phrases(self, utterance: str, parsed: str, rewritten: exp.Expr) -> tuple[str, ...]:
        """The phrases of the question the query does not use (:func:`engines.sql.coverage.not_understood`),
        over the parser's tree and what ran (classify() may have changed a value's spelling), on every world
        and backend; then, in a dialogue, the conditions of the previous query a follow-up leaves out
        (:func:`engines.sql.coverage.carried_over_dropped`), in the read-back's words ("in Menlo Park (from
        before)").  () when the check is off (``check_question``)."""
        if not self.check_question:
            return ()
        trees = [rewritten]
        try:
            trees.append(sqlglot.parse_one(parsed, read="postgres"))
        except sqlglot.errors.SqlglotError:
            pass
        missing = phrases_not_understood(utterance, trees, data=self._data_words())
        previous = next((t.sql for t in reversed(self.history) if t.sql), None)
        if previous is None:
            return missing
        try:
            before = sqlglot.parse_one(previous, read="postgres")
        except sqlglot.errors.SqlglotError:
            return missing
        dropped = carried_over_dropped(utterance, before, rewritten)
        return missing + tuple(dict.fromkeys(f"{_phrase(p)} (from before)" for p in dropped))

    def _data_words(self) -> DataWords:
        """What the schema text names (read once per schema)."""
        if self._schema_words is None or self._schema_words[0] != self.schema:
            self._schema_words = (self.schema, schema_names(self.schema))
        return self._schema_words[1]

    def execute(self, sql: str, emit: Emit, cancel: threading.Event | None) -> Executed:
        """Run the rewritten statement (SQL here; the SUQL agent runs its compiler)."""
        r = self.sandbox.run(sql)
        return Executed(r.columns, r.rows, r.truncated, r.elapsed_s)

    # --- an empty result: which condition emptied it ------------------------------------------

    def explain_empty(
        self, tree: exp.Expr, emit: Emit = ignore, cancel: threading.Event | None = None
    ) -> Emptied | None:
        """Run ``tree`` (a query that returned no rows) again without each top-level WHERE condition, in
        order — conditions on the table's own columns first, those asking an LLM last (leaving one of them
        out costs calls) — and report the first variant that returns rows.  None when the query has no
        WHERE to drop from.  A variant that fails (a timeout, a refusal) counts as tried and is skipped."""
        if not isinstance(tree, exp.Select) or tree.args.get("where") is None:
            return None
        parts = conjuncts(tree.args["where"].this)
        order = sorted(range(len(parts)), key=lambda i: (asks_llm(parts[i]), i))
        noun = _noun(tree)
        tried = 0
        for i in order[:MAX_VARIANTS]:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            tried += 1
            try:
                rows, capped = self.rows_without(without(tree, i), emit, cancel)
            except Cancelled:
                raise
            except EngineError:
                continue
            if rows <= 0:
                continue
            text = asks_llm(parts[i])
            alone = None if text else self._matches_nothing(tree, parts[i])
            phrase = _phrase(parts[i])
            found = f"{'at least ' if capped else ''}{rows} {noun if rows == 1 else _plural(noun)}"
            if alone:
                head = f"No {noun} {phrase} is in this database"
            else:
                head = f"No {noun} {phrase} also meets the other conditions"
            sentence = f"{head}; without that condition the search finds {found}."
            if any(asks_llm(p) for p in parts):
                sentence += (
                    " (I left out the conditions on the table's own columns first: leaving out an answer() "
                    "condition costs LLM calls.)"
                )
            return Emptied(
                parts[i].sql(dialect="postgres", normalize_functions=False),
                phrase,
                rows,
                capped,
                alone,
                text,
                tried,
                len(parts),
                sentence,
            )
        scope = (
            f"any one of its {len(parts)} conditions"
            if tried == len(parts)
            else f"any one of {tried} of its {len(parts)} conditions"
        )
        if len(parts) == 1:
            scope = "its one condition"
        # more than one condition empties it: say which of the table's own match nothing by themselves
        nothing = [p for p in parts[:MAX_VARIANTS] if not asks_llm(p) and self._matches_nothing(tree, p)]
        sentence = "".join(f"No {noun} {_phrase(p)} is in this database. " for p in nothing)
        sentence += f"Leaving out {scope} still finds nothing: more than one would have to be relaxed."
        return Emptied(
            None,
            "",
            0,
            False,
            None,
            False,
            tried,
            len(parts),
            sentence,
            tuple(p.sql(dialect="postgres", normalize_functions=False) for p in nothing),
        )

    def rows_without(self, variant: exp.Select, emit: Emit, cancel: threading.Event | None) -> tuple[int, bool]:
        """How many rows ``variant`` returns (and whether that number stopped at a cap): here its exact
        count, through the sandbox; the SUQL agent runs a bounded variant through its engine."""
        counted = _count_of(variant)
        r = self.sandbox.run(counted.sql(dialect="postgres"))
        return int(r.rows[0][0]) if r.rows and r.rows[0][0] is not None else 0, False

    def _matches_nothing(self, tree: exp.Select, part: exp.Expr) -> bool | None:
        """Whether a condition on the table's own columns, by itself, matches no row (None: could not tell)."""
        alone = tree.copy()
        for key in ("group", "having", "qualify", "distinct", "order", "limit", "offset"):
            alone.set(key, None)
        alone.set("expressions", [exp.Count(this=exp.Star()).as_("n")])  # the FROM and its joins, counted
        alone.set("where", exp.Where(this=part.copy()))
        try:
            r = self.sandbox.run(alone.sql(dialect="postgres"))
        except EngineError:
            return None
        return bool(r.rows) and (r.rows[0][0] or 0) == 0

    def _finish(self, emit: Emit, calls: list[CallRecord], turn: TurnResult, *, sql: str | None) -> TurnResult:
        turn = TurnResult(**{**turn.__dict__, "calls": tuple(calls)})
        self.history.append(Turn(turn.utterance, sql, turn.reply))
        # the reply was handed the offer (Emptied.reply_hint) only when it was written from the rows
        self.offered = turn.emptied.condition if turn.emptied is not None and not turn.not_understood else None
        emit(TurnFinished(turn))
        return turn


def flagged_reply(missing: tuple[str, ...], tree: exp.Expr, result: Executed, emptied: Emptied | None = None) -> str:
    """The reply to a question part of which the query does not use: the phrases named, and what the query
    found without them said as such, never as the answer ("I could not use '4 cylinders'. Without it there
    are 406 cars."); when it found nothing, which of its own conditions emptied it (``emptied``)."""
    quoted = [f"'{p}'" for p in missing]
    names = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    it = "it" if len(missing) == 1 else "them"
    noun = _noun(tree) if isinstance(tree, exp.Select) else "row"
    rows, n = result.rows, len(result.rows)
    counted = (
        isinstance(tree, exp.Select)
        and len(tree.expressions) == 1
        and isinstance(tree.expressions[0].unalias(), exp.Count)
        and not tree.args.get("group")
    )
    if counted and n == 1 and len(rows[0]) == 1:
        total = rows[0][0]
        found = f"there {'is' if total == 1 else 'are'} {total} {noun if total == 1 else _plural(noun)}"
    elif n == 1 and len(rows[0]) == 1:
        found = f"the query gives {to_jsonable(rows[0][0])}"
    elif n == 0:
        found = f"the query finds no {_plural(noun)}"
    else:
        found = f"the query finds {'at least ' if result.truncated else ''}{n} {noun if n == 1 else _plural(noun)}"
    why = f" {emptied.sentence}" if emptied is not None else ""
    return (
        f"I could not use {names}. Without {it} {found}; that is not the answer to your question.{why} "
        "Could you say it with the names of the columns?"
    )


def run_sql(sandbox: SqlGate, sql: str) -> tuple[QueryResult, str]:
    """Raw-SQL mode: run a statement through the sandbox and read it back."""
    tree = sandbox.check(sql)
    result = sandbox.run(sql)
    try:
        sentence = read_back(tree, types=sandbox.column_types(tree))
    except (sqlglot.errors.SqlglotError, AttributeError, KeyError, TypeError):
        sentence = "I ran your query."
    return result, sentence


# --- conditions of a query, and the query without one ----------------------------------------------


def conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The top-level AND-ed conditions of a WHERE (parentheses around an AND see through)."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def asks_llm(node: exp.Expr) -> bool:
    """The condition calls SUQL's answer() or summary()."""
    return any(str(f.this).lower() in LLM_FUNCTIONS for f in node.find_all(exp.Anonymous))


def without(tree: exp.Select, index: int) -> exp.Select:
    """A copy of the query with its ``index``-th top-level condition left out."""
    parts = conjuncts(tree.args["where"].this)
    rest = [p.copy() for i, p in enumerate(parts) if i != index]
    variant = tree.copy()
    variant.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    return variant


def is_relaxed(history: list[Turn], offer: str, tree: exp.Expr) -> bool:
    """Whether ``tree`` is the previous query of the dialogue without the condition ``offer`` (on parsed trees)."""
    previous = next((t.sql for t in reversed(history) if t.sql), None)
    if previous is None or not isinstance(tree, exp.Select):
        return False
    try:
        before = sqlglot.parse_one(previous, read="postgres")
        condition = sqlglot.parse_one(offer, read="postgres")
    except sqlglot.errors.SqlglotError:
        return False
    if not isinstance(before, exp.Select) or before.args.get("where") is None:
        return False
    parts = conjuncts(before.args["where"].this)
    if condition not in parts:
        return False
    expected = without(before, parts.index(condition))
    return bool(expected == tree)


def _count_of(query: exp.Select) -> exp.Select:
    """``SELECT COUNT(*) FROM (query) AS _rows`` with the query's ORDER BY, LIMIT and OFFSET left out."""
    inner = query.copy()
    for key in ("order", "limit", "offset"):
        inner.set(key, None)
    return exp.select(exp.Count(this=exp.Star()).as_("n")).from_(inner.subquery("_rows"))


def _phrase(node: exp.Expr) -> str:
    try:
        return condition_phrase(node)
    except (AttributeError, KeyError, TypeError, ValueError):
        return "where " + node.sql(dialect="postgres")


def _noun(tree: exp.Select) -> str:
    """'restaurant' for a query over restaurants; 'row' for a join or a subquery."""
    source = tree.args.get("from") or tree.args.get("from_")
    table = source.this if source is not None else None
    if tree.args.get("joins") or not isinstance(table, exp.Table) or not table.name:
        return "row"
    name = table.name.replace("_", " ")
    if name.endswith("ies"):
        return name[:-3] + "y"
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
