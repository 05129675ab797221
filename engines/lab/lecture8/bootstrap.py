"""Lecture 8 §5.4: bootstrap intervals — is the dataset big enough?"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.lecture8.common import (
    FULL,
    SEED_NOTE,
    Setting,
    main_eval,
    mean_of,
    per_question_f1,
    runs_of,
)

# --- §5.4 bootstrap intervals ---------------------------------------------------------------------------------------------


def _needed(diffs: Sequence[float]) -> int | None:
    """Questions needed for the 95% interval of a mean paired difference to exclude 0 (normal approximation)."""
    m = mean_of(diffs)
    if not diffs or m == 0:
        return None
    sd = math.sqrt(sum((d - m) ** 2 for d in diffs) / max(1, len(diffs) - 1))
    return max(1, math.ceil((1.96 * sd / abs(m)) ** 2))


def _half_width_at(diffs: Sequence[float], n: int, seed: int) -> float:
    """Bootstrap half-width of the mean difference on a test set of ``n`` questions drawn from these."""
    from engines.eval.metrics import bootstrap

    rng = random.Random(seed)
    sample = [diffs[rng.randrange(len(diffs))] for _ in range(n)]
    # a bootstrap of 1,000 questions × 2,000 resamples is slow in pure Python; the half-width is stable with fewer
    return bootstrap(sample, resamples=2000 if n <= 200 else 500, seed=seed).half_width


def bootstrap_intervals(ctx: RunContext) -> Table:
    from engines.eval.metrics import bootstrap
    from engines.spinach.sim_policy import DEFAULT

    report = main_eval(ctx)
    forum = report.spinach["forum"]
    ids = [s.id for s in forum]
    spinach = [100 * s.f1 for s in forum]
    tog = [100 * s.f1 for s in report.baselines["tog"]["forum"]]
    runs = ctx["runs"]
    rep = ctx["p_repeat"]
    close = None
    if (
        ctx.settings.backend == "sim"
    ):  # two close systems: the default policy, and one that repeats itself more (rollback on)
        a = per_question_f1(runs_of(ctx, FULL))
        b = per_question_f1(
            runs_of(ctx, Setting(f"p_repeat {rep}, rollback on", "policy", params=(("p_repeat", rep),)))
        )
        close = ([100 * a[q] for q in ids], [100 * b[q] for q in ids])
    resamples = ctx["resamples"]
    rows = []

    def add(label: str, xs: Sequence[float], *, diff: bool = False) -> dict[str, Any]:
        iv = bootstrap(xs, resamples=resamples)
        separated = (iv.low > 0 or iv.high < 0) if diff else None
        needed = _needed(xs) if diff else None
        rows.append(
            [
                label,
                iv.n,
                round(iv.mean, 1),
                round(iv.low, 1),
                round(iv.high, 1),
                round(iv.half_width, 1),
                separated,
                needed,
            ]
        )
        return {"iv": iv, "separated": separated, "needed": needed}

    s = add("SPINACH F1 (run 0)", spinach)
    t = add("Think-on-Graph F1", tog)
    d1 = [x - y for x, y in zip(spinach, tog)]
    big = add("SPINACH − ToG (paired)", d1, diff=True)
    small = None
    if close is not None:
        add(f"SPINACH, default policy ({runs}-run mean per question)", close[0])
        add(f"SPINACH, p_repeat {rep} with rollback ({runs}-run mean per question)", close[1])
        d2 = [x - y for x, y in zip(*close)]
        small = add(f"default − p_repeat {rep} (paired)", d2, diff=True)
    em = [100 * x.em for x in forum]
    n = len(em)
    p = mean_of(em) / 100
    em_iv = bootstrap(em, resamples=resamples)
    formula = 100 * 1.96 * math.sqrt(p * (1 - p) / n) if n else 0.0
    rows.append(
        [
            f"SPINACH EM (0/1); 1.96·√(p(1−p)/n) = ±{formula:.1f}",
            n,
            round(em_iv.mean, 1),
            round(em_iv.low, 1),
            round(em_iv.high, 1),
            round(em_iv.half_width, 1),
            None,
            None,
        ]
    )

    ns = list(ctx["ns"])
    series = [
        Series("p = 0.5: 1.96·√(p(1−p)/n)", tuple(round(100 * 1.96 * math.sqrt(0.25 / x), 1) for x in ns)),
        Series("SPINACH − ToG", tuple(round(_half_width_at(d1, x, 1000 + x), 1) for x in ns)),
    ]
    if small is not None:
        series.append(Series(f"default − p_repeat {rep}", tuple(round(_half_width_at(d2, x, 2000 + x), 1) for x in ns)))
    ctx.note(
        f"F1 in points on the {n} forum-style questions; percentile bootstrap, {resamples} resamples of the questions. Paired "
        "differences resample questions (both systems answer the same ones). 'Questions to separate': the n at which "
        "1.96·sd/√n of the paired differences falls below their mean. The chart's half-widths at other n are bootstraps of "
        "test sets of n questions drawn from ours. The close pair is the default policy against one that repeats its previous "
        f"action with probability {rep} instead of {DEFAULT.p_repeat} (rollback catches most repeats). " + SEED_NOTE
    )
    ctx.claim(
        f"one system's own score is uncertain by about ten points on {n} questions",
        4 <= s["iv"].half_width <= 16,
        f"half-widths ±{s['iv'].half_width:.1f} and ±{t['iv'].half_width:.1f}: SPINACH {s['iv'].mean:.1f} [{s['iv'].low:.1f}, {s['iv'].high:.1f}], ToG {t['iv'].mean:.1f} [{t['iv'].low:.1f}, {t['iv'].high:.1f}]",
        f"a half-width shrinks as 1/√n: the notes' ten points are for 56 questions, and SPINACH's ±"
        f"{s['iv'].half_width:.1f} on {n} would be about ±{s['iv'].half_width * math.sqrt(n / 56):.1f} on 56",
    )
    ctx.claim(
        "a gap far larger than the uncertainty is settled by a few dozen questions or fewer",
        bool(big["separated"]) and (big["needed"] or 10**9) <= n,
        f"SPINACH − ToG {big['iv'].mean:.1f} [{big['iv'].low:.1f}, {big['iv'].high:.1f}]; about {big['needed']} questions separate them "
        "(notes: a 38-point gap, 165 questions are plenty)",
    )
    if small is not None:
        ctx.claim(
            f"a gap of a point or two is not separated by {n} questions; it needs several times more",
            not small["separated"] and (small["needed"] or 10**9) >= 3 * n,
            f"default − p_repeat {rep}: {small['iv'].mean:.1f} [{small['iv'].low:.1f}, {small['iv'].high:.1f}]; about "
            f"{small['needed']} questions would separate them — both settings run on the same seeds, which pairs away much of "
            "the noise (notes: a few hundred questions cannot tell such systems apart)",
            "the two settings run on the same seeds and differ only where a repeat is drawn, so most questions score "
            "the same under both and the paired differences are few and consistent: pairing separates such a gap with "
            "fewer questions than two independent systems would need",
        )
    half = {x: 100 * 1.96 * math.sqrt(0.25 / x) for x in (56, 165, 1000)}
    ctx.claim(
        "the normal approximation matches the bootstrap for 0/1 scores",
        abs(formula - em_iv.half_width) <= 3,
        f"EM half-width: bootstrap ±{em_iv.half_width:.1f}, formula ±{formula:.1f}; at p = 0.5 the formula gives "
        + ", ".join(f"n = {x}: ±{v:.1f}" for x, v in half.items())
        + " (notes: ±13, ±7.6, ±3.1)",
    )
    chart = Chart(
        "line",
        "Half-width of the 95% interval against the number of questions",
        "questions",
        "half-width (F1 points)",
        tuple(str(x) for x in ns),
        tuple(series),
    )
    return ctx.table(
        (
            "score",
            "questions",
            "mean",
            "95% low",
            "95% high",
            "half-width",
            "separated from 0",
            "questions to separate",
        ),
        rows,
        chart,
    )
