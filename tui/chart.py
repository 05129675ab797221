"""The chart view of a result table (c while a table has the focus; the palette's "Chart the focused table").

:class:`ChartScreen` draws the table's full, typed data (``tui.export.table_data``) with textual-plotext: the
chart :func:`tui.chart_choice.choose` picks, a line above it saying which columns and what was bounded, and keys to
change it (k the kind, x and y the columns, a sum or mean).  Esc closes; F9 exports the table the chart was drawn
from (the app's export asks :attr:`ChartScreen.export_source`).  A table with nothing to chart shows why instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static
from textual_plotext import PlotextPlot

from tui.chart_choice import (
    ChartData,
    ChartSpec,
    Column,
    NothingToChart,
    build,
    choose,
    column_types,
    cycle,
    nice_ticks,
)
from tui.export import ExportSource
from tui.widgets import TextView, as_text

HINT = "k kind · x / y columns · a sum/mean · F9 exports the table · Esc closes"
NOTHING_HINT = "F9 exports the table · Esc closes"


class ChartScreen(ModalScreen[None]):
    """A chart of one table's rows; the keys change the kind and the columns."""

    DEFAULT_CSS = """
    ChartScreen {
        align: center middle;
        background: $background 60%;
    }
    #chart-dialog {
        width: 95%;
        height: 90%;
        border: round $primary;
        border-title-color: $text-primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    #chart-dialog.-nothing {
        height: auto;
    }
    #chart-caption {
        height: auto;
        color: $text-accent;
    }
    #chart-message {
        height: auto;
        color: $text-warning;
        text-style: bold;
    }
    #chart-plot {
        height: 1fr;
    }
    #chart-hint {
        height: auto;
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Close the chart."),
        Binding("k", "cycle('kind')", "Kind", tooltip="Bar chart, lines or histogram (those the table has)."),
        Binding("x", "cycle('x')", "x", tooltip="The next column for the x axis (a histogram: the next number)."),
        Binding("y", "cycle('y')", "y", tooltip="The next column for the y axis (a bar chart: count(*) too)."),
        Binding(
            "a", "cycle('aggregate')", "Sum/mean", tooltip="A bar chart adds a category's rows up, or averages them."
        ),
    ]

    def __init__(self, source: ExportSource) -> None:
        super().__init__()
        self.source = source
        self.columns: list[str] = [str(c) for c in source.columns]
        self.rows: Sequence[Sequence[Any]] = source.rows
        self.cols: list[Column] = column_types(self.columns, self.rows)
        chosen = choose(self.columns, self.rows)
        self.spec: ChartSpec | None = chosen if isinstance(chosen, ChartSpec) else None
        self.result: ChartData | NothingToChart = chosen if isinstance(chosen, NothingToChart) else self._build()

    @property
    def export_source(self) -> ExportSource:
        """What F9 exports here: the table the chart was drawn from, every row of it."""
        return self.source

    def _build(self) -> ChartData | NothingToChart:
        assert self.spec is not None
        return build(self.columns, self.rows, self.spec)

    def compose(self) -> ComposeResult:
        with Vertical(id="chart-dialog") as dialog:
            dialog.border_title = as_text(f"Chart — {self.source.title}", one_line=True)
            dialog.border_subtitle = self.source.label
            yield TextView("", id="chart-caption")
            yield TextView("", id="chart-message")
            yield PlotextPlot(id="chart-plot")
            yield Static(HINT, id="chart-hint", markup=False)

    def on_mount(self) -> None:
        self._show()

    def on_resize(self) -> None:
        self._show()

    @property
    def caption(self) -> str:
        """The line above the chart (what is drawn), or the reason nothing is."""
        return self.result.caption if isinstance(self.result, ChartData) else self.result.message

    def _show(self) -> None:
        caption = self.query_one("#chart-caption", TextView)
        message = self.query_one("#chart-message", TextView)
        plot = self.query_one("#chart-plot", PlotextPlot)
        nothing = isinstance(self.result, NothingToChart)
        self.query_one("#chart-dialog").set_class(nothing, "-nothing")
        self.query_one("#chart-hint", Static).update(NOTHING_HINT if nothing else HINT)
        if isinstance(self.result, NothingToChart):
            caption.display = False
            message.display = True
            message.update(self.result.message)
            plot.display = False
            return
        caption.display = True
        message.display = False
        caption.update(self.result.caption)
        plot.display = True
        draw(plot, self.result)

    def action_cycle(self, what: Literal["kind", "x", "y", "aggregate"]) -> None:
        if self.spec is None:
            return
        self.spec = cycle(self.cols, self.spec, what)
        self.result = self._build()
        self._show()

    def action_close(self) -> None:
        self.dismiss(None)


def draw(widget: PlotextPlot, data: ChartData) -> None:
    """Draw ``data`` in ``widget``: horizontal bars (the largest on top, labels beside them), lines, or a
    histogram's bars; y ticks at round values (0 … 1 for scores, not 0 … 1.33)."""
    plt = widget.plt
    plt.clear_figure()
    kind = data.spec.kind
    if kind == "bar":
        labels = list(reversed(data.labels))  # plotext draws the first bar at the bottom
        values = list(reversed(data.values))
        plt.bar(labels, values, orientation="horizontal", width=0.6)
        plt.xlabel(data.y_label)
        _value_ticks(plt, values, axis="x")
    elif kind == "histogram":
        positions: list[float] = [float(i) for i in range(1, len(data.labels) + 1)]
        plt.bar(positions, list(data.values), width=0.9)
        step = max(1, len(positions) // 6)
        plt.xticks(positions[::step], list(data.labels)[::step])
        plt.xlabel(data.x_label)
        plt.ylabel(data.y_label)
        _value_ticks(plt, data.values, axis="y")
    else:
        plt.plot(list(data.xs), list(data.values), marker="braille")
        if data.ticks:
            plt.xticks([t[0] for t in data.ticks], [t[1] for t in data.ticks])
        plt.xlabel(data.x_label)
        plt.ylabel(data.y_label)
    widget.refresh()


def _value_ticks(plt: Any, values: Sequence[float], *, axis: Literal["x", "y"]) -> None:
    """Round ticks from 0 to the largest value along the value axis (bars start at 0)."""
    low = min(0.0, *values) if values else 0.0
    high = max(0.0, *values) if values else 0.0
    if high <= low:
        return
    ticks = nice_ticks(low, high)
    if not ticks:
        return
    labels = [f"{t:g}" if abs(t) < 1e6 else f"{t:.2e}" for t in ticks]
    if axis == "x":
        plt.xticks(ticks, labels)
    else:
        plt.yticks(ticks, labels)


__all__ = ["ChartScreen", "draw"]
