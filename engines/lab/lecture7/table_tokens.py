"""§6.3: what a model is shown — the whole table linearised against SUQL's schema, as the table grows."""

from __future__ import annotations

from engines.lab.core import RunContext, Table


def table_tokens(ctx: RunContext) -> Table:
    from engines.hybridqa.pipeline import HybridQA, Improvements
    from engines.llm.usage import estimate_tokens
    from engines.sql.sandbox import Limits, Sandbox
    from worlds import hybridqa as W

    sizes = tuple(ctx["rows"])
    rows, measured = [], []
    for i, n in enumerate(sizes):
        ctx.progress(i, len(sizes), f"a flag-bearer table of {n:,} rows")
        table = W.grown_table(ctx["world_seed"], n)
        whole = sum(estimate_tokens(" | ".join(v or "" for v in row)) for row in table.rows)
        with Sandbox.create(
            table.load,
            row_cap=max(ctx.settings.row_cap, 2 * n),
            timeout_s=ctx.settings.query_timeout_s,
            limits=Limits.from_settings(ctx.settings),
        ) as sandbox:
            pipeline = HybridQA(sandbox, ctx.llm())
            schema = estimate_tokens(pipeline.schema(table.name, None))
            bearer = table.records()[len(table.rows) // 2]["Flag Bearer"]
            question = f"Where were the Games held at which {bearer} carried the flag?"
            answer = pipeline.ask(table.name, question, improvements=Improvements(), cancel=ctx.cancel)
        measured.append({"rows": n, "whole": whole, "schema": schema, "calls": answer.answer_calls})
        how = f"{answer.answer_calls}" + (
            f" ({answer.retries} {'retry' if answer.retries == 1 else 'retries'}, {answer.fallback_calls} by the fallback)"
            if answer.retries or answer.fallback_calls
            else ""
        )
        rows.append([f"{n:,}", f"{whole:,}", round(whole / n), schema, how, answer.short or "—"])
    ctx.progress(len(sizes), len(sizes), "done")
    per_row = measured[-1]["whole"] / measured[-1]["rows"]
    for n in ctx["arithmetic_rows"]:
        rows.append(
            [f"{n:,} (arithmetic)", f"≈{round(per_row * n):,}", round(per_row), measured[-1]["schema"], "—", "—"]
        )
    first, last = measured[0], measured[-1]
    sizes_text = ", ".join(f"{m['rows']:,}" for m in measured)
    ctx.note(
        f"Measured on generated tables of {sizes_text} rows (the world's first table, grown "
        "with more delegations' flag bearers); tokens are characters / 4 of the linearised rows with their passages, and of "
        f"the schema the parser is shown. The arithmetic rows multiply the largest table's {per_row:.0f} tokens a row."
    )
    ctx.claim(
        "the whole table linearised grows with its rows",
        last["whole"] > first["whole"] * (last["rows"] / first["rows"]) * 0.8,
        f"{first['whole']:,} tokens at {first['rows']:,} rows, {last['whole']:,} at {last['rows']:,}: "
        f"{first['whole'] / first['rows']:.0f} and {per_row:.0f} a row (notes: ~180; 2,880 at 16 rows, 180k at 1,000)",
    )
    ctx.claim(
        "SUQL's parse prompt shows the schema only: the same size whatever the table's",
        len({m["schema"] for m in measured}) == 1,
        f"{first['schema']} tokens of schema at every size (notes: ~100)",
    )
    ctx.claim(
        "the passages read are those the structured condition leaves, not the table's rows",
        all(m["calls"] * 100 < m["rows"] or m["calls"] <= first["calls"] + 2 for m in measured),
        "answer() calls per size: "
        + ", ".join(f"{m['calls']} at {m['rows']:,} rows" for m in measured)
        + " (a retry after no result and the fallback to another text column read the same few rows again)",
    )
    return ctx.table(
        ("rows", "whole table (tokens)", "per row", "SUQL schema (tokens)", "answer() calls", "answer"), rows
    )
