"""The help screen: what the current tab shows, the keys, how to switch the LLM backend."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from tui.editor import EDITOR_HELP


def keys_help() -> str:
    """The app-wide keys table, from :func:`tui.app.key_map` (what the bindings are)."""
    from tui.app import key_map

    rows = "\n".join(f"| {keys} | {what} |" for keys, what in key_map())
    return f"""\
## Keys everywhere

No key that switches a tab or a mode is a letter or a digit (those are typed) or needs Alt (terminals
and tmux disagree on Alt): they are F-keys and Ctrl combinations, which work in tmux and the common terminals.

| key | what it does |
| --- | --- |
{rows}

"""


HISTORY_HELP = """\
## History and examples

In the Restaurants, SUQL, HybridQA and Knowledge-graph tabs, what you run is kept, per tab, in the user data
folder (`history/<tab>.jsonl`; `CS224V_HISTORY_DIR` moves it), so it comes back after a restart.
**↑** in an empty question box shows the last question asked, ↑ again the one before, **↓** the next (past the
newest, the text you started from returns). In an editor ↑ walks only from its first line and ↓ only from its
last, and only while the editor holds no edits of yours (an example, a query walked to, the query just run):
so they never take a cursor move from a query being written. **Ctrl+R** searches the history of the box you
are in (type to filter, Enter puts the entry in the box, Esc closes). **Ctrl+L** opens the tab's examples,
searchable the same way: Enter loads one (it does not run it). The palette has one *examples…* and one
*history…* entry per tab.

"""


SCHEMA_HELP = """\
## Schema

In the Restaurants, SUQL and HybridQA tabs, **Ctrl+T** shows or hides the schema pane (even while typing; the
cursor stays where it is): the tables of the tab's world (HybridQA: the current table), each with its row count,
and each column's type and role as the engine describes them from the data: *enum · classify()* (the agent maps
words onto its values, listed under it), *free text · answer()* (what SUQL's answer() and summary() read), text,
number, date. Over a built-in world the enumerations are the ones the tab's agent classifies. Over your own data
(`--db`) the pane shows from the start. The description is made the first time the pane shows a world; a world of
many tables (the 50 HybridQA tables in the SUQL tab) lists its tables and types at once and describes a table when
you expand it (Enter or a click). Tab into the pane and F8 maximises it.

"""


GENERAL_HELP = """\
## The LLM backend

The app starts with the backend the settings choose: `sim`, a seeded simulated LLM that runs offline
(the same question always gets the same answer), or `claude` (Claude through the Anthropic API).
Choose it when starting with `CS224V_BACKEND=sim|claude` (Claude needs `ANTHROPIC_API_KEY`;
`CS224V_CLAUDE_MODEL` picks the model), or switch while running with the command palette:
**LLM: use sim** / **LLM: use claude**. Switching rebuilds the session and keeps the dialogue.
`CS224V_SIM_LATENCY_S=0.3` (or **LLM: simulated latency 0.3 s per call** in the palette) makes the simulated
calls take time, so you can watch them stream in; the header shows the latency in force.
"""


KEY_SHARE = 0.4
"""The most of the help's width a key column takes."""
KEY_MIN = 12


class HelpScreen(ModalScreen[None]):
    """Help for the tab that was showing, then the app-wide keys."""

    BINDINGS = [
        Binding("escape", "close", "Close help", tooltip="Close the help screen."),
        Binding("f1,question_mark", "close", "Close help", show=False, tooltip="Close the help screen."),
    ]

    def __init__(self, area_help: str) -> None:
        super().__init__()
        self.area_help = area_help

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog") as dialog:
            dialog.border_title = "cs224v-tui — help"
            with VerticalScroll(id="help-scroll"):
                yield Markdown(
                    f"{self.area_help.strip()}\n\n{keys_help()}{EDITOR_HELP}{HISTORY_HELP}{SCHEMA_HELP}{GENERAL_HELP}",
                    id="help-text",
                )
            yield Static("Esc closes this help · ↑/↓ or the mouse wheel scroll it", id="help-hint")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def on_markdown_table_of_contents_updated(self, _event: Markdown.TableOfContentsUpdated) -> None:
        self.call_after_refresh(self.widen_key_columns)

    def on_resize(self) -> None:
        self.call_after_refresh(self.widen_key_columns)

    def widen_key_columns(self) -> None:
        """Each table's first column (the keys) as wide as its longest entry, at most :data:`KEY_SHARE` of the
        width, so "Enter (in the question box)" does not wrap over four lines; the second column takes the rest."""
        width = self.query_one("#help-text", Markdown).content_region.width
        for table in self.query("MarkdownTableContent"):  # Textual's table of a Markdown: its headers and rows
            headers, rows = getattr(table, "headers", []), getattr(table, "rows", [])
            if len(headers) != 2:
                continue
            longest = max(len(cell.plain) for cell in [headers[0], *(row[0] for row in rows if row)])
            bound = max(KEY_MIN, int(width * KEY_SHARE))
            table.styles.grid_columns = f"{min(longest + 2, bound)} 1fr"  # + the cell's padding

    def action_close(self) -> None:
        self.dismiss(None)
