"""Each clause's SPARQL in each of its variants (the naive one first, the fixes after), the property whose
remembered confidence decides how far the clause is trusted, and the evidence that settles it."""

from __future__ import annotations

from collections.abc import Mapping

from engines.spinach.expert.memory import RELATIONS
from engines.spinach.expert.question import Clause
from engines.spinach.expert.search import entity_term, pid_for, region_kind
from engines.spinach.expert.state import Mind


def fragment_query(patterns: list[str]) -> str:
    """A fragment run to see what it matches: ``SELECT * WHERE { patterns } LIMIT 5`` (one pattern a line), the same
    text whether it is a piece of the query being built or a debugging probe, so the policy never runs it twice."""
    body = "\n  ".join(patterns)
    return f"SELECT * WHERE {{\n  {body}\n}}\nLIMIT 5"


def fragment(mind: Mind, c: Clause, variant: int, bind: list[str]) -> str | None:
    """The SPARQL of one clause in one variant (None when an ID is still missing)."""

    def ent(a: str) -> str:
        return entity_term(mind, a[1:], bind) if a.startswith("@") else a

    def pid(rel: str) -> str | None:
        return pid_for(mind, rel)[0]

    k, a = c.kind, c.args
    if k == "isa":
        p = pid(a[2])
        return p and f"{a[0]} wdt:{p} {ent(a[1])} ."
    if k == "rel":
        p = pid(a[1])
        return p and f"{ent(a[0])} wdt:{p} {ent(a[2])} ."
    if k == "in_country":
        return f"{a[0]} wdt:P131*/wdt:P17 {ent(a[1])} ." if variant else f"{a[0]} wdt:P17 {ent(a[1])} ."
    if k == "in_place":
        mention = next(m for m in mind.goal.mentions if m.key == a[1][1:])
        kind = region_kind(mind, mention)
        if kind == "country":
            return f"{a[0]} wdt:P131*/wdt:P17 {ent(a[1])} ." if variant else f"{a[0]} wdt:P17 {ent(a[1])} ."
        if kind == "city" and a[0] in ("?city", "?location"):
            return f"FILTER({a[0]} = {ent(a[1])})"
        return f"{a[0]} wdt:P131* {ent(a[1])} ." if variant else f"{a[0]} wdt:P131 {ent(a[1])} ."
    if k == "height":
        if variant:  # not P2048: P2044 as the page showed it, else the property found for "elevation"
            p = "P2044" if "has_P2044" in mind.facts else pid("elevation")
        else:
            p = pid(a[2])
        return p and f"{ent(a[0])} wdt:{p} {a[1]} ."
    if k == "inst_class":
        path = ("wdt:P31", "wdt:P279", "wdt:P279*")[variant]
        return f"{a[0]} {path} {ent(a[1])} ."
    if k == "students":
        adv = ent(a[1])
        if variant:
            return f"{{ {a[0]} wdt:P184 {adv} . }} UNION {{ {adv} wdt:P185 {a[0]} . }}"
        return f"{adv} wdt:P185 {a[0]} ."
    if k == "descendants":
        adv = ent(a[2])
        if variant:
            return f"{a[0]} wdt:P184+ {adv} ; wdt:P184 {a[1]} ."
        return f"{adv} wdt:P185+ {a[0]} . {a[1]} wdt:P185 {a[0]} ."
    if k == "award":
        aw = ent(a[1])
        if variant:
            return f"{a[0]} p:P166 ?statement . ?statement ps:P166 {aw} ; pq:P585 {a[2]} ."
        return f"{a[0]} wdt:P166 {aw} . {a[0]} wdt:P585 {a[2]} ."
    if k == "location":
        right = "P840" if a[2] == "set_in" else "P915"
        p = right if variant else pid(a[2])
        return p and f"{a[0]} wdt:{p} {a[1]} ."
    if k == "affiliation":
        org = ent(a[1])
        return (
            f"{a[0]} wdt:P1416 ?organization . ?organization wdt:P361* {org} ."
            if variant
            else f"{a[0]} wdt:P1416 {org} ."
        )
    if k == "affiliation_any":
        return (
            f"{a[0]} wdt:P1416 ?organization . ?organization wdt:P361* {a[1]} ."
            if variant
            else f"{a[0]} wdt:P1416 {a[1]} ."
        )
    return None


def pieces(mind: Mind, c: Clause, variant: int, bind: list[str]) -> list[str] | None:
    """The clause's fragment split into the pieces an expert adds one at a time (§3.1): its triple patterns in the
    order they are written, a pattern that only makes sense with the next (a statement node and its value, a UNION)
    kept with it.  Joined, they are the clause's :func:`fragment` (None when an ID is still missing)."""
    whole = fragment(mind, c, variant, bind)
    if whole is None:
        return None
    k, a = c.kind, c.args
    if k == "descendants":
        adv = entity_term(mind, a[2][1:], [])
        if variant:
            return [f"{a[0]} wdt:P184+ {adv} .", f"{a[0]} wdt:P184 {a[1]} ."]
        return [f"{adv} wdt:P185+ {a[0]} .", f"{a[1]} wdt:P185 {a[0]} ."]
    if k == "award":
        aw = entity_term(mind, a[1][1:], [])
        if variant:
            return [f"{a[0]} p:P166 ?statement . ?statement ps:P166 {aw} .", f"?statement pq:P585 {a[2]} ."]
        return [f"{a[0]} wdt:P166 {aw} .", f"{a[0]} wdt:P585 {a[2]} ."]
    if k in ("affiliation", "affiliation_any") and variant:
        org = entity_term(mind, a[1][1:], []) if a[1].startswith("@") else a[1]
        return [f"{a[0]} wdt:P1416 ?organization .", f"?organization wdt:P361* {org} ."]
    return [whole]


def clause_pid(mind: Mind, c: Clause) -> str:
    """The property whose remembered confidence decides how much the clause is trusted."""
    k, a = c.kind, c.args
    if k == "isa":
        return RELATIONS[a[2]][0]
    if k == "rel":
        return RELATIONS[a[1]][0]
    if k in ("height", "location"):
        return RELATIONS[a[2]][0]
    return {
        "in_country": "P17",
        "in_place": "P131",
        "inst_class": "P279",
        "students": "P185",
        "descendants": "P185",
        "award": "P585",
        "affiliation": "P1416",
        "affiliation_any": "P1416",
    }.get(k, "P31")


FIX_FACTS: Mapping[str, tuple[str, ...]] = {
    "inst_class": ("subclass_not_instance",),
    "in_country": ("place_without_country",),
    "in_place": ("nested_location", "place_without_country"),
    "students": ("advisor_on_student",),
    "descendants": ("advisor_on_student",),
    "award": ("award_qualifier",),
    "affiliation": ("school_part_of",),
    "affiliation_any": ("school_part_of",),
    "height": ("has_P2044",),
    "location": ("two_locations",),
}


def settled(mind: Mind, c: Clause) -> bool:
    """The evidence that fixes this clause has been seen: nothing more to check about it."""
    return any(f in mind.facts for f in FIX_FACTS.get(c.kind, ()))
