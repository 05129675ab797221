"""§3.3: execution accuracy of zero-shot parsing against the classify() methods."""

from __future__ import annotations

from typing import Any

from engines.errors import Cancelled, EngineError
from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.judge import rounded, share
from engines.lab.lecture6.common import IdCache
from engines.sql.tasks import PARSE, Dialogue


def execution_accuracy(ctx: RunContext) -> Table:
    import random

    from engines.sql.classify import METHODS, Classifier

    world, sandbox = ctx.restaurants()
    llm = ctx.llm()
    from engines.lab.questions import generate_structured_questions

    questions = generate_structured_questions(world.rows, random.Random(ctx["question_seed"]), ctx["questions"])
    ids_of = IdCache(sandbox)
    methods = ("zero-shot",) + tuple(METHODS)
    right: dict[str, list[tuple[bool, bool]]] = {m: [] for m in methods}  # (colloquial, right) per question
    empty_wrong = {m: 0 for m in methods}
    calls = {m: 0 for m in methods}
    for i, q in enumerate(questions):
        ctx.progress(i, len(questions), q["question"])
        parsed = llm.run(PARSE, Dialogue(q["question"], (), world.schema()))
        for m in methods:
            sql: str | None = parsed
            if m != "zero-shot":
                before = llm.counter.counts.get("classify", 0)
                try:
                    sql = Classifier(world.enum_fields, m, llm).rewrite(sandbox.check(parsed)).sql(dialect="postgres")
                except Cancelled:
                    raise
                except EngineError:  # the parse is not a statement the sandbox accepts: a wrong answer
                    sql = None
                calls[m] += llm.counter.counts.get("classify", 0) - before
            ids = ids_of(sql)
            ok = ids is not None and ids == q["gold_ids"]
            right[m].append((q["colloquial"], ok))
            if not ok and not ids:
                empty_wrong[m] += 1
    ctx.progress(len(questions), len(questions), "done")
    rows: list[list[Any]] = []
    acc = {}
    for m in methods:
        results = right[m]
        wrong = sum(1 for _, ok in results if not ok)
        plain = [ok for c, ok in results if not c]
        coll = [ok for c, ok in results if c]
        acc[m] = (
            share(sum(ok for _, ok in results), len(results)),
            share(sum(plain), len(plain)),
            share(sum(coll), len(coll)),
        )
        rows.append(
            [
                m,
                rounded(acc[m][0]),
                rounded(acc[m][1]),
                rounded(acc[m][2]),
                wrong,
                rounded(share(empty_wrong[m], wrong)) if wrong else None,
                calls[m],
            ]
        )
    n_coll = sum(1 for q in questions if q["colloquial"])
    ctx.note(
        f"{len(questions)} questions with a non-empty gold result ({n_coll} name the cuisine colloquially); "
        "a prediction is right when it returns exactly the gold rows."
    )
    best = max(METHODS, key=lambda m: acc[m][0])
    ctx.claim(
        "classify() fixes what zero-shot parsing gets wrong",
        acc[best][0] > acc["zero-shot"][0],
        f"zero-shot {acc['zero-shot'][0]:.1%} → {best} {acc[best][0]:.1%}",
    )
    ctx.claim(
        "zero-shot fails on colloquial words, not on plain ones",
        acc["zero-shot"][1] > acc["zero-shot"][2] + 0.3,
        f"zero-shot {acc['zero-shot'][1]:.1%} on plain words, {acc['zero-shot'][2]:.1%} on colloquial ones",
    )
    zs_wrong: int = rows[0][4]
    ctx.claim(
        "zero-shot's errors mostly return no rows (a signal the agent can act on)",
        zs_wrong > 0 and empty_wrong["zero-shot"] / zs_wrong > 0.5,
        f"{empty_wrong['zero-shot']} of {zs_wrong} wrong answers were empty",
    )
    ctx.claim(
        "llm_all is the most accurate method", best == "llm_all", ", ".join(f"{m} {acc[m][0]:.1%}" for m in METHODS)
    )
    chart = Chart(
        "bar",
        "Execution accuracy",
        "method",
        "accuracy",
        methods,
        (
            Series("plain words", tuple(acc[m][1] for m in methods)),
            Series("colloquial words", tuple(acc[m][2] for m in methods)),
        ),
    )
    return ctx.table(
        (
            "method",
            "execution accuracy",
            "plain cuisine words",
            "colloquial words",
            "wrong",
            "wrong and empty (share)",
            "classify() LLM calls",
        ),
        rows,
        chart,
    )
