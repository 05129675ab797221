"""Writing the query: the whole query from what the policy believes now, or the searches it still needs; the
one-shot baseline's query from memory alone; the typo slip."""

from __future__ import annotations

from typing import NamedTuple

from engines.spinach.expert.clauses import fragment, fragment_query, pieces
from engines.spinach.expert.debugging import height_wrong_and_no_page, variant_of
from engines.spinach.expert.memory import DEFAULT, RELATIONS, PolicyParams
from engines.spinach.expert.question import read_question
from engines.spinach.expert.search import entity_term, pid_for
from engines.spinach.expert.state import Mind


def compose(mind: Mind, failed: set[str] | None = None) -> tuple[str | None, list[str]]:
    """The whole query as the policy would write it now, or (None, searches still needed)."""
    failed = failed or set()
    goal = mind.goal
    needs: list[str] = []
    for m in goal.mentions:
        if m.text and m.text.casefold() not in mind.searches and not mind.search_off:
            needs.append(m.text)
    for c in goal.clauses:
        rels = (
            [c.args[2]]
            if c.kind == "isa"
            else [c.args[1]]
            if c.kind == "rel"
            else [c.args[2]]
            if c.kind in ("height", "location")
            else []
        )
        if c.kind == "height" and "has_P2044" not in mind.facts and height_wrong_and_no_page(mind, c):
            rels = [*rels, "elevation"]  # P2048 is for people and no page to read: find the property for a mountain
        for rel in rels:
            if rel in RELATIONS:
                _p, search = pid_for(mind, rel)
                if search and search not in needs:
                    needs.append(search)
    if needs:
        return None, needs
    bind: list[str] = []
    parts: list[str] = []
    for c in goal.clauses:
        frag = fragment(mind, c, variant_of(mind, c, failed), bind)
        if frag is None:
            return None, []
        parts.append(frag)
    # a slip in a complex clause (§4.4): the sort turned round, the LIMIT left out, a path's modifier dropped (drawn
    # once a question, as the other writing slips)
    slips = [
        k
        for k, on in (("order", goal.order), ("limit", goal.limit), ("path", any("*" in p or "+" in p for p in parts)))
        if on
    ]
    slip = (
        slips[int(mind.draw("clause-slip-kind") * len(slips))]
        if slips and mind.draw("clause-slip") < mind.params.p_clause_slip
        else None
    )
    if slip == "path":
        i = next(i for i, p in enumerate(parts) if "*" in p or "+" in p)
        parts[i] = parts[i].replace("*", "", 1) if "*" in parts[i] else parts[i].replace("+", "", 1)
    if goal.clauses and goal.clauses[0].args and mind.draw("extra") < mind.params.p_extra:
        country = next((m for m in goal.mentions if m.key == "country"), None)
        if country is not None and any(c.kind == "in_country" for c in goal.clauses):
            parts.append(f"?person wdt:P27 {entity_term(mind, 'country', bind)} .")
    select = list(goal.select)
    fmt = mind.draw("format") < mind.params.p_format
    labels = [v for v in select if v not in ("?elevation", "?date", "?count")]
    if fmt and len(select) >= 2:
        select = select[:1]
    if goal.count:
        proj = " ".join(goal.group_by) + f" (COUNT(DISTINCT {goal.count}) AS ?count)"
        proj = proj.strip()
        labels = []
    else:
        if fmt and len(goal.select) == 1 and labels:
            proj = f"{labels[0]}Label"
        else:
            proj = "DISTINCT " + " ".join(select + [f"{v}Label" for v in labels])
    body = "\n  ".join(bind + parts)
    if goal.year_from:
        body += f"\n  FILTER(YEAR({goal.year_from[0]}) >= {goal.year_from[1]})"
    if labels:
        body += '\n  SERVICE wikibase:label { bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". }'
    query = f"SELECT {proj} WHERE {{\n  {body}\n}}"
    if goal.group_by:
        query += "\nGROUP BY " + " ".join(goal.group_by)
    if goal.order:
        direction = goal.order[1] if slip != "order" else ("ASC" if goal.order[1] == "DESC" else "DESC")
        query += f"\nORDER BY {direction}({goal.order[0]})"
    if goal.limit and not (fmt and goal.order) and slip != "limit":
        query += f"\nLIMIT {goal.limit}"
    return query, []


class Partial(NamedTuple):
    """A fragment run before the whole query: its text, the clause whose piece it adds last, and how many clauses
    (from the first) it holds whole."""

    query: str
    clause: int
    whole: int


def partial_queries(mind: Mind, failed: set[str] | None = None) -> list[Partial]:
    """The fragments an expert runs before the whole query, one piece added at a time (§3.1: start simple, execute
    each fragment, add one piece): the clauses' pieces (:func:`~.clauses.pieces`, a triple pattern each) in order,
    the first k of them as ``SELECT * … LIMIT 5``.  The last fragment is the pattern less its last piece, or the
    whole pattern when the query then adds a piece that could hide what the pattern matches: a FILTER (it can empty
    the result), a COUNT or a GROUP BY (a count of nothing is a row, 0: the empty pattern gives no signal).  An
    ORDER BY or a LIMIT only chooses among the rows the pattern matches, so the whole query adds them with the last
    piece.  [] for a query of one piece and nothing more, or while an ID is still missing."""
    failed = failed or set()
    goal = mind.goal
    bind: list[str] = []
    flat: list[tuple[str, int]] = []  # (piece, clause index)
    for i, c in enumerate(goal.clauses):
        ps = pieces(mind, c, variant_of(mind, c, failed), bind)
        if ps is None:
            return []
        flat.extend((p, i) for p in ps)
    more = bool(goal.count or goal.group_by or goal.year_from)
    out = []
    for k in range(1, len(flat) + (1 if more else 0)):
        clause = flat[k - 1][1]
        whole = clause + 1 if k == len(flat) or flat[k][1] != clause else clause
        out.append(Partial(fragment_query(bind + [p for p, _i in flat[:k]]), clause, whole))
    return out


def one_shot_query(question: str, *, seed: int = 224, params: PolicyParams | None = None) -> str | None:
    """The query a model writes in one go from the question and its memory (no tools, no feedback)."""
    mind = Mind(question, read_question(question), params or DEFAULT, seed, (), search_off=True, invent_ids=True)
    if not mind.goal.understood:
        return None
    return compose(mind)[0]


def typo_of(query: str) -> str:
    """The query with a slip: the closing brace of the WHERE clause forgotten."""
    i = query.rfind("}")
    return query[:i] + query[i + 1 :]
