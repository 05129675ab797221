"""The HybridQA tab's parts that keep their own state: the counters line (passages read and why, attempts, the
elapsed time, the tokens) and the pane of the run's SUQL attempts.  The tab owns them and tells them what
happened; they draw it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.counters import RunCounters, counter
from tui.hybridqa_card import suql_attempts
from tui.hybridqa_keys import SUQL_HINT
from tui.widgets import TextView, as_text

if TYPE_CHECKING:
    from engines.api import hybridqa_events


class HybridCounters(RunCounters):
    """The run's counters: LLM calls, passages read (how many by the fallback, how many said nothing), the
    fallback's tries, the attempts, the elapsed time, the tokens."""

    SEPARATOR: ClassVar[str] = "  "

    def zero(self) -> dict[str, Any]:
        return {
            "calls": 0,
            "read": 0,
            "fallback": 0,
            "silent": 0,
            "tried": 0,
            "attempts": 0,
            "elapsed": 0.0,
            "running": False,
        }

    def parts(self) -> list[Content]:
        c = self.counts
        read = counter("passages read", f"{c['read']:,}") + Content.styled(
            f" ({c['fallback']:,} by the fallback, {c['silent']:,} said nothing)", "$foreground-muted"
        )
        return [read, counter("attempts", f"{c['attempts']}"), counter("elapsed", f"{c['elapsed']:.2f} s")]


class AttemptsPane(VerticalScroll):
    """The SUQL of every attempt of the run (a retried one says why) and what each returned; the pane keeps
    the attempts as they stream in (:attr:`attempts`, oldest first) and draws them with
    :func:`tui.hybridqa_card.suql_attempts`."""

    def __init__(self, *, id: str) -> None:
        super().__init__(TextView(SUQL_HINT, id="hqa-suql"), id=id, classes="pane")
        self.border_title = "SUQL"
        self.attempts: list[dict[str, Any]] = []

    def clear_attempts(self) -> None:
        """No attempt (a new run, another table)."""
        self.attempts = []

    def parsed(self, number: int, suql: str) -> None:
        """Attempt ``number``'s SUQL was written: it runs."""
        self.attempts.append({"number": number, "suql": suql, "state": "running"})

    def executed(self, event: hybridqa_events.AttemptExecuted) -> None:
        """An attempt ran: its rows or its error."""
        for attempt in self.attempts:
            if attempt["number"] == event.attempt:
                attempt.update(
                    state="done",
                    rows=event.rows,
                    columns=event.columns,
                    empty=event.empty,
                    error=event.error,
                    answer_calls=event.answer_calls,
                )

    def retried(self, number: int, reason: str) -> None:
        """Attempt ``number`` is a retry: the one before it says why."""
        for attempt in self.attempts:
            if attempt["number"] == number - 1:
                attempt["retried"] = reason

    def cancelled(self) -> None:
        """The run was cancelled: a running attempt says so."""
        for attempt in self.attempts:
            if attempt["state"] == "running":
                attempt["state"] = "cancelled"

    @property
    def last_number(self) -> int | None:
        """The number of the latest attempt (None: none yet)."""
        return self.attempts[-1]["number"] if self.attempts else None

    def show(self, *, final: bool) -> None:
        """Draw the attempts (``final``: the run ended with an answer)."""
        title, subtitle, lines = suql_attempts(self.attempts, final=final)
        self.border_title = as_text(title, one_line=True)
        self.border_subtitle = as_text(subtitle, one_line=True)
        self.query_one("#hqa-suql", Static).update(lines)


__all__ = ["AttemptsPane", "HybridCounters"]
