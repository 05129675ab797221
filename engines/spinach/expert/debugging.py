"""Debugging and verifying a clause: which variant to write from the evidence seen (another one without evidence
only on a guess, ``p_guess``), and the probes that find the evidence — a simpler fragment, property examples,
an entity page — for a query with no rows (loud) or one with rows whose assumptions are unsure (quiet)."""

from __future__ import annotations

import re

from engines.spinach.expert.clauses import fragment, fragment_query, pieces
from engines.spinach.expert.question import Clause
from engines.spinach.expert.search import entity_term, mention_of, pid_for, region_kind, resolve
from engines.spinach.expert.state import Mind, feedback_of


def variant_of(mind: Mind, clause: Clause, failed: set[str]) -> int:
    k = clause.kind
    facts = mind.facts
    if k == "inst_class":
        if "subclass_not_instance" in facts:
            return 2
        start = 0 if mind.draw("init", k) < 0.5 else 1 if mind.draw("init2", k) < 0.6 else 2
        return min(2, start + _blind(mind, clause, failed, start))
    if k == "in_country":
        return 1 if "place_without_country" in facts else 0
    if k == "in_place":
        return 1 if ("nested_location" in facts or "place_without_country" in facts) else 0
    if k in ("students", "descendants"):
        if "advisor_on_student" in facts:
            return 1
        start = 0 if mind.draw("init", k) < 0.7 else 1
        return min(1, start + _blind(mind, clause, failed, start))
    if k == "award":
        if "award_qualifier" in facts:
            return 1
        start = 0 if mind.draw("init", k) < 0.75 else 1
        return min(1, start + _blind(mind, clause, failed, start))
    if k in ("affiliation", "affiliation_any"):
        return 1 if "school_part_of" in facts else 0
    if k == "height":
        return 1 if "has_P2044" in facts or height_wrong_and_no_page(mind, clause) else 0
    if k == "location":
        return 1 if "two_locations" in facts else 0
    return 0


def height_wrong_and_no_page(mind: Mind, clause: Clause) -> bool:
    """P2048's examples showed it is a person's height, and no probe is left to show a mountain's own property (the
    page, as in §3.6, when it can be read): the policy looks the property "elevation" up instead."""
    return "height_is_for_people" in mind.facts and next_probe(mind, clause, loud=True) is None


def _blind(mind: Mind, clause: Clause, failed: set[str], start: int) -> int:
    """How many variants (from ``start``) to move on without evidence: a variant that was tried and failed, its
    debugging probes used up and nothing learnt, is left for the next only on a guess (``p_guess``, a seeded draw
    per clause, variant and state); otherwise the policy keeps it and ends up stopping."""
    n = 0
    for v in range(start, 3):
        frag = fragment(mind, clause, v, [])
        if (
            frag
            and any(frag in q for q in failed)
            and not next_probe(mind, clause, loud=True)
            and mind.draw("guess-variant", clause.key, v, len(mind.history), mind.sample) < mind.params.p_guess
        ):
            n += 1
        else:
            break
    return n


SUBJECT = {"rel": 0, "height": 0, "students": 1, "descendants": 2}
"""The argument that is the subject of each kind of clause in its first variant: a named entity there is the node
whose properties the query reads."""


def page_to_confirm(mind: Mind) -> str | None:
    """The page of a named entity whose properties the query is about to read, found but not yet read (§1.4: which
    property to use depends on the properties the node actually has; §3.4: confirm every assumption about the
    structure before relying on it).  An entity the query only points at (born *in* Ashford) shows nothing of the
    property on its own page, which lists outgoing edges only: none is read for it."""
    if "get_wikidata_entry" in _disabled(mind):
        return None
    for c in mind.goal.clauses:
        i = SUBJECT.get(c.kind)
        if i is None or not c.args[i].startswith("@"):
            continue
        qid = resolve(mind, mention_of(mind, c.args[i]))
        if qid and ("get_wikidata_entry", qid) not in mind.done:
            return qid
    return None


def _first_ids(observation: str, column: int = 0) -> list[str]:
    ids = []
    for line in observation.splitlines()[1:]:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > column and re.fullmatch(r"Q\d+", cells[column]):
            ids.append(cells[column])
    return ids


def _var_ids(mind: Mind, var: str) -> list[str]:
    """IDs in the column ``var`` of the latest query result that returned rows and has that column."""
    for step in reversed(mind.history):
        if step.action_name == "execute_sparql" and feedback_of(step.observation) == "rows":
            header = [c.strip() for c in step.observation.splitlines()[0].split("|")]
            if var.lstrip("?") in header:
                ids = _first_ids(step.observation, header.index(var.lstrip("?")))
                if ids:
                    return ids
    return []


def probe_list(mind: Mind, c: Clause, loud: bool) -> list[tuple[str, str, str]]:
    """(action, argument, thought) probes for clause ``c``, in order; arguments may be ''."""
    k, a = c.kind, c.args
    bind: list[str] = []
    out: list[tuple[str, str, str]] = []
    isa = next((x for x in mind.goal.clauses if x.kind == "isa" and x.args[0] == a[0]), None)
    if k == "height":
        subject_var = a[0]
        frag = fragment(mind, isa, 0, bind) if isa else None
        p = pid_for(mind, a[2])[0] or "P2048"
        if frag:
            out.append(
                (
                    "execute_sparql",
                    fragment_query(bind + [frag]),
                    "The result looks wrong (empty). Debug by running a simpler fragment.",
                )
            )
        out.append(("get_property_examples", p, f"Check how {p} is really used."))
        ids = _var_ids(mind, subject_var) if frag else []
        if not ids and a[0].startswith("@"):
            mention = next(m for m in mind.goal.mentions if m.key == a[0][1:])
            ids = [i for i in [resolve(mind, mention)] if i]
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"Look at {ids[0]} to see which properties it actually has."))
    elif k == "inst_class":
        out.append(
            (
                "execute_sparql",
                f"SELECT ?instrument WHERE {{ ?musician wdt:{pid_for(mind, 'instrument')[0] or 'P1303'} ?instrument . }} LIMIT 5",
                "Check what the instrument values look like.",
            )
        )
        ids = _var_ids(mind, "?instrument")
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"How is the instrument {ids[0]} linked to its class?"))
    elif k == "award":
        award_pieces = pieces(mind, c, 0, bind)
        aw = award_pieces[0] if award_pieces else None
        if aw and loud:
            out.append(
                (
                    "execute_sparql",
                    fragment_query(bind + [aw]),
                    "Debug: does the award part alone return anything?",
                )
            )
        out.append(("get_property_examples", "P166", "How are awards and their dates recorded?"))
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"Look at the laureate {ids[0]}."))
    elif k in ("students", "descendants"):
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"Check how the student {ids[0]} records the relation."))
        out.append(("get_property_examples", "P184", "Are advisors recorded on the students' side (P184)?"))
    elif k == "in_country" or (k == "in_place" and region_kind(mind, mention_of(mind, a[1])) == "country"):
        others = [
            f
            for x in mind.goal.clauses
            if x is not c and a[0] in x.args
            for f in [fragment(mind, x, variant_of(mind, x, set()), bind)]
            if f
        ]
        out.append(
            (
                "execute_sparql",
                f"SELECT {a[0]} WHERE {{ {' '.join(bind + others)} FILTER NOT EXISTS {{ {a[0]} wdt:P17 ?country }} }} LIMIT 5",
                "Do all of these places have a country (P17)? Check for some without one.",
            )
        )
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"How is {ids[0]} linked to its country?"))
    elif k == "in_place":
        mention = mention_of(mind, a[1])
        if region_kind(mind, mention) == "province":
            region = entity_term(mind, a[1][1:], bind)
            frag = fragment(mind, isa, 0, bind) if isa else ""
            out.append(
                (
                    "execute_sparql",
                    f"SELECT {a[0]} ?place WHERE {{ {frag or ''} {a[0]} wdt:P131 ?place . ?place wdt:P131 {region} . }} LIMIT 5 # nested places",
                    f"Are some of them located in a place inside {mention.text} rather than directly in it?",
                )
            )
    elif k == "location":
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(
                ("get_wikidata_entry", ids[0], f"Check the film {ids[0]}: which location property fits the question?")
            )
    elif k in ("affiliation", "affiliation_any"):
        out.append(("get_property_examples", "P1416", "What kind of organizations are affiliations?"))
        org = next((m for m in mind.goal.mentions if m.key == "org"), None)
        hits = mind.searches.get(org.text.casefold(), []) if org else []
        school = next((h[0] for h in hits if "school of music" in h[2].casefold()), None)
        if school:
            out.append(("get_wikidata_entry", school, f"The search also showed {school}; how is it related?"))
    elif k in ("isa", "rel") and loud:
        frag = fragment(mind, c, 0, bind)
        if frag:
            var = next((x for x in a if x.startswith("?")), None)
            if var:
                out.append(("execute_sparql", fragment_query(bind + [frag]), "Check this part alone."))
    return out


def next_probe(mind: Mind, c: Clause, loud: bool) -> tuple[str, str, str] | None:
    for action, arg, thought in probe_list(mind, c, loud):
        if (action, arg) not in mind.done and not (action != "execute_sparql" and action in _disabled(mind)):
            return action, arg, thought
    return None


def _disabled(mind: Mind) -> set[str]:
    return {s.action_name for s in mind.history if "is not available" in (s.observation or "")}
