"""The typed messages of the app: what the engines report, and what the tabs' parts tell their tab.

**What an engine reports.**  A worker that runs an engine hands the engine an ``emit`` callback (the tab's
:meth:`tui.area.WorkArea._emit`); it is called in the worker thread with each event of the engine's stream
(:mod:`engines.events`, the SUQL compiler's, the HybridQA pipeline's, SPINACH's).  There the tab's
:class:`Reports` table turns every event the tab shows into its typed message, one class per outcome the app
handles differently (:class:`LlmCallStarted`, :class:`PlanBuilt`, :class:`StepTaken`, …), and posts it to the
tab (thread-safe).  Each is an :class:`EngineMessage` that carries the engine's event, typed; it does not bubble
(the tab that ran the engine is the one that shows it).  An event no tab shows (``RolledBack``: the step carries
its reason) becomes no message.

**What a part tells its tab.**  A tab's parts are widgets that post past-tense messages and never call a
method of an ancestor: :class:`QuestionSubmitted` (Enter in a question box), :class:`ExampleChosen` and
:class:`HistoryChosen` (the examples and history pickers), and the messages the widgets declare themselves
(``SqlEditor.RunRequested``, ``StepperView.StepRequested``, …).

No engine module is imported here: the events are named for the type checker only, and a tab's table of
reports is built the first time one of its engines emits (:class:`Reports`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    import engines.api as api
    from engines.api import events as ev
    from engines.api import hybridqa_events as hqa
    from tui.history import HistoryEntry
    from tui.widgets import TextBox

MessageOf = Callable[[Any], "Message | None"]
"""What an engine event becomes: a typed message, or None when this tab shows nothing of it."""


class EngineMessage(Message):
    """An event an engine emitted, as the typed message of its outcome (posted from the worker thread that
    consumes the engine's event stream).  ``event`` is the engine's own record (each subclass names its type).
    Such a message does not bubble: it is for the tab whose worker ran the engine."""

    event: object

    def __init_subclass__(cls, bubble: bool | None = False, **kwargs: Any) -> None:
        super().__init_subclass__(bubble=bubble, **kwargs)

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class Reports:
    """A tab's table of reports: which typed message each engine event it shows becomes.

    ``build`` returns ``{event class: message class or factory}``; it is called once, when the first event
    arrives (so the engines' modules are imported only once an engine runs).  An event's class is looked up
    along its MRO; a factory may return None (the tab shows nothing of that event).
    """

    def __init__(self, build: Callable[[], Mapping[type[Any], MessageOf]]) -> None:
        self._build = build
        self._table: Mapping[type[Any], MessageOf] | None = None
        self._lock = threading.Lock()

    @property
    def table(self) -> Mapping[type[Any], MessageOf]:
        if self._table is None:
            with self._lock:
                if self._table is None:
                    self._table = dict(self._build())
        return self._table

    def message_for(self, event: object) -> Message | None:
        """The typed message of ``event`` for this tab, or None."""
        table = self.table
        for cls in type(event).__mro__:
            make = table.get(cls)
            if make is not None:
                return make(event)
        return None


NO_REPORTS = Reports(dict)
"""The table of a tab that shows none of its engines' events."""


# --- the LLM layer (engines.events) -----------------------------------------------------------------------------


class LlmCallStarted(EngineMessage):
    """An LLM call began (its row in the calls table)."""

    event: ev.CallStarted


class LlmCallFinished(EngineMessage):
    """An LLM call answered (its verdict, latency, tokens)."""

    event: ev.CallFinished


class LlmCallFailed(EngineMessage):
    """An LLM call failed or was stopped."""

    event: ev.CallFailed


def llm_calls() -> dict[type[Any], MessageOf]:
    """The reports of the LLM layer's three events, which every tab with a calls table shows."""
    from engines.api import CallFailed, CallFinished, CallStarted

    return {CallStarted: LlmCallStarted, CallFinished: LlmCallFinished, CallFailed: LlmCallFailed}


# --- the Text-to-SQL agent (engines.events) ----------------------------------------------------------------------


class TurnStarted(EngineMessage):
    """A turn of the dialogue began: the panes empty."""

    event: ev.TurnStarted


class InputClassified(EngineMessage):
    """The input classifier decided whether the turn needs the database."""

    event: ev.InputClassified


class QueryParsed(EngineMessage):
    """The semantic parser wrote its SQL."""

    event: ev.QueryParsed


class ValuesClassified(EngineMessage):
    """``classify()`` mapped a value the user said onto the enumeration's."""

    event: ev.ValuesClassified


class QueryRewritten(EngineMessage):
    """The SQL after ``classify()``: the statement that runs."""

    event: ev.QueryRewritten


class QueryExecuted(EngineMessage):
    """The agent's query returned its rows."""

    event: ev.QueryExecuted


class QueryFailed(EngineMessage):
    """The agent's query failed."""

    event: ev.QueryFailed


class ReadBackWritten(EngineMessage):
    """The query said back in words (and what of the question it leaves out)."""

    event: ev.ReadBackWritten


# --- the SUQL compiler (engines.suql) ----------------------------------------------------------------------------


class PlanBuilt(EngineMessage):
    """The SUQL compiler planned the query."""

    event: api.PlanBuilt


class RowDecided(EngineMessage):
    """A candidate row was decided: match, no, or to verify."""

    event: api.RowDecided


class SuqlQueryFinished(EngineMessage):
    """A SUQL query ran to its end (its read-back)."""

    event: api.QueryFinished


class ModeStarted(EngineMessage):
    """Comparing the modes: the run in one mode began."""

    event: api.ModeStarted


class ModeProgressed(EngineMessage):
    """Comparing the modes: the running mode's calls so far."""

    event: api.ModeProgressed


class ModeCompared(EngineMessage):
    """Comparing the modes: one mode's run ended (its line of the comparison)."""

    event: api.ModeCompared


# --- the HybridQA pipeline (engines.hybridqa.events) -------------------------------------------------------------


class QuestionParsed(EngineMessage):
    """The parser wrote an attempt's SUQL."""

    event: hqa.QuestionParsed


class AttemptExecuted(EngineMessage):
    """An attempt's SUQL ran (its rows, or its error)."""

    event: hqa.AttemptExecuted


class Retried(EngineMessage):
    """Nothing came back: the parser is asked again."""

    event: hqa.Retried


class PassageRead(EngineMessage):
    """``answer()`` read a passage (by the query or by the fallback)."""

    event: hqa.PassageRead


class FallbackTried(EngineMessage):
    """The fallback asked a row's other passage columns."""

    event: hqa.FallbackTried


class AnswerShortened(EngineMessage):
    """The rows became a short answer."""

    event: hqa.AnswerShortened


# --- the SPINACH agent (engines.spinach.events) ------------------------------------------------------------------


class AgentStarted(EngineMessage):
    """The agent began a run (its policy and budgets)."""

    event: api.AgentStarted


class StepTaken(EngineMessage):
    """The agent took a step."""

    event: api.StepTaken


class PolicyAsked(EngineMessage):
    """The agent asked its policy (an LLM call of the function ``policy``) for the next step."""

    event: ev.CallStarted


# --- what a tab's parts tell it -----------------------------------------------------------------------------------


class QuestionSubmitted(Message):
    """Enter in a question box: ``text`` as typed (the tab decides whether it is asked)."""

    def __init__(self, box: TextBox, text: str) -> None:
        super().__init__()
        self.box = box
        self.text = text

    @property
    def control(self) -> TextBox:
        return self.box


class ExampleChosen(Message):
    """An example was chosen (in the examples picker, or a tab's examples list); ``value`` is the tab's own
    (what its picker items carry).  It is loaded, not run."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class HistoryChosen(Message):
    """An entry of the tab's history was chosen in the history picker: it is to be put back (not run)."""

    def __init__(self, entry: HistoryEntry) -> None:
        super().__init__()
        self.entry = entry


__all__ = [
    "NO_REPORTS",
    "AgentStarted",
    "AnswerShortened",
    "AttemptExecuted",
    "EngineMessage",
    "ExampleChosen",
    "FallbackTried",
    "HistoryChosen",
    "InputClassified",
    "LlmCallFailed",
    "LlmCallFinished",
    "LlmCallStarted",
    "MessageOf",
    "ModeCompared",
    "ModeProgressed",
    "ModeStarted",
    "PassageRead",
    "PlanBuilt",
    "PolicyAsked",
    "QueryExecuted",
    "QueryFailed",
    "QueryParsed",
    "QueryRewritten",
    "QuestionParsed",
    "QuestionSubmitted",
    "ReadBackWritten",
    "Reports",
    "Retried",
    "RowDecided",
    "StepTaken",
    "SuqlQueryFinished",
    "TurnStarted",
    "ValuesClassified",
    "llm_calls",
]
