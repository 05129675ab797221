"""The trajectory stepper's widgets: the strip of steps, the step view, and :class:`StepperView`, which holds the
stepper's keys (each posts what was asked to the tab, in a typed message) and renders a
:class:`~tui.kg.stepper_model.StepperModel` (it decides nothing itself)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.kg.results import LIST_CHARS, MUTED, KgResultsTable
from tui.kg.sparql import sparql_content
from tui.kg.stepper_model import OBSERVATION_LINES, StepperModel
from tui.terminal import MULTILINE, terminal_safe
from tui.widgets import TextBox, TextView, as_text, count_rows, truncate

if TYPE_CHECKING:
    from engines.api import Step, Trajectory
    from worlds.kg import KGQuestion

ACTION_NOTES: Mapping[str, str] = {
    "search_wikidata": "search items and properties by label",
    "get_wikidata_entry": "an entity's page, qualifiers included",
    "get_property_examples": "a few statements that use a property",
    "execute_sparql": "run a query: rows · empty · syntax error · timeout",
    "stop": "stop(SPARQL) names the answer query; a bare stop() means the last query that ran",
}
FINISHES: Mapping[str, str] = {
    "stop": "stopped",
    "declined": "stopped without an answer",
    "budget": "out of budget",
    "cancelled": "stopped by Esc",
    "error": "failed",
    "imported": "imported",
}
"""How a trajectory's ``finish`` reads on the status line."""


class StepStrip(TextView):
    """Every step of the trajectory on one line; the current one lit, rolled-back ones struck through."""

    class StepChosen(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cells: list[tuple[int, int, int]] = []  # (first column, last column + 1, position)

    def show(self, steps: Sequence[Step], current: int, *, running: bool) -> None:
        self._cells = []
        if not steps:
            self.update(Content.styled("no steps yet", f"{MUTED} italic"))
            return
        cells: list[Content] = [Content.styled("steps ", MUTED)]
        x = len("steps ")
        for i, step in enumerate(steps):
            label = f"↺{step.index}" if step.rolled_back else str(step.index)
            if step.action == "stop" and not step.rolled_back:
                label += "■"
            if i == current:
                style = "reverse bold $text-warning" if step.rolled_back else "reverse bold $text-accent"
            elif step.rolled_back:
                style = "strike $text-warning"
            elif step.action == "execute_sparql":
                style = {"rows": "$text-success", "empty": "$text-warning"}.get(step.feedback or "", "$text-error")
            else:
                style = "$text"
            cell = Content.styled(f" {label} ", style)
            self._cells.append((x, x + cell.cell_length, i))
            x += cell.cell_length
            cells.append(cell)
        if running:
            cells.append(Content.styled(" …", MUTED))
        self.update(Content("").join(cells))

    def on_click(self, event: Any) -> None:
        """A click on a step shows it (the strip is one line while it fits)."""
        x = event.x - self.styles.padding.left
        for first, end, position in self._cells:
            if first <= x < end and event.y == 0:
                self.post_message(self.StepChosen(position))
                return


class StepView(VerticalScroll, inherit_bindings=False):
    """The current step; ↑/↓ scroll it, the stepper's keys (→ ← n p Home End v) go to the stepper (a class
    keyword: Textual reads ``inherit_bindings`` there, so the scroll container's Home/End/←/→ are not inherited)."""

    BINDINGS = [
        Binding("up", "scroll_up", "Scroll up", show=False, tooltip="Scroll the step up."),
        Binding("down", "scroll_down", "Scroll down", show=False, tooltip="Scroll the step down."),
        Binding("pageup", "page_up", "Page up", show=False, tooltip="Scroll the step up a page."),
        Binding("pagedown", "page_down", "Page down", show=False, tooltip="Scroll the step down a page."),
    ]


_STEP = Binding.Group("Step")
"""The stepper's → and ← keys, shown as one footer entry."""


class QuestionList(OptionList):
    """The stepper's question list. Enter on a group's header (or before anything is highlighted) highlights the
    group's first question, and the tab's status line then says which it is and that Enter runs it."""

    def action_select(self) -> None:
        highlighted = self.highlighted
        if highlighted is None or self.get_option_at_index(highlighted).disabled:
            self.action_cursor_down()  # the next question (the first, when none is highlighted)
            return
        super().action_select()


class StepperView(Horizontal):
    """The stepper: its keys, wherever the focus is in it (except in the path box), each posting what was asked
    (:class:`StepRequested`, :class:`EdgeRequested`, …: the tab keeps the model and decides), and :meth:`show`,
    which renders a :class:`StepperModel` into the run's head, the strip, the budgets, the step and the answer."""

    class StepRequested(Message):
        """→ / n (``delta`` +1) or ← / p (-1): the next or previous step."""

        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    class EdgeRequested(Message):
        """Home (``last`` False) or End (True): the first or the last step."""

        def __init__(self, last: bool) -> None:
            super().__init__()
            self.last = last

    class FullObservationRequested(Message):
        """v: the step's whole observation, or only its first lines again."""

    class RunRequested(Message):
        """r: run the agent on the highlighted question."""

    class ExploreRequested(Message):
        """e: this step elsewhere (its query in the console, its page or search in the browser)."""

    class GoldRequested(Message):
        """g: the question's gold query in the console."""

    class PickRequested(Message):
        """t: the list of every trajectory of the file loaded."""

    BINDINGS = [
        # one footer entry for both directions ("→/n ←/p Step"): at 80 columns the app's keys fit beside them
        Binding(
            "right,n", "step(1)", "Next", key_display="→/n", tooltip="The next step of the trajectory.", group=_STEP
        ),
        Binding(
            "left,p",
            "step(-1)",
            "Previous",
            key_display="←/p",
            tooltip="The previous step of the trajectory.",
            group=_STEP,
        ),
        # Home/End are in the help, not the footer: with Esc Stop during a run, 80 columns hold no more
        Binding("home", "edge(0)", "First", key_display="Home", show=False, tooltip="The first step."),
        Binding(
            "end", "edge(1)", "Last", key_display="End", show=False, tooltip="The last step (the answer and its F1)."
        ),
        # the step view's subtitle names v ("v shows all"): at 80 columns the footer keeps its room for the others
        Binding(
            "v",
            "full",
            "Full observation",
            show=False,
            tooltip="Show the whole observation of the step, or only its first lines again.",
        ),
        Binding("r", "run", "Run", show=False, tooltip="Run the agent on the highlighted question."),
        Binding(
            "e",
            "explore",
            "Explore step",
            show=False,
            tooltip="Open this step in the console (a query) or the browser (a page, a search).",
        ),
        Binding(
            "g", "gold", "Gold query", show=False, tooltip="Put the question's gold SPARQL in the console and run it."
        ),
        Binding(
            "t",
            "pick",
            "Trajectories",
            show=False,
            tooltip="List and search every trajectory of the file loaded; Enter shows one.",
        ),
    ]

    def action_step(self, delta: int) -> None:
        self.post_message(self.StepRequested(delta))

    def action_edge(self, last: int) -> None:
        self.post_message(self.EdgeRequested(bool(last)))

    def action_full(self) -> None:
        self.post_message(self.FullObservationRequested())

    def action_run(self) -> None:
        self.post_message(self.RunRequested())

    def action_explore(self) -> None:
        self.post_message(self.ExploreRequested())

    def action_gold(self) -> None:
        self.post_message(self.GoldRequested())

    def action_pick(self) -> None:
        self.post_message(self.PickRequested())

    def show_questions(self, simple: Sequence[KGQuestion], forum: Sequence[KGQuestion]) -> None:
        """The question list: the simple questions, then the forum-style ones under their categories."""
        from worlds.kg import CATEGORIES

        options: list[Option | None] = [
            Option(Content.styled(f"Simple · {len(simple)} questions", "bold $text-accent"), disabled=True)
        ]
        options.extend(question_option(q) for q in simple)
        by_category: dict[str, list[KGQuestion]] = {}
        for q in forum:
            by_category.setdefault(q.category, []).append(q)
        for category, questions in by_category.items():
            options.append(None)
            options.append(
                Option(
                    Content.assemble(
                        Content.styled(f"{category} ", "bold $text-accent"),
                        Content.styled(
                            truncate(CATEGORIES.get(category, ""), LIST_CHARS - len(category) - 1), "$text-accent"
                        ),
                    ),
                    disabled=True,
                )
            )
            options.extend(question_option(q) for q in questions)
        listing = self.query_one("#kg-questions", OptionList)
        listing.set_options(options)
        listing.border_subtitle = f"{len(simple)} simple · {len(forum)} forum-style"

    # --- rendering the model ------------------------------------------------------------------------------

    def show(self, model: StepperModel) -> None:
        self._show_run_head(model)
        self.query_one(StepStrip).show(model.steps, model.pos, running=model.running)
        self._show_budget(model)
        self._show_step(model)
        self._show_answer(model)

    def show_step(self, model: StepperModel) -> None:
        """Only the step (``v`` toggled the full observation)."""
        self._show_step(model)

    def _show_run_head(self, model: StepperModel) -> None:
        head = self.query_one("#kg-run-head", Static)
        if not model.text:
            head.update(
                Content.styled(
                    "No trajectory yet: run a question (Enter) or load a trajectory JSON.", f"{MUTED} italic"
                )
            )
            return
        q = model.question
        meta = [Content.styled(q.id if q else "not in the question sets", "bold $text-primary")]
        if q is not None:
            meta.append(Content.styled(f" · {category_of(q)}", "$text-primary"))
        engine = model.scored.trajectory.meta.get("engine") if model.scored is not None else None
        model_name = f" ({engine})" if isinstance(engine, str) and engine else ""  # a SPINACH log names its LLM
        meta.append(Content.styled(f" · policy {model.policy or '?'}{model_name}", MUTED))
        if model.running:
            thinking = f" · thinking about step {model.thinking}…" if model.thinking else " · running…"
            meta.append(Content.styled(thinking + " (Esc stops)", "bold $text-warning"))
        elif model.scored is not None:
            trajectory = model.scored.trajectory
            meta.append(Content.styled(f" · finished: {trajectory.finish or '?'}", MUTED))
            if model.scored.source != "run":
                meta.append(Content.styled(f" · {model.scored.source}", MUTED))
        head.update(Content.assemble(Content.styled(_safe(model.text), "bold"), "\n", *meta))

    def _show_budget(self, model: StepperModel) -> None:
        budget = self.query_one("#kg-budget", Static)
        view = model.budget_view()
        if view is None:
            budget.update("")
            return

        def bar(n: int, of: int) -> Content:
            n = min(n, of)
            return Content.assemble(Content.styled("■" * n, "$text-accent"), Content.styled("□" * (of - n), MUTED))

        budget.update(
            Content.assemble(
                Content.styled("state ", MUTED),
                bar(view.in_state, view.limit),
                Content.styled(f" {view.in_state}/{view.limit}", "bold"),
                Content.styled(" · all ", MUTED),
                bar(view.total, view.total_limit),
                Content.styled(f" {view.total}/{view.total_limit}", "bold"),
                Content.styled(" · ", MUTED),
                Content.styled(f"↺ {view.rollbacks}", "bold $text-warning" if view.rollbacks else "bold"),
                Content.styled(" rolled back", MUTED),
            )
        )

    def _show_step(self, model: StepperModel) -> None:
        view = self.query_one(StepView)
        title = self.query_one("#kg-step-title", Static)
        banner = self.query_one("#kg-step-banner", Static)
        observation = self.query_one("#kg-step-observation", Static)
        fields = list(view.query(".kg-field"))
        step = model.current_step
        shown_observation = model.observation_view()
        if step is None or shown_observation is None:
            hint = (
                "The agent is thinking about its first step…"
                if model.running
                else "Choose a question on the left and press Enter to run the SPINACH agent on it (with the app's "
                "backend), or type the path of a trajectory JSON below the list. Then step through it: → / n next, "
                "← / p previous, Home / End first and last, v the full observation."
            )
            title.update(Content.styled(hint, f"{MUTED} italic"))
            title.display = True
            banner.display = False
            for f in fields:
                f.display = False
            observation.display = False
            view.border_title = "Step"
            view.border_subtitle = ""
            return
        for f in fields:
            f.display = True
        title.display = False
        observation.display = True
        view.border_title = as_text(model.step_title(), one_line=True)
        view.border_subtitle = "↑/↓ scroll · v " + ("shows the first lines" if model.full else "shows all")
        rollback = model.rollback_view()
        if rollback is not None:
            where = f"as it was after step {rollback.state_after}" if rollback.state_after else "empty, as at the start"
            banner.update(
                Content.assemble(
                    Content.styled(f" ↺ ROLLED BACK · {rollback.reason} ", "reverse bold $text-warning"),
                    Content.styled(
                        f"  {rollback.why}. The state stays {where}; the policy is asked again "
                        "(a new sample, so the retry differs).",
                        "$text-warning",
                    ),
                )
            )
            banner.display = True
        else:
            banner.display = False
        self.query_one("#kg-step-thought", Static).update(Content(_safe(step.thought) or "—"))
        self.query_one("#kg-step-action", Static).update(
            Content.assemble(
                Content.styled(step.action, "bold $text-accent"),
                Content.styled(f"  {ACTION_NOTES.get(step.action, '')}", f"{MUTED} italic"),
            )
        )
        argument = self.query_one("#kg-step-argument", Static)
        if step.action == "execute_sparql":
            argument.update(sparql_content(_safe(step.argument)))
        else:
            argument.update(Content(_safe(step.argument)) if step.argument else Content.styled("(none)", MUTED))
        self.query_one("#kg-step-feedback", Static).update(observation_label(step))
        shown: Text | Content
        if shown_observation.answer is not None:
            shown = Content.assemble(
                Content.styled(
                    f"(no observation) — the answer is the query of step {shown_observation.answer.index}"
                    f"{shown_observation.note}:",
                    f"{MUTED} italic",
                ),
                "\n",
                sparql_content(_safe(shown_observation.query)),
            )
        elif not shown_observation.text:
            shown = Text("(no observation)", style="italic")
        else:
            shown = Text(_safe(shown_observation.text))
            if shown_observation.hidden_lines:
                shown.append(f"\n… {shown_observation.hidden_lines} more lines — v shows all of it", style="italic")
        if shown_observation.logged is not None:
            shown = Text.assemble(
                shown if isinstance(shown, Text) else Text(shown.plain),
                "\n\n",
                logged_text(shown_observation.logged, full=model.full),
            )
        observation.update(shown)
        observation.set_class(model.full, "-full")
        observation.set_class(step.rolled_back, "-rolled-back")
        view.scroll_home(animate=False)

    def _show_answer(self, model: StepperModel) -> None:
        pane = self.query_one("#kg-answer", Vertical)
        answer = model.answer_view()
        pane.display = answer is not None
        if answer is None:
            return
        scored = answer.scored
        trajectory = scored.trajectory
        head = self.query_one("#kg-answer-head", Static)
        rows = self.query_one("#kg-answer-rows", KgResultsTable)
        parts: list[Content] = [Content.styled("Answer ", "bold $text-accent")]
        # a SPINACH log without a final query logged none: not an answer with no rows, nor the last query run
        none_logged = trajectory.finish == "imported" and not trajectory.final_sparql
        declined = trajectory.finish == "declined"  # the policy said the graph holds nothing it can use
        if trajectory.answer:
            parts.append(Content.styled(count_rows(len(trajectory.answer)), "bold"))
        elif declined:
            parts.append(Content.styled("none: the policy stopped without an answer", "bold $text-warning"))
        elif none_logged:
            parts.append(Content.styled("none logged", "bold $text-warning"))
        else:
            parts.append(Content.styled("no rows", "bold $text-warning"))
        if scored.f1 is not None and scored.em is not None:
            style = "$text-success" if scored.f1 >= 0.999 else ("$text-warning" if scored.f1 > 0 else "$text-error")
            parts += [
                Content.styled("   row-F1 ", MUTED),
                Content.styled(f"{scored.f1:.2f}", f"bold {style}"),
                Content.styled("   EM ", MUTED),
                Content.styled(f"{scored.em:.0f}", f"bold {style}"),
                Content.styled(f"   against {count_rows(scored.gold_rows or 0, 'gold row')}", MUTED),
            ]
        else:
            parts.append(Content.styled("   no gold answer: the question is not in the question sets", MUTED))
        if none_logged:
            parts.append(Content.styled("   · SPINACH's log holds no final query for this question", MUTED))
        elif answer.answer_step is not None:
            parts.append(Content.styled(f"   · the query of step {answer.answer_step.index}", MUTED))
        if trajectory.answer_logged:
            parts.append(Content.styled("   · as SPINACH's log holds them (run on Wikidata, not re-run here)", MUTED))
        head.update(Content("").join(parts))
        if trajectory.answer:
            columns = trajectory.columns or tuple(dict.fromkeys(k for b in trajectory.answer for k in b))
            rows.show_bindings(columns, trajectory.answer)
        elif declined:
            rows.show_nothing(
                "no answer: the policy found nothing in this graph it can use (its last thought says why)"
            )
        elif none_logged:
            rows.show_nothing("none logged: SPINACH's log holds no final query, so no answer, for this question")
        elif trajectory.answer_logged:
            rows.show_nothing("SPINACH's log holds no rows for the final query: the answer is empty")
        else:
            rows.show_nothing("no query in the state returned rows: the answer is empty")
        rows.border_title = "Answer rows"


def status_line(model: StepperModel) -> tuple[str, str]:
    """The status line of a finished (or loaded) trajectory, and its state: done | cancelled | error."""
    scored = model.scored
    if scored is None:
        return "", "idle"
    trajectory = scored.trajectory
    finish = FINISHES.get(trajectory.finish, trajectory.finish or "done")
    parts = [f"{finish} after {count_rows(len(trajectory.steps), 'step')}"]
    if trajectory.rollbacks:
        parts.append(f"{trajectory.rollbacks} rolled back")
    if scored.f1 is not None:
        parts.append(f"row-F1 {scored.f1:.2f} · EM {scored.em:.0f}")
    if scored.source != "run":
        parts.append(f"from {scored.source}" + (f" (+{scored.others} more: t lists them)" if scored.others else ""))
    state = {"cancelled": "cancelled", "error": "error"}.get(trajectory.finish, "done")
    return " · ".join(parts) + " — ←/→ step through it", state


def _safe(text: str) -> str:
    """Text of a trajectory file as it may reach the terminal: control characters, C1 and bidi controls escaped."""
    return terminal_safe(text, keep=MULTILINE)


def logged_text(record: Mapping[str, Any], *, full: bool) -> Text:
    """A SPINACH log's record of a step's query: the rows it returned on Wikidata (cut to the observation's
    first lines unless ``full``), its status, and the query with its IDs' labels (SPINACH's preverbalized form)."""
    from engines.api import result_bindings, rows_lines

    columns, rows = result_bindings(record.get("execution_result"))
    status = record.get("execution_status")
    what = "no result" if rows is None else count_rows(len(rows))
    out = Text.assemble(
        ("Logged result", "bold"),
        (
            f" — {what}"
            + (f", status {_safe(str(status))}" if status else "")
            + " (SPINACH ran it on Wikidata; not re-run here)",
            "italic",
        ),
    )
    lines = rows_lines(columns, rows or (), indent="  ")
    shown = lines if full else lines[:OBSERVATION_LINES]
    for line in shown:
        out.append("\n" + _safe(line))
    if len(lines) > len(shown):
        out.append(f"\n  … {len(lines) - len(shown)} more rows — v shows all of them", style="italic")
    pre = record.get("preverbalized")
    if isinstance(pre, str) and pre.strip() and pre.strip() != str(record.get("sparql", "")).strip():
        out.append("\nWith labels: ", style="bold")
        out.append(_safe(pre))
    return out


class TrajectoryPicker(ModalScreen[int | None]):
    """Every trajectory of a file, searchable: type to narrow (words of the question or the final query, or a
    number), Enter shows the highlighted one, Esc closes.  Dismisses with its position (0-based) or None."""

    SHOWN = 300
    """Matches listed at once; type to narrow the rest."""
    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Close the list; the trajectory shown stays."),
        Binding("down", "down", "Next", show=False, tooltip="Highlight the next trajectory."),
        Binding("up", "up", "Previous", show=False, tooltip="Highlight the previous trajectory."),
    ]

    def __init__(self, trajectories: Sequence[Trajectory], source: str, current: int | None = None) -> None:
        super().__init__()
        self.trajectories = list(trajectories)
        self.source = source
        self.current = current
        self.shown: list[int] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="kg-picker-dialog") as dialog:
            dialog.border_title = as_text(f"Trajectories of {self.source} · {len(self.trajectories)}", one_line=True)
            search = TextBox(placeholder="words of the question or the query, or a number", id="kg-picker-search")
            search.border_title = "Search · Enter shows the highlighted one"
            yield search
            yield OptionList(id="kg-picker-list")
            yield Static("type to narrow · ↑/↓ choose · Enter show · Esc close", id="kg-picker-hint")

    def on_mount(self) -> None:
        self.refilter("")
        self.query_one("#kg-picker-search", Input).focus()

    def refilter(self, text: str) -> None:
        from engines.api import matching, summary

        found = matching(self.trajectories, text)
        self.shown = found[: self.SHOWN]
        options = self.query_one("#kg-picker-list", OptionList)
        options.set_options(
            Option(
                as_text(
                    Content.assemble(
                        Content.styled(f"{n + 1:>4} ", MUTED),
                        Content(truncate(self.trajectories[n].question, 200)),
                        Content.styled(f"  {summary(self.trajectories[n])}", MUTED),
                    )
                ),
                id=f"trajectory-{n}",
            )
            for n in self.shown
        )
        more = len(found) - len(self.shown)
        options.border_subtitle = f"{len(found)} of {len(self.trajectories)} match" + (
            f" · {more} not listed: type to narrow" if more else ""
        )
        if self.shown:
            options.highlighted = self.shown.index(self.current) if self.current in self.shown else 0

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refilter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose(self.query_one("#kg-picker-list", OptionList).highlighted)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option_index)

    def _choose(self, highlighted: int | None) -> None:
        if highlighted is not None and 0 <= highlighted < len(self.shown):
            self.dismiss(self.shown[highlighted])

    def action_down(self) -> None:
        self.query_one("#kg-picker-list", OptionList).action_cursor_down()

    def action_up(self) -> None:
        self.query_one("#kg-picker-list", OptionList).action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)


def category_of(question: KGQuestion) -> str:
    return "simple" if question.category == "simple" else f"forum {question.category}"


def question_option(question: KGQuestion) -> Option:
    """The question's number and its whole text, wrapped under itself."""
    number = question.id.split("_")[-1]
    lines = textwrap.wrap(question.question, LIST_CHARS - 3) or [""]
    return Option(
        as_text(Content.assemble(Content.styled(f"{number:>2} ", MUTED), "\n   ".join(lines))), id=question.id
    )


def observation_label(step: Step) -> Content:
    if step.rolled_back:
        return Content.styled("not run — rolled back", "bold $text-warning")
    if step.action == "execute_sparql" and step.feedback:
        style = {"rows": "$text-success", "empty": "$text-warning"}.get(step.feedback, "$text-error")
        label = step.feedback.replace("_", " ")
        extra = f" · {count_rows(step.row_count)}" if step.feedback == "rows" and step.row_count is not None else ""
        return Content.assemble(Content.styled(f" {label} ", f"reverse bold {style}"), Content.styled(extra, "bold"))
    lines = step.observation.count("\n") + 1 if step.observation else 0
    return Content.styled(count_rows(lines, "line") if lines else "", MUTED)


__all__ = [
    "ACTION_NOTES",
    "FINISHES",
    "QuestionList",
    "StepStrip",
    "StepView",
    "StepperView",
    "TrajectoryPicker",
    "category_of",
    "logged_text",
    "observation_label",
    "question_option",
    "status_line",
]
