"""Lecture 8 §5.3 and exercise 4: row-wise F1 against set F1."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from engines.lab.core import RunContext, Table
from engines.lab.lecture8.baselines import SYSTEMS, system_scores
from engines.lab.lecture8.common import (
    gold_rows_of,
    kg_of,
    main_eval,
    mean_of,
    pct,
    rows_of,
    sets_of,
)

if TYPE_CHECKING:
    from engines.spinach.evaluate import Scored

Pair = tuple[str, "Scored"]
"""A system's label and its score on one question."""

# --- §5.3 row-wise F1 against set F1 ----------------------------------------------------------------------------------


def _uri(qid: str) -> dict[str, str]:
    from worlds.kg import WD

    return {"type": "uri", "value": WD + qid}


def _lit(value: str) -> dict[str, str]:
    return {"type": "literal", "value": value}


def row_vs_set(ctx: RunContext) -> Table:
    from engines.eval.metrics import row_f1, set_f1

    rows: list[list[Any]] = []
    path = ctx.settings.shared_data("spinach", "row_f1_cases.json")
    reproduced = total = 0
    if path is not None and path.is_file():
        cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
        for c in cases:
            r, s = row_f1(c["predicted"], c["gold"]), set_f1(c["predicted"], c["gold"])
            ok = abs(r - c["expected_f1"]) < 1e-9
            reproduced += ok
            total += 1
            rows.append(
                [
                    c["name"],
                    "SPINACH's tests (shared data)",
                    len(c["predicted"]),
                    len(c["gold"]),
                    round(c["expected_f1"], 3),
                    round(r, 3),
                    round(s, 3),
                    ok,
                ]
            )
        ctx.claim(
            "our row_f1 reproduces every expected value of SPINACH's own tests",
            reproduced == total,
            f"{reproduced} of {total} cases",
        )
    else:
        from worlds.data import missing_message

        ctx.note(f"SPINACH's test cases are skipped. {missing_message('spinach/row_f1_cases.json')}")

    # exercise 4, by hand in the notes; here computed
    A, B, C, D = (_uri(q) for q in ("QA", "QB", "QC", "QD"))
    gold4 = [{"e": A, "v": _lit("x")}, {"e": B, "v": _lit("y")}, {"e": C, "v": _lit("z")}]
    pred4 = [{"e": A, "v": _lit("x")}, {"e": B, "v": _lit("z")}, {"e": D, "v": _lit("w")}]
    r4, s4 = row_f1(pred4, gold4), set_f1(pred4, gold4)
    rows.append(
        [
            "exercise 4: [(A,x),(B,z),(D,w)] against [(A,x),(B,y),(C,z)]",
            "the notes' exercise",
            3,
            3,
            None,
            round(r4, 3),
            round(s4, 3),
            None,
        ]
    )
    ctx.claim(
        "exercise 4: row-wise F1 = 3 / 5.5",
        abs(r4 - 3 / 5.5) < 1e-9,
        f"row F1 {r4:.4f}, set F1 {s4:.4f} (notes: 0.545)",
    )

    # the two faults of set F1, on a real answer of our world: extra information, and values in the wrong rows
    k = kg_of(ctx)
    gold_of = gold_rows_of(ctx)
    two_col = next(
        (
            q
            for q in sets_of(ctx).forum
            if len(gold_of[q.id]) >= 3
            and len(rows_of(gold_of[q.id])[0]) == 2
            and all(v is not None for v in rows_of(gold_of[q.id])[0])
        ),
        None,
    )
    if two_col is not None:
        g = gold_of[two_col.id]
        cols = [c for c in g[0] if not c.endswith("Label")]
        first, second = cols[0], cols[1]
        extra = [{**b, "name": _lit(k.endpoint.label(b[first]["value"]) or "?")} for b in g]
        rotated = [{first: g[i][first], second: g[(i + 1) % len(g)][second]} for i in range(len(g))]
        re_, se_ = row_f1(extra, g), set_f1(extra, g)
        rr, sr = row_f1(rotated, g), set_f1(rotated, g)
        rows.append(
            [
                f"{two_col.id}: the gold answer plus a column of names",
                "our world (gold rows)",
                len(extra),
                len(g),
                None,
                round(re_, 3),
                round(se_, 3),
                None,
            ]
        )
        rows.append(
            [
                f"{two_col.id}: the second column shifted by one row",
                "our world (gold rows)",
                len(rotated),
                len(g),
                None,
                round(rr, 3),
                round(sr, 3),
                None,
            ]
        )
        ctx.claim(
            "set F1 punishes extra information; row-wise F1 does not",
            re_ == 1.0 and se_ < 1.0,
            f"{two_col.id} with names added: row F1 {re_:.3f}, set F1 {se_:.3f}",
        )
        ctx.claim(
            "set F1 loses which values share a row: mismatched rows still score full marks",
            sr == 1.0 and rr < 1.0,
            f"{two_col.id} with the second column shifted: row F1 {rr:.3f}, set F1 {sr:.3f}",
        )

    # our evaluation: where the two metrics disagree
    report = main_eval(ctx)
    sets = sets_of(ctx)
    question = {q.id: q for q in sets.all()}
    pairs: list[Pair] = []
    for key, label, _given in SYSTEMS:
        for set_name in ("simple", "forum"):
            for sc in system_scores(report, key, set_name):
                pairs.append((label, sc))
    lower = [(l, sc) for l, sc in pairs if sc.set_f1 < sc.f1 - 0.05]
    higher = [(l, sc) for l, sc in pairs if sc.set_f1 > sc.f1 + 0.05]

    def why(label: str, sc: Scored) -> str:
        from engines.eval.metrics import is_label_column

        gold_cols = len(rows_of(gold_of[sc.id])[0]) if gold_of[sc.id] else 0
        t = report.trajectories.get(sc.id) if label == SYSTEMS[0][1] else None
        if sc.set_f1 < sc.f1:
            if t is not None and any(is_label_column(c) for c in t.columns):
                return "labels returned beside the entities: set F1 counts them as wrong values"
            return "more values than the gold's: set F1 counts every extra value"
        if (
            t is not None
            and len([c for c in t.columns if not is_label_column(c)]) < gold_cols
            or label != SYSTEMS[0][1]
            and gold_cols > 1
        ):
            return "a column missing: set F1 still credits the values found, wherever they are"
        return "values in the wrong rows: set F1 does not see rows"

    def pick(group: Sequence[Pair], order: Callable[[Pair], float]) -> list[Pair]:
        out: list[Pair] = []
        seen: set[str] = set()
        for label, sc in sorted(group, key=order):
            if label not in seen:
                seen.add(label)
                out.append((label, sc))
        return out[: ctx["examples"]]

    orders: tuple[tuple[list[Pair], Callable[[Pair], float]], ...] = (
        (lower, lambda t: t[1].set_f1 - t[1].f1),
        (higher, lambda t: t[1].f1 - t[1].set_f1),
    )
    for group, order in orders:
        for label, sc in pick(group, order):
            q = question[sc.id]
            rows.append(
                [
                    f"{sc.id} — {q.question}",
                    f"our evaluation, {label}: {why(label, sc)}",
                    None,
                    len(gold_of[sc.id]),
                    None,
                    round(sc.f1, 3),
                    round(sc.set_f1, 3),
                    None,
                ]
            )
    sp = [s for set_name in ("simple", "forum") for s in report.spinach[set_name]]
    ctx.claim(
        "on our answers set F1 is mostly lower than row-wise F1 (the agent returns labels and extra columns)",
        len(lower) > len(higher),
        f"{len(lower)} answers score lower by set F1, {len(higher)} higher, of {len(pairs)} (all systems, both sets); SPINACH: "
        f"row F1 {pct(mean_of([s.f1 for s in sp]))}, set F1 {pct(mean_of([s.set_f1 for s in sp]))}",
    )
    ctx.note(
        "Set F1 pours every value of each table into a set; row-wise F1 pairs gold and predicted rows one to one (Hungarian "
        "matching), ignores extra predicted columns and the gold's label columns. Rows of 'our evaluation' are the answers where "
        f"the two disagree most (by more than 0.05): up to {ctx['examples']} each way, one per system."
    )
    return ctx.table(
        ("case", "source", "predicted rows", "gold rows", "expected F1", "row F1", "set F1", "reproduced"), rows
    )
