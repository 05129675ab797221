"""The SUQL tab's tables: the per-row LLM calls of a query, and the comparison of the modes (which keeps how far
the comparison got)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from engines.api import CallFailed, CallFinished, CallStarted
from tui.suql_view import strategy
from tui.suql_work import MODE_NAMES
from tui.widgets import (
    TOKEN_COLUMNS,
    TOKEN_WIDTHS,
    CallsTable,
    FreshWidths,
    ResultsTable,
    SafeCells,
    as_text,
    evidence_text,
    is_cancellation,
    truncate,
    verdict_style,
)

if TYPE_CHECKING:
    from engines.api import ModeOutcome


EVIDENCE_CHARS = 80


class SuqlResultsTable(ResultsTable):
    """The shared results table, repainted when its widths change."""


class VerifyTable(SuqlResultsTable):
    """The rows to verify; ``Enter`` settles the highlighted row, ``V`` every row (their remaining conditions are
    asked: the tab's :meth:`~tui.suql.SuqlArea.settle`)."""

    BINDINGS = [
        # Enter, not v: v shows the highlighted cell in full in every table
        Binding(
            "enter",
            "settle_row",
            "Verify row",
            key_display="Enter",
            tooltip="Ask the remaining conditions of the highlighted row.",
        ),
        Binding("V", "settle_all", "Verify all", tooltip="Ask the remaining conditions of every row to verify."),
    ]

    @dataclass
    class SettleRequested(Message):
        """The user asked to settle rows to verify: their positions, or ``None`` for every row."""

        rows: tuple[int, ...] | None

    def action_settle_row(self) -> None:
        if self.row_count:
            self.post_message(self.SettleRequested((self.cursor_row,)))

    def action_settle_all(self) -> None:
        self.post_message(self.SettleRequested(None))


class SuqlCallsTable(CallsTable):
    """The per-row LLM calls: row, question, verdict, tokens, latency, cached, evidence."""

    COMPONENT_CLASSES = {
        "calls-table--failed",
        "suql-calls--yes",
        "suql-calls--no",
        "suql-calls--unknown",
        "suql-calls--muted",
    }
    COLUMNS = (
        ("row", "row"),
        ("call", "call"),
        ("verdict", "verdict"),
        *TOKEN_COLUMNS,
        ("latency", "latency"),
        ("cached", "cached"),
        ("evidence", "evidence"),
    )
    ROW_CHARS = 18
    CALL_CHARS = 22
    VERDICT_CHARS = 12

    FIXED_WIDTHS = {"latency": 8, **TOKEN_WIDTHS, "evidence": EVIDENCE_CHARS}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._details: dict[str, tuple[str, str, str, str]] = {}

    def _fix_widths(self) -> None:
        """Fixed widths for the cells filled in later: measuring a column on every update is quadratic."""
        for key, width in self.FIXED_WIDTHS.items():
            column = self.columns.get(ColumnKey(key))
            if column is not None and column.auto_width:
                column.auto_width = False
                column.width = width

    def call_started(self, event: CallStarted) -> None:
        self._fix_widths()
        key = str(event.call_id)
        self.record_started(event)
        call = (
            "summary()"
            if event.function == "summary"
            else (event.prompt if event.function == "answer" else f"{event.function}: {event.prompt}")
        )
        marks = [m for m in (event.phase, "verify" if event.verification else "") if m]  # mode G's step, settling
        row = " · ".join([*marks, event.row_key or "—"])
        self._full[key] = (f"{row} · {call}", "")
        self._details[key] = (row, call, "…", "")
        muted = self.get_component_rich_style("suql-calls--muted")
        self.follow_row(
            Text(truncate(row, self.ROW_CHARS)),
            Text(truncate(call, self.CALL_CHARS)),
            Text("…", style=muted),
            *(Text("") for _ in TOKEN_COLUMNS),
            Text("…", justify="right", style=muted),
            Text(""),
            Text(""),
            key=key,
        )
        self._update_subtitle()

    def call_finished(self, event: CallFinished) -> None:
        key = self._ensure_row(event.call_id, event.function)
        self.record_finished(event)
        self.show_tokens(key, event)
        if event.function == "summary":
            verdict = Text("summary", style=self.get_component_rich_style("suql-calls--muted"))
            evidence = event.verdict
        else:
            verdict = Text(truncate(event.verdict, self.VERDICT_CHARS), style=self._verdict_style(event.verdict))
            evidence = evidence_text(event.evidence)
        self._full[key] = (self._full[key][0], f"{event.verdict}\nevidence: {evidence}")
        row, call, _, _ = self._details.get(key, ("—", event.function, "", ""))
        self._details[key] = (row, call, "summary" if event.function == "summary" else event.verdict, evidence)
        self._cached += int(event.cached)
        self.update_cell(key, "verdict", verdict)
        self.update_cell(key, "latency", Text(f"{event.latency_s * 1000:,.0f} ms", justify="right"))
        self.update_cell(key, "cached", Text("✓" if event.cached else "", justify="center"))
        self.update_cell(key, "evidence", Text(truncate(evidence, EVIDENCE_CHARS)))
        self._update_subtitle()

    def call_failed(self, event: CallFailed) -> None:
        """A call that failed, or that Esc stopped while it was in flight."""
        key = self._ensure_row(event.call_id, event.function)
        self.record_failed(event)
        stopped = is_cancellation(event.error)
        verdict, why = ("stopped", "stopped by Esc before it answered") if stopped else ("✗ error", event.error)
        self._full[key] = (self._full[key][0], why)
        row, call, _, _ = self._details.get(key, ("—", event.function, "", ""))
        self._details[key] = (row, call, verdict, why)
        style = self.get_component_rich_style("suql-calls--muted" if stopped else "calls-table--failed")
        self.update_cell(key, "verdict", Text(verdict, style=style))
        self.update_cell(key, "latency", Text(f"{event.latency_s * 1000:,.0f} ms", justify="right"))
        self.update_cell(key, "evidence", Text(truncate(why, EVIDENCE_CHARS), style=style))
        self._update_subtitle()

    def reset(self, subtitle: str = "") -> None:
        super().reset(subtitle)
        self._details.clear()

    def detail(self, key: str | None) -> Content:
        """One call in full: row, question, verdict and all of its evidence (or the summary)."""
        if key is None or key not in self._details:
            return Content.styled("the highlighted call's verdict and evidence appear here", "$foreground-muted italic")
        row, call, verdict, evidence = self._details[key]
        style = verdict_style(verdict)
        return Content.assemble(
            Content.styled(row, "bold"),
            Content.styled(" · ", "$foreground-muted"),
            call,
            Content.styled(" → ", "$foreground-muted"),
            Content.styled(verdict, style),
            Content.styled("  ", ""),
            Content.styled(evidence, "italic"),
        )

    def _verdict_style(self, verdict: str) -> Any:
        name = {"yes": "suql-calls--yes", "no": "suql-calls--no", "unknown": "suql-calls--unknown"}.get(verdict.lower())
        return self.get_component_rich_style(name) if name else ""


class CompareTable(SafeCells, FreshWidths, DataTable):
    """Compare modes: per mode, the calls, the rows and the wall time of the current query.

    The last column says how far each mode got: waiting, running, its wall time, or why
    it stopped; the highlighted row's tooltip holds the mode's full title (and error).
    The table keeps the comparison's progress: the outcomes of the modes done (:attr:`outcomes`) and the mode
    running (:attr:`current`).
    """

    COLUMNS = (
        ("mode", "mode"),
        ("strategy", "strategy"),
        ("answer()", "answer"),
        ("summary", "summary"),
        ("cached", "cached"),
        ("examined", "examined"),
        ("rows", "rows"),
        ("verify", "to_verify"),
        ("wall", "wall"),
    )
    COMPONENT_CLASSES = {"compare-table--muted", "compare-table--error", "compare-table--running"}
    STRATEGY_CHARS = 20

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._titles: dict[str, str] = {}
        self.outcomes: list[ModeOutcome] = []  # the modes compared so far, in order
        self.current: str | None = None  # the mode running

    def on_mount(self) -> None:
        for label, key in self.COLUMNS:
            self.add_column(label, key=key)

    def start(self, modes: Sequence[tuple[str, str]]) -> None:
        """One waiting row per mode."""
        self.outcomes = []
        self.current = None
        self.clear()
        self._titles = {name: f"{name} — {title}" for name, title in modes}
        muted = self.get_component_rich_style("compare-table--muted")
        for name, title in modes:
            self.add_row(
                Text(name, style="bold"),
                Text(truncate(strategy(title), self.STRATEGY_CHARS)),
                *(Text("", justify="right") for _ in range(6)),
                Text("waiting", style=muted, justify="right"),
                key=name,
            )
        self.border_subtitle = "running…"

    def running(self, mode: str, answer_calls: int = 0, summary_calls: int = 0) -> None:
        style = self.get_component_rich_style("compare-table--running")
        self.update_cell(mode, "mode", Text(mode, style=style))
        self.update_cell(mode, "answer", Text(f"{answer_calls:,}", justify="right"))
        self.update_cell(mode, "summary", Text(f"{summary_calls:,}", justify="right"))
        self.update_cell(mode, "wall", Text("running", style=style, justify="right"))

    def finished(self, row: ModeOutcome, reference: str = "A") -> None:
        self.update_cell(row.mode, "mode", Text(row.mode, style="bold"))
        if row.error is not None:
            self._titles[row.mode] = f"{self._titles.get(row.mode, row.mode)}\nfailed: {row.error}"
            self.update_cell(
                row.mode,
                "wall",
                Text("✗ error", style=self.get_component_rich_style("compare-table--error"), justify="right"),
            )
            return
        values = {
            "answer": f"{row.answer_calls:,}",
            "summary": f"{row.summary_calls:,}",
            "cached": f"{row.cached_calls:,}",
            "examined": f"{row.rows_examined:,}",
            "rows": f"{row.rows:,}" + (" ≈" if row.approximate else ""),
            "to_verify": f"{row.to_verify:,}",
            "wall": f"{row.wall_s:.2f} s",
        }
        if row.agrees is not None:
            self._titles[row.mode] = (
                f"{self._titles.get(row.mode, row.mode)}\n"
                f"{'the same rows as' if row.agrees else 'other rows than'} mode {reference}"
            )
        for key, value in values.items():
            self.update_cell(row.mode, key, Text(value, justify="right"), update_width=True)

    def mode_started(self, mode: str) -> None:
        """The run in ``mode`` began."""
        self.current = mode
        self.running(mode)

    def mode_compared(self, outcome: ModeOutcome) -> None:
        """The run in one mode ended: its line."""
        self.outcomes.append(outcome)
        self.current = None
        self.finished(outcome)

    @property
    def compared(self) -> list[str]:
        """The modes whose runs ended, in order."""
        return [r.mode for r in self.outcomes]

    def stop_early(self, current: str) -> None:
        """The comparison ended early: the running mode says ``current``, the ones after it "not run"."""
        done = self.compared
        for name in MODE_NAMES:
            if name == self.current:
                self.stopped(name, current)
            elif name not in done:
                self.stopped(name, "not run")
        self.border_subtitle = "stopped early"

    def cannot_run(self) -> None:
        """The query cannot run (refused, or wrong): no mode ran it."""
        for name in MODE_NAMES:
            self.stopped(name, "not run")
        self.border_subtitle = "the query cannot run"

    def stopped(self, mode: str, why: str) -> None:
        self.update_cell(mode, "mode", Text(mode, style="bold"))
        self.update_cell(
            mode,
            "wall",
            Text(why, style=self.get_component_rich_style("compare-table--error"), justify="right"),
            update_width=True,
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        title = self._titles.get(str(event.row_key.value))
        self.tooltip = None if title is None else as_text(title)  # an error quotes the server or the query


__all__ = ["CompareTable", "EVIDENCE_CHARS", "SuqlCallsTable", "SuqlResultsTable"]
