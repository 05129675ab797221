"""A trajectory scored — one the agent just ran, or one loaded from a file — and the agent's rules read back from it.

    scored = score_run(session, trajectory, question)            # the agent's own run
    scored = score_loaded(session, trajectory, source="x.json")  # ours or a SPINACH log
    scored.em, scored.f1, scored.gold_rows                       # row-wise, against the gold answer
    answer_step(trajectory)        # the step whose query is the answer (the agent's rule, replayed)
    answered_by(stop, before)      # the step a stop answers with
    budgets(trajectory)            # (actions in the state, in all): the run's, else the agent's defaults

A loaded trajectory is matched to the question sets by its text (whitespace and case folded); a
SPINACH log's final query is run on this graph only when the log does not hold its rows.
The answer rule is the agent's (:meth:`SpinachAgent.answer_query`, ``SpinachAgent._answer_step``),
not a copy of it: a ``stop(SPARQL)`` answers with the query it names, a bare ``stop()`` with the
last query that ran; with no stop at all, the last query in the state that returned rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engines.kg.dialect import SparqlRefused
from engines.spinach.agent import BUDGET, TOTAL_BUDGET, SpinachAgent
from engines.spinach.trajectory import Step, Trajectory

if TYPE_CHECKING:
    from engines.spinach.session import SpinachSession
    from worlds.kg import KGQuestion, QuestionSets


@dataclass(frozen=True)
class Scored:
    """A trajectory's answer against the gold answer of its question (when it is one of the sets)."""

    trajectory: Trajectory
    question: KGQuestion | None
    em: float | None = None
    f1: float | None = None
    gold_rows: int | None = None
    source: str = ""  # where the trajectory came from: "run" or a file name
    others: int = 0  # further trajectories in the loaded file


def question_key(text: str) -> str:
    """A question's text as the sets are matched on: whitespace folded, case folded."""
    return " ".join(text.split()).casefold()


def find_question(questions: QuestionSets, text: str) -> KGQuestion | None:
    """The question of the sets with this text (see :func:`question_key`), or None."""
    key = question_key(text)
    return next((q for q in questions.all() if question_key(q.question) == key), None)


def with_answer_rows(session: SpinachSession, trajectory: Trajectory) -> Trajectory:
    """The trajectory with the rows of its final query, when it has the query but not the rows (SPINACH's logs).

    A refused final query, or one with no rows, leaves the trajectory as it is (its answer is empty); so does
    a log that holds the final query's result (``answer_logged``): those rows are SPINACH's, from Wikidata.
    """
    if trajectory.answer or trajectory.answer_logged or not trajectory.final_sparql:
        return trajectory
    try:
        result = session.endpoint.execute(trajectory.final_sparql)
    except SparqlRefused:
        return trajectory
    if not result.has_rows:
        return trajectory
    return replace(trajectory, answer=result.bindings, columns=result.columns)


def score_run(
    session: SpinachSession,
    trajectory: Trajectory,
    question: KGQuestion | None,
    *,
    source: str = "run",
    others: int = 0,
) -> Scored:
    """Score ``trajectory`` (its answer rows as they are) against ``question``'s gold answer; unscored without one."""
    if question is None:
        return Scored(trajectory, None, source=source, others=others)
    score = session.score(trajectory, question.id)
    return Scored(trajectory, question, score["em"], score["f1"], len(session.gold(question.id)), source, others)


def score_loaded(session: SpinachSession, trajectory: Trajectory, *, source: str, others: int = 0) -> Scored:
    """Score a loaded trajectory: its question found by its text, its final query run when the file has no rows."""
    question = find_question(session.questions, trajectory.question)
    return score_run(session, with_answer_rows(session, trajectory), question, source=source, others=others)


def budgets(trajectory: Trajectory | None = None) -> tuple[int, int]:
    """(actions in the state, actions in all) the run had: from its meta, else the agent's defaults."""
    meta = (trajectory.meta if trajectory is not None else None) or {}
    return int(meta.get("budget", BUDGET)), int(meta.get("total_budget", TOTAL_BUDGET))


def answered_by(stop: Step, before: Sequence[Step]) -> Step | None:
    """The step whose query ``stop`` answers with, among the steps taken ``before`` it (rolled-back ones skipped).

    The agent's rule: the query the stop names, else the last query that ran; None when no step in
    the state executed it.
    """
    state = [s for s in before if not s.rolled_back]
    return SpinachAgent._answer_step(SpinachAgent.answer_query(stop.argument, state), state)


def answer_step(trajectory: Trajectory) -> Step | None:
    """The step whose query is the trajectory's answer, as the agent chose it (``SpinachAgent._final``).

    The query the standing stop (or, after the budget, the last stop) named, when it returned rows;
    with no stop at all, the last query in the state that returned rows.  None: the answer is empty.
    """
    if trajectory.finish == "declined":  # the policy stopped with no answer
        return None
    state: list[Step] = []
    meant: str | None = None
    for step in trajectory.steps:
        if step.action == "stop":
            meant = SpinachAgent.answer_query(step.argument, state)
        if not step.rolled_back:
            state.append(step)
    if trajectory.finish == "stop" or meant is not None:
        found = SpinachAgent._answer_step(meant, state)
        return found if found is not None and found.feedback == "rows" else None
    return next((s for s in reversed(state) if s.action == "execute_sparql" and s.feedback == "rows"), None)


__all__ = [
    "Scored",
    "answer_step",
    "answered_by",
    "budgets",
    "find_question",
    "question_key",
    "score_loaded",
    "score_run",
    "with_answer_rows",
]
