"""What a query editor offers as you type: a :class:`Suggestion` is the text put in place of the word being typed,
what the list shows for it and of what kind it is.  The SQL and SUQL suggestions are made in
:mod:`engines.sql.complete`, the SPARQL ones (prefixes, then the graph's entities and properties by label) in
:mod:`engines.kg.complete`; both rank with :func:`ranked`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_WORD = 100
"""Characters of the word being completed that are looked at (a longer word is completed from its first 100)."""


@dataclass(frozen=True)
class Suggestion:
    """One entry of the completion list: ``text`` replaces the word typed, ``label`` is shown (the ID and its
    label: ``wdt:P31 — instance of``; a function's argument shape: ``answer(column, 'question')``), ``kind``
    beside it (column, table, keyword, function, prefix, item, property …)."""

    text: str
    label: str
    kind: str


def ranked(word: str, suggestions: Iterable[Suggestion], *, limit: int) -> list[Suggestion]:
    """The suggestions whose label or text starts with ``word`` (case folded), the exact ones first, then in
    the order given; each text once; at most ``limit``.  An empty ``word`` matches nothing."""
    folded = word[:MAX_WORD].casefold()
    if not folded or limit <= 0:
        return []
    exact: list[Suggestion] = []
    rest: list[Suggestion] = []
    seen: set[str] = set()
    for s in suggestions:
        text, label = s.text.casefold(), s.label.casefold()
        if s.text in seen or not (text.startswith(folded) or label.startswith(folded)):
            continue
        seen.add(s.text)
        (exact if folded in (text, label) else rest).append(s)
        if len(exact) >= limit:
            break
    return (exact + rest)[:limit]


__all__ = ["MAX_WORD", "Suggestion", "ranked"]
