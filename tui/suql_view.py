"""How SUQL is shown, in the SUQL and HybridQA tabs alike: a query laid out on lines, the
compiler's plan as lines, and the mode titles in a few words.  Text and ``Content`` only."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.content import Content

from tui.widgets import sql_content

if TYPE_CHECKING:
    from engines.api import Plan


_CLAUSE = re.compile(
    r"\s+(?=(?:FROM|WHERE|GROUP\s+BY|ORDER\s+BY|HAVING|LIMIT|OFFSET|UNION|EXCEPT|INTERSECT|SELECT)\b)"
    r"|\s+(?=(?:AND|OR)\b)",
    re.IGNORECASE,
)


def layout_sql(sql: str) -> str:
    """A one-line query on several lines: a new line before each top-level clause, and
    before AND / OR at the top level of WHERE.  Only whitespace changes."""
    sql = sql.strip()
    if "\n" in sql:
        return sql
    depth, quote = 0, False
    levels = []  # paren depth (or -1 inside a string) before each character
    for ch in sql:
        levels.append(-1 if quote else depth)
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth = max(0, depth - 1)
    out, last, in_where = [], 0, False
    for m in _CLAUSE.finditer(sql):
        if m.start() == 0 or levels[m.start()] != 0:
            continue
        word = sql[m.end() : m.end() + 6].split(None, 1)[0].upper() if sql[m.end() :].strip() else ""
        if word in ("AND", "OR"):
            if not in_where:
                continue
            sep = "\n  "
        else:
            in_where = word == "WHERE"
            sep = "\n"
        out.append(sql[last : m.start()])
        out.append(sep)
        last = m.end()
    out.append(sql[last:])
    return "".join(out)


def plan_content(plan: Plan) -> Content:
    """The plan as lines: the mode; what the whole run does (visit order, lazy or not and why,
    the cap, the SELECT-list calls); then per conjunct the structured part and its candidates,
    and its answer() predicates in evaluation order with their estimates."""
    muted = "$foreground-muted"

    def label(text: str, style: str = "bold") -> Content:
        return Content.styled(f"{text} ", style)

    lines: list[Content] = [
        Content.from_markup("[b]mode $name[/b] [$text-muted]— $title[/]", name=plan.mode.name, title=plan.mode.title)
    ]
    if plan.mode.udf:
        lines.append(
            Content.styled("DuckDB evaluates the WHERE in its own order; answer() is a per-row function", muted)
        )
    if plan.visit_order:
        lines.append(Content.assemble(label("visit"), plan.visit_order))
    if plan.mode.udf:
        pass
    elif plan.lazy:
        lines.append(
            Content.assemble(
                label("lazy", "bold $text-success"),
                f"stop after {plan.stop_after} matching row(s) — {plan.lazy_reason}",
            )
        )
    elif plan.lazy_reason:
        lines.append(Content.assemble(label("not lazy", "bold $text-warning"), plan.lazy_reason))
    if plan.cap is not None:
        lines.append(
            Content.assemble(
                label("cap", "bold $text-warning"), f"at most {plan.cap} candidates examined — results are approximate"
            )
        )
    elif plan.conjuncts:
        lines.append(Content.assemble(label("cap"), Content.styled("none: any candidate may be examined", muted)))
    if plan.cascade is not None:  # mode G: the cascade as decided so far (sample, thresholds, band)
        first, *rest = plan.cascade.lines()
        lines.append(Content.assemble(label("cascade", "bold $text-warning"), first.removeprefix("cascade (SUPG): ")))
        lines.extend(Content.styled(line, muted if line.lstrip().startswith("proxy:") else "") for line in rest)
    if plan.select_calls:
        lines.append(
            Content.assemble(
                label("SELECT-list calls"), sql_content(", ".join(plan.select_calls)), f" for {plan.select_calls_for}"
            )
        )
    for c in plan.conjuncts:
        head = Content.assemble(
            label(f"conjunct {c.index + 1}", "bold $text-accent"),
            sql_content(c.structured),
            Content.styled(f" → {c.candidates:,} candidate{'s' if c.candidates != 1 else ''}", "bold"),
        )
        if c.predicates:
            head += Content.styled(f" · ≈ {c.expected_calls_per_row:.2f} calls each", muted)
        lines.append(head)
        for i, p in enumerate(c.predicates, 1):
            moved = f" · written #{p.written_position + 1}" if p.written_position != i - 1 else ""
            lines.append(Content.assemble(f"  {i}. ", sql_content(p.sql)))
            lines.append(
                Content.styled(
                    f"     cost {p.cost:g} · passes ≈ {p.selectivity:.2f} · rank {p.rank:.2f}{moved}", "$text-primary"
                )
            )
            lines.append(Content.styled(f"     {p.source}", muted))
    for note in plan.notes:
        lines.append(Content.styled(note, muted))
    return Content("\n").join(lines)


def strategy(title: str) -> str:
    """What a mode adds, in a few words: ``'D + retrieval ordering: …'`` → ``'+ retrieval ordering'``."""
    return re.sub(r"^[A-F] \+ ", "+ ", short_title(title))


def short_title(title: str) -> str:
    """``'C + lazy evaluation: stop when …'`` → ``'C + lazy evaluation'``."""
    return re.split(r"[:,]", title, maxsplit=1)[0].strip() if title else ""


__all__ = ["layout_sql", "plan_content", "short_title", "strategy"]
