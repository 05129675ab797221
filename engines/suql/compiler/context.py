"""What the executor shares: one frozen :class:`RunContext` a run, one frozen :class:`SelectContext` a SELECT.

The planner's passes read none of this (they get a :class:`~engines.suql.compiler.passes.PlanContext`: no
database, no LLM).  What a run finds out as it goes (the plan shown, the rows to verify, the scratch tables'
wide twins, by name) is :class:`RunState`, the one mutable record, owned by the run and read by
``SuqlEngine.run`` at the end.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from engines.errors import Cancelled
from engines.events import Emit
from engines.retrieval.bm25 import IndexCache
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.asker import Asker
from engines.suql.compiler.cost import COST_MODEL, CostModel
from engines.suql.compiler.identity import RowNames
from engines.suql.compiler.records import CallKey, Values
from engines.suql.language import LLMCall
from engines.suql.plan import Mode, Plan


@dataclass
class RunState:
    """What one run found out so far (the only mutable record of a run)."""

    plan: Plan | None = None  # the plan shown for the statement
    dnf: str | None = None
    to_verify: list[dict[str, Any]] = field(default_factory=list)
    to_verify_keys: list[Any] = field(default_factory=list)  # the row key of each row to verify (settling names it)
    approximate: bool = False
    rows_examined: int = 0
    unsettled: int = 0  # rows to verify listed without asking their remaining conditions (lazy verification)
    wide_tables: dict[str, tuple[exp.Table, list[str]]] = field(default_factory=dict)  # scratch name -> wide twin
    # mode G: the rows the proxy matched without a call, and the output without them (to mark the output's rows)
    proxy_accepted: set[Any] = field(default_factory=set)
    llm_only: exp.Expr | None = None


@dataclass(frozen=True)
class RunContext:
    """Everything the executor may use during one run of one query."""

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
    # verification of the rows to verify: "eager" asks every condition of a row whose WHERE is already Unknown
    # (so it is listed exactly); "lazy" stops there and lists it unsettled, except the rows ``settle`` names
    verify: str = "eager"
    settle: frozenset[Any] = frozenset()

    def defers(self, *, top: bool) -> bool:
        """Does this SELECT leave unsettled the rows that can no longer match?  Lazily verified, at the top (a
        SELECT below it gives its rows to another), in the modes that stop at a condition (A asks every
        condition of every row, B reads the WHERE as written)."""
        return top and self.verify == "lazy" and self.mode.short_circuit and not self.mode.as_written

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()


ValuesRows = tuple[tuple[tuple[str, str], ...], tuple[tuple[Any, ...], ...]]
"""A values table's columns (name, type) and rows: what :func:`~engines.suql.compiler.substitute.values_table` made."""


@dataclass(frozen=True)
class SelectContext:
    """One SELECT with LLM calls of its own, while it is compiled."""

    select: exp.Select  # sources already materialised
    key: exp.Expr  # the row key (rowid, or a join's rowids joined with '|')
    calls: Mapping[CallKey, LLMCall]  # its distinct calls, in order of appearance
    index_of: Mapping[CallKey, int]  # call key -> its value column c<i>
    values: Values = field(default_factory=dict)  # filled as rows are decided (shared by the pool)
    tables: dict[ValuesRows, exp.Table] = field(default_factory=dict)  # its values tables, each made once (substitute)
