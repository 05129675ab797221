"""SPINACH's five actions (lecture 8 §3.2) over the endpoint, each returning the observation text.

* ``search_wikidata(text)`` — at most 8 items and 4 properties, one per line
  (``label (ID): description``, properties with their data type);
* ``get_wikidata_entry(QID)`` — the entity page with qualifiers, pruned to the question (the agent passes the
  ``prune_entry`` call as ``prune``, as SPINACH prunes every page);
* ``get_property_examples(PID)`` — a few ``subject -- property --> value`` lines;
* ``execute_sparql(query)`` — the four feedbacks; rows as a table of the first 5 and last 5
  rows with the number omitted between them (IDs instead of full IRIs);
* ``stop()`` — no observation; the agent takes the last executed query as the answer.

Search, pages and examples work on any graph: a graph with a vocabulary of its own (a user's RDF files, any
SPARQL 1.1 endpoint) shows its entities by their IRIs written with prefixes (``ex:ada``) or as ``<IRI>``, and an
endpoint that cannot answer (its timeout, an error) is said as the observation.

Observations are capped in size (what limits the state of §3.3).  Tools can be switched off for
the ablation of §3.7 (``disabled``); a disabled or unknown action observes so.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engines.kg.dialect import SparqlRefused
from engines.kg.endpoint import Endpoint, Feedback, QueryResult
from engines.kg.pages import UnknownEntity
from engines.kg.prefixes import entity_id

if TYPE_CHECKING:
    from engines.sources import GraphSource

HEAD, TAIL = 5, 5
MAX_CELL = 60
NO_RESULTS = "Did not find any results."


@dataclass(frozen=True)
class ToolOutcome:
    observation: str
    result: QueryResult | None = None  # execute_sparql only
    feedback: str | None = None  # execute_sparql: rows | empty | syntax_error | timeout | refused


def _clean_argument(argument: str) -> str:
    arg = (argument or "").strip()
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"`":
        arg = arg[1:-1].strip()
    return arg


def _cell(value: Mapping[str, str] | None) -> str:
    if value is None:
        return "-"
    text = entity_id(value["value"]) if value.get("type") == "uri" else value["value"]
    text = " ".join(text.split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def render_table(result: QueryResult, head: int = HEAD, tail: int = TAIL) -> str:
    """The rows as SPINACH shows them: a header, the first ``head`` and last ``tail`` rows."""
    if result.boolean is not None:
        return str(result.boolean)
    cols = list(result.columns)
    rows = [[_cell(b.get(c)) for c in cols] for b in result.bindings]
    n = len(rows)
    shown: list[list[str]] = rows
    if n > head + tail:
        shown = rows[:head] + [[f"... ({n - head - tail} omitted)"] + ["..."] * (len(cols) - 1)] + rows[-tail:]
    widths = [max(len(c), *(len(r[i]) for r in shown)) for i, c in enumerate(cols)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    lines += [" | ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in shown]
    lines.append(
        f"[{n} row{'s' if n != 1 else ''} x {len(cols)} column{'s' if len(cols) != 1 else ''}]"
        + (" (stopped at the row cap)" if result.truncated else "")
    )
    return "\n".join(lines)


# What search_wikidata, get_wikidata_entry and get_property_examples observe on a local endpoint, kept per endpoint:
# its graph is in memory and never changes, so each is a pure function of the argument (the Lab runs thousands of
# trajectories that look the same names up; a search is milliseconds of name matching).  Remote endpoints are asked
# every time (their answers and failures are the network's).
_KEPT: weakref.WeakKeyDictionary[Endpoint, dict[tuple[str, str], str]] = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()
_KEPT_MAX = 1 << 15  # observations per endpoint; beyond it they are computed again


def _kept(endpoint: object, kind: str, argument: str, compute: Callable[[], str]) -> str:
    if not isinstance(endpoint, Endpoint):
        return compute()
    with _KEPT_LOCK:
        kept = _KEPT.setdefault(endpoint, {})
        hit = kept.get((kind, argument))
    if hit is not None:
        return hit
    text = compute()
    with _KEPT_LOCK:
        if len(kept) < _KEPT_MAX:
            kept[(kind, argument)] = text
    return text


class Tools:
    """The actions, bound to one endpoint."""

    def __init__(self, endpoint: GraphSource, *, disabled: Iterable[str] = ()) -> None:
        self.endpoint = endpoint
        self.disabled = frozenset(disabled)

    def run(self, action: str, argument: str, *, prune: Callable[[str], str] | None = None) -> ToolOutcome:
        """Run one action.  ``prune`` (the claude backend) cuts an entity page down to the
        lines that bear on the question before the policy sees it."""
        if action in self.disabled:
            return ToolOutcome(f"The action {action} is not available.")
        arg = _clean_argument(argument)
        if action == "search_wikidata":
            return ToolOutcome(self.search_wikidata(arg))
        if action == "get_wikidata_entry":
            page = self.get_wikidata_entry(arg)
            return ToolOutcome(prune(page) if prune is not None and "\n" in page else page)
        if action == "get_property_examples":
            return ToolOutcome(self.get_property_examples(arg))
        if action == "execute_sparql":
            return self.execute_sparql(arg)
        if action == "stop":
            return ToolOutcome("")
        return ToolOutcome(
            f"Unknown action {action!r}: use search_wikidata, get_wikidata_entry, "
            "get_property_examples, execute_sparql or stop."
        )

    def search_wikidata(self, text: str) -> str:
        return _kept(self.endpoint, "search", text, lambda: self._search(text))

    def _search(self, text: str) -> str:
        try:
            hits = self.endpoint.search(text)
        except UnknownEntity as e:  # a remote endpoint that could not answer (its timeout, an error): said
            return str(e)
        return "\n".join(h.render() for h in hits) or NO_RESULTS

    def get_wikidata_entry(self, qid: str) -> str:
        qid = re.sub(r"^wd:", "", qid.strip())
        return _kept(self.endpoint, "entry", qid, lambda: self._entry(qid))

    def _entry(self, qid: str) -> str:
        try:
            return self.endpoint.page(qid).render()
        except UnknownEntity as e:
            return str(e)

    def get_property_examples(self, pid: str) -> str:
        pid = re.sub(r"^(wdt|p|ps|pq|wd):", "", pid.strip())
        return _kept(self.endpoint, "examples", pid, lambda: self._examples(pid))

    def _examples(self, pid: str) -> str:
        try:
            examples = self.endpoint.property_examples(pid)
        except UnknownEntity as e:
            return str(e)
        return "\n".join(e.render() for e in examples) or NO_RESULTS

    def execute_sparql(self, query: str) -> ToolOutcome:
        try:
            result = self.endpoint.execute(query)
        except SparqlRefused as e:
            return ToolOutcome(f"Query refused: {e}", None, "refused")
        fb = result.feedback
        if fb is Feedback.ROWS:
            text = render_table(result)
        elif fb is Feedback.EMPTY:
            text = "Query returned empty result."
        elif fb is Feedback.TIMEOUT:
            text = "Query execution timed out."
        else:
            text = result.message or "Query had syntax error."
        return ToolOutcome(text, result, fb.value)
