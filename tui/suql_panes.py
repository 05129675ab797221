"""The SUQL tab's parts that keep their own state: the counters line, the examples list, and the world and mode
switches.  The tab owns them and tells them what to show; they tell the tab what the user did through Textual's
own messages (``Select.Changed``, ``OptionList.OptionSelected``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import OptionList, Select
from textual.widgets.option_list import Option

from tui.counters import RunCounters, counter
from tui.suql_view import short_title
from tui.widgets import as_text, truncate

if TYPE_CHECKING:
    from engines.api import Example

EXAMPLE_CHARS = 44


class SuqlCounters(RunCounters):
    """The run's counters: answer() and summary() calls, cached answers, rows examined (and how they were
    decided), the elapsed time, the tokens."""

    ran_mode: str | None = None
    """The execution mode of the run counted (set when a run begins)."""
    mode: str | None = None
    """The mode the next run uses: when it is not :attr:`ran_mode`, the counts are labelled the last run's."""

    def zero(self) -> dict[str, Any]:
        return {
            "answer": 0,
            "summary": 0,
            "cached": 0,
            "examined": 0,
            "match": 0,
            "no": 0,
            "to verify": 0,
            "verification": 0,  # answer() calls asked of rows already Unknown (settling them)
            "proxy": 0,  # mode G: rows decided by the proxy without a call (each ≥ 1 call saved against mode E)
            "stopped": 0,
            "failed": 0,
            "elapsed": 0.0,
            "running": False,
        }

    def parts(self) -> list[Content]:
        c = self.counts
        # F7 chose another mode after a run: these figures are that run's, not the new mode's
        last = (
            [] if self.running or self.ran_mode in (None, self.mode) else [counter("last run", f"mode {self.ran_mode}")]
        )
        parts = [
            *last,
            counter("answer()", f"{c['answer']:,}"),
            counter("summary()", f"{c['summary']:,}"),
            counter("cached", f"{c['cached']:,}"),
            counter("examined", f"{c['examined']:,}"),
        ]
        if c["match"] or c["no"] or c["to verify"]:
            parts[-1] += Content.styled(f" ({c['match']} ✓ · {c['no']} ✗ · {c['to verify']} ?)", "$foreground-muted")
        if c.get("verification"):
            parts.append(counter("verification", f"{c['verification']:,}"))
        if c.get("proxy"):
            parts.append(counter("saved vs E", f"≥ {c['proxy']:,} (rows the proxy decided)"))
        parts.append(counter("elapsed", f"{c['elapsed']:.2f} s"))
        return parts


class SuqlExamples(OptionList):
    """The examples of the world (the lecture's, or your data's) and the SUQL paper's real queries; Enter or a
    click selects one (``OptionList.OptionSelected``: :meth:`by_id` is the example)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lecture: tuple[Example, ...] = ()
        self.paper: tuple[Example, ...] = ()

    @property
    def examples(self) -> tuple[Example, ...]:
        """The examples in the list: the world's, then the SUQL paper's."""
        return (*self.lecture, *self.paper)

    def fill(
        self,
        lecture: Sequence[Example],
        paper: Sequence[Example],
        *,
        world: str,
        own: bool,
        missing_paper: str | None = None,
    ) -> None:
        """List ``lecture`` (headed "Your data" when ``own``) then ``paper``; ``missing_paper`` says why the
        paper's queries are not there (a data set to fetch)."""
        self.lecture, self.paper = tuple(lecture), tuple(paper)
        options: list[Option | None] = []
        if self.lecture:
            options.append(
                Option(
                    Content.styled(
                        f"{'Your data' if own else 'Lecture and notes'} · {len(self.lecture)}", "bold $text-accent"
                    ),
                    disabled=True,
                )
            )
            options.extend(_example_option(f"lecture-{i}", e) for i, e in enumerate(self.lecture))
        if self.paper:
            options.append(None)
            options.append(
                Option(
                    Content.styled(f"SUQL paper · {len(self.paper)} real queries", "bold $text-accent"), disabled=True
                )
            )
            options.extend(_example_option(f"paper-{i}", e) for i, e in enumerate(self.paper))
        elif missing_paper is not None:
            options += [
                None,
                Option(as_text(Content.styled(f"SUQL paper · {missing_paper}", "$text-warning")), disabled=True),
            ]
        self.set_options(options)
        self.border_subtitle = as_text(f"{len(self.lecture) + len(self.paper)} queries · world {world}", one_line=True)

    def by_id(self, option_id: str) -> Example | None:
        """The example of the option ``option_id`` (None: a heading, or no such option)."""
        kind, _, index = option_id.partition("-")
        pool = {"lecture": self.lecture, "paper": self.paper}.get(kind, ())
        return pool[int(index)] if index.isdigit() and int(index) < len(pool) else None

    def option_id(self, example: Example) -> str:
        """The id of ``example``'s entry."""
        for kind, pool in (("lecture", self.lecture), ("paper", self.paper)):
            for i, candidate in enumerate(pool):
                if candidate is example:
                    return f"{kind}-{i}"
        raise KeyError(f"{example.source} is not in the list")


def _example_option(option_id: str, example: Example) -> Option:
    source = example.source.replace("SUQL paper ", "").replace("lecture ", "L")
    room = max(8, EXAMPLE_CHARS - len(source) - 1)
    return Option(
        as_text(Content.assemble(truncate(example.title, room), " ", Content.styled(source, "$foreground-muted"))),
        id=option_id,
    )


class SuqlControls(Horizontal):
    """The world and mode switches (``Select``s ``#suql-world`` and ``#suql-mode``), mounted once the tab knows
    its worlds and modes; until then it holds what it composed (the "opening" note)."""

    def show(self, worlds: Sequence[tuple[str, str]], modes: Sequence[tuple[str, str]], world: str, mode: str) -> None:
        """Mount the switches (the first time; afterwards the world switch shows ``world``)."""
        if self.query("#suql-mode"):
            self.show_world(world)
            return
        self.query("#suql-opening").remove()
        world_select = Select(
            [(as_text(name, one_line=True), name) for name, _ in worlds],  # a world may be your file's path
            value=world,
            allow_blank=False,
            compact=True,
            id="suql-world",
        )
        world_select.border_title = "World"
        world_select.tooltip = "The data the queries run on; more worlds join as they are built."
        mode_select = Select(
            [(f"{name} · {short_title(title)}", name) for name, title in modes],
            value=mode,
            allow_blank=False,
            compact=True,
            id="suql-mode",
        )
        mode_select.border_title = "Mode · F7 / Shift+F7"
        mode_select.tooltip = "\n".join(f"{name} — {title}" for name, title in modes)
        self.mount_all([world_select, mode_select])

    def show_world(self, world: str) -> None:
        """The world switch says ``world`` (once mounted)."""
        self._show("#suql-world", world)

    def show_mode(self, mode: str) -> None:
        """The mode switch says ``mode`` (once mounted)."""
        self._show("#suql-mode", mode)

    def _show(self, selector: str, value: str) -> None:
        selects = self.query(selector)
        if selects:
            select = selects.first(Select)
            if select.value != value:
                select.value = value


__all__ = ["EXAMPLE_CHARS", "SuqlControls", "SuqlCounters", "SuqlExamples"]
