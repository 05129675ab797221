"""SPARQL highlighted without tree-sitter: the console's editor and read-only views of a query."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static, TextArea
from textual.worker import get_current_worker

from tui.widgets import SqlEditor, run_binding, truncate

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
    "iri": "link.uri",
    "string": "string",
    "comment": "comment",
    "variable": "type.builtin",
    "named": "type",
    "pname": "class",
    "number": "number",
    "keyword": "keyword",
    "function": "function.call",
}
_CONTENT_STYLES: Mapping[str, str] = {
    "iri": "$text-primary underline",
    "string": "$text-success 90%",
    "comment": "$text 60%",
    "variable": "$text-secondary",
    "named": "$text-warning italic",
    "pname": "$text-primary",
    "number": "$text-warning",
    "keyword": "$text-accent",
    "function": "$text-warning",
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
    """The console's editor: SPARQL highlighted from :func:`sparql_highlights`; Ctrl+Enter / Ctrl+J runs.

    It completes the dialect's prefixes and SPARQL's keywords, then the graph's entities and properties by label
    (``wdt:P31 — instance of``): one bounded query (:func:`engines.kg.complete.lookup_labels`) in the completion's
    worker thread, after a short pause so that fast typing sends one; a key typed meanwhile drops it unsent, or
    drops its answer.  The line under the text names the QID or PID under the cursor (``wd:Q42 — Douglas Adams``),
    looked up in a worker and kept for the session.  :attr:`graph` is the tab's: a function giving the graph
    (None while it opens)."""

    BINDINGS = [
        run_binding("Run the SPARQL in this editor on the knowledge graph (Ctrl+J for terminals without Ctrl+Enter)."),
    ]
    SUFFIXES = (".rq", ".sparql", ".txt")
    LOOKUP_PAUSE_S = 0.15
    """Seconds a lookup waits for the next key before asking the graph."""
    LABEL_HINT = "the label of the QID or PID under the cursor shows here"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.graph: Callable[[], Any] | None = None
        self._labels: dict[tuple[int, str], str | None] = {}
        self._label_for: str | None = None
        self.lookup_note = ""

    def line_highlights(self, line: str) -> list[tuple[int, int, str]]:
        return sparql_highlights(line)

    def compose_status(self) -> ComposeResult:
        yield Static(Content.styled(self.LABEL_HINT, "italic"), id="kg-editor-label", classes="editor-status")

    def _graph(self) -> Any:
        return self.graph() if self.graph is not None else None

    def _timeout(self) -> float:
        settings = getattr(self.app, "settings", None)
        return float(getattr(settings, "editor_lookup_timeout_s", 3.0))

    def suggestions(self, word: str) -> Sequence[Any]:
        """Prefixes and keywords, then (from the second letter of a label) the graph's entities by label."""
        from engines.api import WIKIDATA_DIALECT, sparql_lookup_labels, sparql_prefix_suggestions

        graph = self._graph()
        dialect = graph.dialect if graph is not None else WIKIDATA_DIALECT
        out = [] if ":" in word else list(sparql_prefix_suggestions(word, dialect))
        if graph is None:
            return out
        worker = get_current_worker()
        time.sleep(self.LOOKUP_PAUSE_S)  # a key typed meanwhile cancels this worker: nothing is sent
        if worker.is_cancelled:
            return out
        found = sparql_lookup_labels(graph, word, timeout_s=self._timeout(), cancelled=lambda: worker.is_cancelled)
        if found.message and not worker.is_cancelled:
            self.app.call_from_thread(self._show_label, Content.styled(found.message, "$text-warning"))
        return [*out, *found.suggestions]

    # --- the label of the ID under the cursor ---------------------------------------------------------

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._follow_cursor()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._follow_cursor()  # a completion put in: the cursor is on a new ID

    def _follow_cursor(self) -> None:
        from engines.api import sparql_id_at

        if self.text_input is None:
            return
        row, column = self.area.selection.end
        line = self.area.document.get_line(row) if row < self.area.document.line_count else ""
        found = sparql_id_at(line, column)
        if found == self._label_for:
            return
        self._label_for = found
        graph = self._graph()
        if found is None or graph is None:
            self._show_label(Content.styled(self.LABEL_HINT, "italic"))
            return
        key = (id(graph), found)
        if key in self._labels:
            self._show_id(found, self._labels[key])
            return
        self._show_label(Content.styled(f"{found} — looking up its label…", "italic"))
        self.run_worker(lambda: (key, self._label_work(graph, found)), thread=True, group="kg-id-label", exclusive=True)

    @staticmethod
    def _label_work(graph: Any, id_: str) -> str | None:
        from engines.api import sparql_label_of

        try:
            return sparql_label_of(graph, id_)
        except Exception:  # an endpoint that failed: no label (said below)
            return None

    async def on_worker_state_changed(self, event: Any) -> None:
        worker = event.worker
        if worker.group != "kg-id-label":
            await super().on_worker_state_changed(event)
            return
        event.stop()
        if not worker.is_finished or worker.result is None:
            return
        key, label = worker.result
        if len(self._labels) > 10_000:
            self._labels.clear()
        self._labels[key] = label
        if key[1] == self._label_for:
            self._show_id(key[1], label)

    def _show_id(self, id_: str, label: str | None) -> None:
        if label is None:
            self._show_label(Content.styled(f"{id_} — no label in this graph", "italic"))
        else:
            self._show_label(
                Content.assemble(Content.styled(id_, "bold $text-primary"), " — ", Content(truncate(label, 120)))
            )

    def _show_label(self, content: Content) -> None:
        if self.is_mounted:
            self.query_one("#kg-editor-label", Static).update(content)


__all__ = ["SparqlEditor", "sparql_content", "sparql_highlights", "sparql_tokens"]
