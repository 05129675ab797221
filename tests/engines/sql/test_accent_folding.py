"""Accents are folded when the Restaurants agent matches a value (issue 28 item 5): "Pälo Àlto" is Palo Alto, on
both sides of the comparison, and the value reaches SQL as a literal on the parsed tree."""

from __future__ import annotations

import sqlglot

from engines.compose import open_restaurants
from engines.settings import Settings
from engines.sql.classify import Classifier
from engines.sql.folding import fold
from engines.sql.tasks import read_values
from worlds import restaurants as W

WORLD = W.build().world


def test_fold_drops_accents_and_case_folds():
    assert fold("Pälo Àlto") == fold("PALO ALTO") == "palo alto"
    assert fold("Straße") == "strasse"


def test_the_agent_finds_palo_alto_written_with_accents():
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD)
    try:
        plain = s.agent.ask("Show me restaurants in Palo Alto")
        s.agent.reset()
        accented = s.agent.ask("Show me restaurants in Pälo Àlto")
    finally:
        s.close()
    assert accented.rows and accented.rows == plain.rows
    assert accented.not_understood == ()


def test_classify_folds_a_models_accented_literal_and_keeps_it_a_literal():
    classifier = Classifier(WORLD.enum_fields, "exact")
    assert classifier.classify("Pälo Àlto", "location") == ("Palo Alto",)
    tree = sqlglot.parse_one("SELECT * FROM restaurants WHERE location = 'Pälo Àlto'", read="postgres")
    out = classifier.rewrite(tree)
    literal = out.find(sqlglot.exp.EQ).expression
    assert isinstance(literal, sqlglot.exp.Literal) and literal.name == "Palo Alto"


def test_a_real_models_chosen_value_is_read_with_accents_folded():
    assert read_values('{"values": ["PÀLO ALTO"]}', ("Palo Alto", "Menlo Park")) == ("Palo Alto",)
