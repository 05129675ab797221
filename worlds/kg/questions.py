"""The question sets of §5 (evaluator data): 40 simple questions and 56 forum-style ones in 8 categories, each
with its gold SPARQL, chosen with the hidden truth so that the quirks make them hard."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from worlds.kg.model import Claim, KGWorld
from worlds.kg.names import OCCUPATIONS
from worlds.kg.truth import HiddenTruth


@dataclass(frozen=True)
class KGQuestion:
    """A question with its gold SPARQL.  ``entities`` are the QIDs it mentions (oracle entity
    linking for the baselines that the paper gave them); the SPINACH agent never sees them."""

    id: str
    set: str  # simple | forum
    category: str  # "simple" or C1…C8
    question: str
    gold_sparql: str
    entities: tuple[str, ...] = ()


CATEGORIES: Mapping[str, str] = {
    "C1": "subclass, not instance (instrument classes)",
    "C2": "country of birth (the P131 chain; citizenship is not birth)",
    "C3": "superlatives (elevation, not height; ranking)",
    "C4": "academic genealogy (advisor recorded on the student)",
    "C5": "qualifiers (the year of an award)",
    "C6": "narrative vs filming location",
    "C7": "affiliation through a school of music",
    "C8": "ambiguous labels",
}


@dataclass(frozen=True)
class QuestionSets:
    simple: tuple[KGQuestion, ...]
    forum: tuple[KGQuestion, ...]

    def all(self) -> tuple[KGQuestion, ...]:
        return self.simple + self.forum

    def by_id(self, qid: str) -> KGQuestion:
        for q in self.all():
            if q.id == qid:
                return q
        raise KeyError(qid)


def questions(world: KGWorld, truth: HiddenTruth, seed: int | None = None) -> QuestionSets:
    """The simple (40) and forum-style (56, 7 per category) questions with gold SPARQL.

    Evaluator data: the hidden ``truth`` (of the same build as ``world``) picks questions the quirks make hard."""
    rng = random.Random(world.seed if seed is None else seed)
    E, C, T = world.entities, world.classes, truth
    lab = world.label
    claims_by: dict[str, list[Claim]] = {}
    for c in world.claims:
        claims_by.setdefault(c.subject, []).append(c)

    def values(q: str, pid: str) -> list[str]:
        return [c.value.value for c in claims_by.get(q, ()) if c.pid == pid]

    def of_kind(kind: str) -> list[str]:
        return [q for q, e in E.items() if e.kind == kind]

    unique = {q for q, e in E.items() if sum(1 for x in E.values() if x.label == e.label) == 1}
    people = [q for q in of_kind("person") if q in unique]
    occ_of = {q: values(q, "P106")[0] for q in of_kind("person")}

    def with_occ(occ: str) -> list[str]:
        return [q for q in people if occ_of[q] == C[occ]]

    simple: list[KGQuestion] = []

    def add_simple(text: str, sparql: str, ents: tuple[str, ...]) -> None:
        simple.append(KGQuestion(f"simple_{len(simple) + 1:02d}", "simple", "simple", text, sparql, ents))

    for q in rng.sample(people, 7):
        add_simple(f"Where was {lab(q)} born?", f"SELECT ?place WHERE {{ wd:{q} wdt:P19 ?place . }}", (q,))
    for q in rng.sample(with_occ("musician"), 5):
        add_simple(
            f"Which instrument does {lab(q)} play?",
            f"SELECT ?instrument WHERE {{ wd:{q} wdt:P1303 ?instrument . }}",
            (q,),
        )
    films = [q for q in of_kind("film") if q in unique]
    for q in rng.sample(films, 5):
        add_simple(f"Who directed {lab(q)}?", f"SELECT ?director WHERE {{ wd:{q} wdt:P57 ?director . }}", (q,))
    companies = of_kind("company")
    for q in rng.sample(companies, 4):
        add_simple(f"Who founded {lab(q)}?", f"SELECT ?founder WHERE {{ wd:{q} wdt:P112 ?founder . }}", (q,))
    for q in rng.sample(companies, 4):
        add_simple(
            f"In which city is the headquarters of {lab(q)}?", f"SELECT ?city WHERE {{ wd:{q} wdt:P159 ?city . }}", (q,)
        )
    for q in rng.sample(of_kind("mountain"), 4):
        add_simple(
            f"What is the elevation above sea level of {lab(q)}?",
            f"SELECT ?elevation WHERE {{ wd:{q} wdt:P2044 ?elevation . }}",
            (q,),
        )
    for q in rng.sample(films, 4):
        add_simple(f"When was {lab(q)} released?", f"SELECT ?date WHERE {{ wd:{q} wdt:P577 ?date . }}", (q,))
    educated = [q for q in people if values(q, "P69")]
    for q in rng.sample(educated, 4):
        add_simple(f"Where was {lab(q)} educated?", f"SELECT ?school WHERE {{ wd:{q} wdt:P69 ?school . }}", (q,))
    for q in rng.sample(people, 3):
        add_simple(
            f"What is the occupation of {lab(q)}?",
            f"SELECT ?occupation WHERE {{ wd:{q} wdt:P106 ?occupation . }}",
            (q,),
        )

    forum: list[KGQuestion] = []

    def add_forum(cat: str, text: str, sparql: str, ents: tuple[str, ...]) -> None:
        n = sum(1 for f in forum if f.category == cat) + 1
        forum.append(KGQuestion(f"{cat.lower()}_{n}", "forum", cat, text, sparql, ents))

    # C1 — subclass, not instance
    musician = C["musician"]
    for cls, two_cols in (
        ("string instrument", True),
        ("wind instrument", True),
        ("percussion instrument", False),
        ("keyboard instrument", False),
        ("bowed string instrument", True),
        ("brass instrument", False),
    ):
        if two_cols:
            add_forum(
                "C1",
                f"Which musicians play a {cls}? For each, return the musician and the instrument.",
                f"SELECT DISTINCT ?musician ?instrument WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1303 ?instrument .\n  ?instrument wdt:P279* wd:{C[cls]} .\n}}",
                (C[cls],),
            )
        else:
            add_forum(
                "C1",
                f"Which musicians play a {cls}?",
                f"SELECT DISTINCT ?musician WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1303 ?instrument .\n  ?instrument wdt:P279* wd:{C[cls]} .\n}}",
                (C[cls],),
            )
    add_forum(
        "C1",
        "How many musicians play a string instrument?",
        f"SELECT (COUNT(DISTINCT ?musician) AS ?count) WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1303 ?instrument .\n  ?instrument wdt:P279* wd:{C['string instrument']} .\n}}",
        (C["string instrument"],),
    )

    # C2 — country of birth: through P131 to P17; not P27.  Pick (occupation, country) pairs
    # where the naive P17 misses someone.
    countries = {E[q].label: q for q in of_kind("country")}
    direct_p17 = {q for q in of_kind("city") if values(q, "P17")}
    pairs: list[tuple[str, str, int]] = []
    for occ in OCCUPATIONS:
        for cn, cq in countries.items():
            born_there = [p for p in with_occ(occ) if T.birth_country[p] == cq]
            missed = [p for p in born_there if values(p, "P19")[0] not in direct_p17]
            if len(born_there) >= 3 and missed:
                pairs.append((occ, cn, len(born_there)))
    rng.shuffle(pairs)
    chosen: list[tuple[str, str, int]] = []
    for occ, cn, n in pairs:
        if len(chosen) < 6 and sum(1 for o, _, _ in chosen if o == occ) < 2:
            chosen.append((occ, cn, n))
    plural = {
        "musician": "musicians",
        "physicist": "physicists",
        "mathematician": "mathematicians",
        "film director": "film directors",
        "actor": "actors",
        "entrepreneur": "entrepreneurs",
    }
    for occ, cn, _n in chosen:
        add_forum(
            "C2",
            f"Which {plural[occ]} were born in {cn}? For each, return the person and their place of birth.",
            f"SELECT DISTINCT ?person ?place WHERE {{\n  ?person wdt:P106 wd:{C[occ]} ;\n          wdt:P19 ?place .\n  ?place wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
            (C[occ], countries[cn]),
        )
    occ, cn, _n = chosen[0]
    add_forum(
        "C2",
        f"How many {plural[occ]} were born in {cn}?",
        f"SELECT (COUNT(DISTINCT ?person) AS ?count) WHERE {{\n  ?person wdt:P106 wd:{C[occ]} ;\n          wdt:P19 ?place .\n  ?place wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
        (C[occ], countries[cn]),
    )

    # C3 — superlatives over elevation (P2044, not P2048), mountains reached through P131*
    mountain = C["mountain"]
    provs = [q for q in of_kind("province")]

    def highest_in(prov: str) -> str:
        ms = [m for m, p in T.mountain_province.items() if p == prov]
        return max(ms, key=lambda m: float(values(m, "P2044")[0]))

    through_city = [p for p in provs if values(highest_in(p), "P131")[0] != p]
    direct = [p for p in provs if p not in through_city]
    picked = (rng.sample(through_city, min(2, len(through_city))) + rng.sample(direct, 4))[:4]
    for prov in picked:
        add_forum(
            "C3",
            f"What is the highest mountain in {lab(prov)}, and how high is it?",
            f"SELECT ?mountain ?elevation WHERE {{\n  ?mountain wdt:P31 wd:{mountain} ;\n            wdt:P131* wd:{prov} ;\n            wdt:P2044 ?elevation .\n}}\nORDER BY DESC(?elevation)\nLIMIT 1",
            (prov,),
        )
    lowest = [p for p in provs if p not in picked][0]
    add_forum(
        "C3",
        f"What is the lowest mountain in {lab(lowest)}, and what is its elevation?",
        f"SELECT ?mountain ?elevation WHERE {{\n  ?mountain wdt:P31 wd:{mountain} ;\n            wdt:P131* wd:{lowest} ;\n            wdt:P2044 ?elevation .\n}}\nORDER BY ASC(?elevation)\nLIMIT 1",
        (lowest,),
    )
    for cn in rng.sample(sorted(countries), 2):
        add_forum(
            "C3",
            f"What are the three highest mountains in {cn}? Return each mountain and its elevation.",
            f"SELECT DISTINCT ?mountain ?elevation WHERE {{\n  ?mountain wdt:P31 wd:{mountain} ;\n            wdt:P131*/wdt:P17 wd:{countries[cn]} ;\n            wdt:P2044 ?elevation .\n}}\nORDER BY DESC(?elevation)\nLIMIT 3",
            (countries[cn],),
        )

    # C4 — academic genealogy: students have P184; advisors rarely have P185
    students_of: dict[str, set[str]] = {}
    for s, a in T.advisor_pairs:
        students_of.setdefault(a, set()).add(s)
    recorded = {(c.value.value, c.subject) for c in world.claims if c.pid == "P185"}

    def descendants(a: str) -> set[str]:
        out: set[str] = set()
        todo = [a]
        while todo:
            for s in students_of.get(todo.pop(), ()):
                if s not in out:
                    out.add(s)
                    todo.append(s)
        return out

    advisors = sorted((a for a in students_of if a in unique), key=lambda a: (-len(students_of[a]), a))
    partial = [a for a in advisors if 0 < sum(1 for s in students_of[a] if (s, a) in recorded) < len(students_of[a])]
    none_recorded = [a for a in advisors if not any((s, a) in recorded for s in students_of[a])]
    deep = [a for a in advisors if len(descendants(a)) > len(students_of[a])]
    ask_students = (partial[:3] + none_recorded[:1] + [a for a in advisors if a not in partial])[:4]
    for a in ask_students:
        add_forum(
            "C4",
            f"Who were the doctoral students of {lab(a)}?",
            f"SELECT DISTINCT ?student WHERE {{\n  ?student wdt:P184 wd:{a} .\n}}",
            (a,),
        )
    for a in [d for d in deep if d not in ask_students][:3]:
        add_forum(
            "C4",
            f"Who are the academic descendants of {lab(a)} (their doctoral students, their students' students, and so on)? For each, return the descendant and their doctoral advisor.",
            f"SELECT DISTINCT ?descendant ?advisor WHERE {{\n  ?descendant wdt:P184+ wd:{a} ;\n              wdt:P184 ?advisor .\n}}",
            (a,),
        )

    # C5 — qualifiers: the date of an award is a P585 qualifier
    for aq in of_kind("award"):
        add_forum(
            "C5",
            f"Who received the {lab(aq)}, and when? Return each laureate and the point in time of the award.",
            f"SELECT ?laureate ?date WHERE {{\n  ?laureate p:P166 ?statement .\n  ?statement ps:P166 wd:{aq} ;\n             pq:P585 ?date .\n}}",
            (aq,),
        )
    for aq in rng.sample(of_kind("award"), 2):
        years = sorted(y for _p, y in T.awards[aq])
        cut = years[len(years) // 2]
        add_forum(
            "C5",
            f"Who received the {lab(aq)} in {cut} or later?",
            f"SELECT DISTINCT ?laureate WHERE {{\n  ?laureate p:P166 ?statement .\n  ?statement ps:P166 wd:{aq} ;\n             pq:P585 ?date .\n  FILTER(YEAR(?date) >= {cut})\n}}",
            (aq,),
        )

    # C6 — narrative location (P840) vs filming location (P915)
    set_in = {c.subject: c.value.value for c in world.claims if c.pid == "P840"}
    shot_in = {c.subject: c.value.value for c in world.claims if c.pid == "P915"}

    def films_count(where: Mapping[str, str], cq: str) -> int:
        return sum(1 for f, c in where.items() if T.city_country[c] == cq)

    cset = sorted(countries, key=lambda cn: (-films_count(set_in, countries[cn]), cn))
    for cn in cset[:2]:
        add_forum(
            "C6",
            f"Which films are set in cities of {cn}? Return each film and the city.",
            f"SELECT DISTINCT ?film ?city WHERE {{\n  ?film wdt:P31 wd:{C['film']} ;\n        wdt:P840 ?city .\n  ?city wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
            (countries[cn],),
        )
    cshot = sorted(countries, key=lambda cn: (-films_count(shot_in, countries[cn]), cn))
    for cn in cshot[:2]:
        add_forum(
            "C6",
            f"Which films were filmed in {cn}? Return each film and its filming location.",
            f"SELECT DISTINCT ?film ?location WHERE {{\n  ?film wdt:P31 wd:{C['film']} ;\n        wdt:P915 ?location .\n  ?location wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
            (countries[cn],),
        )
    settings = sorted(
        {c for c in set_in.values() if c in unique}, key=lambda c: (-sum(1 for v in set_in.values() if v == c), c)
    )
    for place in settings[:2]:
        add_forum(
            "C6",
            f"Which films are set in {lab(place)}?",
            f"SELECT DISTINCT ?film WHERE {{\n  ?film wdt:P840 wd:{place} .\n}}",
            (place,),
        )
    shots = sorted(
        {c for c in shot_in.values() if c in unique and c not in settings[:2]},
        key=lambda c: (-sum(1 for v in shot_in.values() if v == c), c),
    )
    add_forum(
        "C6",
        f"Which films were filmed in {lab(shots[0])}?",
        f"SELECT DISTINCT ?film WHERE {{\n  ?film wdt:P915 wd:{shots[0]} .\n}}",
        (shots[0],),
    )

    # C7 — affiliation through a school of music (P361)
    unis = of_kind("university")
    with_school = [u for u in unis if any(c.pid == "P361" and c.value.value == u for c in world.claims)]
    for u in with_school:
        add_forum(
            "C7",
            f"Which musicians are affiliated with {lab(u)}, including its school of music?",
            f"SELECT DISTINCT ?musician WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization .\n  ?organization wdt:P361* wd:{u} .\n}}",
            (u,),
        )
    for u in with_school[:2]:
        add_forum(
            "C7",
            f"Which musicians affiliated with {lab(u)} or its school of music play a string instrument? Return each musician and the instrument.",
            f"SELECT DISTINCT ?musician ?instrument WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization ;\n            wdt:P1303 ?instrument .\n  ?organization wdt:P361* wd:{u} .\n  ?instrument wdt:P279* wd:{C['string instrument']} .\n}}",
            (u, C["string instrument"]),
        )
    add_forum(
        "C7",
        "How many musicians are affiliated with each university, counting its school of music? Return each university and the number.",
        f"SELECT ?university (COUNT(DISTINCT ?musician) AS ?count) WHERE {{\n  ?university wdt:P31 wd:{C['university']} .\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization .\n  ?organization wdt:P361* ?university .\n}}\nGROUP BY ?university",
        (),
    )
    for u in [u for u in unis if u not in with_school][:1]:
        add_forum(
            "C7",
            f"Which musicians are affiliated with {lab(u)}?",
            f"SELECT DISTINCT ?musician WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization .\n  ?organization wdt:P361* wd:{u} .\n}}",
            (u,),
        )

    # C8 — ambiguous labels: only the description tells them apart
    def the(label: str, country_name: str) -> str:
        return next(
            q for q in E if E[q].label == label and E[q].kind == "city" and T.city_country[q] == countries[country_name]
        )

    ash_k, ash_t = the("Ashford", "Kestavia"), the("Ashford", "Tirenne")
    mill_o, mill_v = the("Millbrook", "Orundi"), the("Millbrook", "Valmora")
    add_forum(
        "C8",
        "Which people were born in Ashford, the city in Tirenne?",
        f"SELECT DISTINCT ?person WHERE {{\n  ?person wdt:P19 wd:{ash_t} .\n}}",
        (ash_t,),
    )
    add_forum(
        "C8",
        "Which people were born in Ashford, the city in Kestavia? Return each person and their occupation.",
        f"SELECT DISTINCT ?person ?occupation WHERE {{\n  ?person wdt:P19 wd:{ash_k} ;\n          wdt:P106 ?occupation .\n}}",
        (ash_k,),
    )
    add_forum(
        "C8",
        "How many people were born in Millbrook, the city in Valmora?",
        f"SELECT (COUNT(DISTINCT ?person) AS ?count) WHERE {{\n  ?person wdt:P19 wd:{mill_v} .\n}}",
        (mill_v,),
    )
    add_forum(
        "C8",
        "Which people were born in Millbrook, the city in Orundi?",
        f"SELECT DISTINCT ?person WHERE {{\n  ?person wdt:P19 wd:{mill_o} .\n}}",
        (mill_o,),
    )
    nl = sorted((q for q in E if E[q].label == "Northern Lights"), key=lambda q: E[q].description)
    nl_1998 = next(q for q in nl if E[q].description.startswith("1998"))
    nl_2011 = next(q for q in nl if E[q].description.startswith("2011"))
    add_forum(
        "C8",
        "Who directed Northern Lights, the 2011 film?",
        f"SELECT ?director WHERE {{\n  wd:{nl_2011} wdt:P57 ?director .\n}}",
        (nl_2011,),
    )
    add_forum(
        "C8",
        "Who are the cast members of Northern Lights, the 1998 film?",
        f"SELECT DISTINCT ?actor WHERE {{\n  wd:{nl_1998} wdt:P161 ?actor .\n}}",
        (nl_1998,),
    )
    ev = next(q for q in E if E[q].label == "Elena Varga" and occ_of[q] == C["physicist"])
    add_forum(
        "C8",
        "Where was Elena Varga, the physicist, born?",
        f"SELECT ?place WHERE {{\n  wd:{ev} wdt:P19 ?place .\n}}",
        (ev,),
    )

    return QuestionSets(tuple(simple), tuple(forum))
