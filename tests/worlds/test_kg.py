"""The knowledge-graph world: shape, determinism, Wikidata's RDF model, the seven quirks, the questions."""

from __future__ import annotations

from collections import Counter

import pytest
from rdflib import Literal, URIRef

from engines.kg import Endpoint
from worlds import kg as K

WD = "http://www.wikidata.org/entity/"


@pytest.fixture(scope="module")
def built() -> K.Built:
    return K.build()


@pytest.fixture(scope="module")
def world(built) -> K.KGWorld:
    return built.world


@pytest.fixture(scope="module")
def truth(built) -> K.HiddenTruth:
    return built.truth


@pytest.fixture(scope="module")
def endpoint(world) -> Endpoint:
    return Endpoint.from_world(world)


@pytest.fixture(scope="module")
def qsets(world, truth) -> K.QuestionSets:
    return K.questions(world, truth)


def qid(world, label: str, kind: str | None = None) -> str:
    return next(e.qid for e in world.entities.values() if e.label == label and (kind is None or e.kind == kind))


def test_the_lectures_inventory(world):
    kinds = Counter(e.kind for e in world.entities.values())
    assert (kinds["country"], kinds["province"], kinds["city"], kinds["university"], kinds["music school"]) == (
        6,
        12,
        37,
        6,
        3,
    )
    assert (kinds["instrument"], kinds["company"], kinds["mountain"], kinds["film"], kinds["award"]) == (
        19,
        25,
        30,
        40,
        5,
    )
    assert 190 <= kinds["person"] <= 215
    occupations = Counter(c.value.value for c in world.claims if c.pid == "P106")
    assert len(occupations) == 6
    assert 2400 <= world.statement_count <= 2600
    assert min(int(q[1:]) for q in world.entities) == 1000
    assert {c.pid for c in world.claims} <= set(world.properties)
    assert {
        "P31",
        "P279",
        "P17",
        "P27",
        "P131",
        "P19",
        "P106",
        "P1303",
        "P1416",
        "P69",
        "P184",
        "P185",
        "P166",
        "P840",
        "P915",
        "P2048",
        "P2044",
    } <= {c.pid for c in world.claims}


def test_four_instrument_classes(truth):
    tops = set(truth.instrument_class.values())
    assert len(tops) == 4 and len(truth.instrument_class) == 19


def test_deterministic_by_seed(world, truth):
    again, again_truth = K.build()
    assert again.claims == world.claims and again.entities == world.entities and again_truth == truth
    other = K.build(seed=K.DEFAULT_SEED + 1).world
    assert other.claims != world.claims
    assert K.questions(again, again_truth) == K.questions(world, truth)


def test_wikidata_rdf_model(world):
    triples = list(K.rdf_triples(world))
    award = next(c for c in world.claims if c.pid == "P166")
    s = URIRef(WD + award.subject)
    truthy = [(a, p, o) for a, p, o in triples if a == s and str(p).endswith("/direct/P166")]
    assert truthy
    nodes = [o for a, p, o in triples if a == s and str(p) == "http://www.wikidata.org/prop/P166"]
    quals = [(p, o) for a, p, o in triples if a in nodes and str(p) == "http://www.wikidata.org/prop/qualifier/P585"]
    assert quals and str(quals[0][1]).endswith("-01-01T00:00:00Z")
    # no truthy P585 anywhere: the date lives on the statement only
    assert not any(str(p).endswith("/direct/P585") for _a, p, _o in triples)
    labels = [o for a, p, o in triples if a == s and str(p).endswith("#label")]
    assert labels and isinstance(labels[0], Literal) and labels[0].language == "en"


def test_hidden_truth_is_not_in_the_graph(world, endpoint, truth):
    missing = [
        c
        for c, country in truth.city_country.items()
        if not any(cl.subject == c and cl.pid == "P17" for cl in world.claims)
    ]
    assert 10 <= len(missing) <= 25  # quirk 6: about half the cities have no P17
    pairs = truth.advisor_pairs
    recorded = {(c.value.value, c.subject) for c in world.claims if c.pid == "P185"}
    assert recorded < pairs  # quirk 4: P185 is on the advisor for some pairs only
    assert "truth" not in {str(p) for _s, p, _o in K.rdf_triples(world)}


# --- the quirks: the naive query is legal, and wrong or incomplete --------------------------------


def rows(endpoint, q):
    r = endpoint.execute(q)
    assert r.feedback.value in ("rows", "empty"), r.message
    return {tuple(v for v in rec.values()) for rec in r.records()}


def test_quirk_no_fixed_schema(endpoint):
    r = endpoint.execute(
        "SELECT ?occ (COUNT(DISTINCT ?p) AS ?n) WHERE { ?x wdt:P106 ?occ ; ?p ?o . "
        "FILTER(STRSTARTS(STR(?p), STR(wdt:))) } GROUP BY ?occ"
    )
    counts = {int(rec["n"]) for rec in r.records()}
    assert len(counts) > 1  # occupations have different sets of properties


def test_quirk_similar_properties(world, endpoint, truth):
    m = world.classes["mountain"]
    assert not rows(endpoint, f"SELECT ?m ?h WHERE {{ ?m wdt:P31 wd:{m} ; wdt:P2048 ?h }}")
    assert rows(endpoint, f"SELECT ?m ?h WHERE {{ ?m wdt:P31 wd:{m} ; wdt:P2044 ?h }}")
    setting = rows(endpoint, "SELECT ?f ?c WHERE { ?f wdt:P840 ?c }")
    shot = rows(endpoint, "SELECT ?f ?c WHERE { ?f wdt:P915 ?c }")
    assert setting != shot
    born = {p for p, c in truth.birth_country.items()}
    citizens_match = sum(
        1 for c in world.claims if c.pid == "P27" and truth.birth_country.get(c.subject) == c.value.value
    )
    assert citizens_match < len(born)


def test_quirk_subclass_not_instance(world, endpoint):
    string = world.classes["string instrument"]
    assert not rows(endpoint, f"SELECT ?m WHERE {{ ?m wdt:P1303 ?i . ?i wdt:P31 wd:{string} }}")
    assert not rows(endpoint, f"SELECT ?m WHERE {{ ?m wdt:P1303 ?i . ?i wdt:P279 wd:{string} }}")
    assert rows(endpoint, f"SELECT ?m WHERE {{ ?m wdt:P1303 ?i . ?i wdt:P279* wd:{string} }}")


def test_quirk_one_sided_relations(world, endpoint, truth):
    advisor = max(
        {a for _s, a in truth.advisor_pairs},
        key=lambda a: sum(1 for _s, x in truth.advisor_pairs if x == a),
    )
    naive = rows(endpoint, f"SELECT ?s WHERE {{ wd:{advisor} wdt:P185 ?s }}")
    right = rows(endpoint, f"SELECT ?s WHERE {{ ?s wdt:P184 wd:{advisor} }}")
    assert naive < right


def test_quirk_qualifiers(world, endpoint, truth):
    award = qid(world, "Orund Prize in Physics")
    assert not rows(endpoint, f"SELECT ?x ?d WHERE {{ ?x wdt:P166 wd:{award} ; wdt:P585 ?d }}")
    got = rows(endpoint, f"SELECT ?x ?d WHERE {{ ?x p:P166 ?s . ?s ps:P166 wd:{award} ; pq:P585 ?d }}")
    assert len(got) == len(truth.awards[award])


def test_quirk_p131_chain(world, endpoint, truth):
    k = qid(world, "Kestavia")
    naive = rows(endpoint, f"SELECT ?c WHERE {{ ?c wdt:P31 wd:{world.classes['city']} ; wdt:P17 wd:{k} }}")
    chain = rows(
        endpoint, f"SELECT DISTINCT ?c WHERE {{ ?c wdt:P31 wd:{world.classes['city']} ; wdt:P131*/wdt:P17 wd:{k} }}"
    )
    right = {(WD + c,) for c, country in truth.city_country.items() if country == k}
    assert naive < chain == right


def test_quirk_ambiguous_labels(world, endpoint):
    hits = [h for h in endpoint.search("Ashford") if h.label == "Ashford"]
    assert len(hits) == 2 and hits[0].description != hits[1].description
    assert len([e for e in world.entities.values() if e.label == "Northern Lights"]) == 2


def test_exercise_1_films_set_in_cities_of_kestavia(world, endpoint, truth):
    k = qid(world, "Kestavia")
    chain = rows(endpoint, f"SELECT DISTINCT ?f ?c WHERE {{ ?f wdt:P840 ?c . ?c wdt:P131*/wdt:P17 wd:{k} . }}")
    naive = rows(endpoint, f"SELECT ?f ?c WHERE {{ ?f wdt:P840 ?c . ?c wdt:P17 wd:{k} . }}")
    right = {
        (WD + c.subject, WD + c.value.value)
        for c in world.claims
        if c.pid == "P840" and truth.city_country[c.value.value] == k
    }
    assert chain == right and naive <= chain


# --- the question sets ------------------------------------------------------------------------------


def test_question_sets(qsets):
    assert len(qsets.simple) == 40 and len(qsets.forum) == 56
    assert Counter(q.category for q in qsets.forum) == {c: 7 for c in K.CATEGORIES}
    assert len({q.id for q in qsets.all()}) == 96
    assert len({q.question for q in qsets.all()}) == 96


@pytest.mark.parametrize("store", ["memory", "oxigraph"])
def test_every_gold_query_has_rows(world, qsets, store):
    ep = Endpoint.from_world(world, store=store)
    for q in qsets.all():
        r = ep.execute(q.gold_sparql)
        assert r.feedback.value == "rows", (q.id, r.message)


def test_gold_answers_agree_with_the_hidden_truth(world, qsets, endpoint, truth):
    for q in qsets.forum:
        if q.category == "C2" and "How many" not in q.question:
            occ, country = q.entities
            got = {rec["person"][len(WD) :] for rec in endpoint.execute(q.gold_sparql).records()}
            want = {
                p
                for p, c in truth.birth_country.items()
                if c == country
                and any(cl.subject == p and cl.pid == "P106" and cl.value.value == occ for cl in world.claims)
            }
            assert got == want, q.id
        if q.category == "C4" and q.question.startswith("Who were the doctoral students"):
            got = {rec["student"][len(WD) :] for rec in endpoint.execute(q.gold_sparql).records()}
            assert got == {s for s, a in truth.advisor_pairs if a == q.entities[0]}


def test_scaled_world(world):
    big = K.scaled(world, 3)
    assert big.statement_count == 3 * world.statement_count - 2 * sum(
        1 for c in world.claims if world.entities[c.subject].kind in ("class", "occupation", "instrument")
    )
    assert set(world.entities) <= set(big.entities)
    with pytest.raises(ValueError):
        K.scaled(world, 0)
