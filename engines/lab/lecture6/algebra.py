"""§2.2: relational algebra one phrase at a time — each phrase of a question adds one clause."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.lecture6.common import ids_of, parser_agrees, rows_of
from engines.sql.tasks import PARSE, Dialogue


def _clauses(q: exp.Select) -> int:
    """Clauses of a SELECT: each WHERE conjunct, a projection other than *, a sort-and-limit."""
    n = 0
    where = q.args.get("where")
    if where is not None:
        n += len(_conjuncts(where.this))
    if not any(isinstance(e, exp.Star) for e in q.expressions):
        n += 1
    if q.args.get("order") is not None or q.args.get("limit") is not None:
        n += 1
    return n


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def algebra(ctx: RunContext) -> Table:
    world, sandbox = ctx.restaurants()
    llm = ctx.llm()
    loc, cuisine, other, stars = ctx["location"], ctx["cuisine"], ctx["other_cuisine"], ctx["min_rating"]
    cap = cuisine.capitalize()

    def cond(sql: str) -> exp.Expr:
        return exp.condition(sql, dialect="postgres")

    # The chain: each phrase of the question adds one operation (the slides' sequence).
    chain: list[tuple[str, str, str, Callable[[exp.Select], exp.Select]]] = [
        ("restaurants", "relation", "Show me restaurants.", lambda q: q),
        (f"in {loc}", "selection σ", f"Show me restaurants in {loc}.", lambda q: q.where(cond(f"location = '{loc}'"))),
        (
            cap,
            "selection σ",
            f"Show me {cap} restaurants in {loc}.",
            lambda q: q.where(cond(f"'{cuisine}' = ANY(cuisines)")),
        ),
        (
            f"with at least {stars:g} stars",
            "selection σ",
            f"Show me {cap} restaurants in {loc} with at least {stars:g} stars.",
            lambda q: q.where(cond(f"rating >= {stars:g}")),
        ),
        (
            "the phone numbers of",
            "projection π",
            f"Give me the phone numbers of {cap} restaurants in {loc} with at least {stars:g} stars.",
            lambda q: q.select("name", "phone_number", append=False),
        ),
        (
            "the most popular",
            "sort + top-1 τ",
            f"Give me the phone number of the most popular {cap} restaurant in {loc} with at least {stars:g} stars.",
            lambda q: q.order_by("num_reviews DESC").limit(1),
        ),
    ]
    rows: list[list[Any]] = []
    q = exp.select("*").from_("restaurants")
    counts, clauses, previous_ids = [], [], None
    agreements = []
    subset_ok = True
    total = len(chain) + 4
    for i, (phrase, op, utterance, add) in enumerate(chain, 1):
        ctx.progress(i - 1, total, phrase)
        q = add(q.copy())
        sql = q.sql(dialect="postgres")
        result = rows_of(sandbox, sql)
        ids = ids_of(sandbox, sql)
        if ids is None or (previous_ids is not None and not ids <= previous_ids):
            subset_ok = False
        previous_ids = ids
        parsed = llm.run(PARSE, Dialogue(utterance, (), world.schema()))
        agrees = parser_agrees(sandbox, parsed, result)
        agreements.append(agrees)
        counts.append(len(result))
        clauses.append(_clauses(q))
        rows.append([i, phrase, op, sql, _clauses(q), len(result), agrees])

    # Union and difference, each written two ways.
    where_loc = f"location = '{loc}'"
    union_sql = (
        f"SELECT _id, name FROM restaurants WHERE {where_loc} AND '{cuisine}' = ANY(cuisines) UNION "
        f"SELECT _id, name FROM restaurants WHERE {where_loc} AND '{other}' = ANY(cuisines)"
    )
    or_sql = f"SELECT _id, name FROM restaurants WHERE {where_loc} AND ('{cuisine}' = ANY(cuisines) OR '{other}' = ANY(cuisines))"
    except_sql = (
        f"SELECT _id, name FROM restaurants WHERE {where_loc} AND '{cuisine}' = ANY(cuisines) EXCEPT "
        f"SELECT _id, name FROM restaurants WHERE '{other}' = ANY(cuisines)"
    )
    not_sql = f"SELECT _id, name FROM restaurants WHERE {where_loc} AND '{cuisine}' = ANY(cuisines) AND NOT ('{other}' = ANY(cuisines))"
    union_u = f"Show me {cap} or {other} places in {loc}."
    diff_u = f"Show me {cap} places in {loc} that are not {other} places."
    pairs = []
    for step, (phrase, op, sql, utterance) in enumerate(
        (
            (f"{cap} or {other}", "union ∪ (UNION)", union_sql, union_u),
            (f"{cap} or {other}", "union ∪ (OR)", or_sql, union_u),
            (f"{cap}, not {other}", "difference − (EXCEPT)", except_sql, diff_u),
            (f"{cap}, not {other}", "difference − (NOT)", not_sql, diff_u),
        ),
        len(chain) + 1,
    ):
        ctx.progress(step - 1, total, phrase)
        result = rows_of(sandbox, sql)
        parsed = llm.run(PARSE, Dialogue(utterance, (), world.schema()))
        parsed_ids = ids_of(sandbox, parsed)
        agrees = parsed_ids is not None and parsed_ids == {r[0] for r in result}
        pairs.append({r[0] for r in result})
        rows.append([step, phrase, op, sql, None, len(result), agrees])
    ctx.progress(total, total, "done")

    grows = all(b == a + 1 for a, b in zip(clauses, clauses[1:]))
    ctx.claim("each added phrase adds one clause to the SQL", grows, f"clauses per step {clauses}")
    ctx.claim(
        "each selection keeps a subset of the previous step's rows",
        subset_ok and all(b <= a for a, b in zip(counts, counts[1:])),
        f"rows per step {counts}",
    )
    ctx.claim(
        "the same meaning has several SQL forms (UNION = OR, EXCEPT = NOT)",
        pairs[0] == pairs[1] and pairs[2] == pairs[3],
        f"UNION {len(pairs[0])} rows = OR {len(pairs[1])} rows; EXCEPT {len(pairs[2])} = NOT {len(pairs[3])}",
    )
    n_agree = sum(agreements)
    ctx.claim(
        "the (simulated) parser composes phrase by phrase",
        n_agree == len(agreements),
        f"its SQL gives the same rows on {n_agree} of {len(agreements)} steps of the chain",
        "the simulated parser dropped a condition (a seeded 4% mistake) on some step",
    )
    diff_agrees = rows[-1][-1]
    if not diff_agrees:
        ctx.note(
            f'The parser has no negation: for "{diff_u}" it writes an OR of both cuisines, so its rows differ '
            "from the difference — a parse error the read-back would reveal."
        )
    ctx.note(
        'The notes\' difference is "places Bob has not reviewed"; our reviews are anonymous, so the difference here is taken on cuisines. '
        "One table, so no join step."
    )
    chart = Chart(
        "bar",
        "Rows after each phrase",
        "step",
        "rows",
        tuple(str(r[0]) for r in rows[: len(chain)]),
        (Series("rows", tuple(float(c) for c in counts)),),
    )
    return ctx.table(("step", "phrase", "operation", "SQL", "clauses", "rows", "parser agrees"), rows, chart)
