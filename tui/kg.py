"""The Knowledge-graph tab: SPARQL on a Wikidata-like graph, its entity pages, and SPINACH stepped (lecture 8).

Three views, switched with the tab bar under the app's tabs (or F2 / F3 / F4):

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

All engine work runs in thread workers, one group per view (``kg`` for the session, ``kg-console``,
``kg-search``, ``kg-page``, ``kg-stepper``), each ``exclusive`` within its group, so browsing while the
agent runs does not stop it.  The agent's ``emit`` posts :class:`AgentReported` messages; Esc sets the
run's cancel flag, which the agent checks before every policy call.  Durations are read from the app's
injected clock, so screens under test do not change from run to run.
"""
from __future__ import annotations

import re
import textwrap
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Input, OptionList, Static, TabbedContent, TabPane, TextArea
from textual.widgets.option_list import Option, OptionDoesNotExist
from textual.worker import Worker, WorkerState

from engines.events import CallStarted
from tui.area import EngineReported, PaletteCommand, WorkArea, describe_error
from tui.widgets import DISPLAY_ROWS, ResultsTable, SqlEditor, count_rows, truncate

if TYPE_CHECKING:
    from engines.kg.endpoint import QueryResult
    from engines.kg.pages import EntityPage, PropertyExample, SearchHit
    from engines.settings import Settings
    from engines.spinach.session import SpinachSession
    from engines.spinach.trajectory import Step, Trajectory
    from worlds.kg import KGQuestion

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("console", "SPARQL console", "f2"),
    ("browser", "Entity browser", "f3"),
    ("stepper", "Trajectory stepper", "f4"),
)
"""The tab's views: (name, title, key)."""
EDITOR_TITLE = "SPARQL · Ctrl+Enter or Ctrl+J runs it"
LIST_CHARS = 39
"""Characters of a line in the lists on the left (they are 46 wide, with a border and a scrollbar)."""
OBSERVATION_LINES = 14
"""Lines of an observation shown at first; ``v`` shows all of it."""
FEEDBACKS: tuple[tuple[str, str], ...] = (
    ("rows", "rows"), ("empty", "empty"), ("syntax_error", "syntax error"), ("timeout", "timeout"),
)
FEEDBACK_HINTS: Mapping[str, str] = {
    "rows": "Rows came back. A legal query can still be wrong or incomplete (§1.4): check the count.",
    "empty": "No rows: the query is legal, but some part of the pattern matches nothing. Run its fragments alone.",
    "syntax_error": "The query does not parse (or cannot be evaluated): the message says where.",
    "timeout": "The query ran out of time: simplify it (a narrower pattern, fewer joins, a LIMIT).",
    "refused": "Refused: nothing ran. The endpoint is read-only and calls no other endpoint.",
}
ACTION_NOTES: Mapping[str, str] = {
    "search_wikidata": "search items and properties by label",
    "get_wikidata_entry": "an entity's page, qualifiers included",
    "get_property_examples": "a few statements that use a property",
    "execute_sparql": "run a query: rows · empty · syntax error · timeout",
    "stop": "stop(SPARQL) names the answer query; a bare stop() means the last query that ran",
}
ROLLBACK_NOTES: Mapping[str, str] = {
    "repeat": "the same action as a recent step in the state, so it was not run",
    "premature stop": "stop() while the answer query it names had returned no rows (or none had run)",
}
MUTED = "$foreground-muted"
"""Secondary text in Content (``$text-muted`` is "auto 60%", which Content cannot resolve: it comes out white)."""
WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"
_ENTITY_ID = re.compile(r"^[QP]\d+$")
_ERROR_AT = re.compile(r"\bline (\d+), column (\d+)")


# --- SPARQL highlighting without tree-sitter -----------------------------------------------------

_SPARQL_KEYWORDS = frozenset(
    """select distinct reduced where filter optional union minus service graph bind values as from named order by
    asc desc group having limit offset ask construct describe prefix base not exists in a with include true false
    undef load insert delete data clear drop create into silent""".split()
)
_SPARQL_TOKEN = re.compile(
    r"(?P<iri><[^<>\s\"{}|^`]*>)"
    r"|(?P<string>\"(?:[^\"\\\n]|\\.)*\"?(?:@[A-Za-z][\w-]*)?|'(?:[^'\\\n]|\\.)*'?(?:@[A-Za-z][\w-]*)?)"
    r"|(?P<comment>#.*)"
    r"|(?P<variable>[?$][A-Za-z_]\w*)"
    r"|(?P<named>%[A-Za-z_]\w*)"
    r"|(?P<pname>\b[A-Za-z][\w.-]*:(?:[A-Za-z0-9_][\w-]*)?)"
    r"|(?P<number>\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)"
    r"|(?P<word>[A-Za-z_]\w*)(?P<call>\s*\()?"
)
_EDITOR_STYLES: Mapping[str, str] = {
    "iri": "link.uri", "string": "string", "comment": "comment", "variable": "type.builtin", "named": "type",
    "pname": "class", "number": "number", "keyword": "keyword", "function": "function.call",
}
_CONTENT_STYLES: Mapping[str, str] = {
    "iri": "$text-primary underline", "string": "$text-success 90%", "comment": "$text 60%",
    "variable": "$text-secondary", "named": "$text-warning italic", "pname": "$text-primary",
    "number": "$text-warning", "keyword": "$text-accent", "function": "$text-warning",
}


def sparql_tokens(line: str) -> list[tuple[int, int, str]]:
    """The highlighted spans of one line of SPARQL: (start, end, kind), character offsets.

    Kinds: iri, string, comment, variable, named (``%subquery``), pname (``wdt:P31``), number,
    keyword, function.  Everything else stays plain.
    """
    out: list[tuple[int, int, str]] = []
    for m in _SPARQL_TOKEN.finditer(line):
        kind = m.lastgroup
        if m.group("word") is not None:
            start, end = m.span("word")
            if m.group("call") is not None:
                out.append((start, end, "keyword" if m.group("word").lower() in _SPARQL_KEYWORDS else "function"))
            elif m.group("word").lower() in _SPARQL_KEYWORDS:
                out.append((start, end, "keyword"))
        elif kind is not None:
            out.append((*m.span(), kind))
    return out


def sparql_highlights(line: str) -> list[tuple[int, int, str]]:
    """Highlight ranges of one line for :class:`SparqlEditor`: (start byte, end byte, TextArea theme name)."""
    return [(len(line[:s].encode()), len(line[:e].encode()), _EDITOR_STYLES[k]) for s, e, k in sparql_tokens(line)]


def sparql_content(text: str) -> Content:
    """SPARQL highlighted with the theme's colours (for read-only views)."""
    lines = []
    for line in text.strip("\n").split("\n"):
        content = Content(line)
        for start, end, kind in sparql_tokens(line):
            content = content.stylize(_CONTENT_STYLES[kind], start, end)
        lines.append(content)
    return Content("\n").join(lines)


class SparqlEditor(SqlEditor):
    """The console's editor: SPARQL highlighted from :func:`sparql_highlights`; Ctrl+Enter / Ctrl+J runs."""

    BINDINGS = [
        Binding("ctrl+enter,ctrl+j", "run", "Run", key_display="^⏎/^J",
                tooltip="Run the SPARQL in this editor on the knowledge graph (Ctrl+J for terminals without Ctrl+Enter)."),
    ]

    def line_highlights(self, line: str) -> list[tuple[int, int, str]]:
        return sparql_highlights(line)


# --- the console's examples ---------------------------------------------------------------------

_LABELS = 'SERVICE wikibase:label { bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". }'


@dataclass(frozen=True)
class SparqlExample:
    """A query for the console: what it shows, where it comes from and the feedback it gets."""

    title: str
    source: str
    query: str
    expect: str  # rows | empty | syntax_error | timeout | refused


EXAMPLES: tuple[SparqlExample, ...] = (
    SparqlExample("string instrumentalists: P279*", "quirk 3", f"""\
SELECT DISTINCT ?musician ?musicianLabel ?instrumentLabel WHERE {{
  ?musician wdt:P106 wd:Q1014 ;
            wdt:P1303 ?instrument .
  ?instrument wdt:P279* wd:Q1020 .
  {_LABELS}
}}
ORDER BY ?instrumentLabel ?musicianLabel""", "rows"),
    SparqlExample("↳ naive: P279 without *", "quirk 3", f"""\
SELECT DISTINCT ?musician ?musicianLabel ?instrumentLabel WHERE {{
  ?musician wdt:P106 wd:Q1014 ;
            wdt:P1303 ?instrument .
  ?instrument wdt:P279 wd:Q1020 .
  {_LABELS}
}}""", "empty"),
    SparqlExample("highest mountains: P2044", "quirk 2", f"""\
SELECT ?mountain ?mountainLabel ?elevation WHERE {{
  ?mountain wdt:P31 wd:Q1007 ;
            wdt:P2044 ?elevation .
  {_LABELS}
}}
ORDER BY DESC(?elevation)
LIMIT 5""", "rows"),
    SparqlExample("↳ naive: P2048 (height)", "quirk 2", f"""\
SELECT ?mountain ?mountainLabel ?height WHERE {{
  ?mountain wdt:P31 wd:Q1007 ;
            wdt:P2048 ?height .
  {_LABELS}
}}
ORDER BY DESC(?height)
LIMIT 5""", "empty"),
    SparqlExample("award years: pq:P585", "quirk 5", f"""\
SELECT ?laureate ?laureateLabel ?awardLabel ?date WHERE {{
  ?laureate p:P166 ?statement .
  ?statement ps:P166 ?award ;
             pq:P585 ?date .
  {_LABELS}
}}
ORDER BY ?date""", "rows"),
    SparqlExample("↳ naive: P585 on the person", "quirk 5", f"""\
SELECT ?laureate ?laureateLabel ?date WHERE {{
  ?laureate wdt:P166 ?award ;
            wdt:P585 ?date .
  {_LABELS}
}}""", "empty"),
    SparqlExample("Kestavia's cities: P131 chain", "quirk 6", f"""\
SELECT ?city ?cityLabel WHERE {{
  ?city wdt:P31 wd:Q1003 ;
        wdt:P131*/wdt:P17 wd:Q1047 .
  {_LABELS}
}}
ORDER BY ?cityLabel""", "rows"),
    SparqlExample("↳ naive: P17 only, too few", "quirk 6", f"""\
SELECT ?city ?cityLabel WHERE {{
  ?city wdt:P31 wd:Q1003 ;
        wdt:P17 wd:Q1047 .
  {_LABELS}
}}
ORDER BY ?cityLabel""", "rows"),
    SparqlExample("students per advisor: P184", "quirk 4", f"""\
SELECT ?advisorLabel (COUNT(?student) AS ?students) WHERE {{
  ?student wdt:P184 ?advisor .
  {_LABELS}
}}
GROUP BY ?advisorLabel
ORDER BY DESC(?students)""", "rows"),
    SparqlExample("two cities called Ashford", "quirk 7", f"""\
SELECT ?city ?cityDescription WHERE {{
  ?city rdfs:label "Ashford"@en .
  {_LABELS}
}}""", "rows"),
    SparqlExample("named subquery and a hint", "Blazegraph", f"""\
WITH {{
  SELECT ?mountain WHERE {{ ?mountain wdt:P31 wd:Q1007 . }}
}} AS %mountains
SELECT ?mountain ?mountainLabel ?elevation WHERE {{
  INCLUDE %mountains .
  ?mountain wdt:P2044 ?elevation .
  hint:Prior hint:runLast true .
  {_LABELS}
}}
ORDER BY ?elevation
LIMIT 3""", "rows"),
    SparqlExample("syntax error: a missing brace", "§1.5", """\
SELECT ?mountain ?elevation WHERE {
  ?mountain wdt:P31 wd:Q1007 ;
            wdt:P2044 ?elevation .
ORDER BY DESC(?elevation)
LIMIT 1""", "syntax_error"),
    SparqlExample("timeout: count a cross product", "§1.5", """\
SELECT (COUNT(*) AS ?n) WHERE {
  ?a ?p ?b .
  ?c ?q ?d .
}""", "timeout"),
    SparqlExample("refused: an update", "read-only", """\
INSERT DATA { wd:Q1007 rdfs:label "hill"@en . }""", "refused"),
    SparqlExample("refused: a remote SERVICE", "read-only", """\
SELECT ?s WHERE {
  SERVICE <https://dbpedia.org/sparql> { ?s ?p ?o . }
}
LIMIT 1""", "refused"),
)
"""The console's examples: each quirk of §1.4 as the right query, then the naive one; the dialect; the feedbacks."""


# --- values -----------------------------------------------------------------------------------------


def entity_of(value: Mapping[str, str] | None) -> str | None:
    """The QID/PID of a SPARQL JSON value that is a Wikidata entity, else None."""
    if not value or value.get("type") != "uri":
        return None
    iri = value.get("value", "")
    if iri.startswith(WIKIDATA_ENTITY):
        local = iri[len(WIKIDATA_ENTITY):]
        return local if _ENTITY_ID.match(local) else None
    return None


def short_value(value: Mapping[str, str] | None) -> str:
    """A SPARQL JSON value as a person reads it: entities as their ID, IRIs prefixed, literals as written."""
    if value is None:
        return "—"
    entity = entity_of(value)
    if entity is not None:
        return entity
    if value.get("type") == "uri":
        from engines.kg.prefixes import compact

        return compact(value.get("value", ""))  # a form that pastes back into a query
    return value.get("value", "")


def _question_key(text: str) -> str:
    return " ".join(text.split()).casefold()


# --- widgets ----------------------------------------------------------------------------------------


class FeedbackBar(Static):
    """Which of the four feedbacks came back: the one that did lit, the others dim; a hint under them."""

    feedback: str | None = None
    """The feedback shown: rows | empty | syntax_error | timeout | refused | None (nothing ran yet)."""

    def show(self, feedback: str | None, detail: str = "", notes: Sequence[str] = ()) -> None:
        """Light ``feedback`` (None: nothing came back yet), with a detail (rows, time) and the dialect notes."""
        self.feedback = feedback
        styles = {"rows": "bold $text-success", "empty": "bold $text-warning", "syntax_error": "bold $text-error",
                  "timeout": "bold $text-error", "refused": "bold $text-error"}
        chips: list[Content] = [Content.styled("Feedback ", MUTED)]
        for name, label in FEEDBACKS:
            if name == feedback:
                chips.append(Content.styled(f" ● {label} ", f"reverse {styles[name]}"))
            else:
                chips.append(Content.styled(f" ○ {label} ", MUTED))
        if feedback == "refused":
            chips.append(Content.styled(" ⊘ refused — nothing ran ", f"reverse {styles['refused']}"))
        if detail:
            chips.append(Content.styled(f"  {detail}", "bold"))
        lines = [Content("").join(chips)]
        hint = FEEDBACK_HINTS.get(feedback or "", "Run a query (Ctrl+Enter or Ctrl+J): one of the four feedbacks comes back.")
        lines.append(Content.styled(hint, f"{MUTED} italic"))
        if notes:
            lines.append(Content.assemble(Content.styled("dialect ", MUTED),
                                          Content.styled(" · ".join(notes), "$text-primary")))
        self.update(Content("\n").join(lines))


class KgResultsTable(ResultsTable):
    """Query results: entities shown as their IDs (Enter opens the highlighted one), IRIs prefixed."""

    class EntityChosen(Message):
        """Enter (or a click) on a cell that holds an entity."""

        def __init__(self, entity: str) -> None:
            super().__init__()
            self.entity = entity

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._entities: dict[tuple[int, int], str] = {}

    def show_bindings(self, columns: Sequence[str], bindings: Sequence[Mapping[str, Mapping[str, str]]], *,
                      truncated: bool = False) -> None:
        self.clear(columns=True)
        self._full = []
        self._entities = {}
        muted = self.get_component_rich_style("results-table--null")
        for name in columns:
            self.add_column(Text(truncate(name)))
        for r, binding in enumerate(bindings[:DISPLAY_ROWS]):
            values = [short_value(binding.get(c)) for c in columns]
            full = [binding[c]["value"] if c in binding else "—" for c in columns]
            self._full.append(full)
            for c, column in enumerate(columns):
                entity = entity_of(binding.get(column))
                if entity is not None:
                    self._entities[(r, c)] = entity
            self.add_row(*(Text(truncate(v), style=muted if c not in binding else "")
                           for v, c in zip(values, columns, strict=True)))
        subtitle = count_rows(len(bindings))
        if truncated:
            subtitle += " (stopped at the row cap)"
        if len(bindings) > DISPLAY_ROWS:
            subtitle += f" · showing the first {DISPLAY_ROWS:,}"
        if self._entities:
            subtitle += " · Enter on an ID opens its page"
        self.border_subtitle = subtitle
        self.tooltip = None

    def entity_at(self, row: int, column: int) -> str | None:
        return self._entities.get((row, column))

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        entity = self.entity_at(*event.coordinate)
        if entity is not None:
            event.stop()
            self.post_message(self.EntityChosen(entity))


class ClaimsTable(DataTable):
    """An entity page's claims (or a property's examples); each row may link to an entity."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.links: list[str | None] = []
        self.properties: list[str | None] = []

    COMPONENT_CLASSES = {"claims-table--qualifier"}

    def show_claims(self, page: EntityPage, examples: Sequence[PropertyExample] = ()) -> None:
        """The page's claims, each qualifier on a line of its own under the value; for a property,
        statements that use it (subject, then the value and its qualifiers)."""
        self.clear(columns=True)
        self.links, self.properties = [], []
        if examples or page.datatype:
            self.add_column("subject")
            self.add_column(f"{page.id} {truncate(page.label, 30)} →")
            for ex in examples:
                self._add(ex.subject.render(), ex.value.render(), ex.qualifiers, ex.subject.id, page.id)
            self.border_title = f"Statements that use {page.id} ({page.label})"
            self.border_subtitle = (f"{count_rows(len(examples), 'example')} · Enter opens the subject"
                                    if examples else "no statement uses it")
            return
        self.add_column("property")
        self.add_column("value · qualifiers")
        for claim in page.claims:
            link = claim.value.id or next((v.id for _, _, v in claim.qualifiers if v.id), None)
            self._add(f"{claim.pid} {claim.property_label}", claim.value.render(), claim.qualifiers, link, claim.pid)
        self.border_title = f"Claims of {page.id}"
        self.border_subtitle = (f"{count_rows(len(page.claims), 'claim')} · Enter follows the value · "
                                "o opens the property · Backspace goes back")

    def _add(self, first: str, value: str, qualifiers: Sequence[tuple[str, str, Any]], link: str | None,
             prop: str | None) -> None:
        self.links.append(link)
        self.properties.append(prop)
        cell = Text()
        cell.append(truncate(value, 60), style="underline" if link else "")
        qualifier_style = self.get_component_rich_style("claims-table--qualifier")
        for pid, label, qvalue in qualifiers:
            cell.append(f"\n ↳ {pid} {label}: {truncate(qvalue.render(), 48)}", style=qualifier_style)
        self.add_row(Text(truncate(first, 32)), cell, height=None)

    @property
    def current_link(self) -> str | None:
        row = self.cursor_row
        return self.links[row] if 0 <= row < len(self.links) else None

    @property
    def current_property(self) -> str | None:
        row = self.cursor_row
        return self.properties[row] if 0 <= row < len(self.properties) else None


class StepStrip(Static):
    """Every step of the trajectory on one line; the current one lit, rolled-back ones struck through."""

    class StepChosen(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cells: list[tuple[int, int, int]] = []  # (first column, last column + 1, position)

    def show(self, steps: Sequence[Step], current: int, *, running: bool) -> None:
        self._cells = []
        if not steps:
            self.update(Content.styled("no steps yet", f"{MUTED} italic"))
            return
        cells: list[Content] = [Content.styled("steps ", MUTED)]
        x = len("steps ")
        for i, step in enumerate(steps):
            label = f"↺{step.index}" if step.rolled_back else str(step.index)
            if step.action == "stop" and not step.rolled_back:
                label += "■"
            if i == current:
                style = "reverse bold $text-warning" if step.rolled_back else "reverse bold $text-accent"
            elif step.rolled_back:
                style = "strike $text-warning"
            elif step.action == "execute_sparql":
                style = {"rows": "$text-success", "empty": "$text-warning"}.get(step.feedback or "", "$text-error")
            else:
                style = "$text"
            cell = Content.styled(f" {label} ", style)
            self._cells.append((x, x + cell.cell_length, i))
            x += cell.cell_length
            cells.append(cell)
        if running:
            cells.append(Content.styled(" …", MUTED))
        self.update(Content("").join(cells))

    def on_click(self, event: Any) -> None:
        """A click on a step shows it (the strip is one line while it fits)."""
        x = event.x - self.styles.padding.left
        for first, end, position in self._cells:
            if first <= x < end and event.y == 0:
                self.post_message(self.StepChosen(position))
                return


class StepView(VerticalScroll):
    """The current step; ↑/↓ scroll it, the stepper's keys (→ ← n p Home End v) go to the stepper."""

    inherit_bindings = False
    BINDINGS = [
        Binding("up", "scroll_up", "Scroll up", show=False, tooltip="Scroll the step up."),
        Binding("down", "scroll_down", "Scroll down", show=False, tooltip="Scroll the step down."),
        Binding("pageup", "page_up", "Page up", show=False, tooltip="Scroll the step up a page."),
        Binding("pagedown", "page_down", "Page down", show=False, tooltip="Scroll the step down a page."),
    ]


class StepperView(Horizontal):
    """The stepper's keys, wherever the focus is in the stepper (except in the path box)."""

    BINDINGS = [
        Binding("right,n", "step(1)", "Next", key_display="→/n", tooltip="The next step of the trajectory."),
        Binding("left,p", "step(-1)", "Previous", key_display="←/p", tooltip="The previous step of the trajectory."),
        Binding("home", "edge(0)", "First", key_display="Home", tooltip="The first step."),
        Binding("end", "edge(1)", "Last", key_display="End", tooltip="The last step (the answer and its F1)."),
        Binding("v", "full", "Full observation",
                tooltip="Show the whole observation of the step, or only its first lines again."),
        Binding("r", "run", "Run", show=False, tooltip="Run the agent on the highlighted question."),
        Binding("e", "explore", "Explore step", show=False,
                tooltip="Open this step in the console (a query) or the browser (a page, a search)."),
        Binding("g", "gold", "Gold query", show=False,
                tooltip="Put the question's gold SPARQL in the console and run it."),
    ]

    def _area(self) -> KgArea:
        return self.query_ancestor(KgArea)

    def action_step(self, delta: int) -> None:
        self._area().step(delta)

    def action_edge(self, last: int) -> None:
        self._area().step_to_edge(bool(last))

    def action_full(self) -> None:
        self._area().toggle_full_observation()

    def action_run(self) -> None:
        self._area().run_highlighted_question()

    def action_explore(self) -> None:
        self._area().explore_step()

    def action_gold(self) -> None:
        self._area().gold_to_console()


class BrowserView(Horizontal):
    """The browser's keys (outside the search box)."""

    BINDINGS = [
        Binding("backspace,b,alt+left", "back", "Back", key_display="⌫/b",
                tooltip="Back to the page you came from."),
        Binding("o", "open_property", "Open property", key_display="o",
                tooltip="Open the page of the highlighted claim's property."),
        Binding("slash", "search", "Search", key_display="/", tooltip="Focus the search box."),
    ]

    def _area(self) -> KgArea:
        return self.query_ancestor(KgArea)

    def action_back(self) -> None:
        self._area().back()

    def action_open_property(self) -> None:
        self._area().open_claim_property()

    def action_search(self) -> None:
        self.query_one("#kg-search", Input).focus()


# --- messages (posted from the worker threads) ----------------------------------------------------------


class AgentReported(EngineReported):
    """The SPINACH agent (or its LLM) emitted an event."""


# --- what the workers return ----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryRan:
    result: QueryResult
    elapsed_s: float


@dataclass(frozen=True)
class Searched:
    text: str
    hits: tuple[SearchHit, ...]


@dataclass(frozen=True)
class PageOpened:
    page: EntityPage
    examples: tuple[PropertyExample, ...]
    came_from: str | None  # the page to go back to (None: a fresh start)


@dataclass(frozen=True)
class Scored:
    """A trajectory's answer against the gold answer of its question (when it is one of the sets)."""

    trajectory: Trajectory
    question: KGQuestion | None
    em: float | None = None
    f1: float | None = None
    gold_rows: int | None = None
    source: str = ""  # where the trajectory came from: "run" or a file name
    others: int = 0  # further trajectories in the loaded file


# --- the tab ---------------------------------------------------------------------------------------------


class KgArea(WorkArea):
    """The Knowledge-graph tab (see the module docstring)."""

    AREA_ID = "kg"
    STATUS_ID = "kg-status"
    REPORTED = AgentReported
    TITLE = "Knowledge graph"
    HELP = """\
## Knowledge graph — SPARQL, entity pages and the SPINACH agent (lecture 8)

A fictional, Wikidata-like graph (QIDs from Q1000, Wikidata's real PIDs) with the seven quirks of §1.4:
the query one writes from the question's words is legal SPARQL, but often wrong or incomplete.
Three views — the tab bar under the tabs, or **F2 / F3 / F4**:

**SPARQL console.** Wikidata's dialect: the usual prefixes are built in (`wd:`, `wdt:`, `p:`, `ps:`, `pq:`,
`rdfs:`, …), `SERVICE wikibase:label` gives `?xLabel` and `?xDescription`, Blazegraph's named subqueries
(`WITH { … } AS %x` / `INCLUDE %x`) and `hint:` triples are accepted. Each run gets one of the **four
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
(15 actions in the state, 30 in all), and rolled-back steps — a repeat, or a stop while the last query had
returned no rows — marked ↺ with the reason: they are kept in the trajectory but left the state, and the policy was
asked again. At the last step: the answer rows with row-wise F1 and EM against the gold answer.

| key | what it does |
| --- | --- |
| F2 / F3 / F4 | the console / the browser / the stepper |
| Ctrl+Enter / Ctrl+J | run the query in the editor |
| Enter (examples, hits, questions) | load the example / open the page / run the agent on the question |
| Enter (on a claim, on an ID in the results) | follow the link to that entity's page |
| o · Backspace or b · / | open the claim's property · back · the search box (browser) |
| → or n · ← or p · Home · End | next · previous · first · last step (stepper) |
| v | the step's whole observation, or only its first lines |
| e | explore the step: its query in the console, its page or search in the browser |
| g | the question's gold SPARQL in the console |
| Esc | stop the running agent: it takes no further action |

In the command palette (Ctrl+P), type *Knowledge graph* to switch views, load examples, run any question,
load a trajectory or stop a run.
"""

    BINDINGS = [
        *(Binding(key, f"view('{name}')", title, key_display=key.upper(), show=False,
                  tooltip=f"Show the {title}.") for name, title, key in VIEWS),
        Binding("escape", "cancel", "Stop run", tooltip="Stop the running agent: it takes no further action."),
    ]

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self._session: SpinachSession | None = None
        self._session_lock = threading.Lock()
        self._busy: dict[str, Worker[Any]] = {}
        # browser
        self._history: list[str] = []
        self._page: EntityPage | None = None
        self._hits: tuple[SearchHit, ...] = ()
        self._hits_for = ""  # the text the hits are for
        self._open_first = False  # Enter before the hits came: open the first one when they do
        # stepper
        self._steps: list[Step] = []
        self._pos = -1
        self._follow = True
        self._full = False
        self._agent_running = False
        self._run_question: KGQuestion | None = None
        self._run_text = ""
        self._run_policy = ""
        self._budget = (15, 30)
        self._scored: Scored | None = None
        self._loaded: list[Trajectory] = []
        self._loaded_name = ""
        self._thinking: int | None = None
        self._editor_origin = (EXAMPLES[0].query, f"{EXAMPLES[0].title} · {EXAMPLES[0].source}")  # as composed

    # --- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with TabbedContent(id="kg-views", initial="kg-console"):
            with TabPane("SPARQL console", id="kg-console"):
                with Horizontal(id="kg-console-columns"):
                    examples = OptionList(*(_example_option(i, e) for i, e in enumerate(EXAMPLES)), id="kg-examples")
                    examples.border_title = "Examples · Enter loads one"
                    examples.border_subtitle = f"{len(EXAMPLES)} queries"
                    yield examples
                    with Vertical(id="kg-console-right"):
                        editor = SparqlEditor(EXAMPLES[0].query, id="kg-editor", soft_wrap=False, tab_behavior="focus")
                        editor.cursor_blink = self.cursor_blink
                        editor.border_title = EDITOR_TITLE
                        editor.border_subtitle = f"{EXAMPLES[0].title} · {EXAMPLES[0].source}"
                        yield editor
                        yield FeedbackBar(id="kg-feedback")
                        yield _error_box("kg-console-error")
                        results = KgResultsTable(id="kg-results")
                        results.border_title = "Results"
                        yield results
            with TabPane("Entity browser", id="kg-browser"):
                with BrowserView(id="kg-browser-columns"):
                    with Vertical(id="kg-browser-left"):
                        search = Input(placeholder="a label, an alias, a QID or a PID", id="kg-search")
                        search.border_title = "Search · Enter opens the first hit"
                        yield search
                        hits = OptionList(id="kg-hits")
                        hits.border_title = "Hits · Enter opens a page"
                        yield hits
                    with Vertical(id="kg-browser-right"):
                        head = VerticalScroll(Static(id="kg-page-head"), id="kg-page-pane", classes="pane")
                        head.border_title = "Page"
                        yield head
                        yield _error_box("kg-browser-error")
                        yield ClaimsTable(id="kg-claims")
            with TabPane("Trajectory stepper", id="kg-stepper"):
                with StepperView(id="kg-stepper-columns"):
                    with Vertical(id="kg-stepper-left"):
                        questions = OptionList(id="kg-questions")
                        questions.border_title = "Questions · Enter runs the agent"
                        yield questions
                        load = Input(placeholder="path/to/trajectory.json", id="kg-load")
                        load.border_title = "Load a trajectory · Enter"
                        yield load
                    with Vertical(id="kg-stepper-right"):
                        yield Static(id="kg-run-head")
                        yield StepStrip(id="kg-strip")
                        yield Static(id="kg-budget")
                        yield _error_box("kg-stepper-error")
                        with StepView(id="kg-step"):
                            yield Static(id="kg-step-title")
                            yield Static(id="kg-step-banner")
                            for name in ("thought", "action", "argument"):
                                with Horizontal(classes="kg-field"):
                                    yield Static(name.capitalize(), classes="kg-label")
                                    yield Static(id=f"kg-step-{name}")
                            with Horizontal(classes="kg-field"):
                                yield Static("Observation", classes="kg-label")
                                yield Static(id="kg-step-feedback")
                            yield Static(id="kg-step-observation", markup=False)
                        with Vertical(id="kg-answer"):
                            yield Static(id="kg-answer-head")
                            answer = KgResultsTable(id="kg-answer-rows")
                            yield answer
        yield Static(id="kg-status", markup=False)

    def on_mount(self) -> None:
        self.query_one(FeedbackBar).show(None)
        self.query_one("#kg-results", KgResultsTable).show_nothing("no query yet")
        self.query_one("#kg-page-head", Static).update(Content.styled(
            "Search for an entity on the left (try Ashford: two cities share the name), or press Enter on an ID "
            "in the console's results.", f"{MUTED} italic"))
        self.query_one(ClaimsTable).border_title = "Claims"
        self._show_stepper()
        self._set_status("opening the knowledge graph…", "running")
        self._start("session", self._open_work, name="open", busy=False)

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def focus_default(self) -> None:
        view = self.view
        if view == "console":
            self.query_one("#kg-editor", SparqlEditor).focus()
        elif view == "browser":
            self.query_one("#kg-search", Input).focus()
        elif self._steps or self._agent_running:
            self.query_one(StepView).focus()
        else:
            self.query_one("#kg-questions", OptionList).focus()

    # --- workers: one exclusive group per view, so the views do not stop each other -------------------

    def _start(self, view: str, work: Any, *, name: str, busy: bool = True) -> Worker[Any]:
        worker = self.run_worker(work, name=name, group=f"{self.AREA_ID}-{view}", thread=True, exclusive=True,
                                 exit_on_error=False)
        if busy:
            self._busy[view] = worker
        return worker

    @property
    def is_busy(self) -> bool:
        """True while the agent runs, a query runs or the session is rebuilt."""
        return any(not w.is_finished for w in self._busy.values())

    @property
    def is_running(self) -> bool:
        """True while the agent runs on a question."""
        worker = self._busy.get("stepper")
        return worker is not None and worker.name == "run" and not worker.is_finished

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one handler of this tab's worker outcomes: results go on screen, errors too."""
        worker = event.worker
        if not (worker.group or "").startswith(f"{self.AREA_ID}-"):
            return
        event.stop()
        if event.state == WorkerState.SUCCESS:
            self.worker_succeeded(worker.name, worker.result)
        elif event.state == WorkerState.ERROR:
            assert worker.error is not None
            self.worker_failed(worker.name, worker.error)
        elif event.state == WorkerState.CANCELLED and worker.name == "run":
            self._agent_running = False
        self.refresh_bindings()

    # --- the public actions (the palette, the keys and the tests call them) ----------------------------

    @property
    def view(self) -> str:
        return (self.query_one("#kg-views", TabbedContent).active or "kg-console").removeprefix("kg-")

    def show_view(self, name: str) -> None:
        """Show the ``console``, the ``browser`` or the ``stepper`` and focus its main widget."""
        if name not in {v for v, _, _ in VIEWS}:
            raise ValueError(f"unknown view {name!r}")
        app = self.app
        if getattr(app, "active_area", self) is not self and hasattr(app, "action_show_tab"):
            app.action_show_tab(self.AREA_ID)  # called from the palette on another tab
        self.query_one("#kg-views", TabbedContent).active = f"kg-{name}"
        self.focus_default()

        def again() -> None:
            # In the frame that first shows the tab, the view can fall back to the first one and the
            # focused widget can be blurred by a late Hide: once on screen, make sure of both.
            tabs = self.query_one("#kg-views", TabbedContent)
            if tabs.active != f"kg-{name}":
                tabs.active = f"kg-{name}"
            self.focus_default()

        self.call_after_refresh(lambda: self.call_after_refresh(again))

    def action_view(self, name: str) -> None:
        self.show_view(name)

    def action_cancel(self) -> None:
        self.cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return True if self.is_running else None
        return True

    def cancel(self) -> bool:
        """Stop the running agent: it checks the flag before every policy call."""
        return self.request_cancel("stopping the agent… (no further action is taken)", running=self.is_running)

    def use_settings(self, settings: Settings) -> None:
        """Another backend: the same graph, a new LLM for the policy."""
        self.settings = settings
        if self._session is None:
            return
        self._set_status(f"switching to the {settings.backend} backend…", "running")
        self._start("session", lambda: self._reopen_work(settings), name="reopen")

    # console

    def load_example(self, example: SparqlExample) -> None:
        """Put an example in the editor (without running it)."""
        self._put_in_editor(example.query, f"{example.title.removeprefix('↳ ')} · {example.source}")
        if example in EXAMPLES:
            self.query_one("#kg-examples", OptionList).highlighted = EXAMPLES.index(example)
        self._set_status(f"loaded “{example.title}” — Ctrl+J runs it", "idle")

    def _put_in_editor(self, text: str, source: str) -> None:
        editor = self.query_one("#kg-editor", SparqlEditor)
        self._editor_origin = (text, source)
        editor.text = text
        editor.border_subtitle = source

    def example(self, key: str) -> SparqlExample:
        """The first example whose title contains ``key``."""
        for example in EXAMPLES:
            if key in example.title:
                return example
        raise KeyError(f"no example {key!r}")

    def run_query(self, query: str | None = None, *, source: str = "") -> bool:
        """Run ``query`` (default: the editor's text, else it goes in the editor, from ``source``) on the graph."""
        editor = self.query_one("#kg-editor", SparqlEditor)
        text = editor.text if query is None else query
        if query is not None:
            self._put_in_editor(query, source)
        if not text.strip():
            self._show_error("kg-console-error", "Nothing to run", "The editor is empty: write a SPARQL query or "
                             "pick an example.")
            return False
        self._hide_error("kg-console-error")
        self.query_one(FeedbackBar).show(None, "running…")
        self.query_one("#kg-results", KgResultsTable).show_nothing("running…")
        self._set_status("running the query…", "running")
        self._start("console", lambda: self._query_work(text), name="query")
        return True

    # browser

    def search(self, text: str) -> None:
        """Fill the hits with what matches ``text`` (as search_wikidata does)."""
        box = self.query_one("#kg-search", Input)
        if box.value != text:
            with box.prevent(Input.Changed):
                box.value = text
                box.cursor_position = len(text)
        if not text.strip():
            self._show_hits(Searched(text, ()))
            return
        self._start("search", lambda: self._search_work(text), name="search", busy=False)

    def open_entity(self, entity: str, *, push: bool = True) -> None:
        """Open the page of ``entity`` (a QID or PID) in the browser; ``push`` keeps the current page to go back to."""
        came_from = self._page.id if push and self._page is not None and self._page.id != entity else None
        self._set_status(f"opening {entity}…", "running")
        self._start("page", lambda: self._page_work(entity, came_from), name="page", busy=False)

    def follow_link(self) -> bool:
        """Follow the highlighted claim's value to its page."""
        claims = self.query_one(ClaimsTable)
        link = claims.current_link
        if link is None:
            self.notify("This value is not an entity: there is no page to follow.", title="Knowledge graph")
            return False
        self.open_entity(link)
        return True

    def open_claim_property(self) -> bool:
        prop = self.query_one(ClaimsTable).current_property
        if prop is None:
            return False
        self.open_entity(prop)
        return True

    def back(self) -> bool:
        """Back to the page before this one."""
        if not self._history:
            self.notify("No page to go back to.", title="Knowledge graph")
            return False
        self.open_entity(self._history.pop(), push=False)
        return True

    # stepper

    def run_question(self, question_id: str) -> bool:
        """Run the agent on one of the question sets' questions; its steps stream into the stepper."""
        if self.is_running:
            self.notify("The agent is running: press Esc to stop it first.", title="Knowledge graph",
                        severity="warning")
            return False
        session = self._session
        question = None
        if session is not None:
            try:
                question = session.question(question_id)
            except KeyError:
                self.notify(f"There is no question {question_id!r} in the question sets.", title="Knowledge graph",
                            severity="warning")
                return False
        self._begin_stepper(question.question if question else question_id, question, policy=self.settings.backend)
        self._agent_running = True
        self._show_stepper()
        cancel = self._cancel = threading.Event()
        questions = self.query_one("#kg-questions", OptionList)
        try:
            index = questions.get_option_index(question_id)
        except OptionDoesNotExist:  # the list is not filled yet
            index = None
        if index is not None and questions.highlighted != index:
            # Not the user's move: its "Enter runs it" hint must not land on the run's status line
            # (the message is handled after a fast run has already finished).
            with self.prevent(OptionList.OptionHighlighted):
                questions.highlighted = index
        self._set_status(f"running the agent on {question_id} ({self.settings.backend})… — Esc stops it", "running")
        self._start("stepper", lambda: self._run_work(question_id, cancel), name="run")
        self.query_one(StepView).focus()
        self.refresh_bindings()
        return True

    def run_highlighted_question(self) -> bool:
        questions = self.query_one("#kg-questions", OptionList)
        if questions.highlighted is None:
            return False
        option = questions.get_option_at_index(questions.highlighted)
        return self.run_question(option.id) if option.id else False

    def load_trajectory(self, path: str) -> bool:
        """Load a trajectory JSON (ours or a SPINACH log) into the stepper."""
        if self.is_running:
            self.notify("The agent is running: press Esc to stop it first.", title="Knowledge graph",
                        severity="warning")
            return False
        path = path.strip()
        if not path:
            self._show_error("kg-stepper-error", "Nothing to load", "Type the path of a trajectory JSON file.")
            return False
        box = self.query_one("#kg-load", Input)
        if box.value != path:
            box.value = path
        self._set_status(f"loading {path}…", "running")
        self._start("stepper", lambda: self._load_work(path), name="load", busy=False)
        return True

    def show_loaded(self, n: int) -> None:
        """Show the ``n``-th trajectory of the last file loaded."""
        if 0 <= n < len(self._loaded) and not self.is_running:
            trajectory = self._loaded[n]
            self._start("stepper", lambda: self._score_work(trajectory, self._loaded_name, 0), name="load", busy=False)

    def step(self, delta: int) -> None:
        """Move ``delta`` steps (→ is +1, ← is -1)."""
        if not self._steps:
            return
        self._goto(max(0, min(len(self._steps) - 1, self._pos + delta)))

    def step_to_edge(self, last: bool) -> None:
        if self._steps:
            self._goto(len(self._steps) - 1 if last else 0)

    def toggle_full_observation(self) -> None:
        self._full = not self._full
        self._show_step()

    def explore_step(self) -> bool:
        """This step elsewhere: its query in the console, its page or its search in the browser."""
        step = self.current_step
        if step is None:
            return False
        arg = step.argument.strip().strip("'\"`")
        if step.action == "execute_sparql":
            self.show_view("console")
            return self.run_query(step.argument, source=f"step {step.index} of the trajectory")
        if step.action in ("get_wikidata_entry", "get_property_examples") and arg:
            self.show_view("browser")
            self.open_entity(arg.split(":")[-1])
            return True
        if step.action == "search_wikidata" and arg:
            self.show_view("browser")
            self.search(arg)
            return True
        return False

    def gold_to_console(self) -> bool:
        question = self._run_question
        if question is None:
            self.notify("This trajectory's question is not in the question sets: it has no gold query.",
                        title="Knowledge graph")
            return False
        self.show_view("console")
        return self.run_query(question.gold_sparql, source=f"gold query of {question.id}")

    @property
    def current_step(self) -> Step | None:
        return self._steps[self._pos] if 0 <= self._pos < len(self._steps) else None

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    @property
    def position(self) -> int:
        """The index of the step shown (0-based; -1 when there is none)."""
        return self._pos

    # --- events from the widgets ------------------------------------------------------------------------

    def on_sql_editor_run_requested(self, event: SqlEditor.RunRequested) -> None:
        event.stop()
        self.run_query()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if event.option_list.id == "kg-examples":
            self.load_example(EXAMPLES[int(option_id.removeprefix("example-"))])
            self.query_one("#kg-editor", SparqlEditor).focus()
        elif event.option_list.id == "kg-hits":
            self.open_entity(option_id)
        elif event.option_list.id == "kg-questions":
            self.run_question(option_id)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "kg-questions" and event.option.id and self._session is not None and not self.is_running:
            event.stop()
            q = self._session.question(event.option.id)
            self._set_status(f"{q.id} · {_category(q)} · {q.question} — Enter runs it", "idle")

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "kg-editor":
            return
        text, source = self._editor_origin
        if source and event.text_area.text != text:
            event.text_area.border_subtitle = f"edited from {source}"
        elif source:
            event.text_area.border_subtitle = source

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "kg-search":
            event.stop()
            self.search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "kg-search":
            text = event.value.strip()
            entity = text.split(":")[-1].upper() if text else ""
            if _ENTITY_ID.match(entity):
                self.open_entity(entity)
            elif self._hits and self._hits_for == text:
                self.open_entity(self._hits[0].id)
            elif text:
                self._open_first = True
                self.search(text)
        elif event.input.id == "kg-load":
            self.load_trajectory(event.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "kg-claims":
            event.stop()
            self.follow_link()

    def on_kg_results_table_entity_chosen(self, event: KgResultsTable.EntityChosen) -> None:
        event.stop()
        self.show_view("browser")
        self.open_entity(event.entity)

    def on_step_strip_step_chosen(self, event: StepStrip.StepChosen) -> None:
        event.stop()
        if 0 <= event.index < len(self._steps):
            self._goto(event.index)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "kg-views":
            event.stop()

    # --- palette -----------------------------------------------------------------------------------------

    def commands(self) -> Iterable[PaletteCommand]:
        t = self.TITLE
        for name, title, key in VIEWS:
            yield PaletteCommand(f"{t}: show the {title.lower()}", f"{key.upper()}", lambda n=name: self.show_view(n))
        yield PaletteCommand(f"{t}: run the query in the console", "Runs the editor's SPARQL (Ctrl+J).",
                             lambda: (self.show_view("console"), self.run_query()))
        if self.is_running:
            yield PaletteCommand(f"{t}: stop the running agent", "It takes no further action (Esc).", self.cancel)
        for example in EXAMPLES:
            yield PaletteCommand(f"{t}: load example — {example.title} ({example.source})", example.query,
                                 lambda e=example: (self.show_view("console"), self.load_example(e)))
        yield PaletteCommand(f"{t}: search entities", "Focus the browser's search box.",
                             lambda: self.show_view("browser"))
        if self._history:
            yield PaletteCommand(f"{t}: back to {self._history[-1]}", "The page before this one (Backspace).", self.back)
        yield PaletteCommand(f"{t}: load a trajectory JSON", "Focus the path box of the stepper.",
                             lambda: (self.show_view("stepper"), self.query_one("#kg-load", Input).focus()))
        for n, trajectory in enumerate(self._loaded[:20]):
            yield PaletteCommand(f"{t}: show loaded trajectory {n + 1}/{len(self._loaded)} — {truncate(trajectory.question, 60)}",
                                 self._loaded_name, lambda k=n: (self.show_view("stepper"), self.show_loaded(k)))
        if self._steps:
            yield PaletteCommand(f"{t}: toggle the full observation", "v", self.toggle_full_observation)
            yield PaletteCommand(f"{t}: explore this step", "Its query in the console, its page or search in the "
                                 "browser (e).", self.explore_step)
        if self._run_question is not None:
            yield PaletteCommand(f"{t}: gold query of {self._run_question.id} in the console", "g", self.gold_to_console)
        if self._session is not None:
            for q in self._session.questions.all():
                yield PaletteCommand(f"{t}: run {q.id} ({_category(q)}) — {q.question}",
                                     f"Runs the SPINACH agent with the {self.settings.backend} backend.",
                                     lambda i=q.id: (self.show_view("stepper"), self.run_question(i)))

    # --- worker bodies (threads) ---------------------------------------------------------------------------

    def _open(self, settings: Settings) -> SpinachSession:
        from engines.llm.client import llm_from_settings
        from engines.spinach.session import open_spinach

        llm = llm_from_settings(settings, clock=self.clock or time.perf_counter)
        return open_spinach(settings, llm=llm)

    def _session_now(self) -> SpinachSession:
        with self._session_lock:
            if self._session is None:
                self._session = self._open(self.settings)
            return self._session

    def _open_work(self) -> SpinachSession:
        return self._session_now()

    def _reopen_work(self, settings: Settings) -> tuple[Settings, SpinachSession]:
        from engines.llm.client import llm_from_settings

        session = self._session_now()
        fresh = session.with_llm(llm_from_settings(settings, clock=self.clock or time.perf_counter))
        fresh.settings = settings
        with self._session_lock:
            self._session = fresh
        return settings, fresh


    def _query_work(self, query: str) -> QueryRan:
        session = self._session_now()
        start = self._now()
        result = session.endpoint.execute(query)
        return QueryRan(result, self._now() - start)

    def _search_work(self, text: str) -> Searched:
        return Searched(text, self._session_now().endpoint.search(text))

    def _page_work(self, entity: str, came_from: str | None) -> PageOpened:
        endpoint = self._session_now().endpoint
        page = endpoint.page(entity)
        examples = endpoint.property_examples(page.id, 8) if page.datatype else ()
        return PageOpened(page, tuple(examples), came_from)

    def _run_work(self, question_id: str, cancel: threading.Event) -> Scored:
        session = self._session_now()
        question = session.question(question_id)
        trajectory = session.agent.run(question.question, emit=self._emit, cancel=cancel)
        return self._score_of(session, trajectory, question, "run", 0)

    def _load_work(self, path: str) -> tuple[list[Trajectory], Scored]:
        from engines.spinach.trajectory import load

        trajectories = load(Path(path).expanduser())
        if not trajectories:
            from engines.spinach.trajectory import TrajectoryError

            raise TrajectoryError(f"{path} holds no trajectory.")
        return trajectories, self._score_work(trajectories[0], Path(path).name, len(trajectories) - 1)

    def _score_work(self, trajectory: Trajectory, source: str, others: int) -> Scored:
        session = self._session_now()
        key = _question_key(trajectory.question)
        question = next((q for q in session.questions.all() if _question_key(q.question) == key), None)
        if not trajectory.answer and trajectory.final_sparql:
            # SPINACH's logs keep the final query, not its rows: run it on this graph.
            from engines.kg.dialect import SparqlRefused

            try:
                result = session.endpoint.execute(trajectory.final_sparql)
            except SparqlRefused:
                result = None
            if result is not None and result.has_rows:
                trajectory = replace(trajectory, answer=result.bindings, columns=result.columns)
        return self._score_of(session, trajectory, question, source, others)

    @staticmethod
    def _score_of(session: SpinachSession, trajectory: Trajectory, question: KGQuestion | None, source: str,
                others: int) -> Scored:
        if question is None:
            return Scored(trajectory, None, source=source, others=others)
        score = session.score(trajectory, question.id)
        return Scored(trajectory, question, score["em"], score["f1"], len(session.gold(question.id)), source, others)


    # --- engine events (main thread) -------------------------------------------------------------------------

    def on_agent_reported(self, message: AgentReported) -> None:
        from engines.spinach.events import AgentStarted, StepTaken

        message.stop()
        event = message.event
        if not self._agent_running:
            return  # a stale event of a run that was stopped and replaced
        if isinstance(event, AgentStarted):
            self._run_policy = event.policy
            self._budget = (event.budget, event.total_budget)
        elif isinstance(event, StepTaken):
            self._steps.append(event.step)
            self._thinking = None
            if self._follow:
                self._pos = len(self._steps) - 1
        elif isinstance(event, CallStarted) and event.function == "policy":
            self._thinking = len(self._steps) + 1
        else:
            return  # RolledBack: the rolled-back step carries its reason; the LLM's CallFinished: nothing new
        self._show_stepper()

    # --- worker outcomes (main thread) -----------------------------------------------------------------------

    def worker_succeeded(self, name: str, result: Any) -> None:
        if name == "open":
            self._adopt(result)
            self._set_status("ready — F2 console · F3 entity browser · F4 trajectory stepper", "idle")
        elif name == "reopen":
            settings, session = result
            self.settings = settings
            self._session = session
            self._set_status(f"ready — the agent now uses the {settings.backend} backend", "idle")
        elif name == "query":
            self._show_query(result)
        elif name == "search":
            self._show_hits(result)
        elif name == "page":
            self._show_page(result)
        elif name == "run":
            self._agent_running = False
            self._cancel = None
            self._finish(result)
        elif name == "load":
            if isinstance(result, tuple):
                self._loaded, scored = result
                self._loaded_name = scored.source
            else:
                scored = result
            self._hide_error("kg-stepper-error")
            self._begin_stepper(scored.trajectory.question, scored.question, policy=scored.trajectory.policy)
            self._steps = list(scored.trajectory.steps)
            self._pos = 0 if self._steps else -1
            self._finish(scored)
            self.query_one(StepView).focus()

    def worker_failed(self, name: str, error: BaseException) -> None:
        from engines.kg.dialect import SparqlRefused
        from engines.kg.pages import UnknownEntity

        message = describe_error(error)
        if name == "query":
            if isinstance(error, SparqlRefused):
                self.query_one(FeedbackBar).show("refused")
                self._show_error("kg-console-error", "Refused — nothing ran", message)
                self.query_one("#kg-results", KgResultsTable).show_nothing("refused")
                self._set_status("refused — the editor keeps the query: change it and run it again", "error")
            else:
                self.query_one(FeedbackBar).show(None)
                self._show_error("kg-console-error", "Error", message)
                self.query_one("#kg-results", KgResultsTable).show_nothing("error")
                self._set_status("error — see the error pane", "error")
        elif name in ("page", "search"):
            title = "No such entity" if isinstance(error, UnknownEntity) else "Error"
            self._show_error("kg-browser-error", title, message)
            self._set_status(f"{title.lower()} — {message}", "error")
        elif name in ("run", "load"):
            self._agent_running = False
            self._cancel = None
            self._show_error("kg-stepper-error", "Could not run the agent" if name == "run"
                             else "Could not load the trajectory", message)
            self._show_stepper()
            self._set_status("error — see the error pane", "error")
        else:
            self._set_status(f"error — {message}", "error")
            self._show_error("kg-console-error", "Could not open the knowledge graph", message)

    def _adopt(self, session: SpinachSession) -> None:
        self._session = session
        options: list[Option | None] = []
        from worlds.kg import CATEGORIES

        simple = session.questions.simple
        options.append(Option(Content.styled(f"Simple · {len(simple)} questions", "bold $text-accent"), disabled=True))
        options.extend(_question_option(q) for q in simple)
        by_category: dict[str, list[KGQuestion]] = {}
        for q in session.questions.forum:
            by_category.setdefault(q.category, []).append(q)
        for category, questions in by_category.items():
            options.append(None)
            options.append(Option(Content.assemble(
                Content.styled(f"{category} ", "bold $text-accent"),
                Content.styled(truncate(CATEGORIES.get(category, ""), LIST_CHARS - len(category) - 1), "$text-accent")),
                disabled=True))
            options.extend(_question_option(q) for q in questions)
        questions_list = self.query_one("#kg-questions", OptionList)
        questions_list.set_options(options)
        questions_list.border_subtitle = f"{len(simple)} simple · {len(session.questions.forum)} forum-style"

    # --- console --------------------------------------------------------------------------------------------

    def _show_query(self, ran: QueryRan) -> None:
        result = ran.result
        feedback = result.feedback.value
        results = self.query_one("#kg-results", KgResultsTable)
        elapsed = f"{ran.elapsed_s * 1000:,.0f} ms"
        if feedback == "rows":
            detail = f"{count_rows(len(result))} · {elapsed}"
            results.show_bindings(result.columns, result.bindings, truncated=result.truncated)
            self._hide_error("kg-console-error")
        elif feedback == "empty":
            detail = f"0 rows · {elapsed}"
            results.show_bindings(result.columns, ())
            results.border_subtitle = "no rows"
            self._hide_error("kg-console-error")
        else:
            detail = elapsed
            results.show_nothing(feedback.replace("_", " "))
            self._show_error("kg-console-error", "Syntax error" if feedback == "syntax_error" else "Timeout",
                             result.message or FEEDBACK_HINTS[feedback])
            where = _ERROR_AT.search(result.message or "")
            editor = self.query_one("#kg-editor", SparqlEditor)
            if where is not None and editor.text == result.query:
                lines = editor.text.split("\n")
                row = min(max(int(where.group(1)) - 1, 0), len(lines) - 1)
                editor.cursor_location = (row, min(max(int(where.group(2)) - 1, 0), len(lines[row])))
        self.query_one(FeedbackBar).show(feedback, detail, result.notes)
        self._set_status(f"{feedback.replace('_', ' ')} — {detail}", "done" if feedback in ("rows", "empty") else "error")

    # --- browser ----------------------------------------------------------------------------------------------

    def _show_hits(self, searched: Searched) -> None:
        box = self.query_one("#kg-search", Input)
        if searched.text != box.value:
            return  # a later keystroke has started another search
        self._hits = searched.hits
        self._hits_for = searched.text.strip()
        hits = self.query_one("#kg-hits", OptionList)
        options = []
        for hit in searched.hits:
            kind = hit.datatype or "item"
            options.append(Option(Content.assemble(
                Content.styled(hit.label, "bold"), Content.styled(f" ({hit.id})", "$text-primary"),
                Content.styled(f" {kind}", f"{MUTED} italic"), "\n",
                Content.styled(f"  {truncate(hit.description, LIST_CHARS - 2) or '—'}", MUTED)), id=hit.id))
        hits.set_options(options)
        if searched.text.strip():
            items = sum(h.kind == "item" for h in searched.hits)
            properties = len(searched.hits) - items
            hits.border_subtitle = (f"{count_rows(items, 'item')} · "
                                    f"{properties or 'no'} propert{'y' if properties == 1 else 'ies'}")
            if not searched.hits:
                hits.border_subtitle = "nothing matches"
        else:
            hits.border_subtitle = ""
        if self._open_first and searched.hits:
            self._open_first = False
            self.open_entity(searched.hits[0].id)

    def _show_page(self, opened: PageOpened) -> None:
        page = opened.page
        if opened.came_from is not None:
            self._history.append(opened.came_from)
        self._page = page
        self._hide_error("kg-browser-error")
        lines = [Content.assemble(Content.styled(page.label, "bold"), Content.styled(f"  {page.id}", "bold $text-primary"),
                                  Content.styled(f"  {page.datatype} property" if page.datatype else "", MUTED))]
        lines.append(Content.styled(page.description or "(no description)", "italic"))
        if page.aliases:
            lines.append(Content.assemble(Content.styled("also known as ", MUTED), ", ".join(page.aliases)))
        if self._history:
            trail = " ← ".join(self._history[-4:][::-1])
            lines.append(Content.styled(f"Backspace: back to {trail}", MUTED))
        self.query_one("#kg-page-head", Static).update(Content("\n").join(lines))
        pane = self.query_one("#kg-page-pane")
        pane.border_title = f"Page · {page.label} ({page.id})"
        claims = self.query_one(ClaimsTable)
        claims.show_claims(page, opened.examples)
        claims.move_cursor(row=0)
        if self.view == "browser":
            claims.focus()
        self._set_status(f"{page.label} ({page.id}) — {count_rows(len(page.claims), 'claim')}"
                         f"{' · ' + count_rows(len(self._history), 'page') + ' to go back to' if self._history else ''}",
                         "idle")

    # --- stepper ---------------------------------------------------------------------------------------------

    def _begin_stepper(self, text: str, question: KGQuestion | None, *, policy: str) -> None:
        self._hide_error("kg-stepper-error")
        self._steps = []
        self._pos = -1
        self._follow = True
        self._full = False
        self._scored = None
        self._run_text = text
        self._run_question = question
        self._run_policy = policy
        self._budget = (15, 30)
        self._thinking = None

    def _finish(self, scored: Scored) -> None:
        trajectory = scored.trajectory
        self._scored = scored
        self._run_text = trajectory.question
        self._steps = list(trajectory.steps)
        meta = trajectory.meta or {}
        self._budget = (int(meta.get("budget", self._budget[0])), int(meta.get("total_budget", self._budget[1])))
        self._run_policy = trajectory.policy or self._run_policy
        self._run_question = scored.question
        self._thinking = None
        if self._follow or self._pos < 0:
            self._pos = len(self._steps) - 1 if scored.source == "run" else (0 if self._steps else -1)
        self._show_stepper()
        finish = {"stop": "stopped", "budget": "out of budget", "cancelled": "stopped by Esc", "error": "failed",
                  "imported": "imported"}.get(trajectory.finish, trajectory.finish or "done")
        parts = [f"{finish} after {count_rows(len(trajectory.steps), 'step')}"]
        if trajectory.rollbacks:
            parts.append(f"{trajectory.rollbacks} rolled back")
        if scored.f1 is not None:
            parts.append(f"row-F1 {scored.f1:.2f} · EM {scored.em:.0f}")
        if scored.source != "run":
            parts.append(f"from {scored.source}" + (f" (+{scored.others} more: Ctrl+P)" if scored.others else ""))
        state = "cancelled" if trajectory.finish == "cancelled" else ("error" if trajectory.finish == "error" else "done")
        if trajectory.error:
            self._show_error("kg-stepper-error", "The agent stopped with an error", trajectory.error)
        self._set_status(" · ".join(parts) + " — ←/→ step through it", state)

    def _goto(self, position: int) -> None:
        self._pos = position
        self._follow = position == len(self._steps) - 1
        self._show_stepper()

    def _show_stepper(self) -> None:
        self._show_run_head()
        self.query_one(StepStrip).show(self._steps, self._pos, running=self._agent_running)
        self._show_budget()
        self._show_step()
        self._show_answer()

    def _show_run_head(self) -> None:
        head = self.query_one("#kg-run-head", Static)
        if not self._run_text:
            head.update(Content.styled("No trajectory yet: run a question (Enter) or load a trajectory JSON.",
                                       f"{MUTED} italic"))
            return
        q = self._run_question
        meta = [Content.styled(q.id if q else "not in the question sets", "bold $text-primary")]
        if q is not None:
            meta.append(Content.styled(f" · {_category(q)}", "$text-primary"))
        meta.append(Content.styled(f" · policy {self._run_policy or '?'}", MUTED))
        if self._agent_running:
            thinking = f" · thinking about step {self._thinking}…" if self._thinking else " · running…"
            meta.append(Content.styled(thinking + " (Esc stops)", "bold $text-warning"))
        elif self._scored is not None:
            trajectory = self._scored.trajectory
            meta.append(Content.styled(f" · finished: {trajectory.finish or '?'}", MUTED))
            if self._scored.source != "run":
                meta.append(Content.styled(f" · {self._scored.source}", MUTED))
        head.update(Content.assemble(Content.styled(self._run_text, "bold"), "\n", *meta))

    def _show_budget(self) -> None:
        budget = self.query_one("#kg-budget", Static)
        step = self.current_step
        if step is None:
            budget.update("")
            return
        limit, total_limit = self._budget
        in_state, total = step.in_state, step.total
        rollbacks = sum(1 for s in self._steps[: self._pos + 1] if s.rolled_back)

        def bar(n: int, of: int) -> Content:
            n = min(n, of)
            return Content.assemble(Content.styled("■" * n, "$text-accent"), Content.styled("□" * (of - n), MUTED))

        budget.update(Content.assemble(
            Content.styled("state ", MUTED), bar(in_state, limit), Content.styled(f" {in_state}/{limit}", "bold"),
            Content.styled(" · all ", MUTED), bar(total, total_limit), Content.styled(f" {total}/{total_limit}", "bold"),
            Content.styled(" · ", MUTED),
            Content.styled(f"↺ {rollbacks}", "bold $text-warning" if rollbacks else "bold"),
            Content.styled(" rolled back", MUTED),
        ))

    def _show_step(self) -> None:
        view = self.query_one(StepView)
        title = self.query_one("#kg-step-title", Static)
        banner = self.query_one("#kg-step-banner", Static)
        observation = self.query_one("#kg-step-observation", Static)
        fields = list(view.query(".kg-field"))
        step = self.current_step
        if step is None:
            hint = ("The agent is thinking about its first step…" if self._agent_running else
                    "Choose a question on the left and press Enter to run the SPINACH agent on it (with the app's "
                    "backend), or type the path of a trajectory JSON below the list. Then step through it: → / n next, "
                    "← / p previous, Home / End first and last, v the full observation.")
            title.update(Content.styled(hint, f"{MUTED} italic"))
            title.display = True
            banner.display = False
            for f in fields:
                f.display = False
            observation.display = False
            view.border_title = "Step"
            view.border_subtitle = ""
            return
        for f in fields:
            f.display = True
        title.display = False
        observation.display = True
        n = len(self._steps)
        view.border_title = f"Step {step.index} of {n}{' so far' if self._agent_running else ''}"
        view.border_subtitle = "↑/↓ scroll · v " + ("shows the first lines" if self._full else "shows all")
        if step.rolled_back:
            reason = step.rollback_reason or "rolled back"
            before = [s for s in self._steps[: self._pos] if not s.rolled_back]
            state = before[-1].index if before else 0
            if reason == "repeat":
                repeated = next((s.index for s in reversed(before) if (s.action, s.argument) == (step.action, step.argument)),
                                None)
                why = (f"it repeats step {repeated}, still in the state" if repeated else
                       "it repeats a recent step in the state") + ", so it was not run"
            else:
                why = ROLLBACK_NOTES.get(reason, "")
            where = f"as it was after step {state}" if state else "empty, as at the start"
            banner.update(Content.assemble(
                Content.styled(f" ↺ ROLLED BACK · {reason} ", "reverse bold $text-warning"),
                Content.styled(f"  {why}. The state stays {where}; the policy is asked again "
                               "(a new sample, so the retry differs).", "$text-warning"),
            ))
            banner.display = True
        else:
            banner.display = False
        self.query_one("#kg-step-thought", Static).update(Content(step.thought or "—"))
        self.query_one("#kg-step-action", Static).update(Content.assemble(
            Content.styled(step.action, "bold $text-accent"),
            Content.styled(f"  {ACTION_NOTES.get(step.action, '')}", f"{MUTED} italic"),
        ))
        argument = self.query_one("#kg-step-argument", Static)
        if step.action == "execute_sparql":
            argument.update(sparql_content(step.argument))
        else:
            argument.update(Content(step.argument) if step.argument else Content.styled("(none)", MUTED))
        self.query_one("#kg-step-feedback", Static).update(_observation_label(step))
        text = step.observation
        lines = text.split("\n") if text else []
        final = None
        if step.action == "stop" and not step.rolled_back:
            final = next((s for s in reversed(self._steps[: self._pos]) if not s.rolled_back
                          and s.action == "execute_sparql" and s.feedback == "rows"), None)
        shown: Text | Content
        if not text and final is not None:
            query, note = final.argument, ""
            scored = self._scored
            if scored is not None and scored.trajectory.final_sparql and self._pos == len(self._steps) - 1:
                query = scored.trajectory.final_sparql
                if query.strip() != final.argument.strip():
                    note = " (SPINACH drops its final LIMIT 10)"
            shown = Content.assemble(
                Content.styled(f"(no observation) — the answer is the query of step {final.index}{note}:",
                               f"{MUTED} italic"),
                "\n", sparql_content(query))
        elif not text:
            shown = Text("(no observation)", style="italic")
        elif self._full or len(lines) <= OBSERVATION_LINES:
            shown = Text(text)
        else:
            shown = Text("\n".join(lines[:OBSERVATION_LINES]))
            shown.append(f"\n… {len(lines) - OBSERVATION_LINES} more lines — v shows all of it", style="italic")
        observation.update(shown)
        observation.set_class(self._full, "-full")
        observation.set_class(step.rolled_back, "-rolled-back")
        view.scroll_home(animate=False)

    def _show_answer(self) -> None:
        pane = self.query_one("#kg-answer", Vertical)
        scored = self._scored
        at_end = scored is not None and not self._agent_running and self._pos == len(self._steps) - 1
        pane.display = at_end
        if not at_end or scored is None:
            return
        trajectory = scored.trajectory
        head = self.query_one("#kg-answer-head", Static)
        rows = self.query_one("#kg-answer-rows", KgResultsTable)
        parts: list[Content] = [Content.styled("Answer ", "bold $text-accent")]
        if trajectory.answer:
            parts.append(Content.styled(count_rows(len(trajectory.answer)), "bold"))
        else:
            parts.append(Content.styled("no rows", "bold $text-warning"))
        if scored.f1 is not None and scored.em is not None:
            style = "$text-success" if scored.f1 >= 0.999 else ("$text-warning" if scored.f1 > 0 else "$text-error")
            parts += [Content.styled("   row-F1 ", MUTED), Content.styled(f"{scored.f1:.2f}", f"bold {style}"),
                      Content.styled("   EM ", MUTED), Content.styled(f"{scored.em:.0f}", f"bold {style}"),
                      Content.styled(f"   against {count_rows(scored.gold_rows or 0, 'gold row')}", MUTED)]
        else:
            parts.append(Content.styled("   no gold answer: the question is not in the question sets", MUTED))
        final = next((s.index for s in reversed(trajectory.steps) if not s.rolled_back and s.action == "execute_sparql"
                      and s.feedback == "rows"), None)
        if final is not None:
            parts.append(Content.styled(f"   · the query of step {final}", MUTED))
        head.update(Content("").join(parts))
        if trajectory.answer:
            columns = trajectory.columns or tuple(dict.fromkeys(k for b in trajectory.answer for k in b))
            rows.show_bindings(columns, trajectory.answer)
        else:
            rows.show_nothing("no query in the state returned rows: the answer is empty")
        rows.border_title = "Answer rows"

    # --- helpers ---------------------------------------------------------------------------------------------


    def _show_error(self, box_id: str, title: str, message: str) -> None:
        box = self.query_one(f"#{box_id}", Static)
        box.border_title = title
        box.update(message)
        box.display = True

    def _hide_error(self, box_id: str) -> None:
        self.query_one(f"#{box_id}", Static).display = False


def _error_box(box_id: str) -> Static:
    box = Static(id=box_id, classes="kg-error", markup=False)
    box.border_title = "Error"
    box.display = False
    return box


def _example_option(i: int, example: SparqlExample) -> Option:
    room = max(8, LIST_CHARS - len(example.source) - 1)
    return Option(Content.assemble(truncate(example.title, room), " ", Content.styled(example.source, MUTED)),
                  id=f"example-{i}")


def _category(question: KGQuestion) -> str:
    return "simple" if question.category == "simple" else f"forum {question.category}"


def _question_option(question: KGQuestion) -> Option:
    """The question's number and its whole text, wrapped under itself."""
    number = question.id.split("_")[-1]
    lines = textwrap.wrap(question.question, LIST_CHARS - 3) or [""]
    return Option(Content.assemble(Content.styled(f"{number:>2} ", MUTED), "\n   ".join(lines)), id=question.id)


def _observation_label(step: Step) -> Content:
    if step.rolled_back:
        return Content.styled("not run — rolled back", "bold $text-warning")
    if step.action == "execute_sparql" and step.feedback:
        style = {"rows": "$text-success", "empty": "$text-warning"}.get(step.feedback, "$text-error")
        label = step.feedback.replace("_", " ")
        extra = f" · {count_rows(step.row_count)}" if step.feedback == "rows" and step.row_count is not None else ""
        return Content.assemble(Content.styled(f" {label} ", f"reverse bold {style}"), Content.styled(extra, "bold"))
    lines = step.observation.count("\n") + 1 if step.observation else 0
    return Content.styled(count_rows(lines, "line") if lines else "", MUTED)


__all__ = [
    "AgentReported", "ClaimsTable", "EXAMPLES", "FeedbackBar", "KgArea", "KgResultsTable", "Scored", "SparqlEditor",
    "SparqlExample", "StepStrip", "StepView", "entity_of", "short_value", "sparql_content", "sparql_highlights",
    "sparql_tokens",
]
