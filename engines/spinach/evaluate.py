"""Evaluating knowledge-graph question answering (lecture 8 §2.5, §4.3, §5): SPINACH and the baselines.

:func:`evaluate` runs the SPINACH agent on the simple (40) and forum-style (56) questions of the
world, scores every answer against the rows of the gold query with row-wise EM/F1 (and set F1 for
contrast), and runs the four baselines of §2.5 on the same questions.  Gold rows are computed by
executing the gold SPARQL on the same endpoint — the only place gold is read.  The report carries
per-category scores, bootstrap intervals, the histogram of actions per question (paper table 5)
and the average number of rollbacks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.eval.metrics import Binding, bootstrap, em_of, row_f1, set_f1
from engines.events import Emit, ignore
from engines.kg.endpoint import Endpoint
from engines.llm.client import LLM
from engines.spinach.agent import AgentOptions, SpinachAgent
from engines.spinach.baselines import (
    BASELINES,
    TemplateParser,
    direct_answer,
    one_shot,
    template_answer,
    think_on_graph,
)
from engines.spinach.trajectory import Trajectory

ACTION_BINS = (("0-5", 0, 5), ("6-8", 6, 8), ("9-11", 9, 11), ("12-14", 12, 14), ("15", 15, 10**6))


@dataclass(frozen=True)
class Scored:
    id: str
    category: str
    f1: float
    em: float
    set_f1: float
    actions: int = 0
    rollbacks: int = 0
    finish: str = ""


@dataclass
class Report:
    spinach: dict[str, list[Scored]] = field(default_factory=dict)  # set -> scores
    baselines: dict[str, dict[str, list[Scored]]] = field(default_factory=dict)  # name -> set -> scores
    trajectories: dict[str, Trajectory] = field(default_factory=dict)
    template_synthetic: tuple[int, int] = (0, 0)

    def summary(self, scores: Sequence[Scored], *, with_ci: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "em": round(100 * _mean([s.em for s in scores]), 1),
            "f1": round(100 * _mean([s.f1 for s in scores]), 1),
            "set_f1": round(100 * _mean([s.set_f1 for s in scores]), 1),
            "n": len(scores),
        }
        if with_ci:
            ci = bootstrap([100 * s.f1 for s in scores])
            out["f1_ci95"] = [round(ci.low, 1), round(ci.high, 1)]
        return out

    # Hand-written: summaries (means, intervals, histograms) computed from the scores, not its fields.
    def to_json(self) -> dict[str, Any]:
        sets: dict[str, Any] = {}
        for name, scores in self.spinach.items():
            entry = self.summary(scores, with_ci=True)
            cats = sorted({s.category for s in scores if s.category != "simple"})
            if cats:
                entry["by_category"] = {c: self.summary([s for s in scores if s.category == c]) for c in cats}
            sets[name] = entry
        forum = self.spinach.get("forum", [])
        hist = {label: 0 for label, _lo, _hi in ACTION_BINS}
        for s in forum:
            for label, lo, hi in ACTION_BINS:
                if lo <= s.actions <= hi:
                    hist[label] += 1
        total = max(1, len(forum))
        everything = [s for v in self.spinach.values() for s in v]
        return {
            "sets": sets,
            "baselines": {
                name: {k: self.summary(v) for k, v in by_set.items()} for name, by_set in self.baselines.items()
            },
            "actions": {label: round(100 * n / total, 1) for label, n in hist.items()},
            "mean_actions": round(_mean([s.actions for s in everything]), 2),
            "mean_rollbacks": round(_mean([s.rollbacks for s in everything]), 2),
            "budget_exhausted": round(100 * _mean([float(s.finish == "budget") for s in everything]), 1),
            "template_parser_synthetic": {"right": self.template_synthetic[0], "total": self.template_synthetic[1]},
        }


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def gold_rows(endpoint: Endpoint, questions: Sequence[Any]) -> dict[str, list[Mapping[str, Any]]]:
    """The gold answer of every question: its gold query, executed (evaluator side)."""
    return {q.id: list(endpoint.execute(q.gold_sparql).bindings) for q in questions}


def evaluate(
    endpoint: Endpoint,
    question_sets: Any,  # worlds.kg.QuestionSets
    llm: LLM,
    *,
    options: AgentOptions | None = None,
    baselines: Sequence[str] = BASELINES,
    world: Any = None,
    seed: int = 224,
    sets: Sequence[str] = ("simple", "forum"),
    emit: Emit = ignore,
    cancel: threading.Event | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Report:
    """SPINACH (with ``llm``'s policy) and the baselines on the question sets."""
    report = Report()
    agent = SpinachAgent(endpoint, llm, options)
    chosen = {name: list(getattr(question_sets, name)) for name in sets}
    gold = gold_rows(endpoint, [q for qs in chosen.values() for q in qs])
    parser = TemplateParser()
    if world is not None and "template" in baselines:
        report.template_synthetic = parser.synthetic_accuracy(world)
    total = sum(len(v) for v in chosen.values())
    done = 0
    for name, qs in chosen.items():
        scored: list[Scored] = []
        for q in qs:
            if cancel is not None and cancel.is_set():
                return report
            trajectory = agent.run(q.question, emit=emit, cancel=cancel)
            report.trajectories[q.id] = trajectory
            pred, g = list(trajectory.answer), gold[q.id]
            f1 = row_f1(pred, g)
            scored.append(
                Scored(
                    q.id,
                    q.category,
                    f1,
                    em_of(f1),
                    set_f1(pred, g),
                    trajectory.actions_in_state,
                    trajectory.rollbacks,
                    trajectory.finish,
                )
            )
            done += 1
            if progress is not None:
                progress(q.id, done, total)
        report.spinach[name] = scored
        for b in baselines:
            rows_of: Callable[[Any], Sequence[Binding]]
            if b == "direct":
                rows_of = lambda q: direct_answer(q.question, seed=seed)  # noqa: E731
            elif b == "one_shot":
                rows_of = lambda q: one_shot(q.question, endpoint, seed=seed)[1]  # noqa: E731
            elif b == "template":
                rows_of = lambda q: template_answer(parser, q.question, q.entities, endpoint)  # noqa: E731
            elif b == "tog":
                rows_of = lambda q: think_on_graph(q.question, q.entities, endpoint)  # noqa: E731
            else:
                raise ValueError(f"unknown baseline {b!r}; choose from {', '.join(BASELINES)}")
            out: list[Scored] = []
            for q in qs:
                pred, g = rows_of(q), gold[q.id]
                f1 = row_f1(pred, g)
                out.append(Scored(q.id, q.category, f1, em_of(f1), set_f1(pred, g)))
            report.baselines.setdefault(b, {})[name] = out
    return report
