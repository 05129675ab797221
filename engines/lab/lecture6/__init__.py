"""Lecture 6 (../shared/seeds/001): Text-to-SQL — the experiments of §2.2-§5.3 and exercises 2-4.

Each function below runs the engines (the restaurant world in the SQL sandbox, the simulated parser,
``classify()``, the Text-to-SQL agent, BM25, the SUQL engine) and tabulates what it measured.
"""

from __future__ import annotations

from engines.lab.core import Experiment
from engines.lab.lecture6.algebra import algebra
from engines.lab.lecture6.approaches import hybrid_approaches
from engines.lab.lecture6.classify import classify_methods, classify_threshold
from engines.lab.lecture6.common import SEED_NOTE, parse_drop_rate
from engines.lab.lecture6.dialogue import DIALOGUE, dialogue
from engines.lab.lecture6.evaluation import EVAL_PARAMS, eval_breakdown, eval_metrics, eval_ties
from engines.lab.lecture6.exec_accuracy import execution_accuracy
from engines.lab.lecture6.query_space import query_space

# --- the registry entries ------------------------------------------------------------------------------

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "l6-algebra",
        6,
        "Relational algebra one phrase at a time",
        "§2.2",
        "Inputs: the phrases of the question (parameters: location, cuisines, rating). Measured: the SQL each step "
        "composes, its clause count, the rows DuckDB returns, and whether the simulated parser's SQL for the whole "
        "utterance returns the same rows.",
        algebra,
        full={"location": "Palo Alto", "cuisine": "italian", "other_cuisine": "pizza", "min_rating": 4.0},
    ),
    Experiment(
        "l6-query-space",
        6,
        "How many queries can one ask?",
        "§2.3",
        "Inputs: the rule 'at most one condition per structured column'. Measured: the number of values of each "
        "column, counted in the world's enums and table.",
        query_space,
    ),
    Experiment(
        "l6-classify",
        6,
        "classify(): four methods on held-out colloquial phrasings",
        "§3.3",
        "Inputs: {phrasings} colloquial phrasings the simulated LLM was not written from, with the values a person would pick "
        "(evaluator data, engines/lab/questions.py); the simulated LLM's sense of words (rules over word forms and "
        "WordLlama's static word vectors, with a floor and a margin fixed before any evaluation; no table of cuisine "
        "words); retrieve_llm's k. "
        "Measured: precision and recall of the values chosen, LLM calls, values shown per call. " + SEED_NOTE,
        classify_methods,
        full={"phrasings": 28, "k": 5},
        small={"phrasings": 28},
    ),
    Experiment(
        "l6-classify-threshold",
        6,
        "Exercise 2: the similarity threshold",
        "§3.3, exercise 2",
        "Inputs: the thresholds (parameters) and the 28 phrasings. Measured: precision and recall of character-trigram "
        "similarity at each threshold, and llm_all's recall for comparison.",
        classify_threshold,
        full={"phrasings": 28, "thresholds": (0.5, 0.4, 0.3, 0.2, 0.1)},
    ),
    Experiment(
        "l6-exec-accuracy",
        6,
        "Execution accuracy: zero-shot against the classify() methods",
        "§3.3",
        "Inputs (simulation parameters): the question generator (seeded; half the cuisines named colloquially; "
        "locations, prices and ratings drawn at random), the simulated parser's habits and its {parse_drop_rate:.0%} dropped conditions. "
        "Measured: the share of questions whose executed SQL returns exactly the gold rows. " + SEED_NOTE,
        execution_accuracy,
        full={"questions": 200, "question_seed": 33},
        small={"questions": 40},
        facts={"parse_drop_rate": parse_drop_rate},
    ),
    Experiment(
        "l6-dialogue",
        6,
        "The eight-turn dialogue",
        "§3.4",
        "Inputs: the lecture's eight utterances. Measured: what the input classifier decided, the values classify() "
        "chose, the SQL that ran, its rows, and the reply — all from the Text-to-SQL agent on the simulated LLM.",
        dialogue,
        full={"turns": DIALOGUE},
    ),
    Experiment(
        "l6-eval-metrics",
        6,
        "Exact match, execution accuracy, human judgement; conventions A, B, mixed",
        "§4.4, exercise 3",
        "Inputs (simulation parameters): the question generator ({good_share:.0%} good/great, {top_share:.0%} top-k, {colloquial_share:.0%} colloquial cuisines), "
        "two annotator conventions (A: good/great → rating ≥ 4; B: no condition), a {error_rate:.0%} annotation error rate, the simulated "
        "parser. Measured: the three scores for each test set; the person's judgement reads each question's intent. "
        + SEED_NOTE,
        eval_metrics,
        full=dict(EVAL_PARAMS),
        small={"questions": 60},
    ),
    Experiment(
        "l6-eval-breakdown",
        6,
        "Why execution disagrees: the per-case breakdown",
        "§4.5",
        "Same simulation as l6-eval-metrics (mixed conventions). Measured: every question whose executed gold and "
        "predicted rows differ, sorted by cause — annotation error, convention, tie, or a parser error of a named kind.",
        eval_breakdown,
        full=dict(EVAL_PARAMS),
        small={"questions": 60},
    ),
    Experiment(
        "l6-eval-ties",
        6,
        "Execution accuracy misleads: ties and coincidences",
        "§4.6",
        "Same simulation as l6-eval-metrics. Measured: top-k questions with equal ratings at rank k and k+1 (from the "
        "table), those execution accuracy scores wrong, and wrong SQL that returns the gold rows by coincidence.",
        eval_ties,
        full=dict(EVAL_PARAMS),
        small={"questions": 60},
    ),
    Experiment(
        "l6-hybrid",
        6,
        "Five hybrid approaches on five question classes",
        "§5.3, exercise 4",
        "Inputs (simulation parameters): the question generator (seeded, per class), BM25's k ({ks_text}), the reader — "
        "the simulated LLM's answer(), wrong {error_on_topic:.1%} of the time on the topic. Measured: each approach's score per class, "
        "judged against the world's hidden truth, and the reader's answer() calls per question. " + SEED_NOTE,
        hybrid_approaches,
        full={"per_class": 20, "question_seed": 55, "ks": (10, 30)},
        small={"per_class": 5},
    ),
)
