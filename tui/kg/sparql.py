"""SPARQL highlighted without tree-sitter: the console's editor and read-only views of a query."""

from __future__ import annotations

import re
from collections.abc import Mapping

from textual.content import Content

from tui.widgets import SqlEditor, run_binding

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
    """The console's editor: SPARQL highlighted from :func:`sparql_highlights`; Ctrl+Enter / Ctrl+J runs."""

    BINDINGS = [
        run_binding("Run the SPARQL in this editor on the knowledge graph (Ctrl+J for terminals without Ctrl+Enter)."),
    ]

    def line_highlights(self, line: str) -> list[tuple[int, int, str]]:
        return sparql_highlights(line)


__all__ = ["SparqlEditor", "sparql_content", "sparql_highlights", "sparql_tokens"]
