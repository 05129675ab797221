"""The command-palette provider: "Area: action" entries from every tab, and "LLM: use …"."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from tui.app import CS224VApp


class AreaCommands(Provider):
    """Offers :meth:`tui.app.CS224VApp.palette_commands` (collected when the palette opens)."""

    async def discover(self) -> Hits:
        for command in cast("CS224VApp", self.app).palette_commands():
            yield DiscoveryHit(command.title, command.callback, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in cast("CS224VApp", self.app).palette_commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.callback, help=command.help)
