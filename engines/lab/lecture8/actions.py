"""Lecture 8 §4.3: actions per question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.lecture8.common import (
    FULL,
    SEED_NOTE,
    main_eval,
    mean_of,
    pct,
    runs_of,
)

if TYPE_CHECKING:
    from engines.spinach.evaluate import Scored
    from engines.spinach.trajectory import Trajectory

# --- §4.3 actions per question -------------------------------------------------------------------------------------


def _built_incrementally(trajectory: Trajectory) -> bool | None:
    """Whether a query with fewer triple patterns than the answer ran before it (None: no answer, or an answer of one
    pattern, which has no smaller piece)."""
    from engines.spinach.scoring import answer_step
    from engines.spinach.shape import query_shape

    answer = answer_step(trajectory)
    if answer is None:
        return None
    try:
        size = query_shape(answer.argument).counts.get("triples", 0)
    except Exception:
        return None
    if size < 2:
        return None
    for s in trajectory.state:
        if s is answer:
            break
        if s.action == "execute_sparql" and s.feedback == "rows":
            try:
                if 0 < query_shape(s.argument).counts.get("triples", 0) < size:
                    return True
            except Exception:
                continue
    return False


def _answer_size(trajectory: Trajectory) -> int:
    """The triple patterns of the answer's query (0: no answer, or one that cannot be read)."""
    from engines.spinach.scoring import answer_step
    from engines.spinach.shape import query_shape

    answer = answer_step(trajectory)
    if answer is None:
        return 0
    try:
        return query_shape(answer.argument).counts.get("triples", 0)
    except Exception:
        return 0


def actions(ctx: RunContext) -> Table:
    from engines.spinach.evaluate import ACTION_BINS
    from engines.spinach.sim_policy import DEFAULT

    runs = runs_of(ctx, FULL)
    one = runs[0].scores
    pooled = [s for r in runs for s in r.scores]
    simple = main_eval(ctx).spinach["simple"]

    def hist(scores: Sequence[Scored]) -> list[int]:
        return [sum(1 for s in scores if lo <= s.actions <= hi) for _label, lo, hi in ACTION_BINS]

    h1, hp, hs = hist(one), hist(pooled), hist(simple)
    lowest = min((s.actions for s in pooled), default=0)
    labels = [label if i or lowest >= 3 else f"≤{hi}" for i, (label, _lo, hi) in enumerate(ACTION_BINS)]
    # per bin: its label, then (questions, %) of one run, of the runs pooled and of the simple set
    rows: list[tuple[str, int, float, int, float, int, float]] = []
    for i, label in enumerate(labels):
        rows.append(
            (
                label,
                h1[i],
                pct(h1[i] / max(1, len(one))),
                hp[i],
                pct(hp[i] / max(1, len(pooled))),
                hs[i],
                pct(hs[i] / max(1, len(simple))),
            )
        )
    share1 = [r[2] for r in rows]
    rollbacks = mean_of([s.rollbacks for s in one])
    ctx.note(
        f"Actions left in the state after rollbacks, per forum question: one run ({len(one)} questions) and {len(runs)} runs pooled; "
        f"the simple set for contrast. Fewest actions: {lowest}. " + SEED_NOTE
    )
    sizes = [(_answer_size(r.trajectories[s.id]), s.actions) for r in runs for s in r.scores]
    many = [a for size, a in sizes if size >= 2]
    one_pattern = [a for size, a in sizes if size < 2]
    many_high, one_high = sum(a >= 6 for a in many), sum(a >= 6 for a in one_pattern)
    low_one = sum(a <= 5 for a in one_pattern)
    order = sorted(range(len(rows)), key=lambda i: (-rows[i][3], i))
    mode, runner_up = labels[order[0]], labels[order[1]]
    ctx.claim(
        "most forum questions take 6-8 actions (the notes' simulation)",
        mode == "6-8",
        f"the largest bin over {len(pooled)} question-runs is {mode} ({rows[order[0]][3]}, against {rows[order[1]][3]} "
        f"in {runner_up}): "
        + ", ".join(f"{l} {r[4]}%" for l, r in zip(labels, rows))
        + (f"; one run: {', '.join(f'{l} {r[2]}%' for l, r in zip(labels, rows))}" if len(runs) > 1 else "")
        + " (notes' simulation: 7.1 / 57.1 / 28.6 / 5.4 / 1.8%; paper: 28.6 / 33.8 / 11.0 / 7.1 / 19.5%)",
        f"{low_one} of the {hp[0]} question-runs of 0-5 actions answer with a query of one triple pattern or none (a fact, a "
        "count or a list from one named entity): with nothing to debug they take a search, the entity's page when "
        "the query reads its properties, the query and a stop; on so few question-runs a question or two decides "
        "which bin is the larger",
    )
    ctx.note(
        "Why 6-8: the policy confirms before it relies (§3.4). It reads the page of a named entity whose properties "
        "the query reads, and it builds the query a triple pattern at a time, running each fragment "
        f"(p_incremental {DEFAULT.p_incremental}; the whole pattern too before a COUNT, GROUP BY or FILTER, which "
        "could hide an empty match), so a query of three clauses takes its searches, two fragments, the query and "
        f"a stop — six actions or more — before any debugging: {many_high} of {len(many)} question-runs whose answer "
        f"has two triple patterns or more took 6 or more ({pct(many_high / max(1, len(many)))}%), against "
        f"{one_high} of {len(one_pattern)} of those with one ({pct(one_high / max(1, len(one_pattern)))}%)."
    )
    built = [_built_incrementally(r.trajectories[s.id]) for r in runs for s in r.scores]
    multi = [b for b in built if b is not None]
    ctx.claim(
        "the policy starts simple and adds one piece at a time, executing each fragment (§3.1)",
        bool(multi) and sum(multi) / len(multi) >= 0.5,
        f"{sum(multi)} of {len(multi)} question-runs whose answer has two clauses or more ran a smaller fragment of it "
        f"first ({pct(sum(multi) / max(1, len(multi)))}%)",
    )
    ctx.claim(
        "in the simulation few questions use up the budget, unlike the paper's one in five",
        share1[-1] <= 5,
        f"{share1[-1]}% reach 15 (paper: 19.5%; the notes' simulation: 1.8%)",
    )
    ctx.claim(
        "forum questions need more actions than simple ones",
        mean_of([s.actions for s in one]) > mean_of([s.actions for s in simple]),
        f"mean {mean_of([s.actions for s in one]):.1f} against {mean_of([s.actions for s in simple]):.1f}",
    )
    ctx.claim(
        "about one rollback per question",
        0.5 <= rollbacks <= 1.5,
        f"{rollbacks:.2f} rollbacks per forum question (notes: 1.0)",
        f"a rollback follows a repeated action (p_repeat {DEFAULT.p_repeat}, likelier right after a repeat) and a stop "
        "whose query returned no rows (p_stop_early, or a stop after its probes are used up); our policy stops on an "
        "empty result more often than the notes' one, each such stop is rolled back and tried again",
    )
    chart = Chart(
        "bar",
        "Actions per forum question",
        "actions",
        "questions (%)",
        tuple(labels),
        (
            Series("one run", tuple(share1)),
            Series(f"{len(runs)} run{'s' if len(runs) != 1 else ''}", tuple(r[4] for r in rows)),
        ),
    )
    k = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    return ctx.table(
        (
            "actions",
            "questions (one run)",
            "share (%)",
            f"question-runs ({k})",
            f"share, {k} (%)",
            "simple questions",
            "simple share (%)",
        ),
        rows,
        chart,
    )
