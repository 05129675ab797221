"""The SPINACH agent's events (past tense, frozen), in the style of :mod:`engines.events`.

A run reports ``AgentStarted``, then for every action the policy takes a ``StepTaken`` (the
step with its observation and the budget counters), a ``RolledBack`` whenever loop detection
discards a step (a repeat, or a stop while the last query returned no rows), and finally
``AgentFinished`` with the whole trajectory.  The LLM's own ``CallStarted``/``CallFinished``
arrive in between through the same ``emit``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engines.events import Event

if TYPE_CHECKING:
    from engines.spinach.trajectory import Step, Trajectory


@dataclass(frozen=True)
class AgentStarted(Event):
    question: str
    policy: str  # the LLM backend's name (sim | claude)
    budget: int  # actions allowed in the state after rollbacks (15)
    total_budget: int  # actions allowed in all, rolled-back ones included (30)


@dataclass(frozen=True)
class StepTaken(Event):
    step: Step


@dataclass(frozen=True)
class RolledBack(Event):
    to_step: int  # the index of the last step still in the state (0: back to the start)
    discarded: tuple[int, ...]  # indices of the steps taken out of the state
    reason: str  # "repeat" | "premature stop"


@dataclass(frozen=True)
class AgentFinished(Event):
    trajectory: Trajectory = field(repr=False)
