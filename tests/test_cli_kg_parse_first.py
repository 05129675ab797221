"""`cs224v-tui sparql` parses a query before it builds any store (issue 25): a malformed or refused query on
the built-in world is answered without paying for the store (the memory store takes seconds to build)."""

from __future__ import annotations

import json

import pytest

import engines.kg
from tui.cli import main


@pytest.fixture
def no_store(monkeypatch):
    def built(*_a, **_k):
        raise AssertionError("a store was built for a query that cannot run")

    monkeypatch.setattr(engines.kg, "open_kg", built)


@pytest.mark.parametrize("store", ["memory", "oxigraph"])
def test_a_malformed_query_is_answered_before_any_store_is_built(capsys, no_store, store):
    code = main(["sparql", "--store", store, "SELECT ?x WHERE { ?x wdt:P31 }", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["feedback"] == "syntax_error"
    assert out["message"].startswith("Syntax error at line 1, column 19")


def test_a_refused_query_is_answered_before_any_store_is_built(capsys, no_store):
    code = main(["sparql", "--store", "memory", "LOAD <http://example.org/x.ttl>"])
    assert code == 2 and "LOAD is refused" in capsys.readouterr().err
    around = (
        "SELECT ?p WHERE { SERVICE wikibase:around { ?p wdt:P625 ?c . bd:serviceParam wikibase:center "
        '"Point(0 0)"^^geo:wktLiteral ; wikibase:radius "1" . } }'
    )
    code = main(["sparql", "--store", "memory", around])
    assert code == 2 and "cannot run" in capsys.readouterr().err


# --- a user's RDF files (--rdf): checked first (that gives their prefixes and dialect), then the query parsed with
# that dialect, and only then the graph loaded into the query worker ---------------------------------------------

PEOPLE = """\
@prefix ex: <http://example.org/people/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:ada rdfs:label "Ada Lovelace" ; ex:knows ex:charles .
ex:charles rdfs:label "Charles Babbage" .
"""


@pytest.fixture
def people(tmp_path):
    path = tmp_path / "people.ttl"
    path.write_text(PEOPLE, encoding="utf-8")
    return path


@pytest.fixture
def loads(monkeypatch):
    """Every load of a graph into a query worker (an Endpoint's ``worker``), counted; it fails while ``refuse``."""
    from engines.kg.endpoint import Endpoint

    counted = {"n": 0, "refuse": True}
    real = Endpoint.worker

    def worker(self):
        counted["n"] += 1
        if counted["refuse"]:
            raise AssertionError("the graph was loaded for a query that cannot run")
        return real.fget(self)

    monkeypatch.setattr(Endpoint, "worker", property(worker))
    return counted


@pytest.mark.parametrize("store", ["memory", "oxigraph"])
def test_on_rdf_files_a_malformed_query_is_answered_without_loading_them(capsys, people, loads, store):
    # ex: is the file's own prefix: the query is parsed with the files' dialect, so only the missing object is wrong
    code = main(["sparql", "SELECT ?x WHERE { ?x ex:knows }", "--store", store, "--json", "--rdf", str(people)])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    out = json.loads(captured.out)
    assert out["feedback"] == "syntax_error" and out["message"].startswith("Syntax error at line 1")
    assert loads["n"] == 0


def test_on_rdf_files_a_refused_query_is_answered_without_loading_them(capsys, people, loads):
    code = main(["sparql", "LOAD <http://example.org/x.ttl>", "--rdf", str(people)])
    assert code == 2 and "LOAD is refused" in capsys.readouterr().err
    code = main(
        ["sparql", "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?x ex:knows ?y } }", "--rdf", str(people)]
    )
    assert code == 2 and "SERVICE" in capsys.readouterr().err
    assert loads["n"] == 0


def test_on_rdf_files_a_good_query_loads_them_once_and_runs(capsys, people, loads):
    loads["refuse"] = False
    code = main(["sparql", "SELECT ?x WHERE { ?x ex:knows ex:charles }", "--json", "--rdf", str(people)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["rows"] == [{"x": "http://example.org/people/ada"}]
    assert loads["n"] >= 1


def test_on_rdf_files_a_bad_file_is_still_named_before_the_query_is_parsed(capsys, tmp_path, loads):
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix ex: <http://example.org/> .\nex:a ex:b "unterminated .\n', encoding="utf-8")
    code = main(["sparql", "SELECT ?x WHERE { ?x ex:b }", "--rdf", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "bad.ttl" in err and "Traceback" not in err and loads["n"] == 0
