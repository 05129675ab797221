"""The records the compiler's modules exchange, and the events a run emits besides the LLM layer's.

The lowest module of the compiler: it imports none of the others, so the asker, the passes and the
executor can all name a :class:`Row` without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from engines.events import Event
from engines.suql.compiler.kleene import Truth
from engines.suql.plan import Plan

# --- events a run emits besides the LLM layer's ------------------------------------------------


@dataclass(frozen=True)
class PlanBuilt(Event):
    plan: Plan


@dataclass(frozen=True)
class RowDecided(Event):
    row_key: str
    truth: str  # "match" | "no" | "to verify"


# --- shared records ------------------------------------------------------------------------------

CallKey = tuple[str, str, str]  # an LLM call as ``LLMCall.key``: (function, text sql, question)
Wide = tuple[exp.Expr, list[str]]  # a tree over wide twins, and the unknown conditions involved
Values = dict[tuple[Any, CallKey], str | None]  # (row key, call key) -> LLM value (None: unknown)


@dataclass
class Row:
    """One candidate row of a SELECT with LLM calls."""

    key: Any
    label: str
    flags: list[Truth]  # per conjunct: does its structured part hold?
    texts: dict[str, Any]  # text expression sql -> value
    score: float = 0.0  # retrieval score (the plan's visit order gives each visited row its own)
    leaves: list[Truth] = field(default_factory=list)  # mode B: each structured leaf of the written WHERE


@dataclass(frozen=True)
class Compiled:
    """A statement compiled: its tree with no LLM call left, and its wide twin (the same statement over the
    rows it would have if every unknown inner condition were true, and those conditions), when it has one."""

    tree: exp.Expr
    wide: Wide | None = None
