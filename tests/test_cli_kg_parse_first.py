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
