"""The help screen: what the current tab shows, the keys, how to switch the LLM backend."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

GENERAL_HELP = """\
## Keys everywhere

| key | what it does |
| --- | --- |
| 1 … 9 | switch tab (1 = Restaurants, 2 = SUQL, 3 = HybridQA, 4 = Knowledge graph, 5 = Lab) — when the focus is not in a text box, where digits are typed |
| Alt+1 … Alt+9 | switch tab from anywhere, text boxes included |
| Ctrl+PgDn / Ctrl+PgUp | next / previous tab from anywhere (where Alt+digit does not reach the app, e.g. in tmux) |
| ? or F1 | this help (Esc, ? or F1 closes it) |
| Ctrl+P | command palette: type *Restaurants*, *SUQL*, *HybridQA*, *Knowledge graph*, *Lab* or *LLM* for the actions of each area |
| Ctrl+Q | quit |

## The LLM backend

The app starts with the backend the settings choose: `sim`, a seeded simulated LLM that runs offline
(the same question always gets the same answer), or `claude` (Claude through the Anthropic API).
Choose it when starting with `CS224V_BACKEND=sim|claude` (Claude needs `ANTHROPIC_API_KEY`;
`CS224V_CLAUDE_MODEL` picks the model), or switch while running with the command palette:
**LLM: use sim** / **LLM: use claude**. Switching rebuilds the session and keeps the dialogue.
`CS224V_SIM_LATENCY_S=0.3` (or **LLM: simulated latency 0.3 s per call** in the palette) makes the simulated
calls take time, so you can watch them stream in; the header shows the latency in force.
"""


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
                yield Markdown(f"{self.area_help.strip()}\n\n{GENERAL_HELP}", id="help-text")
            yield Static("Esc closes this help · ↑/↓ or the mouse wheel scroll it", id="help-hint")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
