"""Lecture 6 §4.4-§4.6 and exercise 3: a test set written by two simulated annotators, and three ways to
score a parser against it — exact match, execution accuracy, and a person's judgement.

* Questions (seeded): a location, a cuisine (some named colloquially), sometimes a price, an explicit
  rating, "good" / "great" (35% of questions), or "the top k".
* Annotators (simulation parameters): convention A writes ``rating >= 4`` for "good" / "great", B does
  not; each question is annotated by one of them at random (``mixed``), or all by A, or all by B.  Each
  annotation is wrong with probability ``error_rate`` (a wrong location, a dropped condition, a wrong
  cuisine value, an off-by-one LIMIT); the same questions are wrong whatever the convention.
  Annotators sort by rating alone; the parser adds a secondary key — with ties at rank k, the rows differ.
* The parser: the simulated LLM's parser and ``classify()`` (the Text-to-SQL agent's two steps).
* The person (evaluator): reads each question's intent and accepts any SQL that means an acceptable
  reading of it ("good" with or without a rating condition; any order among tied ratings).

Statements run with ``_id`` appended to their ORDER BY, so ties come back in one fixed order (the
table's) and every run repeats exactly.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from engines.errors import Cancelled, EngineError
from engines.lab.judge import Meaning, meaning
from engines.sql.tasks import PARSE, Dialogue

if TYPE_CHECKING:
    from engines.llm.client import LLM
    from engines.sql.sandbox import Sandbox
    from worlds.restaurants import Restaurant, RestaurantWorld

Ids = tuple[int, ...]
"""The restaurant ids a statement returns, in its order (or sorted, where the order does not count)."""

CONVENTIONS = ("mixed", "A", "B")
ERROR_KINDS = ("wrong location", "dropped condition", "wrong cuisine value", "limit off by one")


@dataclass(frozen=True)
class Intent:
    question: str
    location: str
    word: str
    cuisines: frozenset[str]
    price: str | None
    rating: float | None  # an explicit "at least r stars"
    good: bool  # said "good" / "great"
    top_k: int | None


@dataclass
class Case:
    """One question: its intent, what each annotator wrote, what the parser wrote, and every verdict."""

    intent: Intent
    annotator: str  # who annotates it in the mixed test set
    error: str | None  # the annotation mistake, if any (the same whoever annotates)
    gold: dict[str, str]  # convention -> gold SQL
    predicted: str | None
    pred_rows: Ids | None
    gold_rows: dict[str, Ids | None]
    exact: dict[str, bool] = field(default_factory=dict)
    execution: dict[str, bool] = field(default_factory=dict)
    gold_ok: dict[str, bool] = field(default_factory=dict)
    human: bool = False
    tie: bool = False  # top-k question with equal ratings at rank k and k+1 (which rows are in the top k)
    tie_inside: bool = False  # top-k question with equal ratings inside the top k (their order)
    parser_fault: str | None = None  # why the prediction is not acceptable


def generate(
    rows: Sequence[Restaurant],
    rng: random.Random,
    n: int,
    *,
    good_share: float,
    top_share: float,
    colloquial_share: float,
) -> list[Intent]:
    from engines.lab.questions import PRICE_WORDS, plain_cuisines
    from worlds.restaurants import CUISINE_PHRASINGS, LOCATIONS

    plain = plain_cuisines()
    out: list[Intent] = []
    tries = 0
    while len(out) < n and tries < 100 * n:
        tries += 1
        if rng.random() < colloquial_share:
            word, gold = rng.choice(CUISINE_PHRASINGS)
        else:
            word = rng.choice(plain)
            gold = frozenset({word})
        loc = rng.choice(LOCATIONS)
        r = rng.random()
        top_k = rng.choice((3, 5)) if r < top_share else None
        good = top_k is None and r < top_share + good_share
        price = rating = None
        if top_k is None:
            price = rng.choice((None, None, "cheap", "moderate", "expensive"))
            if not good and rng.random() < 0.2:
                rating = rng.choice((4.0, 4.5))
        matching = [
            x
            for x in rows
            if x.location == loc
            and gold & set(x.cuisines)
            and (price is None or x.price == price)
            and (rating is None or x.rating >= rating)
        ]
        if not matching or (top_k is not None and len(matching) <= top_k):
            continue
        if top_k is not None:
            text = f"What are the top {top_k} {word} restaurants in {loc}?"
        elif good:
            adj = rng.choice(("good", "great"))
            if price is None and rng.random() < 0.5:
                text = f"What's some {adj} {word} food around {loc}?"
            else:
                text = f"Show me {adj} {PRICE_WORDS[price] + ' ' if price else ''}{word} places in {loc}."
        else:
            text = f"Show me {PRICE_WORDS[price] + ' ' if price else ''}{word} places in {loc}" + (
                f" with at least {rating:g} stars." if rating else "."
            )
        out.append(Intent(text, loc, word, frozenset(gold), price, rating, good, top_k))
    return out


def annotate(intent: Intent, convention: str, error: str | None, rng: random.Random) -> str:
    """The gold SQL an annotator of ``convention`` writes, with ``error`` if this one is wrong."""
    from worlds.restaurants import CUISINES, LOCATIONS

    location = intent.location
    cuisines = sorted(intent.cuisines)
    price, limit = intent.price, intent.top_k
    drop = None
    if error == "wrong location":
        location = rng.choice([x for x in LOCATIONS if x != location])
    elif error == "wrong cuisine value":
        cuisines = [rng.choice([c for c in CUISINES if c not in intent.cuisines])]
    elif error == "dropped condition":
        drop = "price" if price else "cuisine"
    elif error == "limit off by one" and limit is not None:
        limit += rng.choice((-1, 1))
    conds = [f"location = '{location}'"]
    if drop != "cuisine":
        conds.append(
            " OR ".join(f"'{c}' = ANY(cuisines)" for c in cuisines)
            if len(cuisines) == 1
            else "(" + " OR ".join(f"'{c}' = ANY(cuisines)" for c in cuisines) + ")"
        )
    if price and drop != "price":
        conds.append(f"price = '{price}'")
    if intent.rating is not None:
        conds.append(f"rating >= {intent.rating:g}")
    elif intent.good and convention == "A":
        conds.append("rating >= 4")
    sql = "SELECT * FROM restaurants WHERE " + " AND ".join(conds)
    if limit is not None:
        sql += f" ORDER BY rating DESC LIMIT {limit}"
    return sql


def acceptable(m: Meaning, intent: Intent) -> bool:
    """A person's judgement: does the statement mean an acceptable reading of the question?"""
    return fault(m, intent) is None


def fault(m: Meaning, intent: Intent) -> str | None:
    """Why a statement is not an acceptable reading (None when it is)."""
    if not m.understood or m.count or m.name or m.texts or m.late:
        return "other"
    missing = []
    if m.locations is None:
        missing.append("location")
    if m.cuisine_values is None:
        missing.append("cuisine")
    if intent.price and not m.prices:
        missing.append("price")
    if intent.rating is not None and m.rating is None:
        missing.append("rating")
    if missing:
        return "dropped condition"
    if m.cuisine_values != intent.cuisines or len(m.cuisines) != 1:
        return "cuisine values"
    if m.locations != frozenset({intent.location}):
        return "wrong location"
    if (m.prices or None) != (frozenset({intent.price}) if intent.price else None):
        return "price"
    if intent.rating is not None:
        if m.rating_min != intent.rating:
            return "rating"
    elif intent.good:
        if m.rating is not None and m.rating_min != 4.0:
            return "rating"
    elif m.rating is not None:
        return "added a condition"
    if intent.top_k is not None:
        if not m.order or m.order[0] != ("rating", True) or m.limit != intent.top_k:
            return "sort or limit"
    elif m.limit is not None:
        return "sort or limit"
    return None


def canonical(sql: str | None) -> str | None:
    """The statement as sqlglot prints it: spacing and letter case no longer matter for exact match."""
    if sql is None:
        return None
    try:
        return sqlglot.parse_one(sql, read="postgres").sql(dialect="postgres")
    except sqlglot.errors.SqlglotError:
        return sql


def executable(sql: str, sandbox: Sandbox) -> str:
    """The statement with ``_id`` appended to its ORDER BY (ties in the table's order) and ``_id`` projected."""
    tree = sandbox.check(sql)
    if not isinstance(tree, exp.Select):
        return sql
    tree = tree.copy()
    tree.set("expressions", [exp.column("_id")])
    order = tree.args.get("order")
    if order is not None:
        order.append("expressions", exp.Ordered(this=exp.column("_id")))
    return tree.sql(dialect="postgres")


@dataclass
class Simulation:
    cases: list[Case]
    method: str


def simulate(
    world: RestaurantWorld,
    sandbox: Sandbox,
    llm: LLM,
    *,
    n: int,
    seed: int,
    error_rate: float,
    good_share: float,
    top_share: float,
    colloquial_share: float,
    method: str,
    progress: Callable[[int, int, str], None],
    cancel: threading.Event | None = None,
) -> Simulation:
    from engines.sql.classify import Classifier

    intents = generate(
        world.rows,
        random.Random(seed),
        n,
        good_share=good_share,
        top_share=top_share,
        colloquial_share=colloquial_share,
    )
    run_cache: dict[str, Ids | None] = {}

    def rows_of(sql: str | None, ordered: bool) -> Ids | None:
        if sql is None:
            return None
        if sql not in run_cache:
            try:
                ids = [r[0] for r in sandbox.run(executable(sql, sandbox)).rows]
                run_cache[sql] = tuple(ids)
            except EngineError:  # a statement the sandbox refuses or DuckDB cannot run: no rows to compare
                run_cache[sql] = None
        got = run_cache[sql]
        return got if got is None or ordered else tuple(sorted(got))

    cases: list[Case] = []
    for i, intent in enumerate(intents):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        progress(i, len(intents), intent.question)
        qrng = random.Random(f"{seed}/annotation/{i}")
        annotator = "A" if qrng.random() < 0.5 else "B"
        error = qrng.choice(ERROR_KINDS) if qrng.random() < error_rate else None
        if error == "limit off by one" and intent.top_k is None:
            error = "dropped condition"
        gold = {}
        for conv in ("A", "B"):
            gold[conv] = annotate(intent, conv, error, random.Random(f"{seed}/error/{i}"))
        gold["mixed"] = gold[annotator]
        parsed = llm.run(PARSE, Dialogue(intent.question, (), world.schema()))
        try:
            predicted = (
                Classifier(world.enum_fields, method, llm).rewrite(sandbox.check(parsed)).sql(dialect="postgres")
            )
        except Cancelled:
            raise
        except EngineError:
            predicted = None
        ordered = intent.top_k is not None
        case = Case(
            intent,
            annotator,
            error,
            gold,
            predicted,
            rows_of(predicted, ordered),
            {c: rows_of(g, ordered) for c, g in gold.items()},
        )
        pm = meaning(predicted)
        case.parser_fault = fault(pm, intent)
        case.human = case.parser_fault is None
        for conv in CONVENTIONS:
            case.exact[conv] = canonical(predicted) == canonical(gold[conv])
            case.execution[conv] = case.pred_rows is not None and case.pred_rows == case.gold_rows[conv]
            case.gold_ok[conv] = acceptable(meaning(gold[conv]), intent)
        if intent.top_k is not None:
            ratings = sorted(
                (r.rating for r in world.rows if r.location == intent.location and intent.cuisines & set(r.cuisines)),
                reverse=True,
            )
            k = intent.top_k
            case.tie = len(ratings) > k and ratings[k - 1] == ratings[k]
            case.tie_inside = len(set(ratings[:k])) < k
        cases.append(case)
    progress(len(intents), len(intents), "done")
    return Simulation(cases, method)


# --- reading a simulation ---------------------------------------------------------------------------

CAUSES: tuple[tuple[str, str], ...] = (
    ("annotation error", "test set"),
    ("good / great: the conventions differ", "test set (ambiguous question)"),
    ("tie at rank k and k+1", "evaluation (execution accuracy)"),
    ("tie inside the top k (order)", "evaluation (execution accuracy)"),
    ("both acceptable, other", "evaluation (execution accuracy)"),
    ("parser: classify() chose other values", "parser"),
    ("parser: dropped a condition", "parser"),
    ("parser: other", "parser"),
)


def cause(case: Case, convention: str = "mixed") -> str:
    """Why the executed rows of gold and prediction disagree (only for disagreements)."""
    gold_ok = case.gold_ok[convention]
    if case.human:
        if not gold_ok:
            return "annotation error"
        if case.intent.good and meaning(case.predicted).rating != meaning(case.gold[convention]).rating:
            return "good / great: the conventions differ"
        if case.intent.top_k is not None and case.tie:
            return "tie at rank k and k+1"
        if case.intent.top_k is not None and case.tie_inside:
            return "tie inside the top k (order)"
        return "both acceptable, other"
    if case.parser_fault == "cuisine values":
        return "parser: classify() chose other values"
    if case.parser_fault == "dropped condition":
        return "parser: dropped a condition"
    return "parser: other"


def parser_error_detail(case: Case) -> str:
    m = meaning(case.predicted)
    if case.parser_fault == "cuisine values":
        return f"{case.intent.word!r} → {', '.join(sorted(m.cuisine_values or ())) or '∅'} (wanted {', '.join(sorted(case.intent.cuisines))})"
    if case.parser_fault == "dropped condition":
        kept = m.structured_conditions()
        wanted = (
            {"location", "cuisine"}
            | ({"price"} if case.intent.price else set())
            | ({"rating"} if case.intent.rating else set())
        )
        return "dropped " + ", ".join(sorted(wanted - kept))
    return case.parser_fault or ""


def metrics(sim: Simulation, convention: str) -> dict[str, Any]:
    cases = sim.cases
    n = len(cases)
    return {
        "exact": sum(c.exact[convention] for c in cases) / n,
        "execution": sum(c.execution[convention] for c in cases) / n,
        "human": sum(c.human for c in cases) / n,
        "gold_ok": sum(c.gold_ok[convention] for c in cases) / n,
        "n": n,
    }
