"""Lecture 8 §1.4: why SPARQL on Wikidata is hard — the naive query against the correct one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engines.lab.core import RunContext, Table
from engines.lab.lecture8.common import (
    Row,
    kg_of,
    rows_of,
)

if TYPE_CHECKING:
    from worlds.kg import HiddenTruth, KGWorld
    from worlds.kg.model import Claim

# --- §1.4 the quirks: the naive query and the correct one -------------------------------------------------------


@dataclass(frozen=True)
class QuirkCase:
    quirk: str
    question: str
    naive_clause: str
    correct_clause: str
    naive: str
    correct: str
    truth: frozenset[Row] | None = None  # the rows the hidden truth says are right, where it can say


@dataclass(frozen=True)
class Measured:
    """A naive query against its correct one: their row counts, the naive rows right, missed and wrong, the
    feedback each got, and whether the correct rows are what the hidden truth says (None: it cannot say)."""

    naive: int
    correct: int
    right: int
    missed: int
    wrong: int
    feedback: str
    correct_feedback: str
    truth: bool | None


def _quirk_cases(world: KGWorld, truth: HiddenTruth) -> list[QuirkCase]:
    """The queries of §1.4 on our world (QIDs looked up by label; the hidden truth read only to check)."""
    C, T, E = world.classes, truth, world.entities
    q_of = {e.label: e.qid for e in E.values() if e.kind == "country"}
    country = "Kestavia" if "Kestavia" in q_of else sorted(q_of)[0]  # the country of the notes' exercise 1
    kest = q_of[country]
    ashfords = [e for e in E.values() if e.kind == "city" and e.label == "Ashford"]
    ash = ashfords[-1] if ashfords else None
    ash_country = E[T.city_country[ash.qid]].label if ash else ""
    claims_by: dict[str, list[Claim]] = {}
    for c in world.claims:
        claims_by.setdefault(c.subject, []).append(c)
    human, mountain, city, film, musician = C["human"], C["mountain"], C["city"], C["film"], C["musician"]
    string = C["string instrument"]

    musician_string = frozenset(
        (c.subject, c.value.value)
        for c in world.claims
        if c.pid == "P1303"
        and any(x.pid == "P106" and x.value.value == musician for x in claims_by[c.subject])
        and T.instrument_class.get(c.value.value) == string
    )
    cases = [
        QuirkCase(
            "1 no fixed schema",
            "Every person with their instrument and doctoral advisor (a table with a column each).",
            "?person wdt:P1303 ?instrument ; wdt:P184 ?advisor",
            "OPTIONAL { … P1303 … } OPTIONAL { … P184 … }",
            f"SELECT ?person ?instrument ?advisor WHERE {{ ?person wdt:P31 wd:{human} ; wdt:P1303 ?instrument ; wdt:P184 ?advisor . }}",
            f"SELECT ?person ?instrument ?advisor WHERE {{ ?person wdt:P31 wd:{human} . "
            "OPTIONAL { ?person wdt:P1303 ?instrument } OPTIONAL { ?person wdt:P184 ?advisor } }",
        ),
        QuirkCase(
            "2 similar properties",
            "How high is each mountain?",
            "wdt:P2048 (height)",
            "wdt:P2044 (elevation above sea level)",
            f"SELECT ?mountain ?h WHERE {{ ?mountain wdt:P31 wd:{mountain} ; wdt:P2048 ?h . }}",
            f"SELECT ?mountain ?h WHERE {{ ?mountain wdt:P31 wd:{mountain} ; wdt:P2044 ?h . }}",
        ),
        QuirkCase(
            "2 similar properties",
            f"Which films are set in cities of {country}? (exercise 1)",
            "wdt:P915 (filming location)",
            "wdt:P840 (narrative location)",
            f"SELECT DISTINCT ?film ?city WHERE {{ ?film wdt:P31 wd:{film} ; wdt:P915 ?city . ?city wdt:P131*/wdt:P17 wd:{kest} . }}",
            f"SELECT DISTINCT ?film ?city WHERE {{ ?film wdt:P31 wd:{film} ; wdt:P840 ?city . ?city wdt:P131*/wdt:P17 wd:{kest} . }}",
        ),
        QuirkCase(
            "2 similar properties",
            f"Which people were born in {country}?",
            "wdt:P27 (country of citizenship)",
            "wdt:P19/wdt:P131*/wdt:P17 (place of birth, up to its country)",
            f"SELECT DISTINCT ?person WHERE {{ ?person wdt:P31 wd:{human} ; wdt:P27 wd:{kest} . }}",
            f"SELECT DISTINCT ?person WHERE {{ ?person wdt:P31 wd:{human} ; wdt:P19/wdt:P131*/wdt:P17 wd:{kest} . }}",
            frozenset((p,) for p, cq in T.birth_country.items() if cq == kest),
        ),
        QuirkCase(
            "3 subclass, not instance",
            "Which musicians play a string instrument, and which?",
            f"?instrument wdt:P31 wd:{string}",
            f"?instrument wdt:P279* wd:{string}",
            f"SELECT DISTINCT ?musician ?instrument WHERE {{ ?musician wdt:P106 wd:{musician} ; wdt:P1303 ?instrument . "
            f"?instrument wdt:P31 wd:{string} . }}",
            f"SELECT DISTINCT ?musician ?instrument WHERE {{ ?musician wdt:P106 wd:{musician} ; wdt:P1303 ?instrument . "
            f"?instrument wdt:P279* wd:{string} . }}",
            musician_string,
        ),
        QuirkCase(
            "4 one-sided relations",
            "Every doctoral advisor and their students.",
            "?advisor wdt:P185 ?student",
            "?student wdt:P184 ?advisor",
            "SELECT DISTINCT ?advisor ?student WHERE { ?advisor wdt:P185 ?student . }",
            "SELECT DISTINCT ?advisor ?student WHERE { ?student wdt:P184 ?advisor . }",
            frozenset((a, s) for s, a in T.advisor_pairs),
        ),
        QuirkCase(
            "5 qualifiers",
            "Who received each award, and in which year?",
            "?laureate wdt:P166 ?award ; wdt:P585 ?date",
            "?laureate p:P166 ?s . ?s ps:P166 ?award ; pq:P585 ?date",
            "SELECT ?laureate ?award (YEAR(?date) AS ?year) WHERE { ?laureate wdt:P166 ?award ; wdt:P585 ?date . }",
            "SELECT ?laureate ?award (YEAR(?date) AS ?year) WHERE { ?laureate p:P166 ?s . ?s ps:P166 ?award ; pq:P585 ?date . }",
            frozenset((p, a, str(y)) for a, pairs in T.awards.items() for p, y in pairs),
        ),
        QuirkCase(
            "6 the P131 chain",
            "Every city and its country.",
            "?city wdt:P17 ?country",
            "?city wdt:P131*/wdt:P17 ?country",
            f"SELECT DISTINCT ?city ?country WHERE {{ ?city wdt:P31 wd:{city} ; wdt:P17 ?country . }}",
            f"SELECT DISTINCT ?city ?country WHERE {{ ?city wdt:P31 wd:{city} ; wdt:P131*/wdt:P17 ?country . }}",
            frozenset(T.city_country.items()),
        ),
        QuirkCase(
            "6 the P131 chain",
            f"Which films are set in cities of {country}? (exercise 1)",
            f"?city wdt:P17 wd:{kest}",
            f"?city wdt:P131*/wdt:P17 wd:{kest}",
            f"SELECT DISTINCT ?film ?city WHERE {{ ?film wdt:P31 wd:{film} ; wdt:P840 ?city . ?city wdt:P17 wd:{kest} . }}",
            f"SELECT DISTINCT ?film ?city WHERE {{ ?film wdt:P31 wd:{film} ; wdt:P840 ?city . ?city wdt:P131*/wdt:P17 wd:{kest} . }}",
        ),
    ]
    if ash is not None:
        cases.append(
            QuirkCase(
                "7 ambiguous labels",
                f"Which people were born in Ashford, the city in {ash_country}?",
                '?place rdfs:label "Ashford"@en',
                f"wd:{ash.qid} (the one whose description says {ash_country})",
                'SELECT DISTINCT ?person WHERE { ?person wdt:P19 ?place . ?place rdfs:label "Ashford"@en . }',
                f"SELECT DISTINCT ?person WHERE {{ ?person wdt:P19 wd:{ash.qid} . }}",
            )
        )
    return cases


def quirks(ctx: RunContext) -> Table:
    k = kg_of(ctx)
    cases = _quirk_cases(k.world, k.truth)
    rows: list[list[Any]] = []
    measured: list[tuple[QuirkCase, Measured]] = []
    for i, c in enumerate(cases):
        ctx.progress(i, len(cases) + 1, c.quirk)
        naive, correct = k.endpoint.execute(c.naive), k.endpoint.execute(c.correct)
        n_rows, c_rows = set(rows_of(naive.bindings, naive.columns)), set(rows_of(correct.bindings, correct.columns))
        right = len(n_rows & c_rows)
        truth = None if c.truth is None else c_rows == set(c.truth)
        signal = {"rows": "rows: silent" if n_rows != c_rows else "rows: right", "empty": "no rows: a signal"}.get(
            naive.feedback.value, naive.feedback.value
        )
        m = Measured(
            naive=len(naive),
            correct=len(correct),
            right=right,
            missed=len(c_rows - n_rows),
            wrong=len(n_rows - c_rows),
            feedback=naive.feedback.value,
            correct_feedback=correct.feedback.value,
            truth=truth,
        )
        measured.append((c, m))
        rows.append(
            [
                c.quirk,
                c.question,
                c.naive_clause,
                c.correct_clause,
                len(naive),
                len(correct),
                right,
                m.missed,
                m.wrong,
                signal,
                truth,
                c.naive,
                c.correct,
            ]
        )
    # quirk 1 measured another way: the people as one table, a column per property (demo 3)
    ctx.progress(len(cases), len(cases) + 1, "the people as a table")
    human = k.world.classes["human"]
    people = k.endpoint.execute(f"SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ ?p wdt:P31 wd:{human} . }}")
    per_prop = k.endpoint.execute(
        f"SELECT ?prop (COUNT(DISTINCT ?p) AS ?n) WHERE {{ ?p wdt:P31 wd:{human} ; ?prop ?o . "
        'FILTER(STRSTARTS(STR(?prop), "http://www.wikidata.org/prop/direct/")) } GROUP BY ?prop'
    )
    n_people = int(people.records()[0]["n"] or 0)  # a COUNT is always bound
    filled = {r["prop"]: int(r["n"] or 0) for r in per_prop.records()}
    cells = n_people * len(filled)
    empty = 1 - sum(filled.values()) / cells if cells else 0.0
    ctx.progress(len(cases) + 1, len(cases) + 1, "done")

    legal = [m for _c, m in measured if m.feedback in ("rows", "empty")]
    ctx.claim(
        "every naive query is legal SPARQL",
        len(legal) == len(measured) and all(m.correct_feedback == "rows" for _c, m in measured),
        f"{len(legal)} of {len(measured)} naive queries ran (rows or no rows); every correct one returned rows",
    )
    with_rows = [(c, m) for c, m in measured if m.feedback == "rows"]
    silent = [(c, m) for c, m in with_rows if m.missed or m.wrong]
    ctx.claim(
        "about half of the naive queries still return rows — wrong or incomplete, with no signal",
        0.3 <= len(silent) / len(measured) <= 0.7,
        f"{len(silent)} of {len(measured)} return rows that are not the answer: "
        + "; ".join(f"{c.quirk}: {m.right} of {m.correct} right, {m.wrong} wrong" for c, m in silent)
        + f"; {len(measured) - len(with_rows)} return no rows (notes: half of them return results)",
    )
    checked = [(c, m) for c, m in measured if m.truth is not None]
    ctx.claim(
        "the correct queries give what the hidden truth says",
        all(m.truth for _c, m in checked),
        f"{sum(1 for _c, m in checked if m.truth)} of {len(checked)} checked against the hidden truth",
    )
    ctx.claim(
        "no fixed schema: as one table, a large share of the people’s cells are empty",
        0.3 <= empty <= 0.7,
        f"{n_people} people × {len(filled)} properties = {cells:,} cells, {empty:.0%} empty (notes: 210 × 13 = 2,730 cells, 47% empty)",
    )
    ex1 = [m for c, m in measured if "exercise 1" in c.question]
    if len(ex1) == 2:
        ctx.claim(
            "exercise 1: the narrative-location query misses films through the P131 chain, and filming location is another answer",
            ex1[1].naive < ex1[1].correct and ex1[0].naive != ex1[0].correct,
            f"set in, P17 only: {ex1[1].naive} rows; through P131*: {ex1[1].correct}; filmed in: {ex1[0].naive} "
            "(notes: 5, 7 and 11)",
        )
    ctx.note(
        "Counts are distinct rows (entity IDs and values; label columns left out). 'right' = naive rows that are in the "
        "correct answer; 'missed' = correct rows the naive query does not return; 'wrong' = naive rows that are not right."
    )
    return ctx.table(
        (
            "quirk",
            "question",
            "naive clause",
            "correct clause",
            "naive rows",
            "correct rows",
            "right",
            "missed",
            "wrong",
            "naive feedback",
            "correct = hidden truth",
            "naive query",
            "correct query",
        ),
        rows,
    )
