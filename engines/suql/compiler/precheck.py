"""Checks before any LLM call: the query binds, and every answer() / summary() reads text."""

from __future__ import annotations

from sqlglot import exp

from engines.errors import EngineError
from engines.sql.sandbox import Sandbox, SqlFailed
from engines.suql.compiler.sqlparts import over_sources, without_calls
from engines.suql.language import SuqlError, as_call, calls_in, has_llm_calls, pretty


def precheck(sandbox: Sandbox, tree: exp.Expression) -> None:
    """Bind the query with every LLM call replaced by NULL: a misspelt column fails here,
    before a single call is made."""
    if not has_llm_calls(tree):
        return
    probe = without_calls(tree.copy())
    try:
        sandbox.columns_of(probe)
    except SqlFailed as e:
        # DuckDB's own words, without the probe's internals (its LINE/caret block)
        lines = [
            ln
            for ln in e.message.splitlines()
            if ln.strip() and not ln.startswith("LINE ") and set(ln.strip()) != {"^"}
        ]
        raise SqlFailed("\n".join(lines) + "\n(checked before any LLM call)", sql=pretty(tree)) from e
    check_text_arguments(sandbox, tree)


def check_text_arguments(sandbox: Sandbox, tree: exp.Expression) -> None:
    """answer() and summary() read text: a VARCHAR, or a list of VARCHAR (its items joined with newlines).
    A number, date, enum, … is refused before any call (it gave a bm25s traceback or 'all Unknown')."""
    root_with = tree.args.get("with_")
    for select in tree.find_all(exp.Select):
        own = [as_call(n) for n in calls_in(select)]
        if not own or select.args.get("from_") is None:
            continue
        q = over_sources(exp.select(*[exp.alias_(c.text.copy(), f"_a{i}") for i, c in enumerate(own)]), select)
        withs = [
            c.copy()
            for w in ((root_with if select is not tree else None), select.args.get("with_"))
            if w is not None
            for c in w.expressions
        ]
        if withs:
            q.set("with_", exp.With(expressions=withs))
        q = without_calls(q)
        try:
            types = [t for _, t in sandbox.columns_of(q)]
        except EngineError:
            continue  # e.g. correlated with an outer query: the whole query was bound above
        for call, typ in zip(own, types):
            if typ.upper() not in ("VARCHAR", "VARCHAR[]"):
                arg = pretty(call.text)
                raise SuqlError(
                    f"{call.function}() reads text: {arg} is {typ}. Compare it in SQL instead, or pass it "
                    f"as text on purpose: {call.function}(CAST({arg} AS VARCHAR){', ...' if call.function == 'answer' else ''}).",
                    sql=pretty(tree),
                )
