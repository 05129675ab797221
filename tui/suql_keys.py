"""The SUQL tab's keys: its bindings, the editor whose Ctrl+Enter runs SUQL, the hints that name the keys,
and the help page (which lists only keys that exist)."""

from __future__ import annotations

from textual.binding import Binding
from textual.content import Content
from textual.reactive import reactive

from tui.widgets import SqlEditor, run_binding

EDITOR_TITLE = "SUQL · Ctrl+Enter or Ctrl+J runs it"
PLAN_HINT = Content.styled(
    "Run the query (Ctrl+Enter or Ctrl+J) to see how the compiler plans it: the structured predicates first, "
    "the answer() predicates ordered by cost × selectivity, the visit order, lazy or not, the cap. "
    "Ctrl+O runs it in all seven modes and compares their calls.",
    "$foreground-muted italic",
)


class SuqlEditor(SqlEditor):
    """The SQL editor (highlighted by :func:`tui.widgets.sql_highlights`, answer()/summary() apart)
    whose Ctrl+Enter runs SUQL."""

    BINDINGS = [
        run_binding("Run the SUQL query in this editor (Ctrl+J for terminals without Ctrl+Enter)."),
        # Ctrl+O is the tab's Compare here: a query file opens with Ctrl+E (check_action passes Ctrl+O on)
        Binding(
            "ctrl+e",
            "editor_open_e",
            "Open",
            key_display="^E",
            tooltip="Open a query file into the editor (here Ctrl+O compares the modes).",
        ),
    ]
    SUQL = True
    SUFFIXES = (".suql", ".sql", ".txt")

    tab_working: reactive[bool] = reactive(False, bindings=True)
    """True while the tab runs a query (the tab binds it to its :attr:`~tui.area.WorkArea.working`)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Like the tab's, the editor's Run is off the footer while the tab runs a query (Esc is there)."""
        if action == "run" and self.tab_working:
            return False
        if action == "editor_open":  # Ctrl+O: the tab's Compare
            return False
        return super().check_action(action, parameters)


HELP = """\
## SUQL — SQL plus answer() and summary() (lecture 7)

SUQL is SQL where `answer(text, 'question')` and `summary(text)` may stand wherever a text value may:
the LLM reads a row's text (its reviews, its popular dishes) and answers. The compiler makes this cheap:
the WHERE is normalised to **DNF**; in each conjunct the structured predicates run first in DuckDB; the
answer() predicates are ordered by cost × selectivity; candidates are visited in the query's ORDER BY or by
retrieval score (BM25); and evaluation stops as soon as LIMIT is met when the order allows it.

**Left:** the world and the execution mode, the examples (the lecture's, then the SUQL paper's 100 real
queries — Enter or a click loads one into the editor), the editor, the WHERE in DNF and the read-back
(the query said back in words, built from the query tree, mistakes included).
**Right:** running counters (answer() and summary() calls, cached answers, rows examined, elapsed time),
the *plan* (per conjunct: the structured part and its candidates, the answer() predicates in evaluation
order with cost, estimated pass rate and rank; the visit order; lazy or not and why; the cap), the
*results* beside the rows *to verify* (the condition is Unknown — SQL NULL — for them: never counted as
matches; verified lazily by default, a row stops at its first Unknown condition, so the list is *not yet settled*
and may shrink when v or V asks the rest), and the *LLM calls* streaming in: row, question, verdict, latency, cached, evidence — the line under
them shows the highlighted call's verdict with all of its evidence. The *World* switch opens another world
(the restaurants, the course assistant's courses, …): its examples replace the list.

**Modes** (lecture 7 §3.3): **A** naive (answer() on every row, then filter); **B** DuckDB runs the query as
written with answer() as a per-row function; **C** predicate ordering; **D** C + lazy evaluation; **E** D +
retrieval ordering; **F** E + a retrieval cap (approximate: its rows are labelled so); **G** E + a cascade (a proxy matches or
leaves out the rows it is sure of, to a stated precision and recall against the LLM at 95% confidence; the plan
shows the sample, the thresholds and the band, or why no row could be left out; each call is marked *pilot*,
*sample* or *band*; its rows are labelled *proxy* or *llm*). *Compare modes* runs the
query in all seven and tabulates the calls, the rows and the wall time. With the answer cache on, later modes
reuse earlier answers (the *cached* column): compare the call counts.

| key | what it does |
| --- | --- |
| Ctrl+Enter / Ctrl+J | run the query in the editor |
| Ctrl+O | compare modes: run the query in A–G and show the table |
| F7 / Shift+F7 | the next / previous execution mode (A … G) for the next run, also while typing; the Mode switch and the palette pick one directly |
| Esc | cancel the running query: no further LLM call; what was decided stays on screen |
| Enter / V (in the rows to verify) | verify the highlighted row / every row: ask the conditions lazy verification left unasked; the calls stream in marked *verify* and are counted apart |
| Enter (in the examples) | load the example into the editor |
| Ctrl+L | search every example (the lecture's, the paper's 100): type words of its title, its query or its source; Enter loads it |
| ↑ / ↓ (at the editor's first / last line, while it holds no edits of yours) | the queries run before (kept across restarts) |
| Ctrl+R | search the queries run before; Enter puts one in the editor |
| Tab / Shift+Tab | move between the controls, the examples, the editor and the tables |

**History.** Every query run (or compared) is kept in the user data folder and comes back after a restart.
↑ at the editor's first line shows the query run before, while the editor holds no edits of yours (an example,
a query walked to, the query just run): so ↑ never takes a cursor move from a query being written. ↓ at its
last line walks back; past the newest, the text you started from returns.

In the command palette (Ctrl+P), type *SUQL* to run, compare, pick a mode or a world, or open the examples
(*SUQL: examples…*) or the history.
"""

BINDINGS: list[Binding] = [
    run_binding("Run the query in the editor (Ctrl+J for terminals without Ctrl+Enter)."),
    Binding(
        "ctrl+o",
        "compare",
        "Compare",
        tooltip="Run the editor's query in all seven modes and compare calls, rows and wall time.",
    ),
    Binding("escape", "cancel", "Cancel", tooltip="Cancel the running query: the engine makes no further LLM call."),
    # mode keys are F-keys: never typed into the editor, never Alt (terminals disagree on it)
    Binding(
        "f7",
        "cycle_mode(1)",
        "Mode",
        key_display="F7",
        priority=True,
        tooltip="The next execution mode (A → B → … → G → A), even while typing.",
    ),
    Binding(
        "shift+f7",
        "cycle_mode(-1)",
        "Previous mode",
        key_display="Shift+F7",
        priority=True,
        show=False,
        tooltip="The previous execution mode, even while typing.",
    ),
]
