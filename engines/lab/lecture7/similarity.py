"""§3.5: similarity is not satisfaction (easy parking)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.judge import rounded, share
from engines.lab.lecture7.common import engine_of, truth_of


def similarity_satisfaction(ctx: RunContext) -> Table:
    from engines.retrieval.bm25 import ChunkIndex

    world, _ = ctx.restaurants()
    question, feature = ctx["question"], ctx["feature"]
    truth = truth_of(world).ids_with(feature)
    ctx.progress(0, 4, "BM25 over the reviews")
    scores = ChunkIndex.build((r._id, r.reviews) for r in world.rows).scores(question)
    ranked = sorted((rid for rid, s in scores.items() if s > 0), key=lambda rid: (-scores[rid], rid))
    rows: list[tuple[str, int, int, float | None, float | None, int]] = []

    def add(label: str, returned: set[int], calls: int) -> dict[str, Any]:
        tp = len(returned & truth)
        row = {"p": share(tp, len(returned)), "r": share(tp, len(truth)), "n": len(returned), "tp": tp, "calls": calls}
        rows.append((label, len(returned), tp, rounded(row["p"]), rounded(row["r"]), calls))
        return row

    for k in ctx["top_k"]:
        add(f"retrieval alone: BM25 top {k}", set(ranked[:k]), 0)
    alone = add("retrieval alone: every row whose reviews mention it (score > 0)", set(ranked), 0)
    sql = f"SELECT _id FROM restaurants WHERE answer(reviews, '{question}') = 'Yes'"
    ctx.progress(1, 4, "retrieval, then answer() on each retrieved row (mode F, cap = rows retrieved)")
    r = engine_of(ctx, cap=len(ranked)).run(sql, mode="F", cancel=ctx.cancel)
    then = add(
        "retrieval, then answer() on each (SUQL mode F, cap = rows retrieved)",
        {x[0] for x in r.rows},
        r.stats.answer_calls,
    )
    ctx.progress(2, 4, "answer() on every row (mode E)")
    r_all = engine_of(ctx).run(sql, mode="E", cancel=ctx.cancel)
    add("answer() on every row (SUQL mode E)", {x[0] for x in r_all.rows}, r_all.stats.answer_calls)
    ctx.progress(4, 4, "done")
    ctx.note(
        f"{len(truth)} of {len(world.rows)} restaurants really have {feature.replace('_', ' ')} (hidden truth); the reviews of "
        f"{len(ranked)} mention parking at all — many to say it is hard."
    )
    ctx.claim(
        "retrieval alone is imprecise: a review that says parking is hard is as similar as one that says it is easy",
        alone["p"] < 0.5,
        f"{alone['tp']} of {alone['n']} retrieved really have easy parking, precision {alone['p']:.0%} (notes: 68 of 249, 27%)",
    )
    ctx.claim(
        "retrieval, then answer(), is precise",
        then["p"] > alone["p"] + 0.3,
        f"{then['tp']} of {then['n']} kept, precision {then['p']:.0%}, at {then['calls']} answer() calls (notes: 68 of 74, 92%, 249 calls)",
    )
    # What the reader relied on for the rows it kept wrongly (the evaluator looks at the evidence).
    from engines.retrieval.bm25 import as_text
    from engines.suql.tasks import ANSWER, AnswerInput

    reader = ctx.llm()
    by_id = {r._id: r for r in world.rows}
    wrong = sorted({x[0] for x in r.rows} - truth)
    evidence = Counter(
        s for rid in wrong for s in reader.run(ANSWER, AnswerInput(as_text(by_id[rid].reviews), question)).evidence
    )
    if evidence:
        sentence, times = evidence.most_common(1)[0]
        without = share(then["tp"], then["n"] - times)
        ctx.note(
            f'Of the {len(wrong)} restaurants answer() kept wrongly, {times} rest on "{sentence}" — the simulated reader '
            f"takes a sentence that mentions parking for one that says it is easy; without that misreading precision would be "
            f"{without:.0%}, near the notes' 92%."
        )
    chart = Chart(
        "bar",
        "Similarity is not satisfaction",
        "approach",
        "precision",
        tuple(str(i + 1) for i in range(len(rows))),
        (Series("precision", tuple(row[3] or 0.0 for row in rows)),),
    )
    return ctx.table(
        ("approach", "returned", "truly easy parking", "precision", "recall", "answer() calls"), rows, chart
    )
