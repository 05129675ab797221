"""B-duckdb: DuckDB runs the query as written, with answer() / summary() as scalar functions."""

from __future__ import annotations

from sqlglot import exp

from engines.suql.compiler.asker import BudgetExhausted
from engines.suql.compiler.context import RunContext
from engines.suql.compiler.records import PlanBuilt
from engines.suql.compiler.sqlparts import as_text_sql
from engines.suql.language import as_call, is_llm_call, pretty
from engines.suql.plan import Plan


def udf_rewrite(ctx: RunContext, tree: exp.Expr) -> exp.Expr:
    """``tree`` with every LLM call a call of a per-row DuckDB function (registered until the run ends)."""

    def answer(text: str | None, question: str | None) -> str | None:
        ctx.check_cancel()
        if text is None:  # a function of NULL is NULL: no call
            return None
        try:
            value = ctx.asker.answer(text, question or "")
        except BudgetExhausted:
            return None  # past the budget every value is unknown: DuckDB drops the row
        ctx.state.rows_examined += 1
        return value

    def summary(text: str | None) -> str | None:
        ctx.check_cancel()
        if text is None:
            return None
        try:
            return ctx.asker.summary(text)
        except BudgetExhausted:
            return None

    sandbox = ctx.sandbox
    answer_fn = ctx.stack.enter_context(sandbox.function("suql_answer", answer, ["VARCHAR", "VARCHAR"], "VARCHAR"))
    summary_fn = ctx.stack.enter_context(sandbox.function("suql_summary", summary, ["VARCHAR"], "VARCHAR"))
    text_types = sandbox.column_types(tree)  # list columns are joined with newlines

    tree = tree.copy()
    if isinstance(tree, exp.Select):  # a bare summary(reviews) keeps its own text as the column name
        tree.set(
            "expressions", [exp.alias_(e, pretty(e), quoted=True) if is_llm_call(e) else e for e in tree.expressions]
        )

    def swap(node: exp.Expr) -> exp.Expr:
        if is_llm_call(node):
            call = as_call(node)
            text = as_text_sql(call.text, text_types)
            if call.function == "summary":
                return exp.Anonymous(this=summary_fn, expressions=[text])
            return exp.Anonymous(this=answer_fn, expressions=[text, exp.Literal.string(call.question)])
        return node

    where = tree.find(exp.Where)
    ctx.state.dnf = pretty(where.this) if where is not None else ""
    ctx.state.plan = Plan(
        ctx.mode,
        ctx.state.dnf,
        visit_order="DuckDB's own",
        lazy_reason="DuckDB evaluates whole vectors of rows",
        notes=("DuckDB drops rows whose condition is unknown: mode B cannot list rows to verify",),
    )
    ctx.emit(PlanBuilt(ctx.state.plan))
    return tree.copy().transform(swap)
