"""What the passes share: one frozen :class:`RunContext` a run, one frozen :class:`SelectContext` a SELECT.

The contexts replace the positional clumps the passes used to hand each other.  What a run finds
out as it goes (the plan shown, the rows to verify, the wide twins) is :class:`RunState`, the one
mutable record, owned by the run and read by the orchestrator at the end.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from engines.errors import Cancelled
from engines.events import Emit, Event
from engines.retrieval.bm25 import IndexCache
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.cost import COST_MODEL, CostModel
from engines.suql.compiler.kleene import Truth
from engines.suql.language import LLMCall
from engines.suql.plan import Mode, Plan

if TYPE_CHECKING:
    from engines.suql.compiler.asker import Asker
    from engines.suql.compiler.identity import RowNames

# --- events a run emits besides the LLM layer's ------------------------------------------------


@dataclass(frozen=True)
class PlanBuilt(Event):
    plan: Plan


@dataclass(frozen=True)
class RowDecided(Event):
    row_key: str
    truth: str  # "match" | "no" | "to verify"


# --- shared records ------------------------------------------------------------------------------

Wide = tuple[exp.Expression, list[str]]  # a tree over wide twins, and the unknown conditions involved
Values = dict[tuple[Any, tuple[str, str, str]], Any]  # (row key, call key) -> LLM value (None: unknown)


@dataclass
class Row:
    """One candidate row of a SELECT with LLM calls."""

    key: Any
    label: str
    flags: list[Truth]  # per conjunct: does its structured part hold?
    texts: dict[str, Any]  # text expression sql -> value
    score: float = 0.0  # retrieval score, set by the visit pass
    leaves: list[Truth] = field(default_factory=list)  # mode B: each structured leaf of the written WHERE


@dataclass
class RunState:
    """What one run found out so far (the only mutable record the passes share)."""

    plan: Plan | None = None  # the plan shown for the statement
    dnf: str | None = None
    to_verify: list[dict[str, Any]] = field(default_factory=list)
    approximate: bool = False
    rows_examined: int = 0
    wide_of: dict[int, Wide | None] = field(default_factory=dict)  # a compiled SELECT (by id) -> its wide twin
    wide_tables: dict[str, tuple[exp.Table, list[str]]] = field(default_factory=dict)  # scratch name -> wide twin


@dataclass(frozen=True)
class RunContext:
    """Everything a pass may read during one run of one query."""

    sandbox: Sandbox
    mode: Mode
    emit: Emit
    cancel: threading.Event | None
    stack: ExitStack  # scratch tables and functions live until the run ends
    asker: Asker
    names: RowNames
    indexes: IndexCache
    pool: int
    state: RunState
    cost: CostModel = COST_MODEL
    ranker: str = "static"  # the adaptive ranker's embeddings (engines.suql.compiler.semantic.RANKERS)

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()


@dataclass(frozen=True)
class SelectContext:
    """One SELECT with LLM calls of its own, while it is compiled."""

    select: exp.Select  # sources already materialised
    key: exp.Expression  # the row key (rowid, or a join's rowids joined with '|')
    calls: Mapping[tuple[str, str, str], LLMCall]  # its distinct calls, in order of appearance
    index_of: Mapping[tuple[str, str, str], int]  # call key -> its value column c<i>
    values: Values = field(default_factory=dict)  # filled as rows are decided (shared by the pool)
    tables: dict = field(default_factory=dict)  # (columns, rows) -> its values table, made once (substitute)
