"""The HybridQA tab's tables: a table's rows (linked cells underlined, the passage of the
highlighted cell), and the LLM calls of a question (every passage read, and why)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.content import Content
from textual.widgets import DataTable

from engines.api import CallFailed, CallFinished, CallStarted
from tui.widgets import (
    TOKEN_COLUMNS,
    TOKEN_WIDTHS,
    CallRecords,
    RowCursor,
    SafeCells,
    as_text,
    count_rows,
    is_cancellation,
    sql_content,
    truncate,
    verdict_style,
)

if TYPE_CHECKING:
    from worlds.hybridqa import HybridTable

CELL_CHARS = 20
"""Longest text a table cell shows (the passage pane shows it all)."""
INFO_CHARS = 14
"""Longest text an ``_Info`` cell shows."""


# --- the table's rows, and the passage of the highlighted cell ------------------------------------


class RowsTable(SafeCells, DataTable):
    """The rows of a HybridQA table; linked cells underlined, ``_Info`` cells muted and cut short.

    Highlighting a cell posts the usual ``CellHighlighted``; :meth:`passage` says what the
    highlighted cell links to.
    """

    COMPONENT_CLASSES = {"rows-table--linked", "rows-table--info", "rows-table--null"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=True, **kwargs)
        self.table: HybridTable | None = None

    def show_table(self, table: HybridTable) -> None:
        from engines.api import base_column, is_info, linked_column

        self.clear(columns=True)
        self.table = table
        linked = self.get_component_rich_style("rows-table--linked")
        info = self.get_component_rich_style("rows-table--info")
        null = self.get_component_rich_style("rows-table--null")
        self.add_column(Text("#"), key="#")
        for name in table.columns:
            self.add_column(Text(truncate(name, CELL_CHARS)), key=name)
        for i, row in enumerate(table.rows):
            values = dict(zip(table.columns, row))
            cells: list[Text] = [Text(str(i), justify="right")]
            for name, value in zip(table.columns, row):
                if value is None:
                    cells.append(Text("—", style=null))
                elif is_info(name):
                    cells.append(Text(truncate(value, INFO_CHARS), style=info))
                else:
                    info_column = linked_column(name, table.columns)
                    has_passage = info_column is not None and values.get(info_column) is not None
                    cells.append(Text(truncate(value, CELL_CHARS), style=linked if has_passage else ""))
            self.add_row(*cells, key=str(i))
        linked_from = [base_column(c) for c in table.info_columns]
        self.border_title = as_text(f"Rows · {truncate(table.title, 60)}", one_line=True)
        self.border_subtitle = as_text(
            f"{count_rows(len(table.rows))} · passages linked from "
            f"{', '.join(linked_from) if linked_from else 'no column'}",
            one_line=True,
        )

    def first_linked_cell(self) -> tuple[int, int]:
        """The first cell of the first row that links to a passage (for a telling start)."""
        from engines.api import is_info, linked_column

        if self.table is None or not self.table.rows:
            return 0, 0
        columns = self.table.columns
        for j, name in enumerate(columns):
            info = linked_column(name, columns)
            if info is None or is_info(name):
                continue
            if self.table.rows[0][columns.index(info)] is not None:
                return 0, j + 1
        return 0, 0

    def passage(self) -> tuple[str, Content]:
        """(pane title, body) for the highlighted cell: its passage, or why it has none."""
        from engines.api import is_info, linked_column

        table = self.table
        if table is None or not table.rows or not self.row_count:
            return "Passage", Content.styled("no table", "$foreground-muted italic")
        row, column = self.cursor_coordinate
        row = min(max(row, 0), len(table.rows) - 1)
        values = table.rows[row]
        label = f"row {row} · {truncate(values[0] or '', 28)}" if values else f"row {row}"
        if column == 0:
            return (
                f"Passage · {label}",
                Content.styled(
                    "the row number (its rowid); move right to a cell — linked cells are underlined",
                    "$foreground-muted italic",
                ),
            )
        name = table.columns[column - 1]
        value = values[column - 1]
        info = linked_column(name, table.columns)
        if info is None:
            body = Content.assemble(
                Content.styled(f"{name}: ", "bold"),
                value if value is not None else "NULL",
                Content.styled("\nno passage is linked from this column", "$foreground-muted italic"),
            )
            return f"Cell · {label}", body
        text = values[table.columns.index(info)]
        if text is None:
            return (
                f"Passage · {info} · {label}",
                Content.assemble(
                    Content.styled(f"{name}: ", "bold"),
                    value or "",
                    Content.styled(
                        "\nthis cell links to no passage (the column is NULL here)", "$foreground-muted italic"
                    ),
                ),
            )
        head = Content("")
        if not is_info(name):
            head = Content.assemble(Content.styled(f"{name}: ", "bold"), value or "", "\n")
        return f"Passage · {info} · {label}", Content.assemble(head, text)


# --- the LLM calls of a run: every passage read, and why ------------------------------------------


STEP_LABELS = {"hybrid_parse": "parse", "answer": "answer()", "short_answer": "short"}


@dataclass
class CallLine:
    """What the calls table knows of one call (filled in as its events arrive)."""

    step: str
    function: str
    row: str = ""
    question: str = ""
    column: str = ""
    value: str = "…"
    reason: str = ""
    evidence: tuple[str, ...] = ()
    said: bool | None = None  # answer(): did the passage say something (None: not read yet)


class PassagesTable(CallRecords, RowCursor, SafeCells, DataTable):
    """The LLM calls of one question: parses, every answer() on a passage, the short answer.

    A row appears on ``CallStarted`` and is completed on ``CallFinished``; the pipeline's
    ``PassageRead`` then names the ``_Info`` column read and why (the query's answer(), or
    the fallback because another column did not say).  Widths are fixed: measuring
    columns on every update would be quadratic.
    """

    COMPONENT_CLASSES = {
        "passages-table--yes",
        "passages-table--no",
        "passages-table--unknown",
        "passages-table--muted",
        "passages-table--fallback",
        "passages-table--parse",
        "passages-table--failed",
    }
    COLUMNS = (
        ("#", "id", 3),
        ("step", "step", 8),
        ("row", "row", 9),
        ("passage", "column", 15),
        ("question", "question", 16),
        ("value", "value", 13),
        ("ms", "latency", 5),
        # last: half a 140-column screen holds the columns up to ms (scroll right, or v, for the tokens)
        *((label, key, TOKEN_WIDTHS[key]) for label, key in TOKEN_COLUMNS),
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.lines: dict[str, CallLine] = {}
        self._next_parse = "parse"
        self._parses = 0

    def on_mount(self) -> None:
        for label, key, width in self.COLUMNS:
            self.add_column(label, key=key, width=width)

    def reset(self, subtitle: str = "") -> None:
        self.clear()
        self.lines.clear()
        self.clear_records()
        self._next_parse = "parse"
        self._parses = 0
        self.border_subtitle = subtitle

    def _style(self, name: str) -> Any:
        return self.get_component_rich_style(f"passages-table--{name}")

    def call_started(self, event: CallStarted) -> None:
        key = str(event.call_id)
        self.record_started(event)
        if event.function == "hybrid_parse":
            self._parses += 1
            step = self._next_parse
            self._next_parse = "re-parse"
            line = CallLine(step, event.function, question=event.prompt)
            style = self._style("parse")
        else:
            line = CallLine(
                STEP_LABELS.get(event.function, event.function),
                event.function,
                row=event.row_key or "",
                question=event.prompt,
            )
            style = ""
        self.lines[key] = line
        muted = self._style("muted")
        self.follow_row(
            Text(str(len(self.lines)), justify="right"),
            Text(line.step, style=style),
            Text(truncate(line.row or "—", 9)),
            Text("…" if event.function == "answer" else "", style=muted),
            Text(truncate(line.question, 16)),
            Text("…", style=muted),
            Text("…", style=muted, justify="right"),
            *(Text("") for _ in TOKEN_COLUMNS),
            key=key,
        )
        self._update_subtitle()

    def call_finished(self, event: CallFinished) -> None:
        key = self._ensure(event.call_id, event.function, event.row_key)
        self.record_finished(event)
        self.show_tokens(key, event)
        line = self.lines[key]
        line.evidence = tuple(event.evidence)
        if event.function == "answer":
            said = event.verdict.strip().lower() != "unknown"
            line.value, line.said = (event.verdict if said else "Unknown"), said
            value = Text(truncate(line.value, 13), style=self._verdict_style(event.verdict))
        else:
            line.value = event.verdict
            value = Text(truncate(event.verdict or "—", 13), style="bold" if event.function == "short_answer" else "")
        self.update_cell(key, "value", value)
        self.update_cell(key, "latency", Text(f"{event.latency_s * 1000:,.0f}", justify="right"))
        self._update_subtitle()

    def call_failed(self, event: CallFailed) -> None:
        key = self._ensure(event.call_id, event.function, None)
        self.record_failed(event)
        line = self.lines[key]
        stopped = is_cancellation(event.error)
        line.value = "stopped" if stopped else "✗ error"
        line.reason = "stopped by Esc before it answered" if stopped else event.error
        style = self._style("muted" if stopped else "failed")
        if line.function == "answer":
            self.update_cell(key, "column", Text("—", style=self._style("muted")))
        self.update_cell(key, "value", Text(line.value, style=style))
        self.update_cell(key, "latency", Text(f"{event.latency_s * 1000:,.0f}", justify="right"))
        self._update_subtitle()

    def passage_read(self, row_key: str | None, column: str | None, question: str, reason: str) -> str | None:
        """Name the column and the reason of the answer() call this read was (the latest finished
        call on that row and question that has none yet); returns its key."""
        from engines.api import base_column

        for key in reversed(list(self.lines)):
            line = self.lines[key]
            if (
                line.function == "answer"
                and line.said is not None
                and not line.reason
                and line.row == (row_key or "")
                and line.question == question
            ):
                fallback = reason.startswith("fallback")
                line.column, line.reason = column or "?", reason
                if fallback:
                    line.step = "fallback"
                    self.update_cell(key, "step", Text("fallback", style=self._style("fallback")))
                self.update_cell(
                    key,
                    "column",
                    Text(truncate(base_column(column or "?"), 15), style=self._style("fallback") if fallback else ""),
                )
                self._update_subtitle()
                return key
        return None

    def retried(self) -> None:
        self._next_parse = "re-parse"

    def _ensure(self, call_id: int, function: str, row_key: str | None) -> str:
        key = str(call_id)
        if key not in self.lines:  # a finish without a start: still show the call
            self.call_started(CallStarted(call_id, function, "", row_key))
        return key

    def _verdict_style(self, verdict: str) -> Any:
        name = {"yes": "yes", "no": "no", "unknown": "unknown"}.get(verdict.strip().lower())
        return self._style(name) if name else "bold"

    @property
    def reads(self) -> list[CallLine]:
        return [line for line in self.lines.values() if line.function == "answer"]

    def _update_subtitle(self) -> None:
        reads = [line for line in self.reads if line.said is not None]
        fallback = sum(1 for line in reads if line.step == "fallback")
        stopped = sum(1 for line in self.lines.values() if line.value == "stopped")
        parts = [count_rows(len(self.lines), "call")]
        if reads:
            parts.append(f"{count_rows(len(reads), 'passage')} read ({fallback} by the fallback)")
        if stopped:
            parts.append(f"{stopped} stopped by Esc")
        self.border_subtitle = " · ".join(parts)

    def detail(self, key: str | None) -> Content:
        """The highlighted call in full: row, column, question, value, why, evidence."""
        if key is None or key not in self.lines:
            return Content.styled(
                "the highlighted call in full — which passage, what it said, and why it was read",
                "$foreground-muted italic",
            )
        line = self.lines[key]
        muted = "$foreground-muted"
        if line.function == "hybrid_parse":
            return Content.assemble(
                Content.styled(f"{line.step} ", "bold"),
                Content.styled("→ ", muted),
                sql_content(line.value) if line.value not in ("…", "") else line.value,
            )
        if line.function == "answer":
            style = verdict_style(line.value)
            parts: list[str | Content] = [
                Content.styled(line.row or "—", "bold"),
                Content.styled(" · ", muted),
                Content.styled(line.column or "…", "$text-accent"),
                Content.styled(" · ", muted),
                line.question,
                Content.styled(" → ", muted),
                Content.styled(line.value, style),
            ]
            if line.reason:
                why = line.reason if line.reason != "the query's answer()" else "read by the query's answer()"
                why_style = "$text-warning" if line.step == "fallback" else muted
                parts += [Content.styled(" · ", muted), Content.styled(why, why_style)]
            if line.evidence:
                parts += ["\n", Content.styled(" … ".join(line.evidence), "italic")]
            return Content.assemble(*parts)
        return Content.assemble(
            Content.styled(f"{line.step} ", "bold"),
            Content.styled(line.question, muted),
            Content.styled(" → ", muted),
            Content.styled(line.value or "—", "bold"),
        )


__all__ = ["CallLine", "PassagesTable", "RowsTable", "STEP_LABELS"]
