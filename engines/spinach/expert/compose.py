"""Writing the query: the whole query from what the policy believes now, or the searches it still needs; the
one-shot baseline's query from memory alone; the typo slip."""

from __future__ import annotations

from engines.spinach.expert.clauses import fragment
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


def partial_queries(mind: Mind, failed: set[str] | None = None) -> list[tuple[str, int]]:
    """The fragments an expert runs before the whole query, one piece added at a time (§3.1: start simple, execute
    each fragment, add one piece): the first k clauses (k = 1 … n−1) as ``SELECT * … LIMIT 5``, each with the
    index of the clause it adds; [] for a goal of one clause or while an ID is still missing."""
    failed = failed or set()
    clauses = mind.goal.clauses
    if len(clauses) < 2:
        return []
    bind: list[str] = []
    parts: list[str] = []
    for c in clauses:
        frag = fragment(mind, c, variant_of(mind, c, failed), bind)
        if frag is None:
            return []
        parts.append(frag)
    out = []
    for k in range(1, len(parts)):
        body = "\n  ".join(bind + parts[:k])
        out.append((f"SELECT * WHERE {{\n  {body}\n}}\nLIMIT 5", k - 1))
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
