"""How the Knowledge-graph tab writes IRIs: in a form that pastes back into a query."""

from __future__ import annotations

from tui.kg import short_value


def test_statement_iris_use_the_wikidata_prefixes() -> None:
    statement = "http://www.wikidata.org/entity/statement/Q42-abc"
    assert short_value({"type": "uri", "value": statement}) == "wds:Q42-abc"
    assert short_value({"type": "uri", "value": "http://www.wikidata.org/prop/statement/P31"}) == "ps:P31"


def test_an_iri_without_a_plain_prefixed_form_stays_in_angle_brackets() -> None:
    assert short_value({"type": "uri", "value": "http://example.org/a b"}) == "<http://example.org/a b>"
