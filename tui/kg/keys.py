"""The Knowledge-graph tab's keys: its views (F7 / Shift+F7 step through them), its bindings, and the help
page (which lists only keys that exist; the budgets it names are the agent's)."""

from __future__ import annotations

from textual.binding import Binding

from engines.api import BUDGET, TOTAL_BUDGET

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("console", "SPARQL console", "f7"),
    ("browser", "Entity browser", "f7"),
    ("stepper", "Trajectory stepper", "f7"),
)
"""The tab's views: (name, title, key); F7 / Shift+F7 step through them (F2 … F6 are the app's tab keys)."""

HELP = f"""\
## Knowledge graph — SPARQL, entity pages and the SPINACH agent (lecture 8)

A fictional, Wikidata-like graph (QIDs from Q1000, Wikidata's real PIDs) with the seven quirks of §1.4:
the query one writes from the question's words is legal SPARQL, but often wrong or incomplete.
Three views — the tab bar under the tabs, or **F7 / Shift+F7** (next / previous view):

**SPARQL console.** Wikidata's dialect: the usual prefixes are built in (`wd:`, `wdt:`, `p:`, `ps:`, `pq:`,
`rdfs:`, …), `SERVICE wikibase:label` gives `?xLabel` and `?xDescription`, Blazegraph's named subqueries
(`WITH {{ … }} AS %x` / `INCLUDE %x`) and `hint:` triples are accepted. Each run gets one of the **four
feedbacks** of §1.5 — *rows*, *empty*, *syntax error*, *timeout* — shown lit above the results; updates,
`LOAD` and remote `SERVICE` are *refused* (nothing runs, the editor keeps your text). The examples pair the
right query for each quirk with the naive one. Enter on an ID in the results opens its page.

**Entity browser.** Type in the search box (labels and aliases, like Wikidata's search; a QID or PID opens
directly), Enter on a hit opens its page: label, description, aliases and every claim with its qualifiers
(the year of an award is a P585 qualifier, quirk 5). Enter on a claim follows its value to that entity;
**o** opens the claim's property (a property's page lists statements that use it); **Backspace** goes back.

**Trajectory stepper.** The simple (40) and forum-style (56, in 8 categories) questions. Enter (or **r**)
runs the SPINACH agent on the highlighted one with the app's backend (*sim*: the seeded expert procedure
acting with the real tools on the real graph; *claude*), and the steps appear as they are taken; Esc stops
it. Or type the path of a trajectory JSON (saved by `cs224v-tui spinach --save`, or one of SPINACH's own
logs) in the box below the list and press Enter. Then step through it: each step shows the thought, the
action, its argument and the observation exactly as the agent saw it (**v**: all of it), the budgets
({BUDGET} actions in the state, {TOTAL_BUDGET} in all), and rolled-back steps — a repeat, or a stop while the last query had
returned no rows — marked ↺ with the reason: they are kept in the trajectory but left the state, and the policy was
asked again. At the last step: the answer rows with row-wise F1 and EM against the gold answer.

| key | what it does |
| --- | --- |
| F7 / Shift+F7 | the next / previous view: the console → the browser → the stepper, also while typing |
| Ctrl+Enter / Ctrl+J | run the query in the editor |
| Enter (examples, hits, questions) | load the example / open the page / run the agent on the question |
| Enter (on a claim, on an ID in the results) | follow the link to that entity's page |
| o · Backspace or b · / | open the claim's property · back · the search box (browser) |
| → or n · ← or p · Home · End | next · previous · first · last step (stepper) |
| v | the step's whole observation, or only its first lines |
| e | explore the step: its query in the console, its page or search in the browser |
| g | the question's gold SPARQL in the console |
| t | list and search every trajectory of the file loaded (Enter shows one) |
| Esc | stop the running agent: it takes no further action |
| Ctrl+L | the examples: the console's SPARQL examples and the stepper's questions, searchable; Enter loads one |
| ↑ / ↓ (at the console editor's first / last line, while it holds no edits of yours) | the queries run before |
| Ctrl+R | search the SPARQL run before (kept across restarts); Enter puts it in the editor |

In the command palette (Ctrl+P), type *Knowledge graph* to switch views, open the examples or the history,
load a trajectory or stop a run. The examples (Ctrl+L) hold the console's queries and every question of the
stepper: Enter on a query puts it in the editor, on a question highlights it in the stepper (Enter there runs
the agent). A file of many trajectories (SPINACH's own run logs hold one per question):
**t** lists and searches them all. SPINACH's logs keep each query's result as it ran on Wikidata: the stepper
shows those logged rows (and the answer's) rather than running a query meant for a graph this is not.
"""

BINDINGS: list[Binding] = [
    Binding(
        "f7",
        "cycle_view(1)",
        "View",
        key_display="F7",
        priority=True,
        tooltip="The next view: console → browser → stepper → console, even while typing.",
    ),
    Binding(
        "shift+f7",
        "cycle_view(-1)",
        "Previous view",
        key_display="Shift+F7",
        priority=True,
        show=False,
        tooltip="The previous view, even while typing.",
    ),
    Binding("escape", "cancel", "Stop", tooltip="Stop the running agent: it takes no further action."),
]
