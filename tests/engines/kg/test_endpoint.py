"""The endpoint: the four feedbacks, timeouts, literals as written, both stores, pages, robustness."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.errors import EngineError
from engines.kg import Endpoint, Feedback, SparqlRefused, UnknownEntity
from worlds import kg as K

WD = "http://www.wikidata.org/entity/"


@pytest.fixture(scope="module")
def endpoints(world):
    return {s: Endpoint.from_world(world, store=s) for s in ("memory", "oxigraph")}


@pytest.fixture(scope="module", params=["memory", "oxigraph"])
def endpoint(request, endpoints):
    return endpoints[request.param]


LABELLED = (
    "SELECT ?m ?mLabel ?mDescription ?e WHERE { ?m wdt:P31 wd:%s ; wdt:P2044 ?e . "
    'SERVICE wikibase:label { bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". } } ORDER BY DESC(?e) LIMIT 3'
)


def test_rows_with_labels(world, endpoint):
    r = endpoint.execute(LABELLED % world.classes["mountain"])
    assert r.feedback is Feedback.ROWS and r.columns == ("m", "mLabel", "mDescription", "e")
    top = r.records()[0]
    assert top["mLabel"].startswith(("Mount", "Halden", "Corvane", "Tarro")) or top["mLabel"]
    assert top["mDescription"].startswith("mountain in ")
    elevations = [int(x["e"]) for x in r.records()]
    assert elevations == sorted(elevations, reverse=True)
    assert r.bindings[0]["e"]["datatype"].endswith("#decimal")


def test_bare_id_when_no_label(endpoint):
    r = endpoint.execute(
        "SELECT ?x ?xLabel WHERE { VALUES ?x { wd:Q99999 wd:Q1000 } "
        'SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } }'
    )
    assert sorted((x["x"], x["xLabel"]) for x in r.records()) == [(WD + "Q1000", "human"), (WD + "Q99999", "Q99999")]


def test_empty(endpoint):
    r = endpoint.execute("SELECT ?x WHERE { ?x wdt:P31 wd:Q424242 }")
    assert r.feedback is Feedback.EMPTY and not r.bindings


def test_syntax_error(endpoint):
    r = endpoint.execute("SELECT ?m ?h WHERE { ?m wdt:P2048 ?h . ORDER BY DESC(?h) LIMIT 1")
    assert r.feedback is Feedback.SYNTAX_ERROR and "Syntax error" in r.message


def test_timeout():
    ep = Endpoint.from_world(K.build().world, timeout_s=0.05)
    r = ep.execute("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . }")
    assert r.feedback is Feedback.TIMEOUT and "timed out" in r.message
    assert r.elapsed_s < 2


def test_timeout_oxigraph():
    ep = Endpoint.from_world(K.build().world, store="oxigraph", timeout_s=0.05)
    r = ep.execute("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . }")
    assert r.feedback is Feedback.TIMEOUT


def test_row_cap():
    ep = Endpoint.from_world(K.build().world, row_cap=7)
    r = ep.execute("SELECT ?s WHERE { ?s ?p ?o }")
    assert len(r.bindings) == 7 and r.truncated


def test_literals_round_trip_as_written(endpoint):
    r = endpoint.execute("SELECT ?d WHERE { ?p wdt:P569 ?d } LIMIT 3")
    for rec in r.records():
        assert rec["d"].endswith("T00:00:00Z")
    r = endpoint.execute('SELECT ?p WHERE { ?p wdt:P569 ?d . FILTER(?d < "1930-01-01T00:00:00Z"^^xsd:dateTime) }')
    assert r.feedback in (Feedback.ROWS, Feedback.EMPTY)


def test_ask(endpoint):
    r = endpoint.execute("ASK { wd:Q1000 rdfs:label ?l }")
    assert r.boolean is True and r.feedback is Feedback.ROWS


def test_update_refused(endpoint):
    with pytest.raises(SparqlRefused):
        endpoint.execute("DELETE WHERE { ?s ?p ?o }")
    assert endpoint.execute("ASK { ?s ?p ?o }").boolean is True


def test_offline_service_refused_at_execution(endpoint):
    with pytest.raises(SparqlRefused, match="wikibase:around"):
        endpoint.execute(
            'SELECT ?p WHERE { SERVICE wikibase:around { ?p wdt:P625 ?l . bd:serviceParam wikibase:center "Point(0 0)" . } }'
        )


def test_both_stores_agree_on_the_gold_queries(built, endpoints):
    for q in K.questions(*built).all():
        a = endpoints["memory"].execute(q.gold_sparql)
        b = endpoints["oxigraph"].execute(q.gold_sparql)
        key = lambda r: Counter(tuple(sorted((k, v["value"]) for k, v in x.items())) for x in r.bindings)  # noqa: E731
        assert a.columns == b.columns and key(a) == key(b), q.id


def test_pages_search_and_examples(world, endpoint):
    award = next(c for c in world.claims if c.pid == "P166")
    page = endpoint.page(award.subject)
    text = page.render()
    assert text.startswith("label: ") and "P166 (award received):" in text and "[P585 (point in time):" in text
    assert page.links() and all(l.startswith("Q") for l in page.links())
    assert endpoint.page("P2044").datatype == "Quantity"
    hits = endpoint.search("height")
    assert [h.id for h in hits if h.kind == "property"][:2] == ["P2048", "P2044"]
    many = endpoint.search("mount")
    assert len([h for h in many if h.kind == "item"]) == 8
    examples = endpoint.property_examples("P166")
    assert 1 <= len(examples) <= 5 and all("point in time" in e.render() for e in examples)
    with pytest.raises(UnknownEntity):
        endpoint.page("Q999999")
    with pytest.raises(UnknownEntity):
        endpoint.property_examples("P9999")
    with pytest.raises(UnknownEntity):
        endpoint.page("not an id")


# --- robustness: random and mangled queries give a feedback or a clear refusal, never a traceback ---------

_SEEDS = [
    'SELECT ?x ?xLabel WHERE { ?x wdt:P31 wd:Q1007 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } }',
    "SELECT ?x WITH { SELECT ?x WHERE { ?x wdt:P19 ?b } } AS %a WHERE { INCLUDE %a }",
    'SELECT (COUNT(?x) AS ?n) WHERE { ?x wdt:P279* wd:Q1020 . hint:Prior hint:gearing "forward" . } GROUP BY ?x',
    "ASK { wd:Q1000 ?p ?o }",
]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    seed=st.sampled_from(_SEEDS),
    cuts=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 6), st.text(max_size=4)), max_size=4),
)
def test_mangled_queries_fail_cleanly(endpoints, seed, cuts):
    q = seed
    for at, n, insert in cuts:
        at = min(at, len(q))
        q = q[:at] + insert + q[at + n :]
    for ep in endpoints.values():
        try:
            r = ep.execute(q)
        except EngineError as e:
            assert str(e)
        else:
            assert r.feedback in Feedback


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_random_text_fails_cleanly(endpoints, text):
    try:
        r = endpoints["memory"].execute(text)
    except EngineError as e:
        assert str(e)
    else:
        assert r.feedback in Feedback


def test_results_are_kept_per_query_text_and_the_cache_can_be_off():
    from engines.kg import Endpoint
    from worlds import kg

    world = kg.build().world
    q = "SELECT ?x WHERE { ?x wdt:P31 wd:Q1007 . }"
    cached = Endpoint.from_world(world, cache_size=2)
    first = cached.execute(q)
    assert first.has_rows and cached.execute(q) is first
    cached.execute(q + " LIMIT 1")
    cached.execute(q + " LIMIT 2")  # the oldest entry is dropped
    assert cached.execute(q) is not first and cached.execute(q).records() == first.records()
    fresh = Endpoint.from_world(world, cache_size=0)
    assert fresh.execute(q) is not fresh.execute(q)
