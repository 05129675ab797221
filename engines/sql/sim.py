"""The simulated LLM's reading and writing (backend ``sim``; the backend itself is engines.llm.sim).

The simulated implementations of the Text-to-SQL agent's ``classify`` and ``respond`` (engines/sql/tasks.py)
and of SUQL's ``answer()`` and ``summary()`` (engines/suql/tasks.py): they share one lexicon of topics and one
sense of word forms, so they live here, in the lowest package both agents import.  It is shown exactly what a
real model is shown — the text, the question, the schema, the candidate values — and never a world's
hidden truth.  What it "knows" is general: words for topics ("our children loved it" is about families), a
little common sense about food (cacio e pepe is pasta), and place names.  It errs at the seeded rates of the
:class:`~engines.llm.sim.SimBackend` it is handed, keyed on (seed, input): 3% when the text touches the
question's topic, 0.3% when it does not, so every run repeats exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import SupportsFloat, cast

from engines.llm.protocol import Answer, Results
from engines.llm.seeded import unit
from engines.llm.sim import SimBackend
from engines.sql import sim_reader

# --- topics: what a question is about, and the words that touch it -----------------------


@dataclass(frozen=True)
class Topic:
    name: str
    question: re.Pattern[str]  # the question is about this topic
    touches: re.Pattern[str]  # a sentence touches the topic
    negative: re.Pattern[str]  # a touching sentence that says the opposite


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_NEG = r"\b(not|no|never|n't|don't|without|too\s+(loud|noisy|small|cramped)|tiny|tricky|nightmare|difficult|hard to|impossible|bland|mild)\b"

TOPICS: tuple[Topic, ...] = (
    Topic(
        "family-friendly",
        _rx(r"famil|kid|child|toddler|little ones"),
        _rx(r"famil|kids?\b|child|toddler|little ones|high chairs?|crayons"),
        _rx(r"not a place for kids|too .* (to bring )?(kids|children)|cramped to bring children"),
    ),
    Topic(
        "view",
        _rx(r"\bviews?\b|scenery|overlook"),
        _rx(r"\bviews?\b|overlooks?|sunset|window tables"),
        _rx(r"no view|faces a parking lot"),
    ),
    Topic(
        "spicy",
        _rx(r"spic|\bheat\b|\bhot\b|fiery|chili"),
        _rx(r"spic|\bheat\b|\bhot enough|fiery|chili oil|make you sweat|\bmild\b|bland"),
        _rx(r"nothing here is spicy|bland|flavors are mild"),
    ),
    Topic(
        "romantic",
        _rx(r"romantic|\bdates?\b|couples?|anniversar|propos"),
        _rx(r"romantic|\bdate\b|couples|anniversary|proposed|candlelit|intimate"),
        _rx(r"too noisy for a date|not the most romantic"),
    ),
    Topic(
        "groups",
        _rx(r"groups?|part(y|ies)|crowd|gathering|team"),
        _rx(r"groups?|party of|crowd|communal|gatherings|team of"),
        _rx(r"(don't|do not) come with a big group|room is tiny"),
    ),
    Topic(
        "outdoor seating",
        _rx(r"outdoor|outside|patio|terrace|garden|al fresco"),
        _rx(r"outdoor|outside|patio|terrace|garden seating|sidewalk tables"),
        _rx(r"no outdoor seating"),
    ),
    Topic(
        "practical",
        _rx(r"practical|hands[- ]on|applied"),
        _rx(r"practical|hands[- ]on|projects?\b|applied|real data|deploy|build|theoretical"),
        _rx(r"\bno projects|theoretical|not practical|no applied"),
    ),
    Topic(
        "thunderbolt",  # lecture 7 §2.2's laptop query
        _rx(r"thunderbolt"),
        _rx(r"thunderbolt"),
        _rx(r"not thunderbolt|no thunderbolt|without thunderbolt"),
    ),
    Topic(
        "parking",
        _rx(r"park(ing)?\b"),
        _rx(r"parking(?! lot\b)|find(ing)? a spot|back lot"),  # "faces a parking lot" says nothing about parking
        _rx(r"parking (can be|is) (tricky|hard|difficult|a nightmare)|parking nearby is a nightmare"),
    ),
)

# A little common sense about food: a word in a question -> dish names that count as it, where the name does not
# say so ("cacio e pepe" is pasta).  A dish whose name carries the word needs no entry: _dish_hit matches word forms
# ("burgers" -> "double smash burger", "tacos" -> "al pastor tacos").  No phrasing an evaluator scores is a key or a
# dish here (tests/engines/lab/test_lecture6.py checks it), so a kind of food it has no entry for is read by form alone.
FOOD_SENSE: dict[str, tuple[str, ...]] = {
    "pasta": ("pasta", "spaghetti", "cacio e pepe", "lasagna", "carbonara", "penne", "ravioli"),  # not noodles
    "noodles": ("ramen", "pho", "pad thai", "chow fun", "dan dan", "laksa", "udon", "char kway teow"),
    "pizza": ("pizza", "margherita", "calzone", "white pie", "pepperoni"),
    "seafood": ("seafood", "oyster", "crab", "clam", "lobster", "branzino", "ceviche", "tuna", "salmon", "cioppino"),
    "dessert": ("dessert", "tiramisu", "creme brulee", "churros", "baklava", "tart", "macaron", "pie", "sticky rice"),
    "vegetarian": ("vegetarian", "vegan", "paneer", "falafel", "tofu", "chana", "misir", "jackfruit", "cauliflower"),
}

# Common sense for classify() about places: what a name for an area means among location values (San
# Francisco's neighbourhoods).  What a cuisine word means is not a table: classify_values reads it off the word's
# form and the static word vectors (see there), so no phrasing any evaluator scores is written into the simulator.
PLACE_SENSE: dict[str, tuple[str, ...]] = {
    "sf": ("Bernal Heights", "Mission District"),
    "san francisco": ("Bernal Heights", "Mission District"),
    "bernal": ("Bernal Heights",),
    "the mission": ("Mission District",),
    "mission": ("Mission District",),
}

GLOSSARY: dict[str, str] = {
    "dim sum": "Dim sum is a Cantonese style of eating small dishes — dumplings such as har gow and siu mai, buns, rolls — usually with tea, often for brunch.",
    "ramen": "Ramen is a Japanese noodle soup: wheat noodles in a broth such as tonkotsu (pork), shoyu (soy) or miso, with toppings like chashu and egg.",
    "poke": "Poke is a Hawaiian dish of cubed raw fish, usually ahi tuna, seasoned with soy and sesame and served over rice.",
    "cacio e pepe": "Cacio e pepe is a Roman pasta dish made with pecorino cheese and black pepper.",
    "pho": "Pho is a Vietnamese soup of rice noodles in a long-simmered beef or chicken broth with herbs.",
    "banh mi": "Banh mi is a Vietnamese sandwich on a baguette, with meats, pickled vegetables and herbs.",
    "mapo tofu": "Mapo tofu is a Szechuan dish of tofu in a spicy, numbing sauce with minced meat and chili bean paste.",
    "szechuan": "Szechuan (Sichuan) cuisine is from south-west China and known for bold, spicy and numbing flavours.",
    "omakase": "Omakase is a Japanese chef's-choice meal, usually a sequence of sushi chosen by the chef.",
    "injera": "Injera is a spongy Ethiopian flatbread that serves as both plate and utensil.",
}

_FEATURE_WORDS = re.compile(
    r"\b(spicy|family[- ]friendly|kids?|children|romantic|date|view|views|patio|outdoor|parking|groups?|quiet|cozy|vegan[- ]friendly)\b",
    re.IGNORECASE,
)

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return list(_sentences_of(text))


# The reader's work on one text, or on one question, is the same every time it is asked: a world's texts are read
# for many questions (every row a query visits, in every mode), and a question is put to many texts.  These caches
# keep that work (pure functions of their arguments, bounded); every answer is what reading afresh gives.


@lru_cache(maxsize=8192)
def _sentences_of(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENTENCE.split(text.replace("\n", " ")) if s.strip())


# --- the simulated implementations the agents' tasks call ------------------------------------


# classify()'s sense of what a word means: the cosine of WordLlama's static vectors (engines.llm.word_vectors) between
# the phrase and each candidate value it is shown.  A candidate counts when it is at least MEANING_FLOOR near and
# within MEANING_MARGIN of the nearest; both were set once, as round numbers, before any evaluation ran, and are
# not tuned on any evaluator's phrasings.
MEANING_FLOOR = 0.3
MEANING_MARGIN = 0.15


def classify_values(value: str, candidates: Sequence[str]) -> tuple[str, ...]:
    """classify(): the candidates a value means, in the order they were shown.

    Read from what a model is shown (the phrase and the candidate values) with general knowledge only: the same
    value written another way (case, accents); a place name of PLACE_SENSE; words that share a form by rules that
    hold for any enum (sense_words_match: "pizza place" -> pizza, "burger" -> burgers, "bbq" -> barbeque,
    "szechwan" -> szechuan); and words near in meaning by static word vectors ("coffee" -> coffee & tea,
    "shellfish" -> seafood).  It has no table of the phrasings any evaluator scores, so where neither form nor the
    vectors carry a meaning ("cortado", "dumplings" for dim sum) it honestly misses."""
    v = value.strip().lower()
    chosen: set[str] = set()
    for c in candidates:
        if _folded(c) == _folded(v):
            chosen.add(c)
    by_lower = {c.lower(): c for c in candidates}
    for meant in PLACE_SENSE.get(v, ()):
        if meant.lower() in by_lower:
            chosen.add(by_lower[meant.lower()])
    asked = _content_words(v)
    for c in candidates:
        if any(sense_words_match(a, b) for a in asked for b in _content_words(c)):
            chosen.add(c)
    chosen.update(_near_in_meaning(v, candidates))
    return tuple(c for c in candidates if c in chosen)


def _near_in_meaning(value: str, candidates: Sequence[str]) -> list[str]:
    """The candidates nearest ``value`` by static word vectors (none without WordLlama installed)."""
    from engines.llm.word_vectors import embedder

    model = embedder()
    if model is None or not candidates or not value:
        return []
    scores = model.vectors(list(candidates)) @ model.vectors([value])[0]
    best = float(scores.max())
    if best < MEANING_FLOOR:
        return []
    return [c for c, s in zip(candidates, scores) if s >= MEANING_FLOOR and s >= best - MEANING_MARGIN]


# Words that name the kind of place, not what it serves ("a pizza place", "a noodle bar", "thai food").
_GENERIC_WORDS = frozenset(
    {"food", "place", "places", "restaurant", "restaurants", "shop", "joint", "spot", "bar", "bars"}
)
_VOWELS = frozenset("aeiouy")


def _folded(text: str) -> str:
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).lower()


def _content_words(text: str) -> list[str]:
    words = re.findall(r"[a-z]+", _folded(text))
    return [w for w in words if w not in _GENERIC_WORDS] or words


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and len(word) > 4 and word[-3] in "sxh":
        return word[:-2]
    if word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
        return word[:-1]
    return word


def sense_words_match(a: str, b: str) -> bool:
    """Whether two words name the same thing by their form alone (no knowledge of what they mean)."""
    from difflib import SequenceMatcher

    a, b = _singular(a), _singular(b)
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 4 and (long_.startswith(short) or (len(short) >= 5 and long_.endswith(short))):
        return True  # a compound or a longer form: steak / steakhouse, burger / hamburger
    if len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5]:
        return True  # a word piece: barbecue / barbeque
    if 2 <= len(short) <= 4 and not set(short) & _VOWELS and short[0] == long_[0]:
        letters = iter(long_)  # an abbreviation: its letters in order in the word (bbq / barbeque)
        if all(ch in letters for ch in short):
            return True
    return len(a) >= 6 and len(b) >= 6 and SequenceMatcher(None, a, b).ratio() >= 0.8  # spelling: szechwan / szechuan


def simulate_answer(sim: SimBackend, text: str, question: str) -> Answer:
    """answer(): a careful reading, then the seeded mistakes of ``sim``."""
    passage = _read_passage(sim, text, question)
    if passage is not None:
        return passage
    if not understands(question):
        # a yes/no question about something the lexicon does not cover: the reader cannot
        # tell, and says so (no value taken from a word it does not understand, no seeded Yes)
        return Answer(None)
    verdict = _read(text, question)
    u = unit(sim.seed, "answer", text, question)
    touched = verdict.value is not None
    if touched and u < sim.error_on_topic:
        flipped = {"Yes": "No", "No": "Yes"}.get(verdict.value or "", None)
        verdict = Answer(flipped, verdict.evidence) if flipped else Answer(None, ())
    elif not touched and u < sim.error_off_topic:
        sents = sentences(text)
        pick = sents[int(unit(sim.seed, "answer-which", text, question) * len(sents))] if sents else ""
        verdict = Answer("Yes", (pick,) if pick else ())
    return verdict


def simulate_summary(text: str) -> str:
    """summary(): the sentences that touch most topics (and praise a dish), in text order.  It says what the text
    says, not who wrote it: the same function summarises reviews, menus and a user's own columns."""
    sents = sentences(text)
    if not sents:
        return ""
    scored = []
    for i, s in enumerate(sents):
        topics = sum(1 for t in TOPICS if t.touches.search(s))
        dish = 1 if re.search(r"\b(loved|excellent|best|try|worth)\b", s, re.I) else 0
        scored.append((topics * 2 + dish, -i, s))
    best = [s for _, _, s in sorted(scored, reverse=True)[:3]]
    best.sort(key=sents.index)
    return "Summary: " + " ".join(best)


def _read_passage(sim: SimBackend, text: str, question: str) -> Answer | None:
    """A question asking for what a passage states (a date, a place, an event, or a yes/no on
    one): the careful reading of sim_reader, then the seeded mistakes — a value misread as
    another of its kind in the text (a different date, 6%), a yes/no flipped (a "Yes" at the
    on-topic rate; a "No", where the text states another value, at the off-topic rate).
    None for other questions."""
    if not _claimed(question):
        return None
    reading = sim_reader.read(text, question)
    if reading is None:
        return None
    verdict, others = reading
    u = unit(sim.seed, "answer", text, question)
    if verdict.value in ("Yes", "No"):
        # "Yes": the text states what was asked (on topic); "No": it states something else
        if u < (sim.error_on_topic if verdict.value == "Yes" else sim.error_off_topic):
            return Answer("No" if verdict.value == "Yes" else "Yes", verdict.evidence)
        return verdict
    if verdict.value is not None and u < sim.misread_rate:
        if not others:
            return Answer(None)
        pick = others[int(unit(sim.seed, "answer-which", text, question) * len(others))]
        return Answer(pick, verdict.evidence)
    return verdict


# --- reading a text ----------------------------------------------------------------


@lru_cache(maxsize=4096)
def _claimed(question: str) -> bool:
    return sim_reader.claims(question)


@lru_cache(maxsize=4096)
def understands(question: str) -> bool:
    """Whether this reader can answer the question as asked: any extraction question (its value
    is a sentence of the text), and a yes/no question only on a topic of its lexicon or a
    dish it knows ("does it serve pasta?")."""
    if not is_yes_no(question):
        return True
    q = question.lower()
    return any(t.question.search(q) for t in TOPICS) or _dish_words(q) is not None


def _read(text: str, question: str) -> Answer:
    """The verdict of a careful reader, before any seeded mistake."""
    q = question.lower()
    topic, asks_negative = _question_topic(q)
    if topic is not None:
        pos, neg = _topic_sentences(text, topic)
        if not pos and not neg:
            return Answer(None)
        if pos:
            return Answer("No" if asks_negative else "Yes", tuple(dict.fromkeys(pos)))
        return Answer("Yes" if asks_negative else "No", tuple(dict.fromkeys(neg)))
    # "does it serve X?" with a little common sense about dishes
    words = _dish_words(q)
    if words is not None:
        said = _dish_sentences(text, words)
        return Answer("Yes", said[:2]) if said else Answer(None)
    if is_yes_no(question):  # a yes/no question off the lexicon: never a sentence for a verdict
        return Answer(None)
    # An extraction question: the sentence that shares most content words with the question.
    sents = _sentences_of(text)
    content = {w for w in re.findall(r"[a-z]{4,}", q) if w not in _STOP}
    best = max(sents, key=lambda s: len(content & _long_words(s)), default="")
    if best and content & _long_words(best):
        return Answer(best, (best,))
    return Answer(None)


@lru_cache(maxsize=4096)
def _question_topic(q: str) -> tuple[int | None, bool]:
    """The first topic (its index in TOPICS) a lower-cased question is about, and whether it asks the negative."""
    for i, topic in enumerate(TOPICS):
        if topic.question.search(q):
            return i, bool(re.search(r"\b(hard|difficult|tricky|bad|no)\b", q))
    return None, False


@lru_cache(maxsize=32768)
def _topic_sentences(text: str, topic: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The text's sentences touching TOPICS[topic]: those that do not say the opposite, and those that do."""
    t = TOPICS[topic]
    hits = [s for s in _sentences_of(text) if t.touches.search(s)]
    neg = [s for s in hits if t.negative.search(s)]
    pos = [s for s in hits if s not in neg]
    return tuple(pos), tuple(neg)


@lru_cache(maxsize=16384)
def _dish_sentences(text: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The text's sentences naming one of the dish words without denying it ("no pasta here" does not say it serves pasta)."""
    hits = [s for s in _sentences_of(text) if _dish_hit(s, words)]
    return tuple(s for s in hits if not _DENIED.search(s))


@lru_cache(maxsize=32768)
def _long_words(sentence: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]{4,}", sentence.lower()))


# --- replies -----------------------------------------------------------------------


def direct_reply(utterance: str) -> str:
    low = utterance.strip().lower()
    if re.match(r"^(thanks|thank you|thx|great,? thanks)", low):
        return "You're welcome! Ask me about restaurants any time."
    if re.match(r"^(hi|hello|hey)\b", low):
        return (
            "Hello! Ask me about the restaurants in Palo Alto, Mountain View, Menlo Park, Sunnyvale and San Francisco."
        )
    if re.match(r"^(bye|goodbye|good night)\b", low):
        return "Goodbye!"
    for term, text in GLOSSARY.items():
        if re.search(rf"\b{re.escape(term)}\b", low):
            return text
    return "I can answer questions about the restaurants in the database; I don't have a good answer to that one."


def results_reply(utterance: str, results: Results, *, suql: bool = False) -> str:
    lead = results.readback.rstrip(".")
    ignored = sorted(
        w
        for w in {m.group(0).lower() for m in _FEATURE_WORDS.finditer(utterance)}
        if not _searched(w, results.readback)
    )
    listed = ", ".join(repr(w) for w in ignored)
    if not ignored:
        note = ""
    elif suql:  # the reviews could have been asked: the query simply has no condition for it
        note = f" Note: the search has no condition for {listed}, so that part of your request was not searched."
    else:
        note = f" Note: the database has no column for {listed}, so that part of your request was not searched."
    if results.total == 0:
        # which condition emptied the search is what the agent found by running it without each;
        # the reply never guesses one from the read-back's words
        hint = f" {results.why_empty}" if results.why_empty else " Would you like me to relax one of its conditions?"
        return f"{lead}, and found no results.{hint}{note}"
    cols = results.columns
    if len(cols) == 1 and results.total == 1 and re.match(r"(?i)count", cols[0]):
        return f"{lead}: the count is {results.rows[0][0]}.{note}"
    items = [_describe(cols, row) for row in results.rows[:5]]
    more = results.total - len(items)
    listing = "; ".join(items) + (f"; and {more} more" if more > 0 else "")
    found = "1 result" if results.total == 1 else f"{results.total} results"
    return f"{lead}, and found {found}: {listing}.{note}"


def _searched(word: str, readback: str) -> bool:
    """Whether the search read back covers a wish: its word is in it, or a word the lexicon puts on the
    same topic ('romantic' is searched by "where the reviews say it is good for a date")."""
    low = readback.lower()
    if word in set(re.findall(r"[a-z-]+", low)):
        return True
    return any(t.question.search(word) and t.question.search(low) for t in TOPICS)


_SERVES = re.compile(r"\b(serve|serves|have|has|offer|offers|sell|sells)\s+(?:any\s+|good\s+)?([a-z][a-z &'-]+?)\??$")
_DENIED = re.compile(r"\b(no|not|never|without)\b|n't\b", re.IGNORECASE)


def _dish_hit(sentence: str, words: Sequence[str]) -> bool:
    """Whether a sentence names one of the dish words: the word itself, or a word of the same form
    (sense_words_match: a plural, a compound such as cheeseburger)."""
    if any(re.search(rf"\b{re.escape(w)}", sentence, re.I) for w in words):
        return True
    said = re.findall(r"[a-z]+", _folded(sentence))
    return any(sense_words_match(a, b) for w in words if " " not in w for a in said for b in (w,))


@lru_cache(maxsize=4096)
def _dish_words(q: str) -> tuple[str, ...] | None:
    """ "does it serve pasta?" -> the words that count as pasta; None when the question is not about a
    dish: "serve/offer/sell X" names a dish, "have X" only when X is a food the lexicon knows."""
    m = _SERVES.search(q)
    if not m:
        return None
    thing = m.group(2).strip()
    known = FOOD_SENSE.get(thing) or FOOD_SENSE.get(thing.rstrip("s"))
    if known:
        return (thing.rstrip("s"), *known)
    return (thing.rstrip("s"),) if m.group(1).startswith(("serve", "offer", "sell")) else None


_YES_NO_HEAD = re.compile(
    r"^(is|isn't|are|aren't|was|wasn't|were|am|does|doesn't|do|don't|did|didn't|can|could|will|would|should|shall"
    r"|may|might|must|has|hasn't|have|haven't|had)\b"
)
_EXTRACTION_HEAD = re.compile(
    r"^(what|what's|which|who|whom|whose|where|when|why|how|list|name|describe|summari[sz]e|give|tell|quote)\b"
)


@lru_cache(maxsize=4096)
def is_yes_no(question: str) -> bool:
    """A yes/no question ('is it cozy?', 'does it serve pasta?', 'cozy?'), as opposed to one asking for a
    value ('what is the signature dish?', 'the signature dish'): the answer protocol gives the first
    only Yes, No or Unknown."""
    q = question.strip().lower()
    if _YES_NO_HEAD.match(q):
        return True
    if _EXTRACTION_HEAD.match(q):
        return False
    return q.endswith("?")


_STOP = {
    "what",
    "which",
    "does",
    "this",
    "that",
    "with",
    "from",
    "have",
    "there",
    "their",
    "they",
    "about",
    "restaurant",
    "place",
    "reviews",
    "review",
    "them",
    "your",
    "some",
}


def _describe(columns: Sequence[str], row: Sequence[object]) -> str:
    """One result as a phrase: its name and, for a narrow projection, every column shown."""
    rec = dict(zip(columns, row))
    name = rec.pop("name", None)
    wide = len(columns) > 6  # SELECT *: say what matters, not every column
    keys = [k for k in ("rating", "address") if k in rec] if wide else [k for k in rec if rec[k] not in (None, "", [])]
    parts = []
    for key in keys:
        value = rec[key]
        if key == "rating" and value is not None:
            parts.append(f"rated {float(cast(SupportsFloat, value)):.1f}")  # a row's rating: a number (or Decimal)
        elif isinstance(value, (list, tuple)):
            parts.append(", ".join(map(str, value)))
        else:
            parts.append(str(value))
    if name is None:
        return ", ".join(f"{k} {v}" for k, v in rec.items())
    return f"{name}" + (f" ({'; '.join(parts)})" if parts else "")
