"""The trajectory stepper as data: which step is shown, how the keys move it, and what each step shows.

No Textual here: :class:`StepperModel` is driven by the tab (the agent's events, a loaded
trajectory, the keys) and read by :class:`tui.kg.stepper.StepperView`, which only renders it.
Tests drive it directly.

    model = StepperModel()
    model.begin("What is …?", question, policy="sim")    # a run starts
    model.started("sim", 15, 30); model.took(step)        # AgentStarted(budgets), StepTaken (the view follows)
    model.finish(scored)                                  # the run's (or a file's) scored trajectory
    model.step(-1); model.to_edge(last=True)              # ← and End
    model.budget_view(), model.rollback_view(), model.observation_view(), model.answer_view()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from engines.api import Scored, Step, answer_step, answered_by, budgets

if TYPE_CHECKING:
    from worlds.kg import KGQuestion

OBSERVATION_LINES = 14
"""Lines of an observation shown at first; ``v`` shows all of it."""
ROLLBACK_NOTES: dict[str, str] = {
    "repeat": "the same action as a recent step in the state, so it was not run",
    "premature stop": "stop() while the answer query it names had returned no rows (or none had run)",
}


@dataclass(frozen=True)
class BudgetView:
    """The budgets at the step shown: actions in the state and in all, against their limits; rollbacks so far."""

    in_state: int
    limit: int
    total: int
    total_limit: int
    rollbacks: int


@dataclass(frozen=True)
class RollbackView:
    """Why the step shown was rolled back, and the state it left."""

    reason: str
    why: str  # "it repeats step 7, still in the state, so it was not run"
    state_after: int  # the step the state stays as it was after (0: empty, as at the start)


@dataclass(frozen=True)
class ObservationView:
    """The step's observation as shown: its text (cut to :data:`OBSERVATION_LINES` unless full), or, for a
    stop with none, the query it answers with."""

    text: str = ""
    hidden_lines: int = 0  # lines cut (``v`` shows them)
    answer: Step | None = None  # a stop with no observation: the step whose query it answers with
    query: str = ""  # that query (the trajectory's final SPARQL at the last step)
    note: str = ""  # " (SPINACH drops its final LIMIT 10)" when the final SPARQL differs
    logged: Mapping[str, Any] | None = None  # a SPINACH log's record of the step's query: its rows, as logged


@dataclass(frozen=True)
class AnswerView:
    """The answer under the last step: its rows, the score, and the step whose query it is."""

    scored: Scored
    answer_step: Step | None


@dataclass
class StepperModel:
    """The stepper's state (see the module docstring); ``pos`` is 0-based, -1 when there is no step."""

    steps: list[Step] = field(default_factory=list)
    pos: int = -1
    follow: bool = True  # a live run shows each new step as it comes
    full: bool = False  # the whole observation, not its first lines
    running: bool = False
    text: str = ""  # the question of the trajectory shown
    question: KGQuestion | None = None
    policy: str = ""
    budget: tuple[int, int] = field(default_factory=budgets)
    scored: Scored | None = None
    thinking: int | None = None  # the step the policy is being asked for

    # --- what happens to it ---------------------------------------------------------------------

    def begin(self, text: str, question: KGQuestion | None, *, policy: str) -> None:
        """A new trajectory: a run that starts, or a file about to be shown."""
        self.steps = []
        self.pos = -1
        self.follow = True
        self.full = False
        self.scored = None
        self.text = text
        self.question = question
        self.policy = policy
        self.budget = budgets()
        self.thinking = None

    def started(self, policy: str, budget: int, total_budget: int) -> None:
        """AgentStarted: the policy and budgets the run has."""
        self.policy = policy
        self.budget = (budget, total_budget)

    def took(self, step: Step) -> None:
        """StepTaken: the step is added; the view follows it unless the user stepped back."""
        self.steps.append(step)
        self.thinking = None
        if self.follow:
            self.pos = len(self.steps) - 1

    def asking_policy(self) -> None:
        """The policy is asked for the next step."""
        self.thinking = len(self.steps) + 1

    def finish(self, scored: Scored) -> None:
        """The whole trajectory, scored: a finished run stays where it was (the last step while following),
        a loaded one starts at its first step."""
        trajectory = scored.trajectory
        self.scored = scored
        self.text = trajectory.question
        self.steps = list(trajectory.steps)
        self.budget = budgets(trajectory) if trajectory.meta else self.budget
        self.policy = trajectory.policy or self.policy
        self.question = scored.question
        self.thinking = None
        if self.follow or self.pos < 0:
            self.pos = len(self.steps) - 1 if scored.source == "run" else (0 if self.steps else -1)

    def load(self, scored: Scored) -> None:
        """A loaded trajectory (a file, or another of the file's): shown from its first step."""
        self.begin(scored.trajectory.question, scored.question, policy=scored.trajectory.policy)
        self.finish(scored)

    # --- the keys -------------------------------------------------------------------------------

    def goto(self, position: int) -> bool:
        """Show step ``position`` (0-based); False (and nothing moves) when there is no such step."""
        if not 0 <= position < len(self.steps):
            return False
        self.pos = position
        self.follow = position == len(self.steps) - 1
        return True

    def step(self, delta: int) -> bool:
        """Move ``delta`` steps (→ is +1, ← is -1), stopping at the first and the last."""
        if not self.steps:
            return False
        return self.goto(max(0, min(len(self.steps) - 1, self.pos + delta)))

    def to_edge(self, last: bool) -> bool:
        """The first step (Home) or the last one (End)."""
        return self.goto(len(self.steps) - 1 if last else 0) if self.steps else False

    def toggle_full(self) -> None:
        self.full = not self.full

    # --- what is shown --------------------------------------------------------------------------

    @property
    def current_step(self) -> Step | None:
        return self.steps[self.pos] if 0 <= self.pos < len(self.steps) else None

    @property
    def at_end(self) -> bool:
        """The answer is shown: a finished trajectory at its last step."""
        return self.scored is not None and not self.running and self.pos == len(self.steps) - 1

    def step_title(self) -> str:
        step = self.current_step
        if step is None:
            return "Step"
        return f"Step {step.index} of {len(self.steps)}{' so far' if self.running else ''}"

    def budget_view(self) -> BudgetView | None:
        step = self.current_step
        if step is None:
            return None
        limit, total_limit = self.budget
        rollbacks = sum(1 for s in self.steps[: self.pos + 1] if s.rolled_back)
        return BudgetView(step.in_state, limit, step.total, total_limit, rollbacks)

    def rollback_view(self) -> RollbackView | None:
        """Why the step shown was rolled back (None: it was not)."""
        step = self.current_step
        if step is None or not step.rolled_back:
            return None
        reason = step.rollback_reason or "rolled back"
        before = [s for s in self.steps[: self.pos] if not s.rolled_back]
        if reason == "repeat":
            repeated = next(
                (s.index for s in reversed(before) if (s.action, s.argument) == (step.action, step.argument)), None
            )
            why = (
                f"it repeats step {repeated}, still in the state"
                if repeated
                else "it repeats a recent step in the state"
            ) + ", so it was not run"
        else:
            why = ROLLBACK_NOTES.get(reason, "")
        return RollbackView(reason, why, before[-1].index if before else 0)

    def observation_view(self) -> ObservationView | None:
        view = self._observation_view()
        step = self.current_step
        if view is None or step is None or step.logged is None:
            return view
        return replace(view, logged=step.logged)

    def _observation_view(self) -> ObservationView | None:
        step = self.current_step
        if step is None:
            return None
        text = step.observation
        if not text:
            final = (
                answered_by(step, self.steps[: self.pos]) if step.action == "stop" and not step.rolled_back else None
            )
            if final is None:
                return ObservationView()
            query, note = final.argument, ""
            scored = self.scored
            if scored is not None and scored.trajectory.final_sparql and self.pos == len(self.steps) - 1:
                query = scored.trajectory.final_sparql
                if query.strip() != final.argument.strip():
                    note = " (SPINACH drops its final LIMIT 10)"
            return ObservationView(answer=final, query=query, note=note)
        lines = text.split("\n")
        if self.full or len(lines) <= OBSERVATION_LINES:
            return ObservationView(text)
        return ObservationView("\n".join(lines[:OBSERVATION_LINES]), len(lines) - OBSERVATION_LINES)

    def answer_view(self) -> AnswerView | None:
        """The answer and its score, at the last step of a finished trajectory (None elsewhere)."""
        if not self.at_end or self.scored is None:
            return None
        return AnswerView(self.scored, answer_step(self.scored.trajectory))


__all__ = ["OBSERVATION_LINES", "AnswerView", "BudgetView", "ObservationView", "RollbackView", "StepperModel"]
