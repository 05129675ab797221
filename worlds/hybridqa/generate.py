"""Generating the world of §6.5 from a seed: 50 flag-bearer tables, six questions each, and the hidden truth apart.
Everything is drawn from ``random.Random(seed)``: the same seed, the same world."""

from __future__ import annotations

import random

from worlds.hybridqa.model import DEFAULT_SEED, N_TABLES, TYPES, GeneratedWorld, HybridQuestion, HybridTable, _slug
from worlds.hybridqa.olympics import COUNTRIES, SUMMER_GAMES, _Bearer, _bearer_passage, _draw_bearers, _games_passage
from worlds.hybridqa.questions import _QUESTION_MAKERS, _gold
from worlds.hybridqa.truth import Built, HiddenTruth, QuestionTruth

GENERATED_COLUMNS = ("Name", "Event year", "Event year_Info", "Flag Bearer", "Flag Bearer_Info", "Gender")


def build(seed: int = DEFAULT_SEED, n_tables: int = N_TABLES) -> Built:
    """Generate the world of §6.5 (50 tables of 8–16 rows, six questions each) and its hidden truth.
    Deterministic in ``seed``.  Hand ``.world`` to engines; only evaluators take ``.truth``."""
    rng = random.Random(seed)
    tables: list[HybridTable] = []
    truths: dict[str, QuestionTruth] = {}
    for t in range(n_tables):
        country = COUNTRIES[t % len(COUNTRIES)] if t < len(COUNTRIES) else f"{COUNTRIES[t % len(COUNTRIES)]} {t}"
        bearers = _draw_bearers(rng, country, rng.randint(8, 16))
        name = f"{_slug(country)}_flag_bearers"
        rows = tuple(
            (b.roman, str(b.year), _games_passage(rng, b, country), b.name, _bearer_passage(rng, b, country), b.gender)
            for b in bearers
        )
        questions: list[HybridQuestion] = []
        for qtype in TYPES:
            qid = f"{name}-{qtype}"
            spec = _QUESTION_MAKERS[qtype](rng, name, bearers)
            gold, wrong = _gold(rng, spec, bearers)
            questions.append(HybridQuestion(qid, name, spec.question, gold, qtype))
            truths[qid] = QuestionTruth(spec.answers, spec.columns, spec.suql, wrong)
        tables.append(
            HybridTable(
                name,
                name,
                f"{country} at the Summer Olympics: flag bearers",
                GENERATED_COLUMNS,
                rows,
                tuple(questions),
                "generated",
            )
        )
    return Built(GeneratedWorld("hybridqa", tuple(tables), seed=seed), HiddenTruth(truths))


def grown_table(seed: int, rows: int) -> HybridTable:
    """The world's first generated table, grown with more delegations' flag bearers to ``rows`` rows (or cut to them),
    each bearer's name unique, so that a type-I condition on the bearer finds one row at any size (lecture 7 §6.3)."""
    base = build(seed, n_tables=1).world.tables[0]
    rng = random.Random(seed * 7919 + rows)
    out = list(base.rows[:rows])
    names = {r[3] for r in out}
    k = 0
    while len(out) < rows:
        country = COUNTRIES[k % len(COUNTRIES)]
        k += 1
        for b in _draw_bearers(rng, country, len(SUMMER_GAMES)):
            if len(out) >= rows:
                break
            name = b.name
            while name in names:
                first, last = b.name.split(" ", 1)
                name = f"{first} {chr(65 + rng.randrange(26))}. {last}"
            names.add(name)
            b = _Bearer(b.roman, b.year, b.city, b.country, name, b.gender, b.sport, b.event, b.birth, b.other_date)
            out.append(
                (
                    b.roman,
                    str(b.year),
                    _games_passage(rng, b, country),
                    b.name,
                    _bearer_passage(rng, b, country),
                    b.gender,
                )
            )
    return HybridTable(base.name, base.table_id, base.title, base.columns, tuple(out), (), "generated")
