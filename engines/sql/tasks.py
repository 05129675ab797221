"""The Text-to-SQL agent's LLM tasks (lecture 6): route, parse, classify, respond.

Each :class:`~engines.llm.task.Task` carries its prompt (engines/sql/prompts), how a real model's reply is
read, and its simulated implementation: the sim's restaurant parser and reply writer (``sim_parser``,
``sim``) and the generic reader of a user's own tables (``sim_tables``), all in this package.  A turn's
three tasks travel together as :class:`DialogueTasks`; an agent over a world this package's simulator does
not read gives the agent its own (the course assistant's, engines.courses.tasks): the same tasks, prompts and
readers, simulated by its own reader.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from engines.llm.prompting import MAX_ROWS_SHOWN, recent
from engines.llm.protocol import Results, Routed, Turn
from engines.llm.replies import read_text, validated
from engines.llm.task import Task
from engines.sql import sim, sim_parser, sim_tables
from engines.sql.folding import fold

if TYPE_CHECKING:
    from engines.llm.sim import SimBackend

log = logging.getLogger(__name__)

PACKAGE = "engines.sql"  # its prompts/ folder holds these tasks' templates


@dataclass(frozen=True)
class Dialogue:
    """A turn to route or parse: the utterance, the dialogue before it, the database's schema."""

    utterance: str
    history: tuple[Turn, ...]
    schema: str
    offer: str | None = None
    """The condition (PostgreSQL SQL) of the previous query that the assistant's last reply offered to relax
    ("Would you like me to relax it?"): part of the dialogue so far, so the model reading the reply knows what a
    "yes" accepts. None when the last reply offered nothing."""


@dataclass(frozen=True)
class ClassifyInput:
    """A value the user said, the enum field it is for, and every value of that field."""

    value: str
    field: str
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class RespondInput:
    """The reply to write: from the rows a query returned (``results``), or directly (``None``)."""

    utterance: str
    history: tuple[Turn, ...]
    results: Results | None
    schema: str = ""  # tells a direct reply what the database holds


# --- the replies' JSON objects (the structured-output schemas) ------------------------------


class RouteReply(BaseModel):
    """``route``: does the message need the database, and why."""

    needs_database: bool
    reason: str = ""

    @field_validator("needs_database", mode="before")
    @classmethod
    def _strict_bool(cls, v: Any) -> Any:
        # "true"/"false" as strings are read; 1, "yes", "maybe" are not a boolean answer
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower() == "true"
        if not isinstance(v, bool):
            raise ValueError("not a boolean")
        return v

    @field_validator("reason", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return "" if v is None else str(v).strip()


class SqlReply(BaseModel):
    """``parse`` (and HybridQA's ``hybrid_parse``): one statement."""

    sql: str = Field(min_length=1)

    @field_validator("sql", mode="after")
    @classmethod
    def _statement(cls, v: str) -> str:
        v = v.strip().rstrip(";").strip()
        if not v:
            raise ValueError("empty statement")
        return v


class ClassifyReply(BaseModel):
    """``classify``: the candidate values the user's value means."""

    values: list[str]

    @field_validator("values", mode="before")
    @classmethod
    def _list(cls, v: Any) -> Any:
        if isinstance(v, str):
            return [v]
        if isinstance(v, list):
            return [x for x in v if isinstance(x, str)]  # a stray non-string entry is dropped, not fatal
        return v


# --- reading a real model's replies ---------------------------------------------------------


def read_sql_reply(function: str, text: str) -> str:
    """``{"sql": str}`` -> the statement, without a trailing semicolon."""
    return validated(SqlReply, text, function).sql


def read_routed(text: str, _input: Any = None) -> Routed:
    reply = validated(RouteReply, text, "route")
    return Routed(needs_database=reply.needs_database, reason=reply.reason)


def read_values(text: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
    """``{"values": [...]}`` -> the candidates named (exactly, else ignoring case and accents), in reply order."""
    values = validated(ClassifyReply, text, "classify").values
    exact = {c: c for c in candidates}
    folded: dict[str, str] = {}
    for c in candidates:
        folded.setdefault(fold(c), c)
    chosen: list[str] = []
    for value in values:
        match = exact.get(value) or folded.get(fold(value))
        if match is None:
            log.debug("classify: dropped %r, not among the candidates", value)
        elif match not in chosen:
            chosen.append(match)
    return tuple(chosen)


# --- the simulated implementations ------------------------------------------------------------
# A user's own tables (a described schema) are read by the generic reader, the restaurants by the restaurant
# parser; the course assistant runs these tasks with its own simulator (engines.courses.tasks).


def _sim_route(b: SimBackend, i: Dialogue) -> Routed:
    if i.offer is not None:  # the last reply offered to relax a condition: is this a yes or a no to it?
        answer = sim_parser.answers_offer(i.utterance)
        if answer is True:
            return Routed(True, f"accepts the offer to relax {i.offer}: the previous search without it")
        if answer is False:
            return Routed(False, "declines the offer to relax a condition: the search stays as it was")
    if sim_tables.is_described(i.schema):  # a user's own tables: the generic reader
        return Routed(*sim_tables.route(i.utterance, i.history, i.schema))
    return Routed(*sim_parser.route(i.utterance, i.history, i.schema))


def _sim_parse(b: SimBackend, i: Dialogue) -> str:
    if i.offer is not None and sim_parser.answers_offer(i.utterance) is True:
        relaxed = sim_parser.relaxed(i.history, i.offer)
        if relaxed is not None:
            return relaxed
    if sim_tables.is_described(i.schema):
        return sim_tables.parse(i.utterance, i.history, i.schema)
    return sim_parser.parse(i.utterance, i.history, i.schema, seed=b.seed, drop_rate=b.parse_drop_rate)


def _sim_respond(b: SimBackend, i: RespondInput) -> str:
    if sim_tables.is_described(i.schema):
        if i.results is None:
            return sim_tables.direct_reply(i.utterance, i.schema)
        return sim_tables.results_reply(i.utterance, i.results)
    if i.results is None:
        if i.history and "relax it?" in (i.history[-1].reply or "") and sim_parser.answers_offer(i.utterance) is False:
            return "All right: I'll keep the search as it was. Ask me about other restaurants any time."
        return sim.direct_reply(i.utterance)
    return sim.results_reply(i.utterance, i.results, suql=sim_parser.suql_schema(i.schema))


def _dialogue_context(i: Dialogue) -> dict[str, Any]:
    return {"utterance": i.utterance, "history": recent(i.history), "schema": i.schema, "offer": i.offer}


def _respond_context(i: RespondInput) -> dict[str, Any]:
    rows = i.results.rows[:MAX_ROWS_SHOWN] if i.results is not None else ()
    return {
        "utterance": i.utterance,
        "history": recent(i.history),
        "results": i.results,
        "rows": rows,
        "schema": i.schema,
    }


ROUTE: Task[Dialogue, Routed] = Task(
    name="route",
    input=Dialogue,
    output=Routed,
    template="route",
    package=PACKAGE,
    max_tokens=256,
    context=_dialogue_context,
    read=read_routed,
    simulate=_sim_route,
    sim_latency=0.3,
    reply_model=RouteReply,
    describe=lambda i: i.utterance,
    show=lambda _i, r: ("database" if r.needs_database else "no database") + f": {r.reason}",
)

PARSE: Task[Dialogue, str] = Task(
    name="parse",
    input=Dialogue,
    output=str,
    template="parse",
    package=PACKAGE,
    max_tokens=1024,
    context=_dialogue_context,
    read=lambda text, _i: read_sql_reply("parse", text),
    simulate=_sim_parse,
    reply_model=SqlReply,
    describe=lambda i: i.utterance,
)

CLASSIFY: Task[ClassifyInput, tuple[str, ...]] = Task(
    name="classify",
    input=ClassifyInput,
    output=tuple,
    template="classify",
    package=PACKAGE,
    max_tokens=1024,
    context=lambda i: {"value": i.value, "field": i.field, "candidates": list(i.candidates)},
    read=lambda text, i: read_values(text, i.candidates),
    reply_model=ClassifyReply,
    simulate=lambda b, i: sim.classify_values(i.value, i.candidates),
    sim_latency=0.5,
    describe=lambda i: f"{i.field}: {i.value!r} among {len(i.candidates)} values",
    show=lambda _i, v: ", ".join(v) if v else "(none)",
)

RESPOND: Task[RespondInput, str] = Task(
    name="respond",
    input=RespondInput,
    output=str,
    template="respond",
    package=PACKAGE,
    max_tokens=1024,
    context=_respond_context,
    read=lambda text, _i: read_text("respond", text),
    simulate=_sim_respond,
    sim_latency=0.5,
    describe=lambda i: i.utterance,
)


@dataclass(frozen=True)
class DialogueTasks:
    """The LLM tasks of one turn of a dialogue agent (engines.sql.agent.TextToSQLAgent): route the message, parse
    it into a query, write the reply.  An agent package whose world the simulators here do not read gives its agent
    its own with :meth:`simulated_by`: the same names, prompts and readers of a real model's reply (so a real
    backend, the events and the cache see no difference), and its own simulated implementations."""

    route: Task[Dialogue, Routed]
    parse: Task[Dialogue, str]
    respond: Task[RespondInput, str]

    def simulated_by(
        self,
        route: Callable[[Any, Dialogue], Routed],
        parse: Callable[[Any, Dialogue], str],
        respond: Callable[[Any, RespondInput], str],
    ) -> DialogueTasks:
        """These tasks with other simulated implementations ((the simulated backend, input) -> value)."""
        return DialogueTasks(
            replace(self.route, simulate=route),
            replace(self.parse, simulate=parse),
            replace(self.respond, simulate=respond),
        )


#: The Text-to-SQL (and SUQL) agent's turn over the restaurants or a user's own tables.
SQL_TASKS = DialogueTasks(ROUTE, PARSE, RESPOND)
