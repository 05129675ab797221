"""The app's warning line: one line under the header that an engine's warning (the answer cache's trouble, for
one) appears on, instead of a toast over the tab's content.

Hidden until the first warning; then it shows the latest warning's first line, cut at a phrase's end to fit
(:func:`tui.phrases.fit_phrase`), how many there were, and that F1 shows them. The tooltip and the help screen (F1)
hold every warning in full (the last :data:`KEPT`, each at most :data:`MAX_CHARS` characters)."""

from __future__ import annotations

from textual.widgets import Static

from tui.phrases import fit_phrase
from tui.terminal import terminal_safe

KEPT = 20
"""The warnings kept (the oldest go first)."""
MAX_CHARS = 4000
"""The most characters of one warning kept (a logged message has no bound of its own)."""
MARK = "⚠ "


class WarningLine(Static):
    """One line for the engines' warnings: the latest, fitted; all of them in the tooltip and in F1's help."""

    DEFAULT_CSS = """
    WarningLine {
        height: 1;
        padding: 0 1;
        background: $warning-muted;
        color: $text-warning;
        display: none;
    }
    WarningLine.-shown {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.messages: list[str] = []
        self.count = 0  # every warning since the start, also those no longer kept

    def add(self, message: str) -> None:
        """Show ``message`` (a warning's text, shown as text, its control characters escaped)."""
        text = terminal_safe(message[:MAX_CHARS] + ("…" if len(message) > MAX_CHARS else ""))
        self.messages = [*self.messages, text][-KEPT:]
        self.count += 1
        self.add_class("-shown")
        self.tooltip = "\n\n".join(self.messages)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        if not self.messages:
            return
        latest = " ".join(self.messages[-1].split())  # one line
        more = f" · {self.count} warnings" if self.count > 1 else ""
        width = self.content_region.width if self.is_mounted and self.size.width else 0
        # at 80 columns the warning itself gets the room: "F1" alone says where the rest is
        tail = f"{more} · F1 shows {'them' if more else 'it'} in full" if width >= 100 else f"{more} · F1"
        if not width:
            self.update(MARK + latest + tail)
            return
        room = width - len(MARK) - len(tail)
        if room < 20:  # a narrow line: the warning itself first
            self.update(MARK + fit_phrase(latest, width - len(MARK)))
            return
        self.update(MARK + fit_phrase(latest, room) + tail)

    def help_section(self) -> str:
        """The warnings in full, as Markdown for the help screen (each in a fenced block: shown as written)."""
        if not self.messages:
            return ""
        blocks = "\n\n".join(f"```text\n{m.replace('```', '` ` `')}\n```" for m in self.messages)
        shown = f"the last {len(self.messages)} of {self.count}" if self.count > len(self.messages) else "all"
        return f"## Warnings ({shown})\n\n{blocks}\n\n"


__all__ = ["KEPT", "MAX_CHARS", "WarningLine"]
