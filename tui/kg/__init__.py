"""The Knowledge-graph tab: SPARQL on a Wikidata-like graph, its entity pages, and SPINACH stepped (lecture 8).

Three views, switched with the tab bar under the app's tabs (or F7 / Shift+F7):

* **SPARQL console** — examples on the left (the quirks of §1.4, the dialect, the four feedbacks),
  the editor (SPARQL highlighted; Ctrl+Enter or Ctrl+J runs), which of the four feedbacks of §1.5
  came back (rows, empty, syntax error, timeout — or *refused*, when nothing ran), and the rows.
  Enter on an entity in the results opens its page in the browser.
* **Entity browser** — a search box (labels and aliases; a QID or PID opens directly), the hits,
  and the page of an entity: every claim with its qualifiers.  Enter on a claim follows its value;
  Backspace goes back.  A property's page lists statements that use it.
* **Trajectory stepper** — the simple and forum-style questions (with their categories) and a box
  to load a trajectory JSON (ours, or SPINACH's own logs).  Enter runs the SPINACH agent on a
  question with the app's backend (sim or claude) and its steps stream in as they are taken.  Then
  → / ← (or n / p), Home / End step through it: thought, action, argument and the observation as the
  agent saw it (``v``: all of it), the budgets, the rolled-back steps marked with the reason, and at
  the last step the answer rows with row-wise F1 and EM against the gold answer.

All engine work runs in thread workers, one group per view (``kg-session`` for the session, ``kg-console``,
``kg-search``, ``kg-page``, ``kg-stepper``: :attr:`KgArea.GROUPS`), each ``exclusive`` within its group, so
browsing while the agent runs does not stop it.  Each job is started with the handlers of its typed outcome
(:meth:`tui.area.WorkArea.run_engine`).  The agent's ``emit`` posts the typed message of each event the stepper
shows (:data:`tui.kg.tab.REPORTS`: ``AgentStarted``, ``StepTaken``, ``PolicyAsked``; :mod:`tui.messages`); Esc
sets the run's cancel flag, which the agent checks before every policy call.  Durations are read from the app's
injected clock, so screens under test do not change from run to run.

The package, one idea a module:

* :mod:`tui.kg.tab` — :class:`KgArea`, the tab's state in one class: the layout, the public actions, the
  widgets' and the agent's messages, what the tab shows when its jobs end, its examples and history;
* :mod:`tui.kg.keys` — the views, the tab's keys and its help page; :mod:`tui.kg.palette` — its palette
  entries (from the tab's public state and actions); :mod:`tui.kg.work` — what its workers do in their threads
  (the session, a query, a page, a run, a trajectory loaded);
* :mod:`tui.kg.console` — the feedback bar and the examples' entries (the examples are
  :mod:`engines.kg.examples`); :mod:`tui.kg.sparql` — SPARQL highlighting and the editor;
* :mod:`tui.kg.browser` — the claims table and the browser's keys (posted to the tab as messages);
* :mod:`tui.kg.stepper` — the strip, the step view and :class:`StepperView`, whose keys post messages to the
  tab and which renders the model of
* :mod:`tui.kg.stepper_model` — :class:`StepperModel`, the stepper without Textual (position, keys,
  what each step shows); scoring and the answer rule are the engine's (:mod:`engines.spinach.scoring`);
* :mod:`tui.kg.results` — what they share: values as IDs, the results table, the error box.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE: dict[str, str] = {
    "EXAMPLES": "engines.kg.examples",
    "SparqlExample": "engines.kg.examples",
    "Scored": "engines.spinach.scoring",
    "BrowserView": "tui.kg.browser",
    "ClaimsTable": "tui.kg.browser",
    "ConsoleView": "tui.kg.console",
    "FeedbackBar": "tui.kg.console",
    "KgResultsTable": "tui.kg.results",
    "entity_of": "tui.kg.results",
    "short_value": "tui.kg.results",
    "SparqlEditor": "tui.kg.sparql",
    "sparql_content": "tui.kg.sparql",
    "sparql_highlights": "tui.kg.sparql",
    "sparql_tokens": "tui.kg.sparql",
    "StepperView": "tui.kg.stepper",
    "StepStrip": "tui.kg.stepper",
    "StepView": "tui.kg.stepper",
    "StepperModel": "tui.kg.stepper_model",
    "KgArea": "tui.kg.tab",
}
"""Where each name of the package lives.  Imported on first use, so that ``tui.kg.stepper_model`` (and the
engines it reads) can be imported without Textual."""


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "EXAMPLES",
    "BrowserView",
    "ClaimsTable",
    "ConsoleView",
    "FeedbackBar",
    "KgArea",
    "KgResultsTable",
    "Scored",
    "SparqlEditor",
    "SparqlExample",
    "StepStrip",
    "StepView",
    "StepperModel",
    "StepperView",
    "entity_of",
    "short_value",
    "sparql_content",
    "sparql_highlights",
    "sparql_tokens",
]
