"""The simulated semantic parser: a lexicon and a small grammar.

It plays the zero-shot LLM parser of lecture 6 §3.1.  Like a real model it is shown
only the utterance, the dialogue history (earlier utterances and the SQL that ran
for them) and the schema text; it knows general words about food and places, but
not the database's 50 cuisine values (they are not in the schema), so it writes
what the user said (``'coffee' = ANY(cuisines)`` for "a café") and leaves the
mapping onto real values to ``classify()``.

Follow-ups ("what about italian ones?") refine the previous query, which the
parser reads back from the previous turn's SQL, exactly as a model reads it in its
prompt.  Its habits and mistakes are those of §3.1 and §4.4: "good" and "great"
become ``rating >= 4.0``; a rating order gets a secondary key; at a seeded rate it
drops one condition.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp

from engines.llm.protocol import Turn
from engines.llm.seeded import unit
from engines.sql.folding import fold

# --- the model's general knowledge: places and food words -------------------------------

# Place names the model knows (written the way users say them).  Not the database's values.
PLACES: dict[str, str] = {
    "palo alto": "Palo Alto",
    "mountain view": "Mountain View",
    "menlo park": "Menlo Park",
    "sunnyvale": "Sunnyvale",
    "bernal heights": "Bernal Heights",
    "bernal": "Bernal",
    "mission district": "Mission District",
    "the mission": "the Mission",
    "sf": "SF",
    "san francisco": "San Francisco",
    "cupertino": "Cupertino",
    "san jose": "San Jose",
    "los altos": "Los Altos",
    "redwood city": "Redwood City",
    "oakland": "Oakland",
    "berkeley": "Berkeley",
    "santa clara": "Santa Clara",
    "stanford": "Stanford",
    "downtown": "downtown",
    "noe valley": "Noe Valley",
    "soma": "SoMa",
}

# Food words the model knows, longest first when matched; value = the literal it writes (what the user said, in
# a customary form).  General words, none of them a phrasing an evaluator scores (tests/engines/lab/test_lecture6.py
# checks it): a word that is not here is still read off the sentence's grammar (_slot_foods: "any bbq places in
# Sunnyvale?" names 'bbq'), as a model reads a noun it has never seen in front of "places".
FOOD_WORDS: dict[str, str] = {
    "cafe": "cafe",
    "cafes": "cafe",
    "bubble tea": "bubble tea",
    "ramen": "ramen",
    "noodles": "noodles",
    "dim sum": "dim sum",
    "barbeque": "barbeque",
    "burgers": "burgers",
    "steakhouse": "steakhouse",
    "steakhouses": "steakhouses",
    "seafood": "seafood",
    "vegan": "vegan",
    "vegetarian": "vegetarian",
    "salad": "salad",
    "salads": "salad",
    "sandwiches": "sandwiches",
    "bakeries": "bakeries",
    "dessert": "dessert",
    "desserts": "desserts",
    "breakfast": "breakfast",
    "breakfast & brunch": "breakfast & brunch",
    "wine bar": "wine bar",
    "wine bars": "wine bars",
    "champagne": "champagne",
    "pizza": "pizza",
    "pizzeria": "pizza",
    "tacos": "tacos",
    "taco": "tacos",
    "pho": "pho",
    "poke": "poke",
    "latin american": "latin american",
    "soul food": "soul food",
    "southern": "southern",
    "cajun": "cajun",
    "middle eastern": "middle eastern",
    "mediterranean": "mediterranean",
    "szechuan": "szechuan",
    "cantonese": "cantonese",
    "modern european": "modern european",
    "american": "american",
    "new american": "american (new)",
    "traditional american": "american (traditional)",
    "american (traditional)": "american (traditional)",
    "american (new)": "american (new)",
}
for _n in (
    "italian",
    "mexican",
    "chinese",
    "japanese",
    "korean",
    "thai",
    "vietnamese",
    "indian",
    "french",
    "greek",
    "spanish",
    "ethiopian",
    "peruvian",
    "brazilian",
    "hawaiian",
    "taiwanese",
    "singaporean",
    "malaysian",
    "filipino",
    "cuban",
    "turkish",
    "lebanese",
    "german",
    "persian",
):
    FOOD_WORDS[_n] = _n

_PRICE_WORDS: tuple[tuple[str, str], ...] = (
    (r"\b(cheap|cheapest|inexpensive|affordable|budget|low[- ]cost|cheaply)\b", "cheap"),
    (r"\b(moderately priced|mid[- ]range|moderate|reasonably priced|mid[- ]priced)\b", "moderate"),
    (r"\b(expensive|pricey|upscale|high[- ]end)\b", "expensive"),
    (r"\b(luxury|luxurious|fancy|fine dining|splurge)\b", "luxury"),
)

_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NUM = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"

_FOLLOW_UP = re.compile(
    r"^(what|how) about\b|\binstead\b|\bthere\b|\bthose\b|\bthem\b|\bthese\b|\bones\b|\bwhich one\b"
    r"|\bwhich of\b|\bamong\b|\bof them\b|^(and|also|only|just|now)\b|\bthe same\b|\bany of\b"
)
_LIST_REQUEST = re.compile(r"\b(show|find|list|give me|recommend|looking for|search|suggest)\b|^(any|some)\b")
_RESTAURANT_NOUN = re.compile(
    r"\b(restaurants?|places?|spots?|eater(y|ies)|joints?|diners?|bistros?|somewhere|anywhere)\b"
)
_CHITCHAT = re.compile(
    r"^\s*(thanks|thank you|thx|ok(ay)?|great,? thanks|cool|hi|hello|hey|bye|goodbye|good night)\b[\s!.]*$"
)
_DEFINITION = re.compile(r"^\s*(what|who)\s+(is|are)\s+(an?\s+|the\s+)?(?P<thing>[\w\s&'-]+?)\s*\??\s*$")


# what a frame filters on: locations, cuisines, prices, rating, name, text questions, "open late"
Filters = tuple[
    tuple[str, ...],
    tuple[str, ...],
    tuple[str, ...],
    tuple[str, float] | None,
    str | None,
    tuple[tuple[str, str], ...],
    bool,
]


@dataclass
class Frame:
    """What a query asks for, slot by slot (the parser's reading of an utterance or of SQL)."""

    locations: list[str] = field(default_factory=list)
    cuisines: list[str] = field(default_factory=list)
    prices: list[str] = field(default_factory=list)
    rating: tuple[str, float] | None = None  # (">=" or ">", value)
    name: str | None = None
    order: list[tuple[str, bool]] = field(default_factory=list)  # (column, descending)
    limit: int | None = None
    select: list[str] | None = None  # None: SELECT *
    count: bool = False
    texts: list[tuple[str, str]] = field(default_factory=list)  # SUQL: (text column, question) -> answer() = 'Yes'
    late: bool = False  # SUQL: "open late" (written as a text comparison: the §4.2 mistake)
    suql: bool = False

    def filters(self) -> Filters:
        return (
            tuple(self.locations),
            tuple(self.cuisines),
            tuple(self.prices),
            self.rating,
            self.name,
            tuple(self.texts),
            self.late,
        )

    def has_any(self) -> bool:
        return any(self.filters()) or bool(self.order) or self.count or self.select is not None


# --- reading an utterance ----------------------------------------------------------------


def read_utterance(text: str, schema: str) -> tuple[Frame, set[str]]:
    """Slots mentioned in one utterance, and which slots were mentioned at all."""
    raw = text.strip()
    low = raw.lower()
    f = Frame()
    said: set[str] = set()

    if re.search(r"\bhow many\b|\bnumber of (restaurants|places)\b|\bcount\b", low):
        f.count = True
        said.add("count")
    proj = _projection(low)
    if proj:
        f.select = proj
        said.add("select")

    places = _places(raw, low)
    if places:
        f.locations = places
        said.add("location")

    foods = _foods(low)
    if foods:
        f.cuisines = foods
        said.add("cuisine")

    enum_prices = _schema_enum(schema, "price")
    for pattern, value in _PRICE_WORDS:
        if re.search(pattern, low) and (not enum_prices or value in enum_prices):
            if value not in f.prices:
                f.prices.append(value)
    if f.prices:
        said.add("price")

    rating = _rating(low)
    if rating:
        f.rating = rating
        said.add("rating")

    order = _superlative(low)
    if order:
        f.order, f.limit = order
        said.add("order")

    name = _restaurant_name(raw, places)
    if name:
        f.name = name
        said.add("name")
    if suql_schema(schema):
        f.suql = True
        # where and which place were read already: what is left around them is the rest of the request, so each
        # becomes a break between phrases ("a place in Bernal Heights romantic enough for a date")
        without_places = low
        for key in [*PLACES, *(x.lower() for x in f.locations), *([name.lower()] if name else [])]:
            without_places = re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", " , ", without_places)
        f.texts = _text_conditions(without_places, f.cuisines)
        if f.texts:
            said.add("text")
        if re.search(r"\bopen (late|after)\b|\blate[- ]night\b", low):
            f.late = True
            said.add("late")
    return f, said


def suql_schema(schema: str) -> bool:
    """The schema offers SUQL's answer() (the prompt a SUQL parser is shown)."""
    return "answer(" in schema


# What only the reviews can tell: the words that name such a wish (the model's general knowledge of what a table of
# places does not hold).  The restaurants' SUQL parser takes only the patterns: it asks the reviews in the user's own
# words (_wish_questions).  The second item is the question the own-data parser (sim_tables) still writes.
TEXT_FEATURES: tuple[tuple[str, str], ...] = (
    (r"family[- ]friendly|\bkids?\b|children|toddlers?|little ones", "is it family-friendly?"),
    (r"romantic|\bdate\b|date night|anniversary", "is it good for a date?"),
    (r"\bviews?\b", "does it have a great view?"),
    (r"spicy|\bheat\b", "is the food spicy?"),
    (r"\bgroups?\b|large party|big party|crowd", "is it good for groups?"),
    (r"outdoor|patio|outside|terrace", "does it have outdoor seating?"),
    (r"parking|park easily|place to park", "is parking easy?"),
    (r"quiet|calm", "is it quiet?"),
    (r"cozy", "is it cozy?"),
)
# Dish words the model knows after "with", "for", "has" ("a place with pasta").  After "serve", "sell" or "where can
# I get" the grammar names the dish whatever it is (_SERVED), so no phrasing an evaluator scores is needed here.
DISH_WORDS = ("pasta", "burgers", "tacos", "oysters", "noodles", "pizza", "dessert", "ramen", "pho", "croissants")
_SERVED = re.compile(
    r"\b(?:serves?|serving|sells?|selling|where can i get|where to get|where can i find)\s+(?:good\s+|great\s+|some\s+|any\s+)?"
    r"(?P<dish>[a-z][a-z' -]*?)(?=\s+(?:in|near|around|at)\b|\s*[?.!,]|$)"
)

# --- a wish in the user's words -> the yes/no question asked of the reviews ----------------------------------------
#
# English grammar, not a table of phrasings: the phrase that carries a wish runs from the word that introduces it (a
# verb: "that is good for large groups", "with a great view", "say it serves really spicy food"; or nothing: "a place
# in Bernal Heights romantic enough for a date") to where the next part of the request begins (a place, "and", another
# clause); an adjective before the noun it qualifies ("a quiet place", "spicy food") is that adjective.  The question
# keeps every word of the phrase: the verb decides its form ("is it ...?", "does it have ...?", "can you ...?").

_WORD = re.compile(r"[a-z0-9][a-z0-9'&-]*|[,.;:!?()]")
# the verb that introduces a wish -> the verb its question asks with ("is it", "does it have")
_WISH_VERBS = {
    **dict.fromkeys(("is", "are", "was", "were", "be", "being", "that's", "it's", "they're", "which's"), "is"),
    **dict.fromkeys(("with", "has", "have", "having", "had"), "have"),
    **dict.fromkeys(("serve", "serves", "serving"), "serve"),
    **dict.fromkeys(("offer", "offers", "offering"), "offer"),
}
_SUBJECTS = frozenset({"i", "we", "you"})
_MODALS = frozenset({"can", "could"})
_RELATIVE = frozenset({"that", "which", "where"})
# where the words of a request end one part and begin another: a conjunction, a preposition of place (the place itself
# is a break already), a verb of the request
_BREAKS = frozenset(
    {"and", "or", "but", "in", "near", "around", "at", "please", "who"}
    | {"find", "show", "me", "want", "need", "recommend", "looking", "suggest", "list", "get", "give", "search", "know"}
)
_PLACE_NOUN = re.compile(
    r"(?:restaurants?|places?|spots?|eater(?:y|ies)|joints?|diners?|bistros?|somewhere|anywhere|ones?|options?)$"
)
_FOOD_NOUN = re.compile(r"(?:food|dishes|dish|meals?|cooking|cuisine)$")
_DETERMINERS = frozenset({"a", "an", "the", "some", "any", "all"})
_ADVERB = re.compile(r"(?:[a-z]+ly|very|super|extra|quite|so|too)$")


MAX_WISH_WORDS = 12
"""A wish's phrase is read at most 12 words either side of the words that name it (a qualifier is a few words; the
bound keeps reading linear in the utterance)."""
MAX_WISHES = 16
"""At most 16 wishes become answer() questions; the not-understood check names any further one."""


def _wish_questions(low: str, foods: Sequence[str] = ()) -> list[str]:
    """The yes/no questions a parser asks the reviews for the wishes of ``low`` (lower-cased, places and names blanked
    to commas), each in the user's words, in the order of TEXT_FEATURES; several matches inside one phrase ("romantic
    enough for a date") ask one question."""
    tokens = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(low)]
    words = [t[0] for t in tokens]
    starts, ends = [t[1] for t in tokens], [t[2] for t in tokens]
    food_words = {w for f in foods for w in f.split()} | {k for k in FOOD_WORDS if " " not in k}
    questions: dict[str, None] = {}
    taken: set[int] = set()
    for pattern, _ in TEXT_FEATURES:
        for m in re.finditer(pattern, low):
            first, last = bisect_right(ends, m.start()), bisect_left(starts, m.end()) - 1
            if first > last or first in taken:
                continue
            span, question = _wish_phrase(words, first, last, food_words)
            taken.update(span)
            questions[question] = None
            if len(questions) == MAX_WISHES:
                return list(questions)
    return list(questions)


def _wish_phrase(words: list[str], first: int, last: int, food_words: set[str]) -> tuple[range, str]:
    """The phrase around words[first:last + 1] (a wish) and the question that asks it."""
    # left: the nearest word that introduces the phrase, or a break
    verb: str | None = None
    start: int | None = None
    k = first - 1
    while k >= max(0, first - MAX_WISH_WORDS):
        w = words[k]
        if w in _WISH_VERBS:
            verb = _WISH_VERBS[w]
            break
        if w in _MODALS and k > 0 and words[k - 1] in _SUBJECTS:
            verb = f"{w} {words[k - 1]}"
            break
        if w in _RELATIVE:
            verb = w
            break
        if w in ("and", "or") and start is None:
            start = k + 1  # "with pasta and a view": the phrase begins after "and", its verb is the first part's
        elif not w[0].isalnum() or w in _BREAKS or _PLACE_NOUN.match(w):
            break
        k -= 1
    if start is None:
        start = k + 1
    elif verb is not None and start + 1 < len(words) and words[start + 1] in ("for", "enough", "to"):
        verb = None  # "with a patio and good for kids": an adjective's phrase, not the first part's object
    # right: up to the next part of the request
    end = last + 1
    noun: str | None = None
    while end < min(len(words), last + 1 + MAX_WISH_WORDS):
        w = words[end]
        if not w[0].isalnum() or w in _BREAKS or w in _RELATIVE or (w == "with" and end > last):
            break
        if verb is None and (_PLACE_NOUN.match(w) or _FOOD_NOUN.match(w)):
            noun = w  # "a quiet place", "spicy food": the wish qualifies the noun
            break
        end += 1
    if noun is not None:
        lo = first
        while lo > start and _ADVERB.match(words[lo - 1]):  # "really spicy"
            lo -= 1
        hi = last + 1
        while hi < end and words[hi] not in food_words and not words[hi][0].isdigit():  # "date night", not "vegan"
            hi += 1
        phrase = " ".join(words[lo:hi])
        span = range(lo, hi)
        if _FOOD_NOUN.match(noun):
            return span, f"is the {noun} {phrase}?"
        return span, f"is it {phrase}?"
    while start < first and words[start] in _DETERMINERS and verb is None:
        start += 1
    phrase = " ".join(words[start:end])
    span = range(start, end)
    if verb == "is" or verb is None:
        if phrase.startswith("to ") and verb is None:  # "somewhere to eat outside"
            return span, f"can you {phrase[3:]}?"
        return span, f"is it {phrase}?"
    if verb == "where":  # "somewhere where kids can play": a clause of its own
        return span, f"is it a place where {phrase}?"
    if verb in ("that", "which"):  # "that welcomes kids": the verb is the phrase's first word
        head, _, rest = phrase.partition(" ")
        base = (
            head[:-2] if head.endswith(("shes", "ches", "sses", "xes")) else head[:-1] if head.endswith("s") else head
        )
        return span, f"does it {base}{' ' + rest if rest else ''}?"
    if verb.startswith(("can ", "could ")):
        return span, f"{verb} {phrase}?"
    return span, f"does it {verb} {phrase}?"


def _text_conditions(low: str, foods: Sequence[str] = ()) -> list[tuple[str, str]]:
    out = [("reviews", q) for q in _wish_questions(low, foods)]
    asked = " ".join(q for _, q in out)
    m = re.search(
        r"\b(serves?|serving|get|has|have|with|for)\s+(?:good\s+|great\s+|some\s+)?(" + "|".join(DISH_WORDS) + r")\b",
        low,
    )
    dish = m.group(2) if m else None
    served = _SERVED.search(low)
    if dish is None and served and served.group("dish").strip() not in _NOT_FOOD:
        dish = served.group("dish").strip()
    if dish and f" {dish}?" in f" {asked}":
        dish = None  # "serve really spicy food" is a wish the reviews are asked about, not a dish
    if dish:
        out.append(("popular_dishes", f"does this restaurant serve {dish}?"))
    return out


def _projection(low: str) -> list[str] | None:
    cols: list[str] = []
    if re.search(r"\bphone( number)?\b|\bcall\b|\bnumber for\b", low):
        cols.append("phone_number")
    if re.search(r"\baddress\b|\bwhere is\b|\bwhere's\b", low):
        cols.append("address")
    if re.search(r"\bhours\b|\bwhen (is|does) .* open\b|\bopening\b|\bclose\b", low):
        cols.append("opening_hours")
    if re.search(r"\b(popular|signature) dishes\b|\bwhat (should i|to) order\b", low):
        cols.append("popular_dishes")
    return ["name", *cols] if cols else None


def _places(raw: str, low: str) -> list[str]:
    found: list[str] = []
    taken = fold(low)  # "Pälo Àlto" is Palo Alto: accents folded, as classify() folds them
    for key in sorted(PLACES, key=len, reverse=True):
        m = re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", taken)
        if m:
            found.append(PLACES[key])
            taken = taken[: m.start()] + " " * len(key) + taken[m.end() :]
    if found:
        return found
    # An unknown capitalised place after "in" / "near" / "around".
    m = re.search(r"\b(?:in|near|around)\s+((?:[^\W\d_a-z][^\W\d_]+)(?:\s+[^\W\d_a-z][^\W\d_]+){0,2})", raw)
    if m and m.group(1).lower() not in FOOD_WORDS:
        return [m.group(1)]
    return []


def _foods(low: str) -> list[str]:
    text = low
    found: list[str] = []
    for key in sorted(FOOD_WORDS, key=len, reverse=True):
        pattern = rf"(?<![\w-]){re.escape(key)}(?![\w-])"
        m = re.search(pattern, text)
        if not m:
            continue
        # "good for a date" etc. never name food; "wine" in "wine bar" was taken by the longer key.
        literal = FOOD_WORDS[key]
        if literal not in found:
            found.append(literal)
        text = text[: m.start()] + " " * len(key) + text[m.end() :]
    slot = _slot_foods(low)
    # a food the grammar names that covers a known word ("korean" in "korean barbeque") is said as a whole
    found = [f for f in found if not any(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", s) for s in slot)]
    found += [s for s in slot if s not in found]
    # keep the order in which they were said
    return sorted(found, key=lambda lit: _first_pos(low, lit))


# The grammar of a request for a kind of food: a lead ("show me", "any", "i want"; or none: "cheap bbq in the
# Mission"), what qualifies it (an article,
# a price, "good"), the food, then the kind of place or where ("places", "food", "in Palo Alto").
_SLOT_LEAD = r"(?:show me|find me|find|any|i want|i'd like|looking for|get me|recommend|what's some|what are some|what are the top \w+|top \w+)"
_SLOT_QUALIFIER = (
    r"(?:a|an|some|the|all|any|every|other|more|those|these|good|great|nice|best|really|cheap|inexpensive|affordable|moderately priced|mid-range"
    r"|reasonably priced|expensive|pricey|upscale|luxury|fancy|\d+)"
)
_SLOT = re.compile(
    rf"(?:\b{_SLOT_LEAD}\s+|^(?!(?:how|what|which|where|who|when|why|is|are|do|does|can|could|would|will|show|find|give|tell|list|i|any|thanks|thank|hello|hi)\b))(?:{_SLOT_QUALIFIER}\s+)*(?P<food>[^\W\d][\w&'()-]*(?:\s+(?:&\s+)?[^\W\d][\w&'()-]*){{0,3}})"
    r"\s+(?:places?|restaurants?|spots?|joints?|food|in|near|around|there)\b"
)
_SLOT_LEAD_AT_START = re.compile(rf"{_SLOT_LEAD}\s")
_NOT_FOOD = frozenset(
    {
        "restaurants",
        "restaurant",
        "places",
        "place",
        "something",
        "somewhere",
        "anything",
        "one",
        "ones",
        "options",
        "me",
    }
)


_FILLER = frozenset({"a", "an", "the", "all", "any", "some", "every", "other", "more", "those", "these", "of", "me"})


def _slot_foods(low: str) -> list[str]:
    """The foods the request's grammar names, as said ("any bbq places" -> bbq; "italian or pizza places" -> both)."""
    led = [m for m in _SLOT.finditer(low) if m.start() > 0 or _SLOT_LEAD_AT_START.match(low)]
    m = led[0] if led else _SLOT.match(low)
    if not m:
        return []
    phrase = re.split(r"\s+(?:in|near|around|there)\s+", m.group("food").strip())[0]  # what is said before where
    phrase = re.sub(r"\s+(?:places?|restaurants?|spots?|joints?)$", "", phrase)
    if phrase.endswith(" food") and not any(phrase.endswith(k) for k in FOOD_WORDS if k.endswith(" food")):
        phrase = phrase[: -len(" food")]  # "mexican food" names mexican; "soul food" is itself a food
    out = []
    for part in re.split(r"\s*,\s*|\s+or\s+|\s+and\s+", phrase):
        part = part.strip()
        if (
            not part
            or part in _NOT_FOOD
            or set(part.split()) <= _FILLER
            or part in PLACES
            or any(re.search(p, part) for p, _ in _PRICE_WORDS)
        ):
            continue
        if any(re.search(pattern, part) for pattern, _ in TEXT_FEATURES):
            continue  # "family-friendly places" qualify the place, they name no food
        out.append(part)
    return out


def _first_pos(low: str, literal: str) -> int:
    said = [k for k, v in FOOD_WORDS.items() if v == literal] + [literal]
    positions = [low.find(k) for k in said if low.find(k) >= 0]
    return min(positions) if positions else len(low)


def _rating(low: str) -> tuple[str, float] | None:
    m = re.search(r"\b(at least|minimum( of)?|no less than)\s+(\d(?:\.\d)?)\s*(stars?|rating)?", low)
    if m:
        return (">=", float(m.group(3)))
    m = re.search(r"\b(over|above|more than|better than|higher than)\s+(\d(?:\.\d)?)\s*(stars?|rating)?", low)
    if m:
        return (">", float(m.group(2)))
    m = re.search(
        r"(\d(?:\.\d)?)\s*[-+]?\s*stars?\s*(or (more|higher|better|above)|and up|\+)?", low
    )  # 4 stars, 5-star
    if m:
        return (">=", float(m.group(1)))
    if re.search(r"\b(rated|rating of)\s+(\d(?:\.\d)?)\s*(\+|or (more|higher|above))", low):
        m2 = re.search(r"(\d(?:\.\d)?)", low.split("rat", 1)[1])
        if m2:
            return (">=", float(m2.group(1)))
    # The habit of §3.1: "good" / "great" become a rating condition.
    if re.search(
        r"\b(good|great|excellent|highly rated|well[- ]rated|well[- ]reviewed)\b(?!\s+(for|with|view|views|parking|value|place to|spot for))",
        low,
    ):
        if not re.search(r"\b(top|best|highest)[- ]", low):
            return (">=", 4.0)
    return None


def _superlative(low: str) -> tuple[list[tuple[str, bool]], int] | None:
    k = 1
    m = re.search(rf"\btop\s+{_NUM}\b|\b{_NUM}\s+(best|top|highest|most)\b", low)
    if m:
        word = m.group(1) or m.group(2)
        k = int(word) if word.isdigit() else _NUMBERS[word]
    elif re.search(r"\b(restaurants|places|ones|spots)\b", low) and not re.search(r"\b(the|which) one\b", low):
        k = 5
    if re.search(r"\b(top[- ]rated|highest[- ]rated|best[- ]rated|best|top|highest rating|highest)\b", low):
        return [("rating", True)], k
    if re.search(r"\b(most popular|most reviewed|most reviews|busiest|most famous)\b", low):
        return [("num_reviews", True)], k
    if re.search(r"\b(lowest[- ]rated|worst)\b", low):
        return [("rating", False)], k
    return None


def _restaurant_name(raw: str, places: list[str]) -> str | None:
    m = re.search(r"\b(?:of|at|for|about|called|named|is)\s+((?:[A-Z][\w'&]*)(?:\s+(?:[A-Z][\w'&]*|II|III|IV))+)", raw)
    if not m:
        return None
    name = m.group(1).strip()
    if name.lower() in PLACES or name in places:
        return None
    return name


def _schema_enum(schema: str, column: str) -> list[str]:
    m = re.search(rf"\b{column}\s+ENUM\s*\(([^)]*)\)", schema, re.IGNORECASE)
    return re.findall(r"'([^']*)'", m.group(1)) if m else []


def _schema_table(schema: str) -> str:
    m = re.search(r"CREATE TABLE\s+(\w+)", schema, re.IGNORECASE)
    return m.group(1) if m else "restaurants"


# --- the input classifier ----------------------------------------------------------------


def route(utterance: str, history: Sequence[Turn], schema: str) -> tuple[bool, str]:
    low = utterance.strip().lower()
    if not low:
        return False, "the message is empty"
    if _CHITCHAT.match(low):
        return False, "small talk: nothing to look up"
    frame, said = read_utterance(utterance, schema)
    has_restaurant_word = bool(_RESTAURANT_NOUN.search(low))
    d = _DEFINITION.match(low)
    if d and not has_restaurant_word and not ({"location", "price", "rating", "name", "count", "select"} & said):
        return False, f"asks what {d.group('thing').strip()} is: general knowledge, not a lookup"
    if said:
        return True, "mentions " + ", ".join(sorted(said)) + ": a database lookup"
    if has_restaurant_word:
        return True, "asks about restaurants: a database lookup"
    if _FOLLOW_UP.search(low) and any(t.sql for t in history):
        return True, "refers back to the previous results"
    return False, "names nothing in the database"


_YES = re.compile(
    r"^\s*(yes|yeah|yep|yup|sure|ok(ay)?|alright|all right|please|go ahead|do it|relax it|of course|why not)"
    r"(\W+(yes|sure|ok(ay)?|please|go ahead|do it|relax it|thanks|thank you|that would be great))*[\s!.]*$"
)
_NO = re.compile(r"^\s*(no|nope|nah|no thanks|no thank you|don'?t|keep it|leave it)(\W+(thanks|thank you))?[\s!.]*$")


def answers_offer(utterance: str) -> bool | None:
    """A reply to "Would you like me to relax it?": True for a yes ("sure", "ok please"), False for a no,
    None for anything else (a new question)."""
    low = utterance.strip().lower()
    if _YES.match(low):
        return True
    if _NO.match(low):
        return False
    return None


def relaxed(history: Sequence[Turn], offer: str) -> str | None:
    """The previous query without the condition offered to relax (decided on the parsed trees); None when the
    previous query or the condition cannot be read, or the condition is not one of its top-level ones."""
    previous = next((t.sql for t in reversed(history) if t.sql), None)
    if previous is None:
        return None
    try:
        tree = sqlglot.parse_one(previous, read="postgres")
        condition = sqlglot.parse_one(offer, read="postgres")
    except sqlglot.errors.SqlglotError:
        return None
    where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    if where is None:
        return None
    parts = _conjuncts(where.this)
    rest = [p for p in parts if p != condition]
    if len(rest) == len(parts):
        return None
    out = tree.copy()
    out.set("where", exp.Where(this=exp.and_(*(p.copy() for p in rest))) if rest else None)
    return out.sql(dialect="postgres", normalize_functions=False)


# --- parsing -----------------------------------------------------------------------------


def parse(utterance: str, history: Sequence[Turn], schema: str, *, seed: int, drop_rate: float = 0.04) -> str:
    """One SQL statement (PostgreSQL dialect) for this turn of the dialogue."""
    new, said = read_utterance(utterance, schema)
    previous = next((t.sql for t in reversed(history) if t.sql), None)
    low = utterance.lower()
    follow_up = previous is not None and (
        bool(_FOLLOW_UP.search(low)) or not (_RESTAURANT_NOUN.search(low) or {"location", "name"} & said)
    )
    frame = (
        merge(frame_from_sql(previous), new, said, relist=bool(_LIST_REQUEST.search(low)))
        if follow_up and previous
        else new
    )
    key = f"{utterance}\x00{previous or ''}"
    frame = _maybe_drop_condition(frame, seed=seed, key=key, rate=drop_rate)
    if frame.suql:
        frame = _suql_habits(frame, utterance, seed=seed, key=key)
    return to_sql(frame, _schema_table(schema))


def _suql_habits(frame: Frame, utterance: str, *, seed: int, key: str) -> Frame:
    """A SUQL parser recommends a few places (LIMIT 3 unless asked for all), and makes the
    mistakes of lecture 7 §4.2 at seeded rates: dishes looked up in the reviews instead of
    the popular dishes."""
    low = utterance.lower()
    wants_all = bool(re.search(r"\b(all|every|list|how many)\b", low))
    limit = frame.limit if frame.order else (None if wants_all or frame.count else 3)
    texts = [
        ("reviews", q) if column == "popular_dishes" and unit(seed, "parse-dish-column", key) < 0.3 else (column, q)
        for column, q in frame.texts
    ]
    return replace(frame, limit=limit, texts=texts)


def merge(old: Frame, new: Frame, said: set[str], *, relist: bool = False) -> Frame:
    """A follow-up: what it mentions replaces the old slot; the rest carries over.

    "What about in Palo Alto?" asks the same question elsewhere: ordering and the
    columns asked for stay.  "Show me a café there instead" (``relist``) asks for a
    list again: a previous "top-rated" or "phone number" is dropped.
    """
    out = replace(
        old,
        locations=list(old.locations),
        cuisines=list(old.cuisines),
        prices=list(old.prices),
        texts=list(old.texts),
        suql=new.suql or old.suql,
    )
    changed = False
    for slot, attr in (
        ("location", "locations"),
        ("cuisine", "cuisines"),
        ("price", "prices"),
        ("rating", "rating"),
        ("name", "name"),
        ("text", "texts"),
        ("late", "late"),
    ):
        if slot in said:
            setattr(out, attr, getattr(new, attr))
            changed = True
    if "order" in said:
        out.order, out.limit = new.order, new.limit
    elif changed and relist:
        out.order, out.limit = [], None
    if "select" in said:
        out.select = new.select
    elif changed and relist:
        out.select = None
    out.count = new.count if ("count" in said or (changed and relist)) else old.count
    return out


def _maybe_drop_condition(frame: Frame, *, seed: int, key: str, rate: float) -> Frame:
    conditions = [
        s
        for s, v in (
            ("locations", frame.locations),
            ("cuisines", frame.cuisines),
            ("prices", frame.prices),
            ("rating", frame.rating),
        )
        if v
    ]
    if len(conditions) < 2 or unit(seed, "parse-drop", key) >= rate:
        return frame
    victim = conditions[int(unit(seed, "parse-drop-which", key) * len(conditions))]
    if victim == "rating":
        return replace(frame, rating=None)
    if victim == "locations":
        return replace(frame, locations=[])
    if victim == "cuisines":
        return replace(frame, cuisines=[])
    return replace(frame, prices=[])


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def to_sql(frame: Frame, table: str = "restaurants") -> str:
    conds: list[str] = []
    if frame.name:
        conds.append(f"name = {_q(frame.name)}")
    if frame.cuisines:
        parts = [f"{_q(c)} = ANY(cuisines)" for c in frame.cuisines]
        conds.append(parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")")
    if frame.locations:
        conds.append(
            f"location = {_q(frame.locations[0])}"
            if len(frame.locations) == 1
            else "location IN (" + ", ".join(_q(v) for v in frame.locations) + ")"
        )
    if frame.prices:
        conds.append(
            f"price = {_q(frame.prices[0])}"
            if len(frame.prices) == 1
            else "price IN (" + ", ".join(_q(v) for v in frame.prices) + ")"
        )
    if frame.rating:
        op, value = frame.rating
        conds.append(f"rating {op} {value:.1f}")
    if frame.late:
        conds.append("opening_hours > '10pm'")
    for column, question in frame.texts:
        conds.append(f"answer({column}, {_q(question)}) = 'Yes'")
    if frame.count:
        head = "SELECT COUNT(*)"
    elif frame.select:
        head = "SELECT " + ", ".join(frame.select)
    elif frame.suql:
        head = "SELECT *, summary(reviews)"
    else:
        head = "SELECT *"
    sql = f"{head} FROM {table}"
    if conds:
        sql += " WHERE " + " AND ".join(conds)
    if frame.order and not frame.count:
        keys = list(frame.order)
        if keys[0][0] == "rating" and len(keys) == 1:
            keys.append(("num_reviews", True))  # the habit of §4.4: a secondary sort key
        # "best first" means the known values first: PostgreSQL sorts NULLs first in DESC, so say NULLS LAST
        sql += " ORDER BY " + ", ".join(f"{c} {'DESC NULLS LAST' if d else 'ASC'}" for c, d in keys)
        if frame.limit:
            sql += f" LIMIT {frame.limit}"
    elif frame.suql and not frame.count and frame.limit:
        sql += f" LIMIT {frame.limit}"
    return sql


# --- reading SQL back into a frame (the model reads the previous query) ----------------------


def frame_from_sql(sql: str | None) -> Frame:
    f = Frame()
    if not sql:
        return f
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.ParseError:
        return f
    if not isinstance(tree, exp.Select):
        return f
    cols = [e for e in tree.expressions]
    if any(isinstance(e, exp.Count) for e in cols):
        f.count = True
    elif not any(isinstance(e, exp.Star) for e in cols):
        f.select = [e.alias_or_name for e in cols if not isinstance(e, exp.Anonymous)]
    if any(isinstance(e, exp.Anonymous) for e in cols):
        f.suql = True
    where = tree.args.get("where")
    if where is not None:
        for cond in _conjuncts(where.this):
            _absorb(f, cond)
    order = tree.args.get("order")
    if order is not None:
        f.order = [(o.this.name, bool(o.args.get("desc"))) for o in order.expressions if isinstance(o.this, exp.Column)]
        if len(f.order) == 2 and f.order[1] == ("num_reviews", True) and f.order[0][0] == "rating":
            f.order = f.order[:1]
    limit = tree.args.get("limit")
    if limit is not None and isinstance(limit.expression, exp.Literal):
        f.limit = int(limit.expression.name)
    return f


def _conjuncts(e: exp.Expr) -> list[exp.Expr]:
    e = e.unnest() if isinstance(e, exp.Paren) else e
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    return [e]


def _disjuncts(e: exp.Expr) -> list[exp.Expr]:
    e = e.unnest() if isinstance(e, exp.Paren) else e
    if isinstance(e, exp.Or):
        return _disjuncts(e.this) + _disjuncts(e.expression)
    return [e]


def _absorb(f: Frame, cond: exp.Expr) -> None:
    parts = _disjuncts(cond)
    cuisines = [_any_literal(p) for p in parts]
    if all(c is not None for c in cuisines):
        f.cuisines = [c for c in cuisines if c]
        return
    if isinstance(cond, exp.In) and isinstance(cond.this, exp.Column):
        values = [v.name for v in cond.expressions if isinstance(v, exp.Literal)]
        _set_column(f, cond.this.name, values)
    elif isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column) and isinstance(cond.expression, exp.Literal):
        _set_column(f, cond.this.name, [cond.expression.name])
    elif isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Anonymous) and str(cond.this.this).lower() == "answer":
        args = cond.this.expressions
        if len(args) == 2 and isinstance(args[0], exp.Column) and isinstance(args[1], exp.Literal):
            f.texts.append((args[0].name, args[1].name))
            f.suql = True
    elif isinstance(cond, exp.GT) and isinstance(cond.this, exp.Column) and cond.this.name == "opening_hours":
        f.late = True
    elif isinstance(cond, (exp.GTE, exp.GT)) and isinstance(cond.this, exp.Column) and cond.this.name == "rating":
        try:
            f.rating = (">=" if isinstance(cond, exp.GTE) else ">", float(cond.expression.name))
        except ValueError:
            pass


def _any_literal(e: exp.Expr) -> str | None:
    if isinstance(e, exp.EQ) and isinstance(e.this, exp.Literal) and isinstance(e.expression, exp.Any):
        inner = e.expression.this.unnest() if isinstance(e.expression.this, exp.Paren) else e.expression.this
        if isinstance(inner, exp.Column) and inner.name == "cuisines":
            return e.this.name
    return None


def _set_column(f: Frame, column: str, values: list[str]) -> None:
    if column == "location":
        f.locations = values
    elif column == "price":
        f.prices = values
    elif column == "name" and values:
        f.name = values[0]
