"""The SPARQL console's widgets: which of the four feedbacks came back, the examples' list entries, a query's run."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static
from textual.widgets.option_list import Option

from engines.api import SparqlExample
from tui.kg.results import LIST_CHARS, MUTED, KgResultsTable, show_error
from tui.kg.sparql import SparqlEditor
from tui.widgets import TextView, as_text, count_rows, truncate

if TYPE_CHECKING:
    from engines.api import SparqlQueryResult as QueryResult

EDITOR_TITLE = "SPARQL · Ctrl+Enter or Ctrl+J runs it"
FEEDBACKS: tuple[tuple[str, str], ...] = (
    ("rows", "rows"),
    ("empty", "empty"),
    ("syntax_error", "syntax error"),
    ("timeout", "timeout"),
)
FEEDBACK_HINTS: Mapping[str, str] = {
    "rows": "Rows came back. A legal query can still be wrong or incomplete (§1.4): check the count.",
    "empty": "No rows: the query is legal, but some part of the pattern matches nothing. Run its fragments alone.",
    "syntax_error": "The query does not parse (or cannot be evaluated): the message says where.",
    "timeout": "The query ran out of time: simplify it (a narrower pattern, fewer joins, a LIMIT).",
    "refused": "Refused: nothing ran. The endpoint is read-only and calls no other endpoint.",
}
ERROR_AT = re.compile(r"\bline (\d+), column (\d+)")
"""Where a syntax error is, in its message (the editor's cursor goes there)."""


class FeedbackBar(TextView):
    """Which of the four feedbacks came back: the one that did lit, the others dim; a hint under them."""

    feedback: str | None = None
    """The feedback shown: rows | empty | syntax_error | timeout | refused | None (nothing ran yet)."""

    def show(self, feedback: str | None, detail: str = "", notes: Sequence[str] = ()) -> None:
        """Light ``feedback`` (None: nothing came back yet), with a detail (rows, time) and the dialect notes."""
        self.feedback = feedback
        styles = {
            "rows": "bold $text-success",
            "empty": "bold $text-warning",
            "syntax_error": "bold $text-error",
            "timeout": "bold $text-error",
            "refused": "bold $text-error",
        }
        chips: list[Content] = [Content.styled("Feedback ", MUTED)]
        for name, label in FEEDBACKS:
            if name == feedback:
                chips.append(Content.styled(f" ● {label} ", f"reverse {styles[name]}"))
            else:
                chips.append(Content.styled(f" ○ {label} ", MUTED))
        if feedback == "refused":
            chips.append(Content.styled(" ⊘ refused — nothing ran ", f"reverse {styles['refused']}"))
        if detail:
            chips.append(Content.styled(f"  {detail}", "bold"))
        lines = [Content("").join(chips)]
        hint = FEEDBACK_HINTS.get(
            feedback or "", "Run a query (Ctrl+Enter or Ctrl+J): one of the four feedbacks comes back."
        )
        lines.append(Content.styled(hint, f"{MUTED} italic"))
        if notes:
            lines.append(
                Content.assemble(Content.styled("dialect ", MUTED), Content.styled(" · ".join(notes), "$text-primary"))
            )
        self.update(Content("\n").join(lines))


@dataclass(frozen=True)
class QueryRan:
    result: QueryResult
    elapsed_s: float


class ConsoleView(Horizontal):
    """The console: the examples, the editor, the feedback bar, the error box and the results."""

    def show_query(self, ran: QueryRan) -> tuple[str, str]:
        """A query's outcome on screen: the rows (or why there are none), the feedback lit, the editor's cursor
        on a syntax error's place.  Returns the status line and its state."""
        result = ran.result
        feedback = result.feedback.value
        results = self.query_one("#kg-results", KgResultsTable)
        error = self.query_one("#kg-console-error", Static)
        elapsed = f"{ran.elapsed_s * 1000:,.0f} ms"
        if feedback == "rows":
            detail = f"{count_rows(len(result))} · {elapsed}"
            results.show_bindings(result.columns, result.bindings, truncated=result.truncated)
            error.display = False
        elif feedback == "empty":
            detail = f"0 rows · {elapsed}"
            results.show_bindings(result.columns, ())
            results.border_subtitle = "no rows"
            error.display = False
        else:
            detail = elapsed
            results.show_nothing(feedback.replace("_", " "))
            show_error(
                error,
                "Syntax error" if feedback == "syntax_error" else "Timeout",
                result.message or FEEDBACK_HINTS[feedback],
            )
            where = ERROR_AT.search(result.message or "")
            editor = self.query_one("#kg-editor", SparqlEditor)
            if where is not None and editor.text == result.query:
                lines = editor.text.split("\n")
                row = min(max(int(where.group(1)) - 1, 0), len(lines) - 1)
                editor.cursor_location = (row, min(max(int(where.group(2)) - 1, 0), len(lines[row])))
        self.query_one(FeedbackBar).show(feedback, detail, result.notes)
        return f"{feedback.replace('_', ' ')} — {detail}", "done" if feedback in ("rows", "empty") else "error"


def example_option(i: int, example: SparqlExample) -> Option:
    room = max(8, LIST_CHARS - len(example.source) - 1)
    return Option(
        as_text(Content.assemble(truncate(example.title, room), " ", Content.styled(example.source, MUTED))),
        id=f"example-{i}",
    )


__all__ = [
    "EDITOR_TITLE",
    "ERROR_AT",
    "FEEDBACKS",
    "FEEDBACK_HINTS",
    "ConsoleView",
    "FeedbackBar",
    "QueryRan",
    "example_option",
]
