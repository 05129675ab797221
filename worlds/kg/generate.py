"""Generating the world from a seed: entities, claims with the seven quirks applied, and the hidden truth beside
them; :func:`scaled` replicates a world's instance data for benchmarks.  Everything is drawn from
``random.Random(seed)``: the same seed gives the same world."""

from __future__ import annotations

import random

from worlds.kg.model import Claim, Entity, KGWorld, Value, item, quantity, time
from worlds.kg.names import (
    AWARDS,
    CAPITALS,
    CITIES,
    COMPANIES,
    COUNTRIES,
    FAMILY,
    FILMS,
    GIVEN,
    HEADCOUNT,
    INSTRUMENT_TREE,
    MALE,
    MOUNTAINS,
    OCCUPATIONS,
    PROVINCES,
    UNIVERSITIES,
)
from worlds.kg.properties import PROPERTY_BY_ID
from worlds.kg.truth import Built, HiddenTruth

DEFAULT_SEED = 8
FIRST_QID = 1000


class _Builder:
    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.claims: list[Claim] = []
        self._next = FIRST_QID

    def new(self, label: str, description: str, kind: str, aliases: tuple[str, ...] = ()) -> str:
        qid = f"Q{self._next}"
        self._next += 1
        self.entities[qid] = Entity(qid, label, description, kind, aliases)
        return qid

    def claim(self, s: str, pid: str, v: Value, qualifiers: tuple[tuple[str, Value], ...] = ()) -> None:
        self.claims.append(Claim(s, pid, v, qualifiers))


def build(seed: int = DEFAULT_SEED) -> Built:
    """Generate the world and its hidden truth.  Deterministic in ``seed``.
    Hand ``.world`` to engines; only evaluators take ``.truth``."""
    rng = random.Random(seed)
    b = _Builder()
    C: dict[str, str] = {}
    for name, desc in (
        ("human", "common name of Homo sapiens"),
        ("country", "distinct territorial body or political entity"),
        ("province", "first-level administrative division of a country"),
        ("city", "large human settlement"),
        ("university", "academic institution for further education"),
        ("music school", "educational institution specialized in the study of music"),
        ("company", "legal entity representing an association of people with a business purpose"),
        ("mountain", "large natural elevation of the earth's surface"),
        ("film", "sequence of images that give the impression of movement"),
        ("award", "something given in recognition of an excellence in a certain field"),
        ("musical instrument", "device created or adapted to make musical sounds"),
        ("occupation", "label applied to a person based on an activity they participate in"),
    ):
        C[name] = b.new(name, desc, "class")
    for sex in ("male", "female"):
        C[sex] = b.new(sex, f"{sex} human", "gender")
    for occ, desc in (
        ("musician", "person who plays or composes music"),
        ("physicist", "scientist who does research in physics"),
        ("mathematician", "person with an extensive knowledge of mathematics"),
        ("film director", "person who directs the making of a film"),
        ("actor", "person who acts in a dramatic or comic production"),
        ("entrepreneur", "person who organizes and operates a business"),
    ):
        C[occ] = b.new(occ, desc, "occupation", ("film maker",) if occ == "film director" else ())
        b.claim(C[occ], "P31", item(C["occupation"]))
    # instruments: 4 classes, 4 subclasses, 19 instruments; every instrument is a class (P279), never P31
    instrument_class: dict[str, str] = {}
    instruments: list[str] = []
    for top, subs in INSTRUMENT_TREE.items():
        C[top] = b.new(top, "class of musical instruments", "class")
        b.claim(C[top], "P279", item(C["musical instrument"]))
        for sub, inst_names in subs.items():
            parent = C[top]
            if sub is not None:
                C[sub] = b.new(sub, f"{top} family", "class")
                b.claim(C[sub], "P279", item(C[top]))
                parent = C[sub]
            for iname in inst_names:
                q = b.new(iname, f"{(sub or top)}", "instrument")
                b.claim(q, "P279", item(parent))
                instrument_class[q] = C[top]
                instruments.append(q)

    # places
    country: dict[str, str] = {}
    province: dict[str, str] = {}
    city_province: dict[str, str] = {}
    city_country: dict[str, str] = {}
    place_country: dict[str, str] = {}
    cities_by_name: dict[str, list[str]] = {}
    for cname in COUNTRIES:
        country[cname] = b.new(cname, "fictional country", "country")
        b.claim(country[cname], "P31", item(C["country"]))
    for cname in COUNTRIES:
        for pname in PROVINCES[cname]:
            province[pname] = b.new(pname, f"province of {cname}", "province")
            b.claim(province[pname], "P31", item(C["province"]))
            b.claim(province[pname], "P17", item(country[cname]))
            b.claim(province[pname], "P131", item(country[cname]))
            place_country[province[pname]] = country[cname]
    for cname in COUNTRIES:
        for pname in PROVINCES[cname]:
            for city_name in CITIES[pname]:
                q = b.new(city_name, f"city in {pname}, {cname}", "city")
                cities_by_name.setdefault(city_name, []).append(q)
                city_province[q] = province[pname]
                city_country[q] = country[cname]
                place_country[q] = country[cname]
    city_list = list(city_province)
    # Quirk 6: about half the cities have no P17; the capitals always do.
    without_p17 = set(rng.sample([c for c in city_list if b.entities[c].label not in CAPITALS.values()], 18))
    for q in city_list:
        b.claim(q, "P31", item(C["city"]))
        b.claim(q, "P131", item(city_province[q]))
        if q not in without_p17:
            b.claim(q, "P17", item(city_country[q]))
        b.claim(q, "P1082", quantity(rng.randrange(4_000, 900_000, 10)))
    for cname, cap in CAPITALS.items():
        b.claim(country[cname], "P36", item(next(q for q in cities_by_name[cap] if city_country[q] == country[cname])))

    def city(name: str) -> str:
        return cities_by_name[name][0]

    # universities, schools of music
    universities: dict[str, str] = {}
    school_of: dict[str, str] = {}
    for uname, ucity, has_school in UNIVERSITIES:
        cq = city(ucity)
        cn = b.entities[city_country[cq]].label
        u = b.new(uname, f"university in {ucity}, {cn}", "university")
        universities[uname] = u
        place_country[u] = city_country[cq]
        b.claim(u, "P31", item(C["university"]))
        b.claim(u, "P131", item(cq))
        b.claim(u, "P17", item(city_country[cq]))
        b.claim(u, "P571", time(rng.randrange(1820, 1960)))
        if has_school:
            s = b.new(f"{uname} School of Music", f"school of music of {uname}", "music school")
            school_of[u] = s
            place_country[s] = city_country[cq]
            b.claim(s, "P31", item(C["music school"]))
            b.claim(s, "P361", item(u))
            b.claim(s, "P131", item(cq))

    # awards
    award_q: dict[str, str] = {}
    for aname, acountry, _occs, _n in AWARDS:
        a = b.new(aname, f"award given in {acountry}", "award")
        award_q[aname] = a
        b.claim(a, "P31", item(C["award"]))
        b.claim(a, "P17", item(country[acountry]))

    # people
    names = _person_names(rng, sum(HEADCOUNT.values()))
    people: dict[str, list[str]] = {o: [] for o in OCCUPATIONS}
    born: dict[str, int] = {}
    birth_country: dict[str, str] = {}
    uni_list = list(universities.values())
    affiliation_university: dict[str, str] = {}
    i = 0
    for occ in OCCUPATIONS:
        for _ in range(HEADCOUNT[occ]):
            name = names[i]
            i += 1
            lo, hi = {"physicist": (1925, 1992), "mathematician": (1925, 1992)}.get(occ, (1940, 1998))
            year = rng.randrange(lo, hi)
            bcity = rng.choice(city_list)
            ccountry = city_country[bcity]
            desc = f"{occ} from {b.entities[ccountry].label} (born {year})"
            q = b.new(name, desc, "person")
            people[occ].append(q)
            born[q] = year
            birth_country[q] = ccountry
            b.claim(q, "P31", item(C["human"]))
            b.claim(q, "P21", item(C["male" if name.split()[0] in MALE else "female"]))
            b.claim(q, "P106", item(C[occ]))
            b.claim(q, "P19", item(bcity))
            b.claim(q, "P569", time(year, rng.randrange(1, 13), rng.randrange(1, 29)))
            # Quirk 2: citizenship is not the country of birth for about one person in six
            citizen = ccountry if rng.random() > 0.17 else rng.choice([c for c in country.values() if c != ccountry])
            b.claim(q, "P27", item(citizen))
            if occ in ("physicist", "mathematician", "entrepreneur") or (occ == "musician" and rng.random() < 0.7):
                b.claim(q, "P69", item(rng.choice(uni_list)))
            if occ == "musician":
                for inst in rng.sample(instruments, rng.choice((1, 1, 1, 2))):
                    b.claim(q, "P1303", item(inst))
                if rng.random() < 0.84:
                    u = rng.choice(uni_list)
                    affiliation_university[q] = u
                    # Quirk 2/1: the school of music is a separate item, part of (P361) its university
                    target = school_of[u] if u in school_of and rng.random() < 0.7 else u
                    b.claim(q, "P1416", item(target))
                if rng.random() < 0.3:
                    b.claim(q, "P2048", quantity(rng.randrange(155, 200)))
            if occ == "actor":
                b.claim(q, "P2048", quantity(rng.randrange(155, 200)))
    # the deliberate namesake (quirk 7): an actress who shares a physicist's name
    for namesake in (people["physicist"][3], people["actor"][5]):
        b.entities[namesake] = Entity(namesake, "Elena Varga", b.entities[namesake].description, "person")

    # doctoral advisors (quirk 4): P184 on every student, P185 on the advisor for some pairs only
    advisor_pairs: set[tuple[str, str]] = set()
    for field_ in ("physicist", "mathematician"):
        group = sorted(people[field_], key=lambda q: (born[q], q))
        for n, student in enumerate(group):
            if n < 6:
                continue
            elders = [a for a in group[:n] if born[student] - born[a] >= 14]
            if elders and rng.random() < 0.8:
                # advisors with students already are likelier to take more (deep genealogies)
                weights = [1 + min(2, sum(1 for s, a in advisor_pairs if a == e)) for e in elders]
                adv = rng.choices(elders, weights=weights)[0]
                advisor_pairs.add((student, adv))
    for student, adv in sorted(advisor_pairs):
        b.claim(student, "P184", item(adv))
    for student, adv in sorted(advisor_pairs):
        if rng.random() < 0.4:
            b.claim(adv, "P185", item(student))

    # awards (quirk 5): the year is a P585 qualifier of the P166 statement
    awards: dict[str, list[tuple[str, int]]] = {}
    for aname, _c, occs, n in AWARDS:
        pool = [q for o in occs for q in people[o]]
        for q in sorted(rng.sample(pool, n), key=lambda q: born[q]):
            year = min(2024, born[q] + rng.randrange(32, 60))
            b.claim(q, "P166", item(award_q[aname]), (("P585", time(year)),))
            awards.setdefault(award_q[aname], []).append((q, year))

    # companies
    for cname in COMPANIES:
        hq = rng.choice(city_list)
        q = b.new(cname, f"company based in {b.entities[hq].label}, {b.entities[city_country[hq]].label}", "company")
        place_country[q] = city_country[hq]
        b.claim(q, "P31", item(C["company"]))
        for f in rng.sample(people["entrepreneur"], rng.choice((1, 1, 2))):
            b.claim(q, "P112", item(f))
        b.claim(q, "P159", item(hq))
        b.claim(q, "P17", item(city_country[hq]))
        b.claim(q, "P571", time(rng.randrange(1950, 2021), rng.randrange(1, 13), rng.randrange(1, 29)))
        b.claim(q, "P1128", quantity(rng.randrange(12, 40_000)))

    # mountains: located in a province (P131), or in a city of it; elevation is P2044, never P2048
    mountain_province: dict[str, str] = {}
    elevations = rng.sample(range(800, 6300), len(MOUNTAINS))
    for n, (mname, pname) in enumerate(MOUNTAINS.items()):
        prov = province[pname]
        cn = b.entities[place_country[prov]].label
        q = b.new(mname, f"mountain in {pname}, {cn}", "mountain")
        mountain_province[q] = prov
        place_country[q] = place_country[prov]
        b.claim(q, "P31", item(C["mountain"]))
        town = next((c for c, p in city_province.items() if p == prov and b.entities[c].label in mname), None)
        if town is not None and rng.random() < 0.7:
            b.claim(q, "P131", item(town))
        else:
            b.claim(q, "P131", item(prov))
        if rng.random() < 0.4:
            b.claim(q, "P17", item(place_country[prov]))
        b.claim(q, "P2044", quantity(elevations[n]))

    # films: narrative location (P840) and filming location (P915) differ more often than not
    for n, title in enumerate(FILMS):
        director = rng.choice(people["film director"])
        year = rng.randrange(1965, 2024)
        if title == "Northern Lights":
            year = 1998 if n == FILMS.index("Northern Lights") else 2011
        q = b.new(title, f"{year} film directed by {b.entities[director].label}", "film")
        b.claim(q, "P31", item(C["film"]))
        b.claim(q, "P57", item(director))
        for actor in rng.sample(people["actor"], rng.choice((2, 3, 3, 4))):
            b.claim(q, "P161", item(actor))
        setting = rng.choice(city_list)
        b.claim(q, "P840", item(setting))
        shot = setting if rng.random() < 0.35 else rng.choice(city_list)
        b.claim(q, "P915", item(shot))
        b.claim(q, "P577", time(year, rng.randrange(1, 13), rng.randrange(1, 29)))
        b.claim(q, "P495", item(city_country[shot]))
        b.claim(q, "P2047", quantity(rng.randrange(82, 175)))

    truth = HiddenTruth(
        city_country=dict(city_country),
        place_country=dict(place_country),
        birth_country=birth_country,
        advisor_pairs=frozenset(advisor_pairs),
        instrument_class=instrument_class,
        mountain_province=mountain_province,
        awards={a: tuple(v) for a, v in awards.items()},
        affiliation_university=affiliation_university,
    )
    return Built(KGWorld(seed, dict(b.entities), dict(PROPERTY_BY_ID), tuple(b.claims), dict(C)), truth)


def _person_names(rng: random.Random, n: int) -> list[str]:
    seen: set[str] = {"Gaspar Underhill", "Elena Varga"}
    out = ["Gaspar Underhill"]
    while len(out) < n + 1:
        name = f"{rng.choice(GIVEN)} {rng.choice(FAMILY)}"
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


# --- scaling (for benchmarks) ------------------------------------------------------------------


def scaled(world: KGWorld, factor: int) -> KGWorld:
    """``factor`` copies of the world's instance data, sharing its classes (a bigger graph, same shape).

    Copy 0 is the world itself (same QIDs), so every query over it means the same; copies 1… get
    QIDs offset by multiples of 100,000.
    """
    if factor < 1:
        raise ValueError("factor must be at least 1")
    shared = {q for q, e in world.entities.items() if e.kind in ("class", "occupation", "instrument")}

    def shift(qid: str, k: int) -> str:
        return qid if k == 0 or qid in shared else f"Q{int(qid[1:]) + 100_000 * k}"

    def shift_value(v: Value, k: int) -> Value:
        return Value("item", shift(v.value, k)) if v.kind == "item" else v

    entities: dict[str, Entity] = {}
    claims: list[Claim] = []
    for k in range(factor):
        for q, e in world.entities.items():
            if k == 0 or q not in shared:
                nq = shift(q, k)
                entities[nq] = Entity(nq, e.label, e.description, e.kind, e.aliases)
        for c in world.claims:
            if k > 0 and c.subject in shared:
                continue
            claims.append(
                Claim(
                    shift(c.subject, k),
                    c.pid,
                    shift_value(c.value, k),
                    tuple((p, shift_value(v, k)) for p, v in c.qualifiers),
                )
            )
    return KGWorld(world.seed, entities, world.properties, tuple(claims), world.classes)
