"""Lecture 7 §5.3-§5.5: a Yelp-style evaluation without gold answers.

100 simulated user questions (45 structured, 55 hybrid), each with the intent behind it — location,
cuisine, price, rating, "open late", a review-only feature, a dish.  The SUQL agent (parser,
``classify()``, the compiler; LIMIT 3 unless the user asks for all) answers each; the baseline linearises
every row into one passage, has an LLM write a short search query from the question (the paper's step,
:mod:`engines.lab.search_query`: the call is shown only the question) and returns BM25's top m (1 and 3)
for that query.  A person checks every returned restaurant
against the whole intent (the evaluator reads the hidden truth for features, its own knowledge of dishes,
and reads "open late" as open at 11pm): precision = true positives / returned.

Questions that return nothing are split into "truly nothing" and false negatives, and each false
negative is put down to a cause by comparing the SUQL the parser wrote with the intent.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engines.lab.judge import DISH_KINDS, meaning, open_late

if TYPE_CHECKING:
    from collections.abc import Sequence

    from engines.lab.hybrid import PassageIndex
    from engines.llm.client import LLM
    from engines.sql.sandbox import Sandbox
    from worlds.restaurants import HiddenTruth, Restaurant, RestaurantWorld

FN_CAUSES = (
    "a request no column holds ('near me')",
    "parse error",
    "dish looked up in the reviews",
    "opening hours compared as text",
    "dropped a condition",
    "added a condition",
    "enum value (classify)",
    "answer() said no to a match",
)

_PRICE_WORDS = {"cheap": "cheap", "moderate": "moderately priced", "expensive": "expensive", "luxury": "luxury"}
_FEATURES = {
    "family_friendly": "that is family-friendly",
    "romantic": "romantic enough for a date",
    "good_for_groups": "that is good for large groups",
    "great_view": "with a great view",
    "outdoor_seating": "with outdoor seating",
    "easy_parking": "with easy parking",
    "spicy": "with really spicy food",
}


@dataclass(frozen=True)
class YelpIntent:
    text: str
    hybrid: bool
    location: str
    cuisines: frozenset[str] | None = None
    cuisine_word: str | None = None
    price: str | None = None
    rating: float | None = None
    late: bool = False
    feature: str | None = None
    dish: str | None = None
    near_me: bool = False  # the request says "near me": the user is in ``location``, which no column holds


def satisfies(truth: HiddenTruth, row: Restaurant, intent: YelpIntent) -> bool:
    """The person's check of one restaurant against everything the user asked for (``truth``: the
    world's :class:`~worlds.restaurants.HiddenTruth`, for the review-only features)."""
    if row.location != intent.location:
        return False
    if intent.cuisines is not None and not intent.cuisines & set(row.cuisines):
        return False
    if intent.price is not None and row.price != intent.price:
        return False
    if intent.rating is not None and row.rating < intent.rating:
        return False
    if intent.late and not open_late(row.opening_hours):
        return False
    if intent.feature is not None and not truth.has(row._id, intent.feature):
        return False
    if intent.dish is not None and not DISH_KINDS[intent.dish] & set(row.popular_dishes):
        return False
    return True


def generate(rng: random.Random, n: int, hybrid_share: float, late_share: float = 0.15) -> list[YelpIntent]:
    from engines.lab.questions import plain_cuisines
    from worlds.restaurants import CUISINE_PHRASINGS, LOCATIONS

    plain = plain_cuisines()
    n_hybrid = round(n * hybrid_share)
    out: list[YelpIntent] = []
    for i in range(n):
        hybrid = i >= n - n_hybrid
        loc = rng.choice(LOCATIONS)
        cuisines = word = price = rating = None
        late = False
        feature = dish = None

        def pick_cuisine() -> tuple[frozenset[str], str]:
            if rng.random() < 0.3:
                w, gold = rng.choice(CUISINE_PHRASINGS)
                return frozenset(gold), w
            c = rng.choice(plain)
            return frozenset({c}), c

        if not hybrid:
            slots = rng.sample(("cuisine", "price", "rating"), rng.choice((1, 2, 2, 3)))
            if rng.random() < late_share:
                slots.append("late")
            if "cuisine" in slots:
                cuisines, word = pick_cuisine()
            if "price" in slots:
                price = rng.choice(("cheap", "moderate", "expensive", "luxury"))
            if "rating" in slots:
                rating = rng.choice((4.0, 4.5))
            late = "late" in slots
            adj = f"{_PRICE_WORDS[price]} " if price else ""
            tail = (f" with at least {rating:g} stars" if rating else "") + (" that is open late" if late else "")
            text = f"Find me {_a(adj + (word + ' ' if word else '') + 'place')} in {loc}{tail}."
        elif rng.random() < 0.3:
            dish = rng.choice(tuple(DISH_KINDS))
            text = f"Where can I get {dish} in {loc}?"
        else:
            feature = rng.choice(tuple(_FEATURES))
            if rng.random() < 0.5:
                cuisines, word = pick_cuisine()
            text = f"Can you find {_a((word + ' ' if word else '') + 'place')} in {loc} {_FEATURES[feature]}?"
        out.append(YelpIntent(text, hybrid, loc, cuisines, word, price, rating, late, feature, dish))
    return out


_NEAR_ME = "near me"


def generate_from_rows(
    rng: random.Random,
    rows: Sequence[Restaurant],
    truth: HiddenTruth,
    n: int,
    hybrid_share: float,
    near_me_share: float = 0.04,
    off_row_share: float = 0.2,
) -> list[YelpIntent]:
    """Intents drawn from existing restaurants (lecture 7 §5.1's crowd workers asked for places like real ones): each
    starts from a seeded row and asks for some of what it is — its location, one of its cuisines (by name or a
    colloquial phrasing that means it), its price, a rating it reaches, "open late" when it is; a hybrid one a feature
    it really has (the evaluator reads the hidden truth) or a kind of dish it serves.  A share of the requests say
    "near me" instead of a place: no column holds where the user is (the user is in the row's location, which the
    evaluator knows and the agent cannot).  With ``off_row_share`` a price, a rating or a feature is the user's own
    wish rather than the row's, so some requests combine what no restaurant has.  Evaluator side: it reads ``truth``; engines never see it."""
    from engines.lab.questions import plain_cuisines
    from worlds.restaurants import CUISINE_PHRASINGS

    plain = set(plain_cuisines())
    n_hybrid = round(n * hybrid_share)
    out: list[YelpIntent] = []
    for i in range(n):
        hybrid = i >= n - n_hybrid
        row = rng.choice(rows)
        loc = row.location
        near_me = rng.random() < near_me_share
        where = _NEAR_ME if near_me else f"in {loc}"
        cuisines = word = price = rating = None
        late = False
        feature = dish = None

        def pick_cuisine(row: Restaurant = row) -> tuple[frozenset[str], str] | None:
            phrasings = [(w, g) for w, g in CUISINE_PHRASINGS if set(g) & set(row.cuisines)]
            if phrasings and rng.random() < 0.3:
                w, gold = rng.choice(phrasings)
                return frozenset(gold), w
            named = [c for c in row.cuisines if c in plain]
            if not named:
                return None
            c = rng.choice(named)
            return frozenset({c}), c

        kinds = [k for k, dishes in DISH_KINDS.items() if dishes & set(row.popular_dishes)]
        has = sorted(f for f in truth.features[row._id] if f in _FEATURES)
        if not hybrid:
            slots = rng.sample(("cuisine", "price", "rating"), rng.choice((1, 2, 2, 3)))
            if open_late(row.opening_hours) and rng.random() < 0.5:
                slots.append("late")
            if "cuisine" in slots and (picked := pick_cuisine()) is not None:
                cuisines, word = picked
            if "price" in slots:  # now and then the user wants it at another price than the place they had in mind
                price = (
                    row.price
                    if rng.random() >= off_row_share
                    else rng.choice(("cheap", "moderate", "expensive", "luxury"))
                )
            if "rating" in slots and (row.rating >= 4.0 or rng.random() < off_row_share):
                rating = 4.5 if (row.rating >= 4.5 or row.rating < 4.0) and rng.random() < 0.5 else 4.0
            late = "late" in slots
            adj = f"{_PRICE_WORDS[price]} " if price else ""
            tail = (f" with at least {rating:g} stars" if rating else "") + (" that is open late" if late else "")
            text = f"Find me {_a(adj + (word + ' ' if word else '') + 'place')} {where}{tail}."
        elif kinds and (not has or rng.random() < 0.3):
            dish = rng.choice(kinds)
            text = f"Where can I get {dish} {where}?"
        elif has:
            feature = rng.choice(has)
            if rng.random() < off_row_share:  # a feature the place may lack: what users combine need not exist
                feature = rng.choice(tuple(_FEATURES))
            if rng.random() < 0.5 and (picked := pick_cuisine()) is not None:
                cuisines, word = picked
            text = f"Can you find {_a((word + ' ' if word else '') + 'place')} {where} {_FEATURES[feature]}?"
        else:  # a place with no feature and no dish of a known kind: ask for its cuisine and a feature anyway
            feature = rng.choice(tuple(_FEATURES))
            text = f"Can you find a place {where} {_FEATURES[feature]}?"
        out.append(YelpIntent(text, hybrid, loc, cuisines, word, price, rating, late, feature, dish, near_me))
    return out


def _a(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


@dataclass
class YelpCase:
    intent: YelpIntent
    suql: str | None
    suql_ids: tuple[int, ...]
    suql_correct: tuple[bool, ...]
    satisfying: int  # restaurants in the whole world that satisfy the intent
    baseline: dict[int, tuple[bool, ...]] = field(default_factory=dict)  # m -> verdict per returned row
    search_query: str = ""  # what the baseline's query writer made of the question
    fn_cause: str | None = None  # when SUQL returned nothing but something satisfies


@dataclass
class YelpSimulation:
    cases: list[YelpCase]
    ms: tuple[int, ...]


def fn_cause(suql: str | None, intent: YelpIntent) -> str:
    if intent.near_me:
        return "a request no column holds ('near me')"
    m = meaning(suql)
    if not m.understood:
        return "parse error"
    if intent.dish is not None and any(col == "reviews" and intent.dish in q for col, q in m.texts):
        return "dish looked up in the reviews"
    if intent.late:
        return "opening hours compared as text"
    have = m.structured_conditions()
    want = (
        {"location"}
        | ({"cuisine"} if intent.cuisines else set())
        | ({"price"} if intent.price else set())
        | ({"rating"} if intent.rating else set())
    )
    if want - have:
        return "dropped a condition"
    if (have - want) - {"late"}:
        return "added a condition"
    if intent.cuisines is not None and (m.cuisine_values or frozenset()) != intent.cuisines:
        return "enum value (classify)"
    return "answer() said no to a match"


def simulate(
    world: RestaurantWorld,
    truth: HiddenTruth,
    sandbox: Sandbox,
    llm: LLM,
    *,
    n: int,
    seed: int,
    hybrid_share: float,
    ms: tuple[int, ...],
    classify_method: str,
    progress: Callable[[int, int, str], None],
    cancel: threading.Event | None = None,
    intents_from: str = "template",
    near_me_share: float = 0.0,
) -> YelpSimulation:
    from engines.suql.agent import SuqlAgent, suql_schema
    from engines.suql.execute import SuqlEngine

    if intents_from == "rows":
        intents = generate_from_rows(random.Random(seed), world.rows, truth, n, hybrid_share, near_me_share)
    else:
        intents = generate(random.Random(seed), n, hybrid_share)
    agent = SuqlAgent(
        sandbox,
        llm,
        suql_schema(world.schema()),
        world.enum_fields,
        classify_method=classify_method,
        engine=SuqlEngine(sandbox, llm, pool=1),
        mode="E",
    )
    passages = baseline_index(world)
    by_id = {r._id: r for r in world.rows}
    cases = []
    for i, intent in enumerate(intents):
        progress(i, len(intents), intent.text)
        agent.reset()
        turn = agent.ask(intent.text, cancel=cancel)
        ids: tuple[int, ...] = ()
        if "_id" in turn.columns:
            ids = tuple(r[turn.columns.index("_id")] for r in turn.rows)
        satisfying = sum(1 for r in world.rows if satisfies(truth, r, intent))
        case = YelpCase(
            intent, turn.sql or turn.parsed_sql, ids, tuple(satisfies(truth, by_id[x], intent) for x in ids), satisfying
        )
        case.search_query, top = baseline_top(passages, llm, intent.text, max(ms))
        for m in ms:
            case.baseline[m] = tuple(satisfies(truth, by_id[x], intent) for x in top[:m])
        if not ids and satisfying:
            case.fn_cause = fn_cause(case.suql, intent)
        cases.append(case)
    progress(len(intents), len(intents), "done")
    return YelpSimulation(cases, ms)


def baseline_index(world: RestaurantWorld) -> PassageIndex:
    """The linearisation baseline's index: every row as one passage (:func:`engines.lab.hybrid.linearise`), BM25."""
    from engines.lab.hybrid import PassageIndex, linearise

    return PassageIndex([r._id for r in world.rows], [linearise(r) for r in world.rows])


def baseline_top(passages: PassageIndex, llm: LLM, question: str, k: int) -> tuple[str, list[int]]:
    """The baseline's answer to one question: the search query an LLM writes from the question alone, and the
    ids of the top ``k`` passages BM25 ranks by it."""
    from engines.lab.search_query import SEARCH_QUERY, SearchQueryInput

    query = llm.run(SEARCH_QUERY, SearchQueryInput(question))
    return query, passages.top(query, k)


def precision(verdicts: list[tuple[bool, ...]]) -> tuple[float | None, int]:
    returned = sum(len(v) for v in verdicts)
    tp = sum(sum(v) for v in verdicts)
    return (tp / returned if returned else None), returned


def summary(sim: YelpSimulation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, keep in (
        ("structured", lambda c: not c.intent.hybrid),
        ("hybrid", lambda c: c.intent.hybrid),
        ("all", lambda c: True),
    ):
        cases = [c for c in sim.cases if keep(c)]
        out[label] = {
            "suql": precision([c.suql_correct for c in cases]),
            **{f"top{m}": precision([c.baseline[m] for c in cases]) for m in sim.ms},
            "n": len(cases),
            "empty": sum(1 for c in cases if not c.suql_ids),
        }
    return out
