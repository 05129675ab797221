"""The event stream: small frozen records, named in the past tense.

Every long operation in ``engines`` reports what it does by calling an ``emit``
callback with these records.  The TUI turns them into messages, the CLI prints
or collects them, tests assert on them.  Nothing here knows who listens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """Base class of every engine event."""


Emit = Callable[[Event], None]


def ignore(_event: Event) -> None:
    """An ``emit`` that drops everything."""


# --- LLM calls -------------------------------------------------------------


@dataclass(frozen=True)
class CallStarted(Event):
    call_id: int
    function: str  # route | parse | classify | answer | summary | respond
    prompt: str  # a one-line description of the input (question, value, utterance)
    row_key: str | None = None
    backend: str = ""
    verification: bool = False  # SUQL: asked to settle a row whose WHERE was already Unknown (not to find matches)
    phase: str = ""  # SUQL mode G: "pilot", "sample" or "band", the cascade step that asked it ("": not cascaded)


@dataclass(frozen=True)
class CallFinished(Event):
    call_id: int
    function: str
    verdict: str  # one-line rendering of the output
    evidence: tuple[str, ...] = ()
    latency_s: float = 0.0
    cached: bool = False
    input_tokens: int | None = None  # every prompt token, cached ones included (see engines.llm.protocol.Usage)
    output_tokens: int | None = None
    row_key: str | None = None
    cached_input_tokens: int | None = None  # the prompt tokens read from the prompt cache
    cost_usd: float | None = None  # estimated from the price table of the settings; None: no price
    estimated: bool = False  # the tokens are the simulated backend's estimate on the rendered prompt
    model: str | None = None  # the model that answered (or, for the sim, the one whose price is shown)
    verification: bool = False  # SUQL: asked to settle a row whose WHERE was already Unknown (not to find matches)
    phase: str = ""  # SUQL mode G: "pilot", "sample" or "band", the cascade step that asked it ("": not cascaded)


@dataclass(frozen=True)
class CallFailed(Event):
    call_id: int
    function: str
    error: str
    latency_s: float = 0.0


# --- Text-to-SQL agent -----------------------------------------------------


@dataclass(frozen=True)
class TurnStarted(Event):
    utterance: str
    turn: int


@dataclass(frozen=True)
class InputClassified(Event):
    needs_database: bool
    reason: str


@dataclass(frozen=True)
class QueryParsed(Event):
    sql: str  # what the parser wrote (PostgreSQL dialect, before classify)


@dataclass(frozen=True)
class ValuesClassified(Event):
    field: str
    value: str
    method: str
    chosen: tuple[str, ...]


@dataclass(frozen=True)
class QueryRewritten(Event):
    sql: str  # after classify(), the statement that runs


@dataclass(frozen=True)
class QueryExecuted(Event):
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    elapsed_s: float


@dataclass(frozen=True)
class QueryFailed(Event):
    sql: str
    message: str


@dataclass(frozen=True)
class ReadBackWritten(Event):
    sentence: str
    not_understood: tuple[str, ...] = ()  # phrases of the question the query does not use (engines.sql.coverage)


@dataclass(frozen=True)
class TurnFinished(Event):
    result: Any = field(repr=False)
