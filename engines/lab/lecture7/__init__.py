"""Lecture 7 (../shared/seeds/000): SUQL — the experiments of §3.3-§3.7 and §5.3-§5.5, exercise 2.

Each function runs the SUQL engine (six execution modes), its workload, BM25 retrieval, a
function-calling agent and the SUQL agent, and tabulates what it measured; hidden truth is read only
by the evaluators (``engines.suql.workload.truly_matching``, ``engines.lab.yelp.satisfies``).
"""

from __future__ import annotations

from engines.lab.core import Experiment
from engines.lab.lecture7.agent_k import agent_against_k
from engines.lab.lecture7.cascade import cascade_targets
from engines.lab.lecture7.common import SEED_NOTE, gold_wrong_rate
from engines.lab.lecture7.exercise_1 import exercise_1
from engines.lab.lecture7.hybridqa import hybridqa_ablation, hybridqa_errors, hybridqa_format
from engines.lab.lecture7.modes import six_modes
from engines.lab.lecture7.similarity import similarity_satisfaction
from engines.lab.lecture7.slide_queries import slide_queries
from engines.lab.lecture7.table_tokens import table_tokens
from engines.lab.lecture7.workload import cap_sweep, workload
from engines.lab.lecture7.yelp_eval import yelp_false_negatives, yelp_precision, yelp_recall

# --- the registry entries ----------------------------------------------------------------------------------------

WORKLOAD_PARAMS = {"queries": 60, "workload_seed": 7}
YELP_PARAMS = {
    "questions": 100,
    "question_seed": 77,
    "hybrid_share": 0.55,
    "ms": (1, 3),
    "reviews": "realistic",  # worlds.restaurants.build(reviews=...): features stated, hinted or unsaid; dishes sometimes
    "intents": "rows",  # each intent drawn from an existing restaurant (yelp.generate_from_rows)
    "near_me_share": 0.04,  # requests that say "near me": no column holds where the user is
}
YELP_WORLD = (
    "The world: the restaurant generator with reviews={reviews!r} (a feature a place has is stated outright only "
    "sometimes, else hinted in words no lexicon lists or unsaid; a review names a dish only sometimes), intents "
    "drawn from existing restaurants, {near_me_share:.0%} of the requests 'near me'. "
)
HYBRIDQA_PARAMS = {"tables": 50, "world_seed": None}

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "l7-modes",
        7,
        "One query, six execution modes",
        "§3.3",
        "Inputs: the lecture's family-friendly query (answer() written first) and the same query with location first (B′). "
        "Measured: answer() and summary() calls, rows examined and the result in each mode; correctness against the hidden truth. "
        + SEED_NOTE,
        six_modes,
    ),
    Experiment(
        "l7-slide-queries",
        7,
        "The slides' two examples: a first date, a laptop with Thunderbolt 3",
        "§2.2",
        "Inputs: the slides' restaurant query on our world; the laptop query (at least {ram} GB and Thunderbolt 3 in the "
        "blurb OR the description) on a generated catalogue (worlds.laptops, seed {laptop_seed}) whose port is written in "
        "either column or both, and each column alone. Measured: answer() calls, laptops returned and how many truly fit "
        "(hidden truth), recall of the list-all queries. " + SEED_NOTE,
        slide_queries,
        full={"ram": 16, "laptop_seed": 3},
    ),
    Experiment(
        "l7-exercise-1",
        7,
        "Exercise 1: two answer() conditions, both written orders",
        "exercise 1",
        "Inputs: the exercise's query (location {location!r}, the two answer() questions in both written orders, ORDER BY "
        "rating DESC LIMIT 1). Measured: answer() calls per question when the query runs as written (mode B), by the notes' "
        "compiler (structured first, answer() in the written order, lazy) and by ours (modes D and E, which order the answer() "
        "conditions by cost × selectivity); each result checked against the hidden truth. " + SEED_NOTE,
        exercise_1,
        full={
            "location": "Palo Alto",
            "conditions": (("is it good for a date?", "romantic"), ("is parking easy?", "easy_parking")),
        },
    ),
    Experiment(
        "l7-workload",
        7,
        "The 60-query workload in every mode",
        "§3.4",
        "Inputs (simulation parameters): the seeded random workload (one location, half with a cuisine, one or two text conditions, "
        "40% LIMIT 1, 30% LIMIT 3, 30% list-all, half with answer() written first); mode F's cap (CS224V_SUQL_CAP). "
        "Measured: mean calls per query, precision and recall against the hidden truth. " + SEED_NOTE,
        workload,
        full=dict(WORKLOAD_PARAMS),
        small={"queries": 6},
    ),
    Experiment(
        "l7-cap-sweep",
        7,
        "Exercise 2: the retrieval cap",
        "§3.4, exercise 2",
        "Inputs: the caps (parameters) and the same workload. Measured: calls per query, precision and recall of mode F at each "
        "cap, and of mode E (no cap).",
        cap_sweep,
        full={**WORKLOAD_PARAMS, "caps": (5, 20, 50, None)},
        small={"queries": 6},
    ),
    Experiment(
        "l7-cascade",
        7,
        "Mode G: a cascade with a stated precision and recall",
        "§3.4, extended (issue 29)",
        "Inputs: the list-all query {query!r} on the larger generated world ({rows:,} restaurants, the same generator), "
        "both targets moved over {targets} at delta {delta}, {seeds} sample seeds each. Measured: answer() calls of "
        "mode G against mode E's, the worst recall and precision over the seeds against the LLM's own labels "
        "(mode E's rows: every candidate asked), the rows the proxy decided and the thresholds. " + SEED_NOTE,
        cascade_targets,
        full={
            "rows": 5000,
            "query": "SELECT _id, name FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' "
            "AND location = 'Menlo Park'",
            "targets": (0.5, 0.7, 0.8, 0.9, 0.95, 0.99),
            "delta": 0.05,
            "seeds": 3,
        },
        small={"rows": 2000, "targets": (0.5, 0.9, 0.99), "seeds": 1},
    ),
    Experiment(
        "l7-similarity",
        7,
        "Similarity is not satisfaction: easy parking",
        "§3.5",
        "Inputs: the question 'is parking easy?' and the world's reviews (15% of restaurants really have easy parking; many "
        "others' reviews say parking is tricky). Measured: what BM25 alone returns and what answer() keeps, judged against the hidden truth.",
        similarity_satisfaction,
        full={"question": "is parking easy?", "feature": "easy_parking", "top_k": (20, 50)},
    ),
    Experiment(
        "l7-agent-k",
        7,
        "A function-calling agent against k",
        "§3.7",
        "Inputs: the workload's LIMIT queries and the values of k (parameters). Measured: how often the agent "
        "(search_reviews over the whole database, then run_sql, then answer() on each) returns at least one right restaurant, "
        "and its answer() calls, against SUQL's compiler.",
        agent_against_k,
        full={**WORKLOAD_PARAMS, "ks": (5, 10, 20, 50, 100, 200)},
        small={"queries": 16, "ks": (5, 50, 200)},
    ),
    Experiment(
        "l7-yelp-precision",
        7,
        "Yelp-style precision: SUQL against linearisation",
        "§5.3",
        "Inputs (simulation parameters): {questions} generated user questions ({hybrid_share:.0%} hybrid) with the intent behind "
        "each; "
        + YELP_WORLD
        + "The simulated parser's mistakes; BM25 over linearised rows, queried with a short search query an LLM writes from the "
        "question alone. Measured: precision of every returned restaurant, checked "
        "against the intent and the hidden truth. " + SEED_NOTE,
        yelp_precision,
        full=dict(YELP_PARAMS),
        small={"questions": 40},
    ),
    Experiment(
        "l7-yelp-false-negatives",
        7,
        "Questions that return nothing: the false-negative analysis",
        "§5.4",
        "Same simulation as l7-yelp-precision. "
        + YELP_WORLD
        + "Measured: questions whose SUQL returned nothing, those "
        "with truly no answer, and the cause of each false negative.",
        yelp_false_negatives,
        full=dict(YELP_PARAMS),
        small={"questions": 40},
    ),
    Experiment(
        "l7-yelp-recall",
        7,
        "Does recall matter? Satisfying restaurants per question",
        "§5.5",
        "Same simulation as l7-yelp-precision. " + YELP_WORLD + "Measured: the number of restaurants in the world that "
        "satisfy each question (hidden "
        "truth), and how many right ones the agent's three cover.",
        yelp_recall,
        full=dict(YELP_PARAMS),
        small={"questions": 40},
    ),
    Experiment(
        "l7-table-tokens",
        7,
        "What the model is shown: the whole table against SUQL's schema",
        "§6.3",
        "Inputs: generated flag-bearer tables of {rows_text} rows and a type-I question (where were the Games at which one "
        "bearer carried the flag?). Measured: the tokens of the whole table linearised with its passages (characters / 4), "
        "of the schema SUQL's parser is shown, and the answer() calls the question makes; the larger sizes are arithmetic.",
        table_tokens,
        full={"world_seed": 7, "rows": (16, 1_000, 10_000), "arithmetic_rows": (100_000,)},
        small={"rows": (16, 1_000)},
    ),
    Experiment(
        "l7-hybridqa-ablation",
        7,
        "HybridQA: the two improvements switched on and off",
        "§6.5",
        "Inputs (simulation parameters): {tables} generated flag-bearer tables with six questions each; the simulated parser's, "
        "reader's and short-answer step's seeded mistake rates; {gold_wrong_rate:.0%} wrong gold answers. Measured: EM and F1 against the gold, the "
        "judgement (reads the hidden truth), answer() calls, retries and error classes, for each setting. " + SEED_NOTE,
        hybridqa_ablation,
        full=dict(HYBRIDQA_PARAMS),
        small={"tables": 8},
        facts={"gold_wrong_rate": gold_wrong_rate},
    ),
    Experiment(
        "l7-hybridqa-errors",
        7,
        "HybridQA: why answers miss an exact match",
        "§6.4-§6.5",
        "Same simulation as l7-hybridqa-ablation, both improvements on. Measured: every answer that is not an exact match, by "
        "class — the evaluation's (format variant, incomplete or wrong gold) or the system's.",
        hybridqa_errors,
        full=dict(HYBRIDQA_PARAMS),
        small={"tables": 8},
    ),
    Experiment(
        "l7-hybridqa-format",
        7,
        "Exercise 4: the format of the short answer",
        "§6.5, exercise 4",
        "Inputs: the chance that the short-answer step writes another format than the passage's (a simulation parameter: 0.3, "
        "then 0). Measured: EM, F1 and the judgement with both improvements on. Needs the sim backend.",
        hybridqa_format,
        full={**HYBRIDQA_PARAMS, "format_rates": (0.3, 0.0)},
        small={"tables": 8},
    ),
)
