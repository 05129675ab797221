"""The Lab tab: every experiment of lectures 6–8, run by the engines and shown as a table and a chart.

Left: the experiments grouped by lecture (section and title) and the size switch (small / full).
Right: the caption of the highlighted experiment (which inputs are simulation parameters, which
numbers are measured), a progress bar while it runs, the result table, the notes ("holds — …" /
"differs — …" against the lecture notes) and a chart (textual-plotext) when the table has one.

``Experiment.run`` runs in a thread worker of the group ``"lab"``; its ``progress`` callback posts
:class:`ExperimentProgressed` messages (thread-safe), Esc sets the run's cancel flag and the engine
raises ``Cancelled`` at its next step.  Results of this session are kept per (experiment, size) and
shown again when the experiment is highlighted again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import ProgressBar, RadioButton, RadioSet, Static, Tree
from textual_plotext import PlotextPlot

from tui.area import PaletteCommand, StatusLine, WorkArea, describe_error
from tui.chart_choice import round_axis
from tui.widgets import ResultsTable, TextView

if TYPE_CHECKING:
    from engines.api import Chart, Experiment, LabSize, Settings, Table


def _stable_plotext() -> None:
    """Make plotext draw the same picture every run.

    plotext removes duplicate points with ``list(set(...))``; the points hold strings (markers, colours),
    so their order — and which of two overlapping points wins a cell — follows the per-process string
    hash seed.  Its own commented-out alternative, ``dict.fromkeys``, keeps the first-seen order.
    """
    import plotext._utility as utility

    utility.no_duplicates = lambda data: list(dict.fromkeys(data))


_stable_plotext()

SIZES: tuple[LabSize, ...] = ("small", "full")
DEFAULT_SIZE: LabSize = "full"
"""The size the tab starts with: the experiment as the lecture notes define it."""


class ExperimentProgressed(Message):
    """The running experiment reported progress (posted from the worker thread)."""

    def __init__(self, name: str, done: int, total: int, message: str) -> None:
        super().__init__()
        self.name = name
        self.done = done
        self.total = total
        self.message = message


@dataclass(frozen=True)
class ExperimentRan:
    """What a run worker returns: the experiment, the size it ran at, its table."""

    name: str
    size: str
    table: Table


def fitted_label(section: str, title: str, width: int) -> Text:
    """``section title`` in at most ``width`` cells: the title cut after a whole word, with "…"."""
    full = f"{section} {title}"
    if cell_len(full) <= width:
        return Text.assemble((section, "dim"), " ", title)
    room = width - cell_len(section) - 2  # a space, and the ellipsis
    words, kept = title.split(" "), ""
    for word in words:
        candidate = f"{kept} {word}" if kept else word
        if cell_len(candidate) > room:
            break
        kept = candidate
    if not kept:  # not even the first word fits: cut it (the section stays whole)
        kept = title[: max(room, 0)]
    return Text.assemble((section, "dim"), " ", kept, "…")


class ExperimentTree(Tree[Any]):
    """The experiments grouped by lecture; Enter or Ctrl+J on an experiment posts :class:`RunRequested`."""

    BINDINGS = [
        Binding(
            "enter,ctrl+j",
            "run",
            "Run",
            key_display="⏎/^J",
            tooltip="Run the highlighted experiment (on a lecture: fold or unfold it).",
        ),
    ]

    class RunRequested(Message):
        """The user asked to run the experiment ``name``."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.full_labels: dict[Any, tuple[str, str]] = {}  # leaf id -> (section, title), cut by fit_labels

    def label_width(self) -> int:
        """The cells a leaf's label has: the tree's width less the guide and a cell of margin."""
        return max(self.scrollable_content_region.width - self.guide_depth - 1, 8)

    def on_resize(self) -> None:
        self.fit_labels()

    def fit_labels(self) -> None:
        """Each experiment's "section title" cut at a word to fit the width, with an ellipsis (not mid-word)."""
        width = self.label_width()
        for lecture in self.root.children:
            for leaf in lecture.children:
                if leaf.id in self.full_labels:
                    leaf.set_label(fitted_label(*self.full_labels[leaf.id], width))

    def action_run(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if isinstance(node.data, str):
            self.post_message(self.RunRequested(node.data))
        else:
            node.toggle()


class LabArea(WorkArea):
    """The Lab tab (see the module docstring)."""

    AREA_ID = "lab"
    STATUS_ID = "lab-status"
    RESULTS_IDS = ("lab-table",)
    TITLE = "Lab"
    HELP = """\
## Lab — the experiments of lectures 6–8

Every demo and exercise of the lectures that ends in a table or a chart, as a named experiment that
**runs the engines** (nothing is copied from the notes). **Left:** the experiments grouped by lecture,
with the section of the notes and a title, and the size: *full* is the experiment as the notes define
it, *small* a reduced run (seconds; what the tests use). **Right:** the caption — which inputs are
*simulation parameters* (the simulated LLM's seed and error rates, the generated worlds) and which
numbers are *measured* — then a progress bar while it runs, the table, the notes and a chart where a
picture reads better.

**Notes.** Our worlds and our simulated LLM are not the notes'; our numbers differ. What must hold is
the *shape* of each result (which approach wins, what an ablation costs). A note starting with
**holds** says the shape the notes report holds here, with what was measured; **differs** (in the
warning colour) says it does not, and why.

| key | what it does |
| --- | --- |
| ↑ / ↓ (in the list) | highlight an experiment: its caption, and its table if it ran in this session |
| Enter / Ctrl+J | run the highlighted experiment at the chosen size |
| Space | fold or unfold a lecture |
| s | switch the size between small and full |
| Esc | cancel the running experiment (it stops at its next step) |
| Tab / Shift+Tab | move between the list, the size switch and the table |

Results of this session are kept (per experiment and size) and shown again when you come back to an
experiment. The same experiments run headless: `cs224v-tui lab list`, `cs224v-tui lab run NAME [--small] [--json]`.
In the command palette (Ctrl+P), type *Lab* to run any experiment by name or change the size.
"""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", tooltip="Cancel the running experiment; it stops at its next step."),
        Binding("s", "toggle_size", "Size", tooltip="Switch the size of the next run between small and full."),
    ]

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.run_size = DEFAULT_SIZE
        self._selected: str | None = None
        self._experiment_running: str | None = None  # its name (not `_running`: Textual's MessagePump has one)
        self._results: dict[tuple[str, str], Table] = {}
        self._experiments: dict[str, Experiment] = {}

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from engines.api import lab

        self._experiments = {e.name: e for e in lab.experiments()}
        with Horizontal(id="lab-columns"):
            with Vertical(id="lab-left"):
                tree = ExperimentTree("Experiments", id="lab-list")
                tree.show_root = False
                tree.guide_depth = 2
                tree.border_title = "Experiments · Enter runs"
                tree.border_subtitle = f"{len(self._experiments)} experiments"
                for lecture in lab.lectures():
                    node = tree.root.add(Text(f"Lecture {lecture}", style="bold"), expand=True)
                    for e in lab.experiments(lecture):
                        leaf = node.add_leaf(Text.assemble((e.section, "dim"), " ", e.title), data=e.name)
                        tree.full_labels[leaf.id] = (e.section, e.title)  # what fit_labels cuts to the width
                yield tree
                with RadioSet(id="lab-size") as sizes:
                    sizes.border_title = "Size · s switches"
                    for size in SIZES:
                        yield SizeButton(size, value=size == self.run_size, id=f"lab-size-{size}")
            with Vertical(id="lab-right"):
                caption = TextView(id="lab-caption")
                caption.border_title = "Experiment"
                yield caption
                with Horizontal(id="lab-progress-row"):
                    yield ProgressBar(id="lab-progress", show_eta=False)
                    yield TextView(id="lab-progress-text")
                table = ResultsTable(id="lab-table")
                table.border_title = "Table"
                yield table
                with Horizontal(id="lab-bottom"):
                    notes = VerticalScroll(TextView(id="lab-notes-text"), id="lab-notes")
                    notes.border_title = "Notes"
                    yield notes
                    chart = PlotextPlot(id="lab-chart")
                    chart.border_title = "Chart"
                    yield chart
        yield StatusLine(id="lab-status")

    def on_mount(self) -> None:
        self.query_one("#lab-progress-row").display = False
        tree = self.query_one(ExperimentTree)
        first = next(iter(self._experiments), None)
        if first is not None:
            tree.move_cursor(self._node(first))
            self.select(first)
        self._set_status("ready — highlight an experiment, Enter runs it", "idle")

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def focus_default(self) -> None:
        self.query_one(ExperimentTree).focus()

    # --- actions (public: the app, the palette and the tests call them) ----------------------

    @property
    def selected(self) -> str | None:
        """The name of the highlighted experiment."""
        return self._selected

    def select(self, name: str) -> None:
        """Show experiment ``name``: its caption, and its table if it ran in this session."""
        experiment = self._experiments[name]
        self._selected = name
        if self.query_one(ExperimentTree).cursor_node is not self._node(name):
            self.query_one(ExperimentTree).move_cursor(self._node(name))
        caption = self.query_one("#lab-caption", Static)
        caption.border_title = f"{experiment.name} — lecture {experiment.lecture}, {experiment.section}"
        self._show_result(name)

    def _caption(self, experiment) -> str:
        """The caption with the figures of the size the next run uses."""
        from engines.api import EngineError

        try:
            return experiment.caption_for(self.run_size, settings=self.settings)
        except EngineError as e:
            return str(e)

    def set_size(self, size: str) -> None:
        """Run the next experiment at ``size`` (``"small"`` or ``"full"``)."""
        chosen = next((s for s in SIZES if s == size), None)
        if chosen is None:
            raise ValueError(f"size must be one of {', '.join(SIZES)}, not {size!r}")
        self.run_size = chosen
        button = self.query_one(f"#lab-size-{size}", RadioButton)
        if not button.value:
            with self.prevent(RadioSet.Changed):
                button.value = True
        # the RadioSet's cursor (its highlighted button) follows: left behind, it reads as the size chosen
        sizes = self.query_one("#lab-size", RadioSet)
        if sizes._selected is not None:
            sizes._selected = SIZES.index(size)
        if self._selected is not None:
            self._show_result(self._selected)

    def run_experiment(self, name: str | None = None, size: str | None = None) -> bool:
        """Run ``name`` (default: the highlighted one) at ``size`` (default: the switch's) in a worker."""
        name = name or self._selected
        if name is None:
            return False
        if size is not None:
            self.set_size(size)
        if self.is_busy:
            self.notify(
                f"{self._experiment_running} is running: press Esc to cancel it first.", title="Lab", severity="warning"
            )
            return False
        if name != self._selected:
            self.select(name)
        experiment = self._experiments[name]
        size = self.run_size
        self._experiment_running = name
        self._cancel = cancel = threading.Event()
        self._show_progress(0, 0, "starting…")
        self._set_status(f"running {name} ({size})… — Esc cancels", "running")
        settings = self.settings

        def progress(done: int, total: int, message: str) -> None:
            self.post_message(ExperimentProgressed(name, done, total, message))

        def work() -> ExperimentRan:
            table = experiment.run(size, progress=progress, cancel=cancel, settings=settings)
            return ExperimentRan(name, size, table)

        self.run_engine(work, name="run", done=self._finished, failed=self._failed, busy=f"{name} is running")
        self.refresh_bindings()
        return True

    def cancel(self) -> bool:
        """Ask the running experiment to stop at its next step."""
        return self.request_cancel(f"cancelling {self._experiment_running}…")

    def action_cancel(self) -> None:
        self.cancel()

    def action_toggle_size(self) -> None:
        self.set_size("full" if self.run_size == "small" else "small")

    def export_sources(self) -> list[Any]:
        """Every table that shows, the experiment's named after it: ``lab-<experiment>-<size>-<time>.csv``."""
        from tui.export import slug

        sources = super().export_sources()
        found = self._shown_result(self._selected) if self._selected in self._experiments else None
        for source in sources:
            if found is not None and source.widget is not None and source.widget.id == "lab-table":
                source.name = f"{slug(str(self._selected))}-{found[0]}"
        return sources

    def use_settings(self, settings: Settings) -> None:
        """Another backend: the kept results were measured with the old one, so they are dropped."""
        self.settings = settings
        self._results.clear()
        if self._selected is not None:
            self._show_result(self._selected)

    def commands(self) -> Iterable[PaletteCommand]:
        if self.is_busy:
            yield PaletteCommand(
                f"Lab: cancel {self._experiment_running}", "It stops at its next step (Esc).", self.cancel
            )
        for size in SIZES:
            current = " (current)" if size == self.run_size else ""
            yield PaletteCommand(
                f"Lab: size {size}{current}", "The size of the next run (s switches).", partial(self.set_size, size)
            )
        for e in self._experiments.values():
            yield PaletteCommand(
                f"Lab: run {e.name} — {e.title}",
                f"Lecture {e.lecture}, {e.section}; at the chosen size.",
                partial(self.run_experiment, e.name),
            )

    # --- events ------------------------------------------------------------------------------------

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        event.stop()
        if isinstance(event.node.data, str) and event.node.data != self._selected:
            self.select(event.node.data)

    def on_experiment_tree_run_requested(self, event: ExperimentTree.RunRequested) -> None:
        event.stop()
        self.run_experiment(event.name)

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        label = event.pressed.label
        self.set_size(str(label.plain if hasattr(label, "plain") else label))

    def on_experiment_progressed(self, event: ExperimentProgressed) -> None:
        event.stop()
        if event.name == self._experiment_running and self.is_busy:
            self._show_progress(event.done, event.total, event.message)

    def _finished(self, result: ExperimentRan) -> None:
        self._experiment_running = None
        self._hide_progress()
        self._results[(result.name, result.size)] = result.table
        self._set_status(
            f"done — {result.name} ({result.size}): {_count(len(result.table.rows), 'row')}, "
            f"{_count(len(result.table.notes), 'note')}",
            "done",
        )
        if result.name == self._selected:
            if result.size != self.run_size:
                self.set_size(result.size)
            self._show_result(result.name)
        else:
            self.notify(f"{result.name} finished; highlight it to see its table.", title="Lab")

    def _failed(self, error: BaseException) -> None:
        from engines.api import Cancelled

        running, self._experiment_running = self._experiment_running, None
        self._hide_progress()
        if isinstance(error, Cancelled):
            self._set_status(f"cancelled {running} — Enter runs it again", "cancelled")
            return
        self._set_status(f"{running} failed: {describe_error(error)}", "error")

    # --- view helpers ------------------------------------------------------------------------------

    def _node(self, name: str):
        tree = self.query_one(ExperimentTree)
        for lecture in tree.root.children:
            for leaf in lecture.children:
                if leaf.data == name:
                    return leaf
        raise KeyError(name)

    def _shown_result(self, name: str) -> tuple[str, Table] | None:
        """The table shown for ``name``: of the size the next run uses, else of the other size, if it ran."""
        sizes = [self.run_size, *(s for s in SIZES if s != self.run_size)]
        return next(((s, self._results[(name, s)]) for s in sizes if (name, s) in self._results), None)

    def _show_result(self, name: str) -> None:
        table = self.query_one("#lab-table", ResultsTable)
        notes = self.query_one("#lab-notes-text", Static)
        chart = self.query_one("#lab-chart", PlotextPlot)
        found = self._shown_result(name)
        experiment = self._experiments[name]
        text = found[1].caption if found is not None and found[1].caption else self._caption(experiment)
        self.query_one("#lab-caption", Static).update(Content.assemble((experiment.title, "bold"), "\n", text))
        if found is None:
            table.show_nothing("not run yet — Enter runs it")
            table.border_title = "Table"
            notes.update(
                Content.styled(
                    "Run the experiment (Enter) to measure its table; the notes say which "
                    "shapes of the lecture notes hold here.",
                    "$foreground-muted italic",
                )
            )
            chart.display = False
            return
        size, result = found
        table.show_rows(result.columns, result.rows)  # typed: the table formats each column of numbers alike
        table.border_title = f"Table · {name} ({size})"
        notes.update(_notes_content(result.notes) if result.notes else Content.styled("no notes", "$foreground-muted"))
        if result.chart is None:
            chart.display = False
        else:
            chart.display = True
            chart.border_title = result.chart.title
            _draw(chart, result.chart)

    def _show_progress(self, done: int, total: int, message: str) -> None:
        self.query_one("#lab-progress-row").display = True
        bar = self.query_one("#lab-progress", ProgressBar)
        if total > 0:
            bar.update(total=total, progress=done)
        else:
            bar.update(total=None)
        text = f"{self._experiment_running}: {message}" if message else f"{self._experiment_running}"
        self.query_one("#lab-progress-text", Static).update(text)

    def _hide_progress(self) -> None:
        self.query_one("#lab-progress-row").display = False


class SizeButton(RadioButton):
    """A size's radio button whose mark says which is chosen without colour: ● chosen, ○ not."""

    BUTTON_INNER = "○"

    def watch_value(self) -> None:
        self.BUTTON_INNER = "●" if self.value else "○"
        super().watch_value()
        self.refresh()


# --- pure helpers ----------------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _notes_content(notes: Iterable[str]) -> Content:
    """One bullet per note: "holds" in the success colour, a "differs" line in the warning colour."""
    lines: list[Content] = []
    for note in notes:
        if note.startswith("holds"):
            lines.append(Content.assemble("• ", ("holds", "bold $text-success"), note[len("holds") :]))
        elif note.startswith("differs"):
            lines.append(Content.assemble("• ", ("differs", "bold $warning"), (note[len("differs") :], "$warning")))
        else:
            lines.append(Content.assemble("• ", note))
    return Content("\n").join(lines)


def _draw(widget: PlotextPlot, chart: Chart) -> None:
    """Draw ``chart`` (bar: one bar per series in each category; line: one line per series)."""
    plt = widget.plt
    plt.clear_figure()  # the title is the border title of the widget
    plt.xlabel(chart.x_label)
    plt.ylabel(chart.y_label)
    labels = list(chart.x)
    if chart.kind == "bar":
        values = [[0.0 if v is None else float(v) for v in s.values] for s in chart.series]
        # One series needs no legend (the chart's title names it); thinner bars leave room between
        # categories in the narrow chart pane.
        if len(values) == 1:
            plt.bar(labels, values[0], width=0.5)
        else:
            # textual_plotext's stub says `label`; plotext's figure takes `labels` (the legend: one per series)
            plt.multiple_bar(labels, values, labels=[s.name for s in chart.series], width=0.8)  # type: ignore[call-arg]
        top = max((v for vs in values for v in vs), default=0.0)
        if 0 < top <= 10 and all(v == int(v) for vs in values for v in vs):  # counts: whole-number ticks
            ticks = [float(t) for t in range(0, int(top) + 1)]
        elif top > 0:
            _, top, ticks = round_axis(0.0, top)  # round ticks that end at the axis's top: 0 … 1 for scores
        else:
            ticks = []
        if ticks:
            plt.yticks(ticks, [f"{t:g}" for t in ticks])
        if len(values) > 1 and top > 0:
            # plotext draws the legend over the top rows of the plot: leave those rows above the
            # tallest bar, or a bar of exactly 1.00 reads as about 0.9 under the legend (the ticks stop at the
            # top: the rows above it carry no tick, so 0-1 scores read 0 … 1, not 0 … 1.33)
            # the plot's rows (less axis, labels, border); a chart not laid out yet counts on a dozen
            rows = max(widget.size.height - 4 if widget.size.height >= 10 else 12, len(values) + 3)
            plt.ylim(0, top * rows / (rows - len(values) - 1))
        elif top > 0:
            plt.ylim(0, top)
    else:
        positions: list[float] = list(range(1, len(labels) + 1))  # whole numbers, as plotext's ticks take them
        for s in chart.series:
            points = [(x, float(v)) for x, v in zip(positions, s.values) if v is not None]
            if points:
                plt.plot([p[0] for p in points], [p[1] for p in points], label=s.name, marker="braille")
        plt.xticks(positions, labels)
        drawn = [float(v) for s in chart.series for v in s.values if v is not None]
        if drawn:
            low, high, ticks = round_axis(min(drawn), max(drawn))
            plt.ylim(low, high)
            plt.yticks(ticks, [f"{t:g}" for t in ticks])
    widget.refresh()
