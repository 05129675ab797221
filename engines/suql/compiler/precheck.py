"""Checks before any LLM call: the query binds, and every answer() / summary() reads text."""

from __future__ import annotations

from sqlglot import exp

from engines.errors import EngineError
from engines.sql.sandbox import Sandbox, SqlFailed
from engines.suql.compiler.sqlparts import over_sources, without_calls
from engines.suql.language import LLMCall, SuqlError, as_call, calls_in, has_llm_calls, pretty


def precheck(sandbox: Sandbox, tree: exp.Expr) -> None:
    """Bind the query with every LLM call replaced by NULL: a misspelt column fails here,
    before a single call is made."""
    if not has_llm_calls(tree):
        return
    if _checked_in_one_binding(sandbox, tree):
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


def check_text_arguments(sandbox: Sandbox, tree: exp.Expr) -> None:
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
        probe = without_calls(q)
        try:
            types = [t for _, t in sandbox.columns_of(probe)]
        except EngineError:
            continue  # e.g. correlated with an outer query: the whole query was bound above
        _refuse_non_text(tree, own, types)


def _refuse_non_text(tree: exp.Expr, own: list[LLMCall], types: list[str]) -> None:
    for call, typ in zip(own, types):
        if typ.upper() not in ("VARCHAR", "VARCHAR[]"):
            arg = pretty(call.text)
            raise SuqlError(
                f"{call.function}() reads text: {arg} is {typ}. Compare it in SQL instead, or pass it "
                f"as text on purpose: {call.function}(CAST({arg} AS VARCHAR){', ...' if call.function == 'answer' else ''}).",
                sql=pretty(tree),
            )


def _checked_in_one_binding(sandbox: Sandbox, tree: exp.Expr) -> bool:
    """Both checks in one binding where it provably tells the same as two: the probe with the calls' arguments
    appended to its SELECT list (unaliased, so nothing can name them) binds iff the probe binds and the arguments
    bind over its sources, with the same types.  Only a single SELECT of one table: no subquery or CTE, nothing
    aggregated, grouped, DISTINCT or QUALIFY, no ORDER BY by number or constant (an appended column would give
    it a column to number), no argument with a * or naming a SELECT alias (DuckDB resolves that name in the
    SELECT list, not over the sources).  False (nothing decided) otherwise, or when that binding fails: the two
    bindings then say which part fails."""
    if not isinstance(tree, exp.Select) or tree.args.get("joins") or tree.args.get("with_"):
        return False
    from_ = tree.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return False
    if any(tree.args.get(k) for k in ("group", "having", "distinct", "qualify")):
        return False
    if any(True for _ in tree.find_all(exp.AggFunc, exp.Window)) or len(list(tree.find_all(exp.Select))) != 1:
        return False
    order = tree.args.get("order")
    if order is not None and any(isinstance(o.this.unnest(), exp.Literal) for o in order.expressions):
        return False
    try:
        own = [as_call(n) for n in calls_in(tree)]
    except SuqlError:
        return False
    aliases = {e.alias.lower() for e in tree.expressions if isinstance(e, exp.Alias) and e.alias}
    for call in own:
        if any(True for _ in call.text.find_all(exp.Star)):
            return False
        if any(not c.table and c.name.lower() in aliases for c in call.text.find_all(exp.Column)):
            return False
    probe = without_calls(tree.copy())
    probe.set("expressions", list(probe.expressions) + [without_calls(c.text.copy()) for c in own])
    try:
        types = [t for _, t in sandbox.columns_of(probe)]
    except EngineError:
        return False
    _refuse_non_text(tree, own, types[len(types) - len(own) :])
    return True
