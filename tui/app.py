"""The cs224v-tui Textual app: one tab per working area, help, a command palette.

``CS224VApp(settings, clock=...)`` builds a Header (the backend in the subtitle), a
TabbedContent with one :class:`tui.area.WorkArea` per entry of :data:`AREAS`, and a
Footer.  Engine modules are imported lazily (the areas open their sessions in
thread workers), so importing this module stays cheap.

Keys: ``1`` … ``9`` switch tabs when the focus is not in a text box (there digits
are typed; the bindings are deliberately *not* priority bindings), ``Alt+1`` …
``Alt+9`` switch from anywhere; ``?`` and ``F1`` open the help, ``Ctrl+P`` the
command palette, ``Ctrl+Q`` quits.
"""
from __future__ import annotations

import importlib
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from tui.area import PaletteCommand, WorkArea, describe_error
from tui.help import HelpScreen
from tui.palette import AreaCommands

if TYPE_CHECKING:
    from engines.settings import Settings

BACKENDS: tuple[str, ...] = ("sim", "claude")


WARNING_LOGGERS: tuple[str, ...] = ("engines",)
"""Loggers whose warnings the app shows as notifications (the answer cache's trouble, for one): a
warning printed to the terminal would tear the screen."""


class _NotifyHandler(logging.Handler):
    """Shows each warning an engine logs as a notification, from whichever thread logged it."""

    def __init__(self, app: App[None]) -> None:
        super().__init__(level=logging.WARNING)
        self._app = app
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            if threading.get_ident() == self._thread:
                self._app.notify(message, title="Warning", severity="warning", timeout=10)
            else:
                self._app.call_from_thread(self._app.notify, message, title="Warning", severity="warning", timeout=10)
        except Exception:  # the app is closing: the warning has nowhere to go
            pass


@dataclass(frozen=True)
class AreaSpec:
    """A tab: its id and label, the WorkArea class (``"module:Class"``) and its stylesheet."""

    id: str
    title: str
    target: str
    css: str

    def load(self) -> type[WorkArea]:
        module, _, name = self.target.partition(":")
        cls = getattr(importlib.import_module(module), name)
        if not (isinstance(cls, type) and issubclass(cls, WorkArea)) or cls.AREA_ID != self.id:
            raise TypeError(f"{self.target} is not the WorkArea of tab {self.id!r}")
        return cls


AREAS: tuple[AreaSpec, ...] = (
    AreaSpec("restaurants", "Restaurants", "tui.restaurants:RestaurantsArea", "restaurants.tcss"),
    AreaSpec("suql", "SUQL", "tui.suql:SuqlArea", "suql.tcss"),
    AreaSpec("hybridqa", "HybridQA", "tui.hybridqa:HybridArea", "hybridqa.tcss"),
    AreaSpec("kg", "Knowledge graph", "tui.kg:KgArea", "kg.tcss"),
    AreaSpec("lab", "Lab", "tui.lab:LabArea", "lab.tcss"),
)
"""The tabs, in order; tab *n* is on key *n*.  Adding a tab is adding one line here."""


LATENCIES: tuple[float, ...] = (0.0, 0.3, 1.0)
"""Simulated seconds per LLM call offered in the command palette."""


def backend_label(settings: Settings) -> str:
    """The header subtitle: ``sim · seed 224`` or ``claude · claude-sonnet-5-5`` (the planner model)."""
    if settings.backend == "claude":
        return f"claude · {settings.claude_model}"
    latency = f" · {settings.sim_latency_s:g} s per call" if settings.sim_latency_s else ""
    return f"{settings.backend} · seed {settings.seed}{latency}"


def _tab_bindings() -> list[Binding]:
    bindings = []
    for n, spec in enumerate(AREAS[:9], 1):
        action = f"show_tab('{spec.id}')"
        bindings.append(
            Binding(str(n), action, spec.title, show=False,
                    tooltip=f"Show the {spec.title} tab (when not typing in a text box).")
        )
        # Same action: "1" where digits are not typed, "alt+1" anywhere; the tab bar shows the tabs, the help the keys.
        bindings.append(
            Binding(f"alt+{n}", action, spec.title, key_display=f"Alt+{n}", priority=True, show=False,
                    tooltip=f"Show the {spec.title} tab, even while typing.")
        )
    return bindings


def _check_backend(settings: Settings) -> Settings:
    """Build the backend the settings choose (raises ConfigurationError if it cannot run)."""
    from engines.llm.client import backend_from_settings

    backend_from_settings(settings)
    return settings


class CS224VApp(App[None]):
    """Watch LLM agents query structured data."""

    TITLE = "cs224v-tui"
    CSS_PATH = ["app.tcss", *(spec.css for spec in AREAS)]
    COMMANDS = App.COMMANDS | {AreaCommands}
    BINDINGS = [
        *_tab_bindings(),
        Binding("question_mark", "help", "Help", key_display="?",
                tooltip="Open the help: what this tab shows, the keys, the backend."),
        # Same action: the footer shows "?" and, where a text box takes "?", "f1".
        Binding("f1", "help", "Help", key_display="F1", priority=True,
                tooltip="Open (or close) the help, even while typing."),
        Binding("ctrl+q", "quit", "Quit", priority=True, tooltip="Quit the app."),
        # Tabs from anywhere, also where Alt+digit does not reach the app (tmux, some terminals).
        Binding("ctrl+pagedown", "cycle_tab(1)", "Next tab", key_display="^PgDn", priority=True, show=False,
                tooltip="Show the next tab, even while typing."),
        Binding("ctrl+pageup", "cycle_tab(-1)", "Previous tab", key_display="^PgUp", priority=True, show=False,
                tooltip="Show the previous tab, even while typing."),
    ]

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        clock: Callable[[], float] | None = None,
        cursor_blink: bool = True,
    ) -> None:
        """``clock`` times the LLM calls (inject ``lambda: 0.0`` for deterministic screens);
        ``cursor_blink=False`` keeps text cursors steady (snapshot tests)."""
        super().__init__()
        if settings is None:
            from engines.settings import Settings

            settings = Settings()
        self.settings: Settings = settings
        self.clock = clock
        self.cursor_blink = cursor_blink

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="areas", initial=AREAS[0].id):
            for spec in AREAS:
                area_class = spec.load()
                with TabPane(spec.title, id=spec.id):
                    yield area_class(self.settings, clock=self.clock, cursor_blink=self.cursor_blink)
        yield Footer()

    def on_load(self) -> None:
        self._warnings = _NotifyHandler(self)  # before the tabs mount: their sessions open the cache
        for name in WARNING_LOGGERS:
            logging.getLogger(name).addHandler(self._warnings)

    def on_mount(self) -> None:
        self.sub_title = backend_label(self.settings)
        self.active_area.focus_default()

    def on_unmount(self) -> None:
        for name in WARNING_LOGGERS:
            logging.getLogger(name).removeHandler(self._warnings)

    @property
    def areas(self) -> list[WorkArea]:
        return list(self.query(WorkArea))

    @property
    def active_area(self) -> WorkArea:
        pane = self.query_one("#areas", TabbedContent).active_pane
        assert pane is not None
        return pane.query_one(WorkArea)

    def area(self, tab_id: str) -> WorkArea:
        """The work area of the tab ``tab_id``."""
        return self.query_one(f"TabPane#{tab_id}").query_one(WorkArea)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "areas":
            self.active_area.focus_default()

    # --- actions ----------------------------------------------------------------------------------

    def action_show_tab(self, tab_id: str) -> None:
        """Show the tab ``tab_id`` and focus its main input."""
        self.query_one("#areas", TabbedContent).active = tab_id
        self.area(tab_id).focus_default()

    def action_cycle_tab(self, step: int) -> None:
        """Show the tab ``step`` places after (or before) the current one."""
        tabs = self.query_one("#areas", TabbedContent)
        ids = [spec.id for spec in AREAS]
        current = ids.index(tabs.active) if tabs.active in ids else 0
        self.action_show_tab(ids[(current + step) % len(ids)])

    def action_help(self) -> None:
        """Open the help for the current tab (or close it if it is open)."""
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(HelpScreen(self.active_area.HELP))

    def use_backend(self, backend: str) -> None:
        """Switch every area to the ``sim`` or ``claude`` backend.

        The backend is built first in a worker; if it cannot run (``claude`` without an
        API key) an error notification says why and nothing changes.
        """
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if backend == self.settings.backend:
            self.notify(f"Already using {backend_label(self.settings)}.", title="LLM")
            return
        if any(area.is_busy for area in self.areas):
            self.notify("A query is running: press Esc to cancel it, then switch.", title="LLM", severity="warning")
            return
        self._switch_settings({"backend": backend}, name=f"use-{backend}")

    def use_latency(self, seconds: float) -> None:
        """Set the simulated LLM's seconds per call (0 is instant; more lets you watch calls stream in)."""
        if seconds == self.settings.sim_latency_s:
            self.notify(f"The simulated calls already take {seconds:g} s.", title="LLM")
            return
        if any(area.is_busy for area in self.areas):
            self.notify("A query is running: press Esc to cancel it, then change the latency.", title="LLM", severity="warning")
            return
        self._switch_settings({"sim_latency_s": seconds}, name="use-latency")

    def _switch_settings(self, update: dict, *, name: str) -> None:
        """Rebuild every area's session with changed settings (checked first, in a worker)."""
        candidate = self.settings.model_copy(update=update)
        self.run_worker(
            lambda: _check_backend(candidate),
            name=name,
            group="app",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "app":
            return
        if event.state == WorkerState.SUCCESS:
            settings: Settings = worker.result
            self.settings = settings
            self.sub_title = backend_label(settings)
            for area in self.areas:
                area.use_settings(settings)
            self.notify(f"Now using {backend_label(settings)}.", title="LLM")
        elif event.state == WorkerState.ERROR:
            assert worker.error is not None
            backend = worker.name.removeprefix("use-")
            self.notify(
                f"{describe_error(worker.error)}\nStill using {backend_label(self.settings)}.",
                title=f"Cannot use {backend}",
                severity="error",
                timeout=10,
            )

    # --- the command palette -------------------------------------------------------------------

    def palette_commands(self) -> Iterable[PaletteCommand]:
        """Every "Area: action" entry: the LLM switch, then the active tab's, then the others'."""
        for backend in BACKENDS:
            current = " (current)" if backend == self.settings.backend else ""
            what = ("the seeded simulated LLM (offline, repeatable)" if backend == "sim"
                    else f"Claude ({self.settings.claude_model}); needs ANTHROPIC_API_KEY")
            yield PaletteCommand(
                f"LLM: use {backend}{current}",
                f"Rebuild the sessions with {what}; the dialogue is kept.",
                lambda b=backend: self.use_backend(b),
            )
        if self.settings.backend == "sim":
            for seconds in LATENCIES:
                current = " (current)" if seconds == self.settings.sim_latency_s else ""
                yield PaletteCommand(
                    f"LLM: simulated latency {seconds:g} s per call{current}",
                    "Make every simulated LLM call take this long, to watch the calls stream in (0: instant).",
                    lambda t=seconds: self.use_latency(t),
                )
        active = self.active_area
        yield from active.commands()
        for area in self.areas:
            if area is not active:
                yield from area.commands()


def run_app(settings: Settings) -> None:
    """Run the app in the terminal with ``settings``."""
    CS224VApp(settings).run()
