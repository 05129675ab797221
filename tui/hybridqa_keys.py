"""The HybridQA tab's keys: its bindings, the hints that name them, and the help page (which lists only
keys that exist)."""

from __future__ import annotations

from textual.binding import Binding
from textual.content import Content

from tui.widgets import run_binding

RUN_HINT = "Ctrl+J (or Enter in the list) runs it"
PLAN_HINT = Content.styled(
    "Run a question to see how the SUQL compiler plans the parser's query: the table conditions first, "
    "then the answer() calls on the passages of the rows they leave.",
    "$foreground-muted italic",
)
SUQL_HINT = Content.styled(
    "The parser sees the question and the table's schema only (zero-shot), and writes SUQL. "
    "When nothing comes back it parses again, shown the queries that failed (at most 2 retries).",
    "$foreground-muted italic",
)

HELP = """\
## HybridQA — questions over tables with linked passages (lecture 7 §6)

A HybridQA table links some of its cells to passages (a Games to its host city's page, a flag bearer to
a biography). Here each linked column `X` gains a column `X_Info` holding the passages, so one SUQL query
can combine the table (SQL) and the passages (`answer()`). The pipeline of §6.2: the LLM **parses** the
question into SUQL from the table's schema alone (zero-shot: it sees no rows); the SUQL compiler **runs** it;
when nothing comes back it **parses again** (at most twice), shown the queries that failed; the LLM turns the
rows into a **short answer**, which is scored against the annotator's gold.

**Left:** the source (*generated*: 50 flag-bearer tables of fictional countries at real Olympic Games,
six questions each, one per HybridQA type; *real*: 14 tables of the HybridQA dev set with their
passages and 42 questions), the table, the two improvements, the questions (their type I–VI), the SUQL of
every attempt (a retried one says why) with what it returned, and the read-back.
**Right:** counters (passages read, how many by the fallback, how many said nothing), the question card —
its type, the short answer beside the gold, SQuAD's EM and F1 and, on generated tables, the *human
judgement* (it reads the hidden truth and accepts any right answer in any form; when EM is 0 the error
class says why: the evaluation's fault, or the system's), the plan of the last attempt, and below either
*Rows & passages* (the table; linked cells are underlined: highlight one, or an `_Info` cell, to read its
passage) or *LLM calls* (streaming in: every passage read — row, column, question, value — and whether the
query's answer() or the fallback read it; the line under the table shows the highlighted call in full).

**The improvements** (switch them off for the ablation): *fallback* — when answer() finds nothing in the
column the parser chose, the executor asks the row's other passage columns (the parser never knows);
*retry* — parse again when nothing comes back.

**Real tables and the simulated LLM:** the simulated parser and reader know only the generated worlds, so
with the `sim` backend real tables can be browsed but not run (the tab says so). With `claude` they run.

| key | what it does |
| --- | --- |
| Ctrl+Enter / Ctrl+J, Enter (in the questions) | run the chosen question |
| ↑ / ↓ (in the questions) | choose a question: its type and gold show in the card |
| f / r | switch the fallback / the retry on or off (for the next run) |
| s | switch the source: generated ↔ real tables |
| [ / ] | previous / next table |
| Esc | cancel the running question: no further LLM call; what was read stays on screen |
| Ctrl+L | search every question of every table of the source (words of the question, its type, the table); Enter chooses it (it does not run it) |
| Ctrl+R | the questions you ran (kept across restarts), searchable; Enter chooses it again |
| Tab / Shift+Tab | move between the controls, the questions and the tables |

The questions are the data set's (each has its gold answer), so there is no free question box: ↑ / ↓ in the
list choose among the table's questions, and the history (Ctrl+R) brings back the ones you ran.

In the command palette (Ctrl+P), type *HybridQA* to run, switch the source or an improvement, open a table,
or open the examples (*HybridQA: examples…*) or the history.
"""

BINDINGS: list[Binding] = [
    run_binding("Run the chosen question through the pipeline (Ctrl+J for terminals without Ctrl+Enter)."),
    Binding("escape", "cancel", "Cancel", tooltip="Cancel the running question: the engine makes no further LLM call."),
    Binding(
        "f",
        "toggle_improvement('fallback')",
        "Fallback",
        tooltip="Switch improvement 1 on or off: answer() tries the row's other passage columns.",
    ),
    Binding(
        "r",
        "toggle_improvement('retry')",
        "Retry",
        tooltip="Switch improvement 2 on or off: parse again when nothing comes back.",
    ),
    # the Source select's title names s; at 80 columns the footer keeps its room for the app's keys
    Binding(
        "s",
        "switch_source",
        "Source",
        show=False,
        tooltip="Switch between the generated tables and the real HybridQA tables.",
    ),
    Binding(
        "left_square_bracket",
        "step_table(-1)",
        "Prev table",
        key_display="[",
        show=False,
        tooltip="Show the previous table.",
    ),
    Binding(
        "right_square_bracket",
        "step_table(1)",
        "Next table",
        key_display="]",
        show=False,
        tooltip="Show the next table ([ shows the previous one).",
    ),
]
