"""Lecture 8: what every experiment shares — the world and a caching endpoint, the question sets of a size, the one
evaluation of SPINACH and the baselines, and the agent's runs on the forum set under each setting (memoised per process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engines.errors import ConfigurationError
from engines.kg.endpoint import Endpoint
from engines.lab.core import RunContext

if TYPE_CHECKING:  # the agent, its evaluation and the world are imported by the experiments that run them
    from engines.spinach.agent import AgentOptions
    from engines.spinach.evaluate import Report, Scored
    from engines.spinach.sim_policy import PolicyParams
    from engines.spinach.trajectory import Trajectory
    from worlds.kg import HiddenTruth, KGWorld, QuestionSets

Row = tuple[Any, ...]
"""A result row of plain values (QIDs for entities)."""

SEED_NOTE = "The simulated policy's seed comes from the settings (CS224V_SEED); run k of a setting uses seed + k."
STORE = "memory"  # Oxigraph orders (and LIMITs) unordered rows otherwise: the policy would see other rows, every result would move


def pct(x: float) -> float:
    return round(100 * x, 1)


def mean_of(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


# --- the world, a caching endpoint, the question sets ----------------------------------------------------


@dataclass(frozen=True)
class KG:
    world: KGWorld
    endpoint: Endpoint
    sets: QuestionSets  # all questions
    truth: HiddenTruth  # for the Lab's checks only, never handed to an endpoint or a policy


def kg_of(ctx: RunContext) -> KG:
    s = ctx.settings

    def build() -> KG:
        from worlds import kg

        world, truth = kg.build(kg.DEFAULT_SEED)
        # the graph is read-only and runs repeat the same queries: keep every result
        endpoint = Endpoint.from_world(
            world, store=STORE, timeout_s=s.query_timeout_s, row_cap=s.row_cap, cache_size=1 << 16
        )
        return KG(world, endpoint, kg.questions(world, truth), truth)

    return ctx.memo(("kg-world", STORE, s.query_timeout_s, s.row_cap), build)


def sets_of(ctx: RunContext) -> QuestionSets:
    """The question sets of this size: ``simple`` first simple questions, ``per_category`` of each forum category."""
    from worlds import kg

    sets = kg_of(ctx).sets
    simple, per = ctx["simple"], ctx["per_category"]
    chosen_simple = sets.simple if simple is None else sets.simple[:simple]
    forum = (
        sets.forum
        if per is None
        else tuple(q for c in kg.CATEGORIES for q in [x for x in sets.forum if x.category == c][:per])
    )
    return kg.QuestionSets(tuple(chosen_simple), tuple(forum))


def size_key(ctx: RunContext) -> tuple[int | None, int | None]:
    return (ctx["simple"], ctx["per_category"])


def gold_rows_of(ctx: RunContext) -> dict[str, list[Mapping[str, Any]]]:
    from engines.spinach.evaluate import gold_rows

    sets = sets_of(ctx)
    return ctx.memo(("kg-gold", size_key(ctx)), lambda: gold_rows(kg_of(ctx).endpoint, sets.all()))


def rows_of(bindings: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> list[Row]:
    """Rows as tuples of plain values (QIDs for entities), label columns left out."""
    from engines.eval.metrics import is_label_column
    from engines.kg.prefixes import entity_id

    out: list[Row] = []
    for b in bindings:
        cols = columns if columns is not None else [c for c in b if not is_label_column(c)]
        out.append(
            tuple(
                (entity_id(b[c]["value"]) if b[c].get("type") == "uri" else b[c]["value"]) if c in b else None
                for c in cols
            )
        )
    return out


# --- the evaluation: SPINACH and the baselines, and the agent under each setting ------------------------------


def main_eval(ctx: RunContext, step: tuple[int, int] = (0, 1)) -> Report:
    """SPINACH (default setting, run 0) and the four baselines on both sets: one ``engines.spinach.evaluate.evaluate``."""

    def compute() -> Report:
        from engines.spinach.evaluate import evaluate

        k = kg_of(ctx)
        sets = sets_of(ctx)
        i, n = step

        def progress(qid: str, done: int, total: int) -> None:
            ctx.progress(i * total + done, n * total, f"SPINACH and the baselines: {qid} ({done}/{total})")

        report = evaluate(
            k.endpoint, sets, ctx.llm(), world=k.world, seed=ctx.settings.seed, progress=progress, cancel=ctx.cancel
        )
        ctx.check_cancel()  # a cancelled evaluation returns early: never keep it
        return report

    return ctx.memo(("kg-eval", size_key(ctx)), compute)


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str  # "agent" (an option of the agent) | "policy" (a parameter of the simulated policy)
    budget: int = 15
    total_budget: int = 30
    rollback: bool = True
    disabled: tuple[str, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()  # PolicyParams fields
    memory: tuple[tuple[str, float], ...] = ()  # P_MEMORY overrides

    def options(self) -> AgentOptions:
        from engines.spinach.agent import AgentOptions

        return AgentOptions(
            budget=self.budget, total_budget=self.total_budget, rollback=self.rollback, disabled=self.disabled
        )

    def policy(self) -> PolicyParams | None:
        """The simulated policy's parameters, or None for its defaults."""
        from dataclasses import replace

        from engines.spinach.sim_policy import DEFAULT

        if not self.params and not self.memory:
            return None
        p = replace(DEFAULT, **dict(self.params))
        return p.with_memory(**dict(self.memory)) if self.memory else p

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.budget, self.total_budget, self.rollback, self.disabled, self.params, self.memory)


FULL = Setting("SPINACH (all five actions, rollback, budget 15/30)", "agent")


@dataclass(frozen=True)
class ForumRun:
    """One run of the agent on the forum set under one setting."""

    scores: tuple[Scored, ...]  # in question order
    trajectories: Mapping[str, Trajectory]  # question id -> its trajectory


def forum_run(ctx: RunContext, setting: Setting, run: int, step: tuple[int, int] = (0, 1)) -> ForumRun:
    if setting.key == FULL.key and run == 0:  # the same run as the main evaluation's (same seed, same questions)
        report = main_eval(ctx, step)
        forum = report.spinach["forum"]
        return ForumRun(tuple(forum), {s.id: report.trajectories[s.id] for s in forum})

    def compute() -> ForumRun:
        from engines.spinach.evaluate import evaluate
        from worlds import kg

        policy = setting.policy()
        if policy is not None and ctx.settings.backend != "sim":
            raise ConfigurationError(
                f"{setting.name!r} sets a parameter of the simulated policy; run it with the sim backend."
            )
        sets = sets_of(ctx)
        kept = _unchanged_from_full(ctx, setting, run, step)
        asked = tuple(q for q in sets.forum if q.id not in kept)
        llm = ctx.llm(seed=ctx.settings.seed + run, **({"policy_params": policy} if policy is not None else {}))
        i, n = step

        def progress(qid: str, done: int, total: int) -> None:
            ctx.progress(i * total + done, n * total, f"{setting.name}, run {run + 1}: {qid}")

        report = evaluate(
            kg_of(ctx).endpoint,
            kg.QuestionSets((), asked),
            llm,
            options=setting.options(),
            baselines=(),
            sets=("forum",),
            seed=ctx.settings.seed + run,
            progress=progress,
            cancel=ctx.cancel,
        )
        ctx.check_cancel()
        ran = {s.id: s for s in report.spinach["forum"]}
        scores = tuple(kept[q.id][0] if q.id in kept else ran[q.id] for q in sets.forum)
        trajectories = {q.id: kept[q.id][1] if q.id in kept else report.trajectories[q.id] for q in sets.forum}
        return ForumRun(scores, trajectories)

    return ctx.memo(("kg-forum-run", size_key(ctx), setting.key, run), compute)


def _unchanged_from_full(
    ctx: RunContext, setting: Setting, run: int, step: tuple[int, int]
) -> dict[str, tuple[Scored, Trajectory]]:
    """The questions on which ``setting`` provably takes the default agent's run ``run`` step for step, with that run's
    score and trajectory (its options as this setting's): the agent is deterministic given the policy's seed and the
    observations, so an option the default run never came near changes nothing.

    Only for a setting of the agent's options (the policy the same: same seed, same parameters), and a question whose
    default run ended on a standing stop: an action switched off that the run never took, a budget its state and its
    total stayed within up to the stop, or rollback off on a run with no rollback.  Every other question is run."""
    if setting.kind != "agent" or setting.params or setting.memory or setting.key == FULL.key:
        return {}
    from dataclasses import replace

    base = forum_run(ctx, FULL, run, step)
    kept: dict[str, tuple[Scored, Trajectory]] = {}
    for score in base.scores:
        t = base.trajectories[score.id]
        state = t.state
        if (
            t.finish == "stop"
            and not any(s.action in setting.disabled for s in state)
            and len(state) - 1 < setting.budget
            and len(t.steps) - 1 < setting.total_budget
            and (setting.rollback or t.rollbacks == 0)
        ):
            meta = {
                **t.meta,
                "budget": setting.budget,
                "total_budget": setting.total_budget,
                "rollback": setting.rollback,
            }
            kept[score.id] = (score, replace(t, meta=meta))
    return kept


def runs_of(ctx: RunContext, setting: Setting, step: tuple[int, int] = (0, 1)) -> list[ForumRun]:
    i, n = step
    runs = ctx["runs"]
    return [forum_run(ctx, setting, r, (i * runs + r, n * runs)) for r in range(runs)]


@dataclass(frozen=True)
class Summary:
    f1: float
    em: float
    actions: float
    exhausted: float  # share of question-runs that ended on the budget
    rollbacks: float
    by_category: Mapping[str, float]  # category -> F1

    @classmethod
    def of(cls, runs: Sequence[ForumRun]) -> Summary:
        scores = [s for r in runs for s in r.scores]
        cats: dict[str, list[float]] = {}
        for s in scores:
            cats.setdefault(s.category, []).append(s.f1)
        return cls(
            pct(mean_of([s.f1 for s in scores])),
            pct(mean_of([s.em for s in scores])),
            round(mean_of([s.actions for s in scores]), 2),
            pct(mean_of([float(s.finish == "budget") for s in scores])),
            round(mean_of([s.rollbacks for s in scores]), 2),
            {c: pct(mean_of(v)) for c, v in sorted(cats.items())},
        )


def per_question_f1(runs: Sequence[ForumRun]) -> dict[str, float]:
    """Each question's F1, averaged over the runs."""
    out: dict[str, list[float]] = {}
    for r in runs:
        for s in r.scores:
            out.setdefault(s.id, []).append(s.f1)
    return {q: mean_of(v) for q, v in out.items()}
