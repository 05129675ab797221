"""The command-palette provider: "Area: action" entries from every tab, and "LLM: use …"."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from tui.terminal import terminal_safe

if TYPE_CHECKING:
    from tui.app import CS224VApp


def _text(text: str) -> Content:
    """A command's title or help as text: they name tables, files and entities, which may hold ``[…]`` (the
    palette would read it as markup, and a malformed tag stops it) or control characters (shown escaped)."""
    return Content(terminal_safe(text))


def _highlighted(matcher: Matcher, title: str) -> Content:
    """``title`` as text, the characters the search matched highlighted (the matcher's own highlighting reads
    its candidate as markup)."""
    shown = terminal_safe(title)
    content = Content(shown)
    score, offsets = matcher.fuzzy_search.match(matcher.query, shown)
    if score:
        for offset in offsets:
            if not shown[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class AreaCommands(Provider):
    """Offers :meth:`tui.app.CS224VApp.palette_commands` (collected when the palette opens)."""

    async def discover(self) -> Hits:
        for command in cast("CS224VApp", self.app).palette_commands():
            # help: Textual annotates it str, and renders it with Content.from_markup, which returns a Content as it is
            help_ = _help(command.help)
            yield DiscoveryHit(_text(command.title), command.callback, text=command.title, help=help_)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in cast("CS224VApp", self.app).palette_commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(
                    score,
                    _highlighted(matcher, command.title),
                    command.callback,
                    text=command.title,
                    help=_help(command.help),  # type: ignore[arg-type]  # a Content, as in discover()
                )


def _help(text: str) -> Content | None:
    """A command's help line as text (the palette reads a ``str`` help as markup; it takes a ``Content`` as it is)."""
    return _text(text) if text else None
