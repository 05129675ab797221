r"""HybridQA worlds (lecture 7 §2.3 and §6): tables whose linked cells carry passages.

Two kinds of tables, one shape (:class:`HybridTable`): a DuckDB table whose every linked
column ``X`` is followed by an ``X_Info`` column holding the linked passage(s), and the
questions asked over it.

* :func:`build` — **generated** (§6.5): 50 flag-bearer tables of fictional countries at real
  Summer Olympics (real years, host cities and host countries; the athletes are invented).
  Six questions per table, one per HybridQA type I–VI of §2.3, each with the single gold
  answer an annotator wrote (4% of them wrong; for questions with several right answers, one
  of them).  The **hidden truth** — every correct answer in the forms a person accepts, the
  passage columns the question needs, the query an expert would write — is returned apart from
  the world (``build()`` returns :class:`Built`\ ``(world, truth)``): engines are handed the world,
  only evaluators the :class:`HiddenTruth`.
* :func:`load_real` — **real**: the HybridQA dev tables of ``../shared/data/hybridqa`` (header,
  rows with cell links, passages) and their questions with gold answers.  No hidden truth.

Everything generated is drawn from ``random.Random(seed)``: the same seed, the same world.

One module an idea: :mod:`~worlds.hybridqa.model` (questions, tables, worlds, errors),
:mod:`~worlds.hybridqa.olympics` (what the generated tables are drawn from),
:mod:`~worlds.hybridqa.questions` (the six question types), :mod:`~worlds.hybridqa.truth`,
:mod:`~worlds.hybridqa.generate` (:func:`build`) and :mod:`~worlds.hybridqa.real` (:func:`load_real`).
This package re-exports what callers use.
"""

from __future__ import annotations

from worlds.hybridqa.generate import GENERATED_COLUMNS, build, grown_table
from worlds.hybridqa.model import (
    DEFAULT_SEED,
    INFO_SUFFIX,
    N_TABLES,
    TYPE_TITLES,
    TYPES,
    GeneratedWorld,
    HybridDataError,
    HybridQuestion,
    HybridTable,
    HybridWorld,
    UnknownTable,
    quote_ident,
)
from worlds.hybridqa.olympics import COUNTRIES, SUMMER_GAMES, _Bearer, _bearer_passage, _draw_bearers, _games_passage
from worlds.hybridqa.questions import GOLD_WRONG_RATE
from worlds.hybridqa.real import load_real, real_data_dir, real_table
from worlds.hybridqa.truth import Built, CorrectAnswer, HiddenTruth, QuestionTruth

__all__ = [
    "grown_table",
    "COUNTRIES",
    "DEFAULT_SEED",
    "GENERATED_COLUMNS",
    "GOLD_WRONG_RATE",
    "INFO_SUFFIX",
    "N_TABLES",
    "SUMMER_GAMES",
    "TYPES",
    "TYPE_TITLES",
    "Built",
    "CorrectAnswer",
    "GeneratedWorld",
    "HiddenTruth",
    "HybridDataError",
    "HybridQuestion",
    "HybridTable",
    "HybridWorld",
    "QuestionTruth",
    "UnknownTable",
    "_Bearer",
    "_bearer_passage",
    "_draw_bearers",
    "_games_passage",
    "build",
    "load_real",
    "quote_ident",
    "real_data_dir",
    "real_table",
]
