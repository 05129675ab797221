"""Lecture 8 (../shared/seeds/004): SPINACH — the experiments of §1.4, §2.5, §3.7 (exercises 2-3), §4.3, §4.4,
§5.1, §5.3 and §5.4.

Each function runs the knowledge-graph engines (the Wikidata-like world of ``worlds.kg`` behind the SPARQL
endpoint of ``engines.kg``), the SPINACH agent with its simulated policy (``engines.spinach``), the four
baselines and the evaluation (``engines.spinach.baselines``, ``engines.spinach.evaluate``), and tabulates what it
measured.  The question sets and
their gold SPARQL are evaluator data: the agent is only ever given a question's text.

One evaluation (SPINACH and the four baselines on both sets, ``engines.spinach.evaluate``) feeds the baselines,
the action counts, the row-F1 comparison, the template trap and the bootstrap; the runs of the agent on
the forum set under each setting (5 seeds each) feed the ablations, the error analysis and the
bootstrap of two close systems.  All are memoised per process (``ctx.memo``), and a setting of the agent's
options reuses the default run's question where it provably takes the same steps (``common._unchanged_from_full``).
The endpoint is rdflib's memory store (queries run in its SPARQL worker) with a per-process cache of executed
queries: the graph never changes, the agent writes the same queries again and again across seeds and settings,
and rdflib's parse of each new query is most of the cost of a full run.  Oxigraph would be faster, but it returns
the rows of a query without ORDER BY in another order (and another LIMIT's worth of them), so the policy would see
other rows and every result would move.  The SPINACH tools keep each search, page and examples observation per
endpoint, and ``query_shape`` each query's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engines.lab.core import Experiment
from engines.lab.lecture8.ablation import ablation, policy_params
from engines.lab.lecture8.actions import actions
from engines.lab.lecture8.baselines import SYSTEMS, baselines
from engines.lab.lecture8.bootstrap import bootstrap_intervals
from engines.lab.lecture8.common import FULL
from engines.lab.lecture8.complexity import complexity, template_trap
from engines.lab.lecture8.errors import errors
from engines.lab.lecture8.quirks import quirks
from engines.lab.lecture8.row_f1 import row_vs_set

# --- the registry entries -------------------------------------------------------------------------------------------

SIZE = {"simple": None, "per_category": None}
SMALL = {"simple": 5, "per_category": 2}
RUNS = {"runs": 5}
SMALL_RUNS = {"runs": 1}


def _rollback_extra() -> int:
    return FULL.total_budget - FULL.budget


def _policy_default(name: str) -> Callable[[], object]:
    def read() -> object:
        from engines.spinach.sim_policy import DEFAULT

        return getattr(DEFAULT, name)

    return read


def _templates() -> int:
    from engines.spinach.baselines import TEMPLATES

    return len(TEMPLATES)


def _fine_tuned_phrasings() -> int:
    from engines.spinach.baselines import FINE_TUNED

    return sum(len(phrasings) for _, phrasings in FINE_TUNED)


def _fine_tuned_properties() -> int:
    from engines.spinach.baselines import FINE_TUNED

    return len(FINE_TUNED)


def _phrasings() -> str:
    from engines.spinach.baselines import TEMPLATES

    counts = sorted({len(phrasings) for _, phrasings in TEMPLATES})
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "l8-quirks",
        8,
        "Why SPARQL on Wikidata is hard: the naive query against the correct one",
        "§1.4, exercise 1",
        "Inputs: a question per quirk of the world (the generator keeps seven of Wikidata's), its naive query (the question's words "
        "taken literally) and the correct one. Measured: rows each returns on the graph, the naive rows that are right, missed or "
        "wrong, the naive query's feedback, and the correct rows checked against the hidden truth where it can tell; the people as "
        "one table (empty cells).",
        quirks,
    ),
    Experiment(
        "l8-baselines",
        8,
        "SPINACH against four earlier approaches",
        "§2.5",
        "Inputs: the 40 simple and 56 forum-style questions (evaluator data with gold SPARQL); the simulated policy (a seeded expert "
        "procedure, not an LLM) and the simulated baselines; the fine-tuned parser ({fine_tuned} phrasings of {fine_tuned_props} "
        "properties, none a test question) and Think-on-Graph are given the gold entities. "
        "Measured: row-wise EM and F1 of every system on both sets, against the gold queries' rows.",
        baselines,
        full=dict(SIZE),
        small=dict(SMALL),
        facts={"fine_tuned": _fine_tuned_phrasings, "fine_tuned_props": _fine_tuned_properties},
    ),
    Experiment(
        "l8-ablation",
        8,
        "Ablations: each action removed, rollback off, the budget",
        "§3.7",
        "Inputs: the agent's options (an action switched off, rollback off, budgets of {budgets_text} actions, each plus {rollback_extra} for rollbacks) and the "
        "simulated policy's parameters (what each tool can reveal is set, not learnt). Measured: forum F1 and EM, actions, budget "
        "use and rollbacks, averaged over {runs_text}.",
        ablation,
        full={**SIZE, **RUNS, "budgets": (8, 25)},
        small={**SMALL, **SMALL_RUNS},
        facts={"rollback_extra": _rollback_extra},
    ),
    Experiment(
        "l8-policy-params",
        8,
        "Exercises 2-3: checking assumptions, and repeats without rollback",
        "§3.7, exercises 2-3",
        "Inputs (simulation parameters): p_verify {p_verify_text} against the default {default_p_verify}, P_MEMORY['P17'] lowered to {p17_memory}, p_repeat {p_repeat} with and without rollback. "
        "Measured: forum F1, actions, budget use, and the F1 of C2 (country of birth) and C4 (academic genealogy), over {runs_text}. Needs "
        "the sim backend.",
        policy_params,
        full={**SIZE, **RUNS, "p_verify": (0.0, 1.0), "p17_memory": 0.5, "p_repeat": 0.3},
        small={**SMALL, **SMALL_RUNS},
        facts={"default_p_verify": _policy_default("p_verify")},
    ),
    Experiment(
        "l8-actions",
        8,
        "Actions per question",
        "§4.3",
        "Inputs: the default agent (budget 15 + 15) and policy. Measured: actions left in the state after rollbacks, per forum "
        "question, one run and 5 runs pooled, the simple set for contrast.",
        actions,
        full={**SIZE, **RUNS},
        small={**SMALL, **SMALL_RUNS},
    ),
    Experiment(
        "l8-errors",
        8,
        "Error analysis of the failed forum questions",
        "§4.4",
        "Inputs: 5 runs of the default agent on the forum set. Measured: every question-run with F1 < 0.5 classified from its "
        "trajectory's final query and the gold query into the lecture's classes, by question category; the mean F1 of each category.",
        errors,
        full={**SIZE, **RUNS, "threshold": 0.5},
        small={**SMALL, **SMALL_RUNS},
    ),
    Experiment(
        "l8-row-f1",
        8,
        "Row-wise F1 against set F1",
        "§5.3, exercise 4",
        "Inputs: SPINACH's own metric tests (../shared/data/spinach/row_f1_cases.json), exercise 4, two answers built from our gold rows. "
        "Measured: row-wise F1 (Hungarian matching) and set F1 of each, and the answers of our evaluation where the two disagree most.",
        row_vs_set,
        full={**SIZE, "examples": 3},
        small={**SMALL, "examples": 2},
    ),
    Experiment(
        "l8-complexity",
        8,
        "How complex are the questions? Simple, forum-style and real",
        "§5.1",
        "Inputs: the gold SPARQL of the simple and forum-style sets, and the 155 real SPINACH validation queries (shared data). "
        "Measured: clauses, triple patterns, columns, properties per query, and the share using paths, qualifiers, sorting, counting, "
        "filters, optional parts.",
        complexity,
        full={**SIZE, "dev": None},
        small={**SMALL, "dev": 20},
    ),
    Experiment(
        "l8-template-trap",
        8,
        "The synthetic-template trap",
        "§5.1",
        "Inputs: the template parser ({templates} templates × {phrasings} phrasings) and a same-template synthetic test set. Measured: the property it "
        "picks and its EM/F1 on the synthetic set, the simple set and the forum set (gold entities given).",
        template_trap,
        full={**SIZE, "per_template": 9, "synthetic_seed": 0},
        small={**SMALL, "per_template": 3},
        facts={"templates": _templates, "phrasings": _phrasings},
    ),
    Experiment(
        "l8-bootstrap",
        8,
        "Bootstrap intervals: is the dataset big enough?",
        "§5.4",
        "Inputs: the per-question F1 of SPINACH and Think-on-Graph (one run), and of two close settings of the simulated policy "
        "(p_repeat {default_p_repeat} against {p_repeat} with rollback, means over {runs_text}). Measured: percentile-bootstrap 95% intervals of each score and of the paired differences, the "
        "questions needed to separate each pair, the interval's half-width against the number of questions.",
        bootstrap_intervals,
        full={**SIZE, **RUNS, "p_repeat": 0.3, "resamples": 2000, "ns": (20, 56, 165, 500, 1000)},
        small={**SMALL, **SMALL_RUNS, "resamples": 300, "ns": (20, 56)},
        facts={"default_p_repeat": _policy_default("p_repeat")},
    ),
)


__all__ = ["ERROR_CLASSES", "EXPERIMENTS", "FULL", "LECTURE_CLASSES", "SYSTEMS", "classify_error", "query_shape"]


def __getattr__(name: str) -> Any:  # the module's lazy names, each of its own type
    """The error taxonomy and the query-shape reader, by their old names here (they live in engines.spinach; imported on
    first use, so that listing the experiments does not load the agent)."""
    if name in ("ERROR_CLASSES", "LECTURE_CLASSES", "classify_error"):
        from engines.spinach import error_analysis

        return getattr(error_analysis, name)
    if name == "query_shape":
        from engines.spinach.shape import query_shape

        return query_shape
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
