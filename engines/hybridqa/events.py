"""What the HybridQA pipeline reports, step by step (small frozen records, past tense).

Besides these, a run passes on the SUQL compiler's events (``PlanBuilt``, ``RowDecided``,
``QueryFinished``) and the LLM's (``CallStarted``, ``CallFinished``), so a listener sees the plan
and every passage read as it happens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engines.events import Event


@dataclass(frozen=True)
class QuestionReceived(Event):
    table: str
    question: str


@dataclass(frozen=True)
class QuestionParsed(Event):
    attempt: int  # 1 for the first parse, 2 and 3 for retries
    suql: str


@dataclass(frozen=True)
class AttemptExecuted(Event):
    attempt: int
    suql: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    empty: bool  # no row, or no value in any row: the signal that triggers a retry
    error: str | None  # the query could not run (its message)
    answer_calls: int


@dataclass(frozen=True)
class Retried(Event):
    attempt: int  # the attempt about to be parsed
    reason: str
    failed: tuple[str, ...]  # the earlier queries the parser is shown


@dataclass(frozen=True)
class PassageRead(Event):
    """One answer() call: which row's passage, in which column, and why it was read."""

    row_key: str | None
    column: str | None  # the _Info column read (None when it could not be told)
    question: str
    value: str | None  # None: the passage does not say
    reason: str  # "the query's answer()" or "fallback: <column> did not say"


@dataclass(frozen=True)
class FallbackTried(Event):
    """Improvement 1: the passage the query named said nothing, so another column of the row is read."""

    row_key: str | None
    question: str
    from_column: str | None
    to_column: str


@dataclass(frozen=True)
class AnswerShortened(Event):
    short: str  # "" when there was nothing to shorten
    value: str | None  # the first value of the rows it came from


@dataclass(frozen=True)
class QuestionAnswered(Event):
    result: Any = field(repr=False)  # engines.hybridqa.pipeline.HybridAnswer
