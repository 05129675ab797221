"""Generating the world of §6.5 from a seed: 50 flag-bearer tables, six questions each, and the hidden truth apart.
Everything is drawn from ``random.Random(seed)``: the same seed, the same world."""

from __future__ import annotations

import random

from worlds.hybridqa.model import DEFAULT_SEED, N_TABLES, TYPES, GeneratedWorld, HybridQuestion, HybridTable, _slug
from worlds.hybridqa.olympics import COUNTRIES, _bearer_passage, _draw_bearers, _games_passage
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
