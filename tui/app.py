"""The cs224v-tui Textual app: one tab per working area, help, a command palette.

``CS224VApp(settings, clock=...)`` builds a Header (the backend in the subtitle), a
TabbedContent with one :class:`tui.area.WorkArea` per entry of :data:`AREAS`, and a
Footer.  Engine modules are imported lazily (the areas open their sessions in
thread workers), so importing this module stays cheap.

Start-up: the first frame is the Header, the tab bar (each pane saying it is opening) and the
Footer with its keys, drawn before anything of the engines is imported.  Only then, in a worker:
the settings are built (``cs224v-tui`` hands the app a function that builds them, so pydantic,
pydantic-settings and httpx stay off the first frame; settings that do not validate close the app
and the command line says why), the shown tab's module is imported in a thread (the event loop
keeps drawing) and its WorkArea mounted; each area opens its engine session in a thread worker
behind a loading status.  Another tab is built the first time it shows.

Keys (:data:`KEYS` is what the help lists; a test checks it against the bindings): no tab
or mode key is a printable character or depends on Alt.  ``F2`` … ``F6`` show tab 1 … 5
and put the cursor in its question box or editor (press it again to jump back there),
``Ctrl+PgDn``/``Ctrl+PgUp`` the next/previous tab, ``F8`` maximises the focused pane and
restores it, ``F9`` exports the focused table (or the tab's first one) to a file, ``Shift+F9`` opens the
copy menu (cell, row, query, read-back), ``Ctrl+C`` in a table copies the highlighted cell (or row), ``v``
in a table shows the highlighted cell in full, ``F1`` (or ``?`` outside text boxes) the help, ``Ctrl+P``
the command palette, ``Ctrl+Q`` quits.

Usage: the header's subtitle carries the session's tokens and estimated cost (every LLM call of every tab
since the app started), summed from the :class:`tui.area.UsageRecorded` messages the tabs' calls post.  The
simulated backend's tokens are estimates (``≈1,290 tokens (est.)``) and cost nothing: no dollar figure
is shown for them.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.css.stylesheet import Stylesheet
from textual.notifications import SeverityLevel
from textual.widget import Widget
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane
from textual.widgets._footer import FooterKey
from textual.worker import Worker, WorkerState

from tui.area import PaletteCommand, RunUsage, UsageRecorded, WorkArea, describe_error, in_turn
from tui.palette import AreaCommands
from tui.terminal import MULTILINE, terminal_safe
from tui.warning_line import WarningLine

if TYPE_CHECKING:
    from textual.app import AutopilotCallbackType
    from textual.widgets import DataTable

    from engines.api import Settings

BACKENDS: tuple[str, ...] = ("sim", "claude", "openai")


WARNING_LOGGERS: tuple[str, ...] = ("engines",)
"""Loggers whose warnings the app shows on its warning line under the header (the answer cache's trouble, for
one): a warning printed to the terminal would tear the screen, and a toast would cover the tab's content."""


class _NotifyHandler(logging.Handler):
    """Shows each warning an engine logs on the app's warning line (:meth:`CS224VApp.show_warning`), from
    whichever thread logged it."""

    def __init__(self, app: App[None]) -> None:
        super().__init__(level=logging.WARNING)
        self._app = app
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            show = getattr(self._app, "show_warning", None)
            if show is None:
                return
            if threading.get_ident() == self._thread:
                show(message)
            else:
                self._app.call_from_thread(show, message)
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
    if settings.backend == "openai":
        return f"openai · {settings.openai_model} · {settings.openai_base_url}"
    latency = f" · {settings.sim_latency_s:g} s per call" if settings.sim_latency_s else ""
    return f"{settings.backend} · seed {settings.seed}{latency}"


HEADER_SIDES = 18
"""The header's cells beside its title: Textual's icon (8) and clock space (10)."""


def header_subtitle(label: str, session: str, room: int) -> str:
    """The header's subtitle in ``room`` cells: the backend's label and the session's tokens and cost; where they do
    not fit, the label's last parts go first (the server's URL, then the model), the session's figures stay, and
    what still does not fit is cut at a phrase's end with "…" (:func:`tui.phrases.fit_phrase`)."""
    from tui.phrases import fit_phrase

    parts = label.split(" · ")
    for keep in range(len(parts), 0, -1):
        text = " · ".join([*parts[:keep], *([session] if session else [])])
        if len(text) <= room:
            return text
    return fit_phrase(" · ".join([parts[0], *([session] if session else [])]), room)


TAB_KEYS: tuple[str, ...] = ("f2", "f3", "f4", "f5", "f6")[: len(AREAS)]
"""The key of each tab, in the order of AREAS (priority: they work while typing, and are never typed)."""


def _tab_bindings() -> list[Binding]:
    bindings = []
    for n, (key, spec) in enumerate(zip(TAB_KEYS, AREAS)):
        # the footer shows one entry for the row of tab keys ("F2-F6 Tabs"), the help every key
        bindings.append(
            Binding(
                key,
                f"show_tab('{spec.id}')",
                "Tabs" if n == 0 else spec.title,
                key_display=f"{TAB_KEYS[0].upper()}-{TAB_KEYS[-1].upper()}" if n == 0 else key.upper(),
                priority=True,
                show=n == 0,
                tooltip=f"Show the {spec.title} tab and put the cursor in its question box or editor.",
            )
        )
    return bindings


def key_map() -> list[tuple[str, str]]:
    """The app-wide keys, as the help lists them: (keys, what they do)."""
    tabs = ", ".join(f"{key.upper()} = {spec.title}" for key, spec in zip(TAB_KEYS, AREAS))
    return [
        (
            f"{TAB_KEYS[0].upper()} … {TAB_KEYS[-1].upper()}",
            (
                f"show a tab ({tabs}) and put the cursor in its question box or editor; press it again to jump back "
                "there. Works while typing; never typed"
            ),
        ),
        ("Ctrl+PgDn / Ctrl+PgUp", "next / previous tab, from anywhere"),
        ("F8", "maximise the focused pane (or the pane it sits in) to the whole screen; F8 again restores it"),
        (
            "F9",
            (
                "export a table to a file: the focused one, else the tab's first (results, rows to verify, LLM calls, "
                "the trajectory; the prompt lists them). A path prompt under ~/cs224v-exports/; the extension picks "
                "CSV, JSON, JSON Lines or Parquet; an existing file is replaced only on a second Enter"
            ),
        ),
        ("Shift+F9", "copy menu: the highlighted cell, its row (tab-separated or JSON), the query, the read-back"),
        (
            "Ctrl+C",
            (
                "in a table: copy the highlighted cell (in a calls table, the whole call) to the clipboard (OSC 52, "
                "through tmux too); in a text box: the selection. It never quits (Ctrl+Q does)"
            ),
        ),
        ("v", "in a table: the highlighted cell (in a calls table, the whole call) in full, scrollable; Esc closes it"),
        (
            "c",
            (
                "in a table: chart it (all its rows): bars for a category and a number, lines for a date or an ordered "
                "number, a histogram of one number; k, x, y and a change the kind and columns; F9 exports the table"
            ),
        ),
        ("F1", "this help, from anywhere (Esc or F1 closes it); ? opens it too where the focus is not in a text box"),
        (
            "Ctrl+P",
            (
                "command palette: type *Restaurants*, *SUQL*, *HybridQA*, *Knowledge graph*, *Lab* or *LLM*; "
                "a command of another tab shows that tab first"
            ),
        ),
        ("Tab / Shift+Tab", "move the focus; the focused pane's border lights up"),
        ("Ctrl+Q", "quit"),
    ]


KEYS_BOUND: dict[str, str] = {
    "F1": "f1",
    "F8": "f8",
    "F9": "f9",
    "Shift+F9": "shift+f9",
    "Ctrl+C": "ctrl+c",
    "v": "v",
    "c": "c",
    "Ctrl+P": "ctrl+p",
    "Ctrl+Q": "ctrl+q",
    "Ctrl+PgDn": "ctrl+pagedown",
    "Ctrl+PgUp": "ctrl+pageup",
    "Tab": "tab",
    "Shift+Tab": "shift+tab",
}
"""How key_map spells the keys it names, as Textual names them (the help test reads this)."""


class AppFooter(Footer):
    """The Footer with its keys in the app's first frame.

    Textual's Footer composes its keys only once the screen reports its bindings, a refresh or two
    after the first frame, which would then show an empty footer bar."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._bindings_ready = True  # compose the keys from the bindings the screen has on mount
        self._composed_keys: tuple | None = None  # what the keys shown were composed from

    def _keys_source(self) -> tuple | None:
        """Everything Footer.compose builds the keys from: the shown bindings (each with whether it is
        enabled, its tooltip and its key as displayed), the command palette's, and the options."""
        if not self._bindings_ready:
            return None
        app = self.app
        shown = tuple(
            (binding, enabled, tooltip, app.get_key_display(binding))
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        palette = self.screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
        return (
            shown,
            None if palette is None else (*palette[1:], app.get_key_display(palette[1])),
            self.show_command_palette,
            app.ENABLE_COMMAND_PALETTE,
            self.combine_groups,
        )

    def compose(self) -> ComposeResult:
        self._composed_keys = self._keys_source()
        from textual.widgets._footer import FooterKey

        from tui.editor import WIDE_ONLY_ACTIONS

        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.action in WIDE_ONLY_ACTIONS:
                widget.add_class("-wide-only")  # an editor's Open/Save/Clear: only where there is room (app.tcss)
            yield widget

    async def recompose(self) -> None:
        """Rebuild the keys only when what they show changed: every focus change and binding refresh
        asks for a rebuild (several per keystroke), and rebuilding the same keys draws the same footer."""
        if self.is_mounted and self._composed_keys is not None and self._keys_source() == self._composed_keys:
            return
        await super().recompose()


_PARSED_CSS: dict[tuple, list] = {}
"""Rule sets parsed by any app of this process: (theme variables, css, where it was read from, default css?,
tie breaker, scope) -> the RuleSets.  A source's parse depends on nothing else, and Textual never changes a
RuleSet once parsed (the nodes of one app already share each one), so every app of the process can share them."""
_PARSED_CSS_LOCK = threading.Lock()
_PARSED_CSS_MAX = 512  # entries (about 45 per theme); past it the cache starts afresh


class SharedParseStylesheet(Stylesheet):
    """Textual's Stylesheet, with every CSS source parsed once per process rather than once per app.

    Textual keeps its parse cache per Stylesheet, and an app builds a fresh one at each re-parse (the theme
    set at start re-parses every source): each app parsed the same widget defaults and tab stylesheets anew.
    The rule sets are the same objects Textual would parse (same source, same variables), so styles, and the
    screens drawn with them, are identical."""

    def _parse_rules(
        self,
        css: str,
        read_from: tuple[str, str],
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list:
        key = (tuple(self._variables.items()), css, read_from, is_default_rules, tie_breaker, scope)
        with _PARSED_CSS_LOCK:
            rules = _PARSED_CSS.get(key)
        if rules is None:
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            with _PARSED_CSS_LOCK:
                if len(_PARSED_CSS) >= _PARSED_CSS_MAX:
                    _PARSED_CSS.clear()
                _PARSED_CSS[key] = rules
        return rules

    def copy(self) -> SharedParseStylesheet:
        stylesheet = type(self)(variables=self._variables.copy())
        stylesheet.source = self.source.copy()
        return stylesheet

    def reparse(self) -> None:
        """Textual's ``Stylesheet.reparse`` (textual 8.2.8), the fresh stylesheet of this class."""
        stylesheet = type(self)(variables=self._variables)
        for read_from, (css, is_defaults, tie_breaker, scope) in self.source.items():
            stylesheet.add_source(
                css, read_from=read_from, is_default_css=is_defaults, tie_breaker=tie_breaker, scope=scope
            )
        try:
            stylesheet.parse()
        except Exception:
            self._invalid_css.update(stylesheet._invalid_css)
            raise
        else:
            self._rules = stylesheet.rules
            self._rules_map = None
            self.source = stylesheet.source
            self._require_parse = False


def _default_settings() -> Settings:
    from engines.api import Settings

    return Settings()


def _check_backend(settings: Settings) -> Settings:
    """Build the backend the settings choose (raises ConfigurationError if it cannot run)."""
    from engines.api import backend_from_settings

    backend_from_settings(settings)
    return settings


class CS224VApp(App[None]):
    """Watch LLM agents query structured data."""

    TITLE = "cs224v-tui"
    CSS_PATH = ["app.tcss"]  # the tabs' stylesheets load after the first frame (_load_tab_css)
    COMMANDS = App.COMMANDS | {AreaCommands}
    # the Screen gets -narrow below 110 columns and -short below 32 rows: app.tcss stacks the columns
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        *_tab_bindings(),
        Binding(
            "f1",
            "help",
            "Help",
            key_display="F1",
            priority=True,
            tooltip="Open (or close) the help, even while typing.",
        ),
        # Same action where no text box takes "?" (not shown: the footer shows F1).
        Binding(
            "question_mark",
            "help",
            "Help",
            key_display="?",
            show=False,
            tooltip="Open the help: what this tab shows, the keys, the backend.",
        ),
        Binding(
            "f8",
            "toggle_maximize",
            "Max",
            key_display="F8",
            priority=True,
            tooltip="Maximise the focused pane to the whole screen, or restore it.",
        ),
        Binding(
            "f9",
            "export",
            "Export",
            key_display="F9",
            priority=True,
            tooltip="Export the focused table (or the tab's first) to a CSV, JSON or Parquet file.",
        ),
        Binding(
            "shift+f9",
            "copy_menu",
            "Copy…",
            key_display="⇧F9",
            priority=True,
            show=False,
            tooltip="Copy the highlighted cell or row, the query or the read-back to the clipboard.",
        ),
        # the next two work (and show in the footer) only while a table has the focus (check_action); not
        # priority: a text box's own Ctrl+C (copy the selection) and its typed "v" come first
        Binding(
            "ctrl+c",
            "copy",
            "Copy",
            key_display="^C",
            tooltip="Copy the highlighted cell (in a calls table, the call) to the clipboard.",
        ),
        Binding(
            "v",
            "view_cell",
            "View",
            key_display="v",
            tooltip="Show the highlighted cell (in a calls table, the call) in full, scrollable.",
        ),
        Binding(
            "c",
            "chart",
            "Chart",
            key_display="c",
            tooltip="Chart the focused table: every row, the kind and columns chosen from their types.",
        ),
        # not in the footer (80 columns hold the tab's keys first); the help and the palette list it
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False, tooltip="Quit the app."),
        # Tabs in order, from anywhere.
        Binding(
            "ctrl+pagedown",
            "cycle_tab(1)",
            "Next tab",
            key_display="^PgDn",
            priority=True,
            show=False,
            tooltip="Show the next tab, even while typing.",
        ),
        Binding(
            "ctrl+pageup",
            "cycle_tab(-1)",
            "Previous tab",
            key_display="^PgUp",
            priority=True,
            show=False,
            tooltip="Show the previous tab, even while typing.",
        ),
    ]

    def __init__(
        self,
        settings: Settings | Callable[[], Settings] | None = None,
        *,
        clock: Callable[[], float] | None = None,
        cursor_blink: bool = True,
    ) -> None:
        """``settings``: the settings, or a function that builds them (called in a thread worker after
        the first frame; what it raises closes the app and is in :attr:`start_error`); None builds them
        from the environment that way.  ``clock`` times the LLM calls (inject ``lambda: 0.0`` for
        deterministic screens); ``cursor_blink=False`` keeps text cursors steady (snapshot tests)."""
        super().__init__()
        self.stylesheet = SharedParseStylesheet(variables=self.stylesheet._variables)  # nothing read into it yet
        self._settings: Settings | None = None
        self._make_settings: Callable[[], Settings] | None = None
        if settings is None:
            self._make_settings = _default_settings
        elif callable(settings):
            self._make_settings = settings
        else:
            self._settings = settings
        self._settings_ready = asyncio.Event()
        if self._settings is not None:
            self._settings_ready.set()
        self.start_error: BaseException | None = None  # what building the settings raised (the app closed)
        self.clock = clock
        self.cursor_blink = cursor_blink
        self._built: dict[str, WorkArea | None] = {}  # tab id -> its area once built (None: being built)
        self._opened: dict[str, asyncio.Event] = {}  # tab id -> set once its area is mounted
        self._tab_css_loaded = False
        self._first_frame_shown = False
        self.session_usage = RunUsage()  # every LLM call of every tab since the start (the header)
        self.wall_clock: Callable[[], datetime] = datetime.now  # names export files (a fixed one in tests)
        self.export_dir: Path = Path("~") / "cs224v-exports"  # where the export prompt proposes to write
        self._early_warnings: list[str] = []  # engines' warnings logged before the warning line mounted

    @property
    def settings(self) -> Settings:
        """The settings (LookupError while they are still being built, just after the first frame)."""
        if self._settings is None:
            raise LookupError("the settings are still being built")
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._settings = settings
        self._settings_ready.set()

    # --- text from data: notifications and the header -------------------------------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A notification shows its text as it is: a message quotes values, file names and servers' errors, so it is
        never read as markup (``markup`` is ignored), and its control characters, C1 and bidi controls show escaped
        (:func:`tui.terminal.terminal_safe`).  Every toast of the app (a widget's ``notify`` too) comes here."""
        super().notify(
            terminal_safe(str(message), keep=MULTILINE),
            title=terminal_safe(str(title)),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header: the backend's label names a model and a server URL from the settings, shown escaped."""
        return super().format_title(terminal_safe(title), terminal_safe(sub_title))

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The first frame: header, tab bar, footer.  Each tab's WorkArea is built when the tab
        # first shows (see open_area); until then its pane says so.
        yield Header()
        yield WarningLine(id="app-warnings")  # hidden until an engine warns (tui.warning_line)
        with TabbedContent(id="areas", initial=AREAS[0].id):
            for spec in AREAS:
                with TabPane(spec.title, id=spec.id):
                    yield Static(f"Opening the {spec.title} tab…", classes="area-loading")
        yield AppFooter(compact=True)

    def on_load(self) -> None:
        self._warnings = _NotifyHandler(self)  # before the tabs mount: their sessions open the cache
        for name in WARNING_LOGGERS:
            logging.getLogger(name).addHandler(self._warnings)

    def show_warning(self, message: str) -> None:
        """An engine's warning, on the warning line under the header (kept until the line is mounted)."""
        from textual.css.query import NoMatches

        try:
            line = self.query_one(WarningLine)
        except NoMatches:  # before the first frame: shown when the line mounts
            self._early_warnings.append(message)
            return
        line.add(message)

    def on_mount(self) -> None:
        line = self.query_one(WarningLine)
        for message in self._early_warnings:
            line.add(message)
        self._early_warnings.clear()
        self._show_subtitle()
        # after the first frame is on the terminal: the settings, then the first tab (in a worker)
        self.call_after_refresh(self._open_shown_tab)

    def _load_tab_css(self) -> None:
        """Add every tab's stylesheet (once, in the order of AREAS) and restyle."""
        if self._tab_css_loaded:
            return
        self._tab_css_loaded = True
        for spec in AREAS:
            self.stylesheet.read(Path(__file__).with_name(spec.css))
        self.stylesheet.parse()  # parsed sources are cached: only the new ones are parsed
        self.stylesheet.update(self, animate=False)

    def _open_shown_tab(self, waited: int = 0) -> None:
        # Start once the first frame with the footer's keys has been drawn: a FooterKey has a place on
        # the screen once the compositor has laid it out, and that same refresh writes the frame.  (At
        # most 2 s of waiting: a screen too small for the footer starts all the same.)
        if waited < 200 and not any(key.region for key in self.query(FooterKey)):
            self.set_timer(0.01, lambda: self._open_shown_tab(waited + 1))
            return
        self._first_frame_shown = True
        if self._settings is None and self._make_settings is not None:
            self.run_worker(self._make_settings, name="settings", group="app-start", thread=True, exit_on_error=False)
            return  # on_worker_state_changed opens the tab once they are built
        self._open_first_tab()

    def _open_first_tab(self) -> None:
        self._load_tab_css()
        tabs = self.query_one("#areas", TabbedContent)
        self._open_in_worker(tabs.active or AREAS[0].id, focus=True)

    def _open_in_worker(self, tab_id: str, *, focus: bool) -> None:
        async def open_and_focus() -> None:
            area = await self.open_area(tab_id)
            if focus and self.query_one("#areas", TabbedContent).active == tab_id:
                area.focus_default()

        self.run_worker(open_and_focus(), name=f"open-{tab_id}", group="app-tabs", exit_on_error=True)

    async def open_area(self, tab_id: str) -> WorkArea:
        """The WorkArea of tab ``tab_id``, built and mounted on first use (the tab need not show)."""
        spec = next((s for s in AREAS if s.id == tab_id), None)
        if spec is None:
            raise ValueError(f"unknown tab {tab_id!r}; the tabs are {', '.join(s.id for s in AREAS)}")
        if tab_id in self._built:
            await self._opened[tab_id].wait()
            built = self._built.get(tab_id)
            if built is None:
                raise LookupError(f"the {tab_id} tab could not be opened")
            return built
        self._first_frame_shown = True  # built before the first-frame callback (a test): tabs build on show from now on
        self._built[tab_id] = None  # being built: a second caller waits for it above
        self._opened[tab_id] = opened = asyncio.Event()
        try:
            await self._settings_ready.wait()
            # the tab's module (and the engines it imports) loads in a thread: the screen keeps drawing
            cls = spec.load() if spec.target.partition(":")[0] in sys.modules else await asyncio.to_thread(spec.load)
            self._load_tab_css()
            area = cls(self.settings, clock=self.clock, cursor_blink=self.cursor_blink)
        except BaseException:
            del self._built[tab_id], self._opened[tab_id]
            opened.set()
            raise
        self._built[tab_id] = area
        pane = self.query_one(f"TabPane#{tab_id}", TabPane)
        await pane.query(".area-loading").remove()
        await pane.mount(area)
        opened.set()
        return area

    def on_unmount(self) -> None:
        for name in WARNING_LOGGERS:
            logging.getLogger(name).removeHandler(self._warnings)

    @property
    def areas(self) -> list[WorkArea]:
        """The areas built so far, in tab order (a tab never shown has none yet), from the app's own record."""
        return [area for spec in AREAS if (area := self._mounted(spec.id)) is not None]

    @property
    def active_tab(self) -> str:
        return self.query_one("#areas", TabbedContent).active or AREAS[0].id

    @property
    def active_area(self) -> WorkArea | None:
        """The area of the tab that shows (None while it is being built)."""
        return self._mounted(self.active_tab)

    def _mounted(self, tab_id: str) -> WorkArea | None:
        area = self._built.get(tab_id)
        return area if area is not None and self._opened[tab_id].is_set() else None

    def area(self, tab_id: str) -> WorkArea:
        """The work area of the tab ``tab_id`` (LookupError if it was never shown: ``await open_area``)."""
        area = self._mounted(tab_id)
        if area is None:
            raise LookupError(f"the {tab_id} tab has not been opened yet")
        return area

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # the initial tab's TabActivated comes before the first frame: _open_shown_tab builds that one
        if event.tabbed_content.id == "areas" and event.pane.id is not None and self._first_frame_shown:
            self._show_tab_contents(event.pane.id)

    def _show_tab_contents(self, tab_id: str) -> None:
        area = self._mounted(tab_id)
        if area is None:
            self._open_in_worker(tab_id, focus=True)
        else:
            area.focus_default()
            area.tab_shown()

    # --- actions ----------------------------------------------------------------------------------

    def action_show_tab(self, tab_id: str) -> None:
        """Show the tab ``tab_id`` and focus its main input (building the tab on its first show)."""
        tabs = self.query_one("#areas", TabbedContent)
        if tabs.active != tab_id:
            if self._mounted(tab_id) is None:
                # nothing in the new tab can take the focus yet: without this, the focus would stay in
                # (or move within) the hidden tab, and TabbedContent would show that tab again
                self.screen.set_focus(None)
            tabs.active = tab_id  # TabActivated builds or focuses it
        else:
            self._show_tab_contents(tab_id)

    def action_toggle_maximize(self) -> None:
        """Maximise the focused pane (the outermost pane around the focus) or restore the maximised one."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        focused = screen.focused
        if focused is None:
            self.notify("Nothing has the focus: press Tab to focus a pane, then F8.", title="Maximise")
            return
        target = focused
        for node in focused.ancestors_with_self:
            if isinstance(node, WorkArea) or node is screen:
                break
            if isinstance(node, Widget) and (node.allow_maximize or node.has_class("pane")):
                target = node
        screen.maximized = target

    def action_cycle_tab(self, step: int) -> None:
        """Show the tab ``step`` places after (or before) the current one."""
        tabs = self.query_one("#areas", TabbedContent)
        ids = [spec.id for spec in AREAS]
        current = ids.index(tabs.active) if tabs.active in ids else 0
        self.action_show_tab(ids[(current + step) % len(ids)])

    def action_help(self) -> None:
        """Open the help for the current tab (or close it if it is open)."""
        from tui.help import HelpScreen  # Markdown: not on the first frame

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        area = self.active_area
        warnings = self.query_one(WarningLine).help_section()  # the engines' warnings in full, first
        self.push_screen(HelpScreen(warnings + (area.HELP if area is not None else "")))

    def use_backend(self, backend: str) -> None:
        """Switch every area to the ``sim``, ``claude`` or ``openai`` backend.

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
            self.notify(
                "A query is running: press Esc to cancel it, then change the latency.", title="LLM", severity="warning"
            )
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
        if worker.group == "app-start":  # the settings, built after the first frame
            if event.state == WorkerState.SUCCESS:
                self.settings = cast("Settings", worker.result)  # the app-start worker builds the settings
                self._show_subtitle()
                self._open_first_tab()
            elif event.state == WorkerState.ERROR:
                self.start_error = worker.error  # run_app raises it once the terminal is restored
                self.exit(return_code=2)
            return
        if worker.group != "app":
            return
        if event.state == WorkerState.SUCCESS:
            settings = cast("Settings", worker.result)  # the app worker rebuilds the settings
            self.settings = settings
            self._show_subtitle()
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

    # --- tokens and cost ---------------------------------------------------------------------------

    def _show_subtitle(self) -> None:
        """The header's subtitle: the backend, then the session's tokens and cost once a call was made (no cost
        for the simulated backend's calls: see :meth:`tui.area.RunUsage.short`)."""
        if self._settings is None:
            return  # still being built: the subtitle comes with them
        label = backend_label(self.settings)
        usage = self.session_usage
        session = f"session {usage.short()}" if usage.calls else ""
        self.sub_title = header_subtitle(label, session, self.size.width - HEADER_SIDES - len(self.title) - 3)

    def on_resize(self) -> None:
        self._show_subtitle()  # the header's room changed

    def on_usage_recorded(self, message: UsageRecorded) -> None:
        self.session_usage.add(message.event, real=message.real)
        self._show_subtitle()

    # --- export, copy, the cell view ---------------------------------------------------------------

    def _modal_open(self) -> bool:
        from textual.screen import ModalScreen

        return isinstance(self.screen, ModalScreen)

    def export_sources(self) -> list:
        """What F9 can export in the shown tab (the focused table first): what has rows."""
        area = self.active_area
        return [] if area is None else [s for s in area.export_sources() if s.columns and s.rows]

    def action_export(self) -> None:
        """Open the export prompt for the focused table (or the tab's first)."""
        from tui.export import ExportScreen

        if self._modal_open():
            chart_source = getattr(self.screen, "export_source", None)  # the chart view exports its table
            if chart_source is None:
                return
            sources = [chart_source]
        else:
            sources = self.export_sources()
        if not sources:
            self.notify("Nothing to export yet: run a query first.", title="Export", severity="warning")
            return
        spec = next(s for s in AREAS if s.id == self.active_tab)
        reads = self._read_paths()
        screen = ExportScreen(spec.title, sources, self.wall_clock(), folder=self.export_dir, reads=reads)
        self.push_screen(screen, self._exported)

    def _read_paths(self) -> list[Path]:
        """The files the app was given to read (--rdf, --db's file or every file in its folder): an export never
        replaces them."""
        settings = self._settings
        if settings is None:
            return []
        from tui.read_paths import db_files

        return [*settings.kg_rdf, *db_files(settings.db)]

    def _exported(self, done: object) -> None:
        from engines.api import Exported

        if isinstance(done, Exported):
            from tui.widgets import count_rows

            self.notify(
                f"{count_rows(done.rows)} to {done.path} ({done.format}).", title="Exported", severity="information"
            )

    def _focused_table(self) -> DataTable | None:
        # the footer asks (check_action) before the first frame: no DataTable exists while its module is not
        # imported, so there is no need to import it just to look
        module = sys.modules.get("textual.widgets._data_table")
        focused = self.screen.focused
        return focused if module is not None and isinstance(focused, module.DataTable) else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Ctrl+C (copy) and v (view) belong to tables: elsewhere they are neither shown nor taken."""
        if action in ("copy", "view_cell", "chart"):
            return self._focused_table() is not None
        return super().check_action(action, parameters)

    def action_copy(self) -> None:
        """Ctrl+C in a table: copy the highlighted cell (a row cursor: the row)."""
        from tui.export import copy_text, cursor_cell, cursor_row, row_tsv

        table = self._focused_table()
        if table is None:
            self.action_help_quit()
            return
        if table.cursor_type == "row":
            fields = cursor_row(table)
            if fields:
                copy_text(self, row_tsv(fields), "The highlighted row")
                return
        else:
            cell = cursor_cell(table)
            if cell is not None:
                copy_text(self, cell[1], cell[0])
                return
        self.notify("The table is empty: nothing to copy.", title="Copy", severity="warning")

    def action_view_cell(self) -> None:
        """v: the highlighted cell of the focused table in full."""
        from tui.export import CellView, cursor_cell

        table = self._focused_table()
        cell = cursor_cell(table) if table is not None else None
        if cell is None:
            what = "The table is empty" if table is not None else "No table has the focus (Tab moves it)"
            self.notify(f"{what}: no cell to show.", title="View cell", severity="warning")
            return
        self.push_screen(CellView(*cell))

    def action_chart(self) -> None:
        """c (or the palette): chart the focused table, else the tab's first table with rows."""
        from tui.chart import ChartScreen

        if self._modal_open():
            return
        table = self._focused_table()
        sources = self.export_sources()
        source = next((s for s in sources if s.widget is table), None) if table is not None else None
        if source is None and table is not None and table.columns:
            self.notify("The table is empty: nothing to chart.", title="Chart", severity="warning")
            return
        if source is None:
            source = next((s for s in sources if s.widget is not None), None)
        if source is None:
            self.notify("Nothing to chart yet: run a query first.", title="Chart", severity="warning")
            return
        self.push_screen(ChartScreen(source))

    def action_copy_menu(self) -> None:
        """Shift+F9: the copy menu of the shown tab."""
        from tui.export import CopyMenu, copy_items

        if self._modal_open():
            return
        area = self.active_area
        items = copy_items(area) if area is not None else []
        if not items:
            self.notify("Nothing to copy yet: run a query first.", title="Copy", severity="warning")
            return
        self.push_screen(CopyMenu(items))

    # --- the command palette -------------------------------------------------------------------

    def palette_commands(self) -> Iterable[PaletteCommand]:
        """Every "Area: action" entry: the LLM switch, then the active tab's, then the others'."""
        if self._settings is None:  # the first instants: nothing to offer yet
            return
        for backend in BACKENDS:
            current = " (current)" if backend == self.settings.backend else ""
            what = {
                "sim": "the seeded simulated LLM (offline, repeatable)",
                "claude": f"Claude ({self.settings.claude_model}); needs ANTHROPIC_API_KEY",
                "openai": f"{self.settings.openai_model} on the OpenAI-compatible server at {self.settings.openai_base_url}",
            }[backend]
            yield PaletteCommand(
                f"LLM: use {backend}{current}",
                f"Rebuild the sessions with {what}; the dialogue is kept.",
                partial(self.use_backend, backend),
            )
        if self.settings.backend == "sim":
            for seconds in LATENCIES:
                current = " (current)" if seconds == self.settings.sim_latency_s else ""
                yield PaletteCommand(
                    f"LLM: simulated latency {seconds:g} s per call{current}",
                    "Make every simulated LLM call take this long, to watch the calls stream in (0: instant).",
                    partial(self.use_latency, seconds),
                )
        # what F9 and Shift+F9 do, in every tab (each says so when there is nothing to export or copy yet)
        yield PaletteCommand(
            "Export: write a table to a file (F9)",
            "Write the focused table (or the tab's first) to CSV, JSON, JSON Lines or Parquet.",
            self.action_export,
        )
        yield PaletteCommand(
            "Copy: the cell, row, query or read-back (Shift+F9)",
            "Choose what to copy to the clipboard: the highlighted cell or row, a query, the read-back.",
            self.action_copy_menu,
        )
        yield PaletteCommand(
            "Chart the focused table",
            "Bars, lines or a histogram of every row of the focused table (else the tab's first); c in a table.",
            self.action_chart,
        )
        active = self.active_area
        if active is not None:
            yield from active.commands()
        for spec in AREAS:
            area = self._mounted(spec.id)
            if area is active:
                continue
            if area is None:
                yield PaletteCommand(
                    f"{spec.title}: open the tab",
                    f"Show the {spec.title} tab (its commands come with it).",
                    partial(self.action_show_tab, spec.id),
                )
                continue
            for command in area.commands():
                # a command of another tab shows that tab first
                yield PaletteCommand(
                    command.title,
                    command.help,
                    in_turn(partial(self.action_show_tab, spec.id), command.callback),
                )


def run_app(settings: Settings | Callable[[], Settings], *, auto_pilot: AutopilotCallbackType | None = None) -> None:
    """Run the app in the terminal with ``settings`` (or a function that builds them after the first
    frame; what it raises, a ValidationError for one, is raised here once the app has closed).
    ``auto_pilot`` drives the app in the terminal (benchmarks/startup_bench.py scripts a session with it)."""
    app = CS224VApp(settings)
    app.run(auto_pilot=auto_pilot)
    # Quit at once: the interpreter's last garbage collections would walk every object the session built
    # (the worlds, the stores' mirrors, the vectors: seconds after real use, with the screen already blank).
    # Frozen, they are left to the process's end; atexit handlers, the weakref finalizers that stop the SPARQL
    # workers and remove temporary folders, and the SQLite cache's committed writes are untouched.
    gc.freeze()
    if app.start_error is not None:
        raise app.start_error
