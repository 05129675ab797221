"""Evaluating the pipeline on a question set (lecture 7 §6.5): EM, F1, the judgement, error classes.

:func:`evaluate` runs every question of a session's world (or a subset) once with one setting of
the improvements and scores it; :func:`ablation` runs the four settings of §6.5's demo 2 (neither,
each alone, both) on the same questions.  Every number comes from running the pipeline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engines.errors import Cancelled
from engines.events import Emit, ignore
from engines.hybridqa.pipeline import HybridAnswer, Improvements
from engines.hybridqa.scoring import EVALUATION_CLASSES, Score, error_counts, score, totals
from worlds.hybridqa import TYPES, HybridQuestion

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Graded:
    question: HybridQuestion
    answer: HybridAnswer
    score: Score

    # Hand-written: one flat record of the question's fields, the answer's JSON and the score's (not its own fields).
    def to_json(self) -> dict[str, Any]:
        q = self.question
        return {
            "question_id": q.question_id,
            "table": q.table,
            "type": q.qtype,
            "question": q.question,
            "gold": q.gold,
            **self.answer.to_json(),
            **self.score.to_json(),
        }


@dataclass(frozen=True)
class Report:
    improvements: Improvements
    graded: tuple[Graded, ...]

    @property
    def scores(self) -> list[Score]:
        return [g.score for g in self.graded]

    @property
    def answer_calls(self) -> int:
        return sum(g.answer.answer_calls for g in self.graded)

    @property
    def fallback_calls(self) -> int:
        return sum(g.answer.fallback_calls for g in self.graded)

    @property
    def retried(self) -> int:
        return sum(1 for g in self.graded if g.answer.retries)

    def by_type(self) -> dict[str, dict[str, Any]]:
        out = {}
        for t in TYPES:
            chosen = [g.score for g in self.graded if g.question.qtype == t]
            if chosen:
                out[t] = totals(chosen).to_json()
        return out

    def errors(self) -> dict[str, int]:
        return error_counts(self.scores)

    def evaluation_share(self) -> float | None:
        """Of the answers that are not an exact match, the share whose fault is the evaluation's."""
        counts = self.errors()
        missed = sum(counts.values())
        if not missed:
            return None
        return sum(counts[c] for c in EVALUATION_CLASSES) / missed

    # Hand-written: the totals, breakdowns and call counts computed from the graded answers, not its fields.
    def to_json(self, *, questions: bool = False) -> dict[str, Any]:
        t = totals(self.scores)
        out: dict[str, Any] = {
            "questions": t.questions,
            "em": round(t.em, 4),
            "f1": round(t.f1, 4),
            "judged": None if t.judged is None else round(t.judged, 4),
            "by_type": self.by_type(),
            "errors": self.errors() if t.judged is not None else {},
            "answer_calls": self.answer_calls,
            "fallback_calls": self.fallback_calls,
            "retried": self.retried,
            "improvements": {"fallback": self.improvements.fallback, "retry": self.improvements.retry},
        }
        share = self.evaluation_share()
        if share is not None and t.judged is not None:
            out["evaluation_share_of_misses"] = round(share, 4)
        if questions:
            out["results"] = [g.to_json() for g in self.graded]
        return out


def evaluate(
    session: Any,
    questions: Sequence[HybridQuestion] | None = None,
    *,
    improvements: Improvements = Improvements(),
    emit: Emit = ignore,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Report:
    """Ask every question (default: all of the session's world) and score each answer."""
    world = session.world
    chosen = list(questions if questions is not None else world.questions)
    truth = session.truth
    graded = []
    for i, q in enumerate(chosen):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        answer = session.pipeline.ask(q.table, q.question, improvements=improvements, emit=emit, cancel=cancel)
        t = truth.of(q.question_id) if truth is not None else None
        graded.append(Graded(q, answer, score(answer, q.gold, t, session.sandbox)))
        if progress is not None:
            progress(i + 1, len(chosen))
    return Report(improvements, tuple(graded))


ABLATION: tuple[Improvements, ...] = (
    Improvements(fallback=False, retry=False),
    Improvements(fallback=True, retry=False),
    Improvements(fallback=False, retry=True),
    Improvements(fallback=True, retry=True),
)


def ablation(
    session: Any, questions: Sequence[HybridQuestion] | None = None, *, progress: Progress | None = None
) -> dict[str, Report]:
    """The four settings of the two improvements on the same questions."""
    return {imp.label: evaluate(session, questions, improvements=imp, progress=progress) for imp in ABLATION}
