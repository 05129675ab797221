"""Question generators shared by the experiments: what users say, and the intent behind it.

The generators write questions from an intent drawn at random (seeded); the gold answer is computed
from the intent by the evaluator.  They read the visible rows only (to keep questions with an answer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

    from worlds.restaurants import Restaurant

PRICE_WORDS = {"cheap": "cheap", "moderate": "moderately priced", "expensive": "expensive", "luxury": "luxury"}


def plain_cuisines() -> tuple[str, ...]:
    """Enum values a user says as they are (one plain word, or 'dim sum')."""
    from worlds.restaurants import CUISINES

    return tuple(c for c in CUISINES if c.isalpha() or c == "dim sum")


def generate_structured_questions(
    rows: Sequence[Restaurant], rng: random.Random, n: int, *, colloquial_share: float = 0.5, max_tries: int = 50
) -> list[dict[str, Any]]:
    """Questions with gold SQL written from their intent (location, cuisine values, price, rating).

    Every other question (with the default share of one half) names its cuisine colloquially (one of the
    28 phrasings, gold = the values a person would pick); only questions whose gold result (computed from the visible ``rows``; the same rows the gold SQL
    returns) is non-empty are kept.
    """
    from worlds.restaurants import CUISINE_PHRASINGS, LOCATIONS

    plain = plain_cuisines()
    out: list[dict[str, Any]] = []
    templates = (
        "Show me {adj}{cw} places in {loc}{r}.",
        "Any {adj}{cw} restaurants in {loc}{r}?",
        "I want {adj}{cw} in {loc}{r}.",
    )
    tries = 0
    while len(out) < n and tries < n * max_tries:
        tries += 1
        colloquial = (len(out) % 2 == 1) if colloquial_share == 0.5 else rng.random() < colloquial_share
        if colloquial:
            word, gold = rng.choice(CUISINE_PHRASINGS)
        else:
            word = rng.choice(plain)
            gold = frozenset({word})
        loc = rng.choice(LOCATIONS)
        price = rng.choice((None, None, "cheap", "moderate", "expensive"))
        rating = rng.choice((None, None, None, 4.0, 4.5))
        text = rng.choice(templates).format(
            adj=f"{PRICE_WORDS[price]} " if price else "",
            cw=word,
            loc=loc,
            r=f" with at least {rating:g} stars" if rating else "",
        )
        conds = [f"location = '{loc}'", "(" + " OR ".join(f"'{g}' = ANY(cuisines)" for g in sorted(gold)) + ")"]
        if price:
            conds.append(f"price = '{price}'")
        if rating:
            conds.append(f"rating >= {rating}")
        gold_sql = "SELECT * FROM restaurants WHERE " + " AND ".join(conds)
        gold_ids = {
            r._id
            for r in rows
            if r.location == loc
            and gold & set(r.cuisines)
            and (price is None or r.price == price)
            and (rating is None or r.rating >= rating)
        }
        if not gold_ids:
            continue
        out.append(
            {
                "question": text,
                "colloquial": colloquial,
                "word": word,
                "gold": gold,
                "location": loc,
                "price": price,
                "rating": rating,
                "gold_sql": gold_sql,
                "gold_ids": gold_ids,
            }
        )
    return out


# Lecture 6 §3.3's evaluation on phrasings the simulated LLM was not written from: colloquial ways to name a cuisine,
# with the values a person who knows the enum would pick.  Evaluator data, written for this test after the simulator:
# none is a phrase the simulator's common sense knows (tests/engines/lab/test_lecture6.py checks it), so its score here
# measures how its sense of words generalises — and where only world knowledge would help (cortado, taqueria,
# shawarma), the simulator honestly misses.
HELD_OUT_PHRASINGS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (phrase, frozenset(gold))
    for phrase, gold in (
        ("cortado", {"coffee & tea", "cafe"}),
        ("coffeehouse", {"coffee & tea", "cafe"}),
        ("sushi bar", {"sushi bars"}),
        ("smokehouse", {"barbeque"}),
        ("szechwan", {"szechuan"}),
        ("ramen shop", {"ramen"}),
        ("soba", {"noodles", "japanese"}),
        ("milk tea", {"bubble tea"}),
        ("hamburger", {"burgers"}),
        ("steak house", {"steakhouses"}),
        ("pancakes", {"breakfast & brunch"}),
        ("patisserie", {"bakeries", "desserts"}),
        ("bread", {"bakeries"}),
        ("vegetarian-friendly", {"vegetarian", "vegan"}),
        ("dim-sum", {"dim sum"}),
        ("seafood shack", {"seafood"}),
        ("shellfish", {"seafood"}),
        ("sub sandwich", {"sandwiches"}),
        ("vino", {"wine bars"}),
        ("mezze", {"middle eastern", "mediterranean"}),
        ("shawarma", {"middle eastern", "mediterranean"}),
        ("taqueria", {"mexican"}),
        ("french bistro", {"french"}),
        ("ice cream", {"desserts"}),
        ("pizza place", {"pizza"}),
        ("noodle bar", {"noodles"}),
        ("thai food", {"thai"}),
        ("bubble-tea", {"bubble tea"}),
    )
)
