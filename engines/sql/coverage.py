"""Did the query use everything the question says?  What it did not is named, never answered silently.

A parser — the simulated one or a real model — can leave out part of a question: "how many cars have
4 cylinders?" read as ``SELECT COUNT(*) FROM cars`` counts every car.  :func:`not_understood` checks the
query against the question after parsing, deterministically, from the parsed tree (sqlglot) and the
question's own words.  It knows nothing of the parser: every content word, number and date of the question
must map onto something the SQL holds, or onto a short list of function words; what is left is returned
as the phrases the question said and the query did not use (``('4 cylinders',)``).

What a question's token maps onto:

* a **word**: a string literal's words (``'Dream'``, the question inside ``answer(notes, '...')``; each said
  once in the query covers one mention), a column the query reads (its name split into words, and the unit
  at its end: ``body_mass_g`` is "body", "mass", "g", "grams", and the weight words "heavy", "weigh" ...; the
  same verb with another ending: "top-rated" for ``rating``), what the schema's comment on that column says
  it holds (``rating NUMERIC(2,1), -- stars``), the table and what the comment that ends it says a row is
  (``); -- a row: a restaurant, a place to eat``), an enumeration's value said negated ("inexpensive" where
  the query sets the price to another value), or — the noun of "how many X", "X per Y", "the N X" — the rows
  being counted or listed;
* a **number**: a literal of the same value (times or divided by 1,000, for g and kg), compared with the
  column named next to the number when one is ("4 cylinders" needs ``Cylinders = 4``), the LIMIT, or
  a part of a date literal (a year);
* a **date**, a **month name**: a date literal, or a number compared with a month (``month = 7``,
  ``EXTRACT(MONTH FROM d) = 7``);
* a **cue word**: the operator it asks for — "how many" a COUNT, "average" an AVG, "total" a SUM or a
  COUNT, "per" / "each" a GROUP BY, a superlative ("most", "heaviest") an ORDER BY or MIN/MAX, "over" /
  "more than" a greater-than (or BETWEEN), "under" a less-than, a comparative with "than" any comparison,
  "no" / "not" / "without" a negation or IS NULL;
* a **function word** (articles, pronouns, auxiliaries, prepositions, "show", "list", "rows", "instead",
  "thanks" ...): nothing; "near" and "around" only before a place the query uses ("near me" is no column's).

A word a column of the data names but the query does not read is not understood, as is any other word.  The
check reads the schema only for what it tells any reader (names, enumeration values, comments), never the
parser's tables or an evaluator's phrasings.

In a dialogue, :func:`carried_over_dropped` checks what a follow-up carries over: the previous query's
conditions it leaves out with nothing in their place ("What about italian ones?" must stay in Menlo Park).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import sqlglot
from sqlglot import exp

__all__ = ["DataWords", "Vocabulary", "carried_over_dropped", "not_understood", "schema_names"]

MAX_QUESTION_CHARS = 2000
"""The question's first 2,000 characters are checked (the rest is named as not understood, whole)."""
MAX_LITERALS = 1000
"""A query's first 1,000 literals are read: the check's cost is bounded whatever a model writes (a literal
past the cap maps no word, so a word it alone would cover is named, never silently credited)."""
MAX_LITERAL_CHARS = 500
MAX_LITERAL_WORDS = 20_000
"""The words of a query's literals read (past them, a literal's words are not read, so never credited)."""

# --- words --------------------------------------------------------------------------------------------------

FUNCTION_WORDS = frozenset(
    """
    a an the this that these those there here it its they them their theirs he she his her we our us you your i me my
    mine what which who whom whose where when why how whether
    is are was were be been being am do does did done have has had having will would shall should can could may might
    must
    of in on at to from into onto for with by about as than then so such and or nor but also both either neither
    any some all every each other another same only just even still yet very really quite too
    show shows list lists give gives find finds tell tells display return returns get gets got see want need know
    look let please display
    rows row records record entries entry data dataset table tables values value results result ones one things
    thing items item lines line information info details kind kinds type types sort
    there's what's how's it's that's i'd i'm
    recorded listed given known reported available stored registered logged observed measured seen made built
    produced manufactured collected sampled happened occurred took taken named called titled
    ever overall respectively
    instead thanks thank say says said enough
    """.split()
)
# "by", "for", "in" ... are function words; the cues below are not: each needs something in the query
PLACE_PREPOSITIONS = frozenset({"near", "around", "nearby"})
"""Prepositions of place: understood only before a place the query uses ("around Palo Alto"); "near me" names
where the user is, which no column holds."""
SCHEMA_WORDS = frozenset(
    "enum classify value values map maps onto user say says list free text texts answer summary number date yes "
    "other type types column columns row rows table".split()
)
"""Words a schema's comments say about the schema itself (a column's type or role: "free text · answer()",
"enum: ... classify() maps ..."): no description of what a column holds."""

COUNT_CUES = frozenset({"many", "count", "counts", "number", "numbers", "frequency", "often"})
FREQUENCY_CUES = frozenset({"common", "commonest", "frequent", "frequently", "popular", "usual", "commonly"})
AVG_CUES = frozenset({"average", "averages", "avg", "mean", "means", "typical", "typically"})
SUM_CUES = frozenset({"sum", "sums", "total", "totals", "combined", "altogether"})
GROUP_CUES = frozenset({"per", "each", "breakdown", "grouped", "group", "groups"})
ORDER_CUES = frozenset({"sorted", "sort", "ordered", "order", "ranked", "rank", "ranking", "top", "bottom"})
DISTINCT_CUES = frozenset({"distinct", "different", "unique"})
MORE_CUES = frozenset(
    {"over", "above", "more", "greater", "higher", "larger", "bigger", "exceeding", "exceeds", "after", "since"}
)
LESS_CUES = frozenset({"under", "below", "less", "fewer", "lower", "smaller", "before", "until"})
NEGATION_CUES = frozenset(
    {"no", "not", "non", "none", "never", "without", "except", "excluding", "missing", "unknown", "null", "empty",
     "blank", "n't", "neither", "nobody", "nothing", "lacking"}
)  # fmt: skip
CUES = (
    COUNT_CUES | AVG_CUES | SUM_CUES | GROUP_CUES | ORDER_CUES | DISTINCT_CUES | MORE_CUES | LESS_CUES | NEGATION_CUES
    | {"than", "between", "first", "last"}
)  # fmt: skip
SUPERLATIVE_NOT = frozenset(
    """west rest test best guest interest forest request nest chest pest honest modest suggest manifest protest contest
    harvest invest arrest digest quest vest zest midwest northwest southwest conquest latest""".split()
)  # words ending in -est that are no superlative ("best" and "latest" are: see SUPERLATIVES)
SUPERLATIVES = frozenset({"most", "least", "best", "worst", "latest", "max", "maximum", "min", "minimum", "fewest"})

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "thousand": 1000,
}  # fmt: skip
MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )  # fmt: skip
    for m in names
}

# A column's unit (the last word of its name) -> the words a question says for it
UNITS: dict[str, tuple[str, ...]] = {
    "mm": ("millimeter", "millimetre", "millimeters", "millimetres"),
    "cm": ("centimeter", "centimetre", "centimeters", "centimetres"),
    "km": ("kilometer", "kilometre", "kilometers", "kilometres"),
    "m": ("meter", "metre", "meters", "metres"),
    "g": ("gram", "grams", "kg", "kilogram", "kilograms", "kilo", "kilos"),
    "kg": ("kilogram", "kilograms", "kilo", "kilos", "g", "gram", "grams"),
    "lbs": ("pound", "pounds", "lb"),
    "lb": ("pound", "pounds", "lbs"),
    "mph": ("miles",),
    "ft": ("feet", "foot"),
    "in": ("inch", "inches"),
    "usd": ("dollar", "dollars", "$"),
    "pct": ("percent", "percentage", "%"),
    "s": ("second", "seconds"),
    "sec": ("second", "seconds"),
    "min": ("minute", "minutes"),
    "h": ("hour", "hours"),
    "hrs": ("hour", "hours"),
}
SCALED_UNITS = {("g", "kg"), ("kg", "g"), ("mm", "m"), ("m", "mm"), ("m", "km"), ("km", "m")}  # a factor of 1,000
# What a quantity is called, by its unit or its column's words -> the adjectives that ask about it
DIMENSIONS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        frozenset({"g", "kg", "lbs", "lb", "weight", "mass"}),
        frozenset(
            "weight weights weigh weighs weighed weighing heavy heavier heaviest light lighter lightest mass".split()
        ),
    ),
    (
        frozenset({"mm", "cm", "m", "km", "length", "ft", "in"}),
        frozenset("length long longer longest short shorter shortest".split()),
    ),
    (frozenset({"temp", "temperature"}), frozenset("warm warmer warmest hot hotter hottest cold colder coldest cool cooler coolest".split())),
    (frozenset({"age"}), frozenset("old older oldest young younger youngest".split())),
    (frozenset({"distance"}), frozenset("far farther farthest further furthest long longer longest short shorter shortest".split())),
    (frozenset({"price", "cost", "usd"}), frozenset("cheap cheaper cheapest expensive costly pricey".split())),
    (frozenset({"speed", "mph"}), frozenset("fast faster fastest slow slower slowest quick quicker quickest".split())),
    (frozenset({"precipitation", "rain", "rainfall"}), frozenset("wet wetter wettest dry drier driest".split())),
    (frozenset({"delay", "delays"}), frozenset("late later latest delayed".split())),
)  # fmt: skip


def fold(text: str) -> str:
    """Lower case, accents off ("café" is "cafe")."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def stem(word: str) -> str:
    w = word
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def root(word: str) -> tuple[str, bool]:
    """A word without its verb ending: "rated", "rating" and "rate" are "rat"; "priced" and "price" "pric".
    The flag says whether "-ing" or "-ed" came off."""
    w = stem(word)
    cut = False
    for suffix in ("ing", "ed"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("eed"):
            w, cut = w[: -len(suffix)], True
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if cut and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":  # "shipped" -> "ship"
        w = w[:-1]
    return w, cut


def same_word(said: str, named: str) -> bool:
    """A question's word ``said`` names a word ``named`` of the data: the same stem, one the start of the
    other (an abbreviation in a column's name, "temp" for "temperature"; "rainy" for the value 'rain'), or
    the same verb with another ending ("top-rated" for a column ``rating``)."""
    a, b = stem(said), stem(named)
    if a == b:
        return True
    if len(b) >= 3 and a.startswith(b):  # the data abbreviates: "dep" for "departure", "max" for "maximum"
        return True
    if len(a) >= 4 and b.startswith(a):  # the question abbreviates: "avg"... or a stem of it
        return True
    (ra, cut_a), (rb, cut_b) = root(said), root(named)
    return (cut_a or cut_b) and len(ra) >= 3 and ra == rb


class WordIndex:
    """Words of the data (a query's values), found by :func:`same_word` without reading them all: by stem, by
    each stem's beginnings (four letters or more), by root.  What the question says as the data says it
    comes first."""

    def __init__(self, words: Iterable[str]) -> None:
        self.by_stem: dict[str, list[str]] = {}
        self.by_start: dict[str, list[str]] = {}
        self.by_root: dict[str, list[tuple[str, bool]]] = {}
        for x in sorted(set(words)):
            sx = stem(x)
            self.by_stem.setdefault(sx, []).append(x)
            for k in range(4, len(sx) + 1):
                self.by_start.setdefault(sx[:k], []).append(x)
            rx, cut = root(x)
            if len(rx) >= 3:
                self.by_root.setdefault(rx, []).append((x, cut))

    def matches(self, word: str) -> list[str]:
        """Every indexed ``x`` with ``same_word(word, x)``, the same stem first."""
        sw = stem(word)
        found = set(self.by_stem.get(sw, ()))
        for k in range(3, len(sw)):  # the data abbreviates ("dep" for "departure")
            found.update(self.by_stem.get(sw[:k], ()))
        if len(sw) >= 4:  # the question abbreviates
            found.update(self.by_start.get(sw, ()))
        rw, cut = root(word)
        found.update(x for x, cut_x in self.by_root.get(rw, ()) if cut or cut_x)
        return sorted(found, key=lambda x: (stem(x) != sw, x))


def name_words(name: str) -> list[str]:
    """A column's or table's name as words: snake_case, CamelCase, spaces and digits apart."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^a-z0-9]+", fold(spaced)) if w]


# --- the question's tokens ------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<quoted>'[^']{1,200}'|\"[^\"]{1,200}\")"
    r"|(?P<date>\b\d{4}[-/]\d{1,2}[-/]\d{1,2}\b)"
    r"|(?P<number>(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w.])|(?<![\w.])-?\d+(?:\.\d+)?)(?P<unit>[a-z]{1,3}\b)?"
    r"|(?P<word>[^\W\d_][\w'’]*|\d+[^\W\d_]\w*)",
    re.IGNORECASE,
)


@dataclass
class Token:
    kind: str  # word | number | date | quoted
    text: str  # as said
    start: int
    end: int
    value: str | float | tuple[int, int, int] | None = None  # a number's value, a date's (y, m, d), a word folded
    covered: bool = False
    cue: bool = False  # a cue word (its operator absent: not understood)
    data: bool = False  # covered by the data: a value, a column, a number or a date of the query


def _number(t: Token) -> float:
    """A number token's value (tokens() makes it a float)."""
    return float(cast(float, t.value))


def tokens(question: str) -> list[Token]:
    out: list[Token] = []
    for m in _TOKEN.finditer(question[:MAX_QUESTION_CHARS]):
        if m.group("quoted"):
            out.append(Token("quoted", m.group(0), m.start(), m.end(), fold(m.group(0)[1:-1])))
        elif m.group("date"):
            y, mo, d = (int(p) for p in re.split(r"[-/]", m.group("date")))
            out.append(Token("date", m.group(0), m.start(), m.end(), (y, mo, d)))
        elif m.group("number") is not None:
            text = m.group("number")
            out.append(Token("number", text, m.start("number"), m.end("number"), float(text.replace(",", ""))))
            unit = m.group("unit")
            if unit:
                out.append(Token("word", unit, m.start("unit"), m.end("unit"), fold(unit)))
        else:
            word = fold(m.group("word")).replace("’", "'")
            if word.endswith("n't"):  # "didn't" -> "did", "n't"
                out.append(Token("word", m.group(0), m.start(), m.end() - 3, word[:-3]))
                out.append(Token("word", "n't", m.end() - 3, m.end(), "n't"))
                continue
            if word.endswith("'s"):
                word = word[:-2]
            if word in NUMBER_WORDS:
                out.append(Token("number", m.group(0), m.start(), m.end(), float(NUMBER_WORDS[word])))
            else:
                out.append(Token("word", m.group(0), m.start(), m.end(), word))
    return out


# --- what the SQL holds ---------------------------------------------------------------------------------------


@dataclass
class Vocabulary:
    """What a query (its trees: the parser's and the rewritten one) gives a question's words to map onto."""

    literal_words: set[str] = field(default_factory=set)
    literal_strings: set[str] = field(default_factory=set)
    numbers: list[tuple[float, set[str]]] = field(default_factory=list)  # (value, words of the columns it meets)
    dates: set[tuple[int, int, int]] = field(default_factory=set)
    column_words: set[str] = field(default_factory=set)
    table_words: set[str] = field(default_factory=set)
    dimension_words: set[str] = field(default_factory=set)
    limits: set[float] = field(default_factory=set)
    count: bool = False
    avg: bool = False
    sum: bool = False
    minmax: bool = False
    group: bool = False
    order: bool = False
    distinct: bool = False
    more: bool = False
    less: bool = False
    compare: bool = False
    negation: bool = False
    month: bool = False  # the query speaks of months (a column, EXTRACT(MONTH ...), month())
    set_columns: set[str] = field(default_factory=set)  # columns compared with a string (= or IN), folded
    count_column: bool = False  # the query reads a column that holds a count (num_reviews, review_count)
    claimed: set[str] = field(default_factory=set)  # literal words the question says as they are
    literal_counts: Counter[str] = field(default_factory=Counter)  # how often the query's literals say a word
    _tree_counts: Counter[str] = field(default_factory=Counter, repr=False)
    literal_index: WordIndex = field(default_factory=lambda: WordIndex(()), repr=False)  # the literal words
    described: Mapping[str, frozenset[str]] = field(default_factory=dict)  # a column's comment words (schema)
    table_described: Mapping[str, frozenset[str]] = field(default_factory=dict)  # a table's comment words

    @classmethod
    def of(cls, trees: Iterable[exp.Expr], data: DataWords | None = None) -> Vocabulary:
        """What ``trees`` hold; with ``data``, a column or a table the query reads brings what the schema's
        comments say it holds ("stars" for ``rating``)."""
        v = cls()
        if data is not None:
            v.described, v.table_described = data.described, data.tables
        for tree in trees:
            v._tree_counts = Counter()
            v._read(tree)
            v.literal_counts |= v._tree_counts  # the most times any one tree says the word
        for words in list(v.column_words):
            for dims, adjectives in DIMENSIONS:
                if words in dims:
                    v.dimension_words |= adjectives
        return v

    def _read(self, tree: exp.Expr) -> None:
        for node in tree.walk():
            if isinstance(node, exp.Literal):
                self._literal(node)
            elif isinstance(node, exp.Column):
                words = name_words(node.name)
                self.column_words |= {w for w in words if w not in FUNCTION_WORDS}
                for w in words:
                    self.column_words |= set(UNITS.get(w, ()))
                self.column_words |= self.described.get(fold(node.name), frozenset())
                if {"num", "count", "counts"} & set(words):
                    self.count_column = True
                if "month" in words:
                    self.month = True
            elif isinstance(node, exp.Table) and node.name:
                self.table_words |= set(name_words(node.name))
                self.table_words |= self.table_described.get(fold(node.name), frozenset())
            elif isinstance(node, exp.Count):
                self.count = True
                if isinstance(node.this, exp.Distinct):
                    self.distinct = True
            elif isinstance(node, exp.Avg):
                self.avg = True
            elif isinstance(node, exp.Sum):
                self.sum = True
            elif isinstance(node, (exp.Min, exp.Max, exp.ArgMax, exp.ArgMin)):
                self.minmax = True
            elif isinstance(node, exp.Group):
                self.group = True
            elif isinstance(node, exp.Order):
                self.order = True
            elif isinstance(node, exp.Distinct):
                self.distinct = True
            elif isinstance(node, exp.Limit) and isinstance(node.expression, exp.Literal):
                try:
                    self.limits.add(float(node.expression.name))
                except ValueError:
                    pass
            elif isinstance(node, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
                self._comparison(node)
            elif isinstance(node, exp.Between):
                self.more = self.less = self.compare = True
            elif isinstance(node, (exp.Not, exp.NEQ)):
                self.negation = True
            elif isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
                self.negation = True  # IS NULL: "no recorded sex"
            elif isinstance(node, exp.Extract) and "month" in fold(node.this.name if node.this else ""):
                self.month = True
            elif isinstance(node, exp.Anonymous) and "month" in fold(str(node.this)):
                self.month = True
            elif isinstance(node, exp.Func) and "month" in node.key:
                self.month = True

    def _comparison(self, node: exp.Expr) -> None:
        self.compare = True
        literal_left = isinstance(node.this, exp.Literal) and not isinstance(node.expression, exp.Literal)
        greater = isinstance(node, (exp.GT, exp.GTE)) != literal_left
        if greater:
            self.more = True
        else:
            self.less = True

    def _literal(self, node: exp.Literal) -> None:
        if len(self.literal_strings) + len(self.numbers) >= MAX_LITERALS:
            return  # a query with more literals than any question says: the rest is not read (so not credited)
        if node.is_string:
            text = fold(node.name[:MAX_LITERAL_CHARS])
            parent = node.parent
            if isinstance(parent, exp.In) or (isinstance(parent, exp.EQ) and parent.expression is node):
                self.set_columns |= {fold(c) for c in _column_names(parent.this)}
            elif isinstance(parent, exp.EQ):
                self.set_columns |= {fold(c) for c in _column_names(parent.expression)}
            self.literal_strings.add(text)
            found = re.findall(r"[^\W_]+", text)
            if len(self.literal_words) < MAX_LITERAL_WORDS:
                self.literal_words |= set(found)
                self._tree_counts.update(found)
            d = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ t].*)?", text)
            if d:
                self.dates.add((int(d.group(1)), int(d.group(2)), int(d.group(3))))
            elif re.fullmatch(r"-?\d+(?:\.\d+)?", text):  # strftime(d, '%Y') = '1975'
                self.numbers.append((float(text), _compared_columns(node, self.described)))
            return
        try:
            value = float(node.name)
        except ValueError:
            return
        self.numbers.append((value, _compared_columns(node, self.described)))


def _compared_columns(node: exp.Literal, described: Mapping[str, frozenset[str]]) -> set[str]:
    """The words of the columns a number literal is compared with (the other side of its comparison, or the
    left side of its IN list or BETWEEN): their names', and their comments' in the schema."""
    parent = node.parent
    child: exp.Expr = node
    while isinstance(parent, (exp.Paren, exp.Cast, exp.Neg, exp.Tuple)):
        child, parent = parent, parent.parent
    if isinstance(parent, (exp.In, exp.Between)):
        other = parent.this
    elif isinstance(parent, exp.Binary) and not isinstance(parent, exp.Connector):
        other = parent.expression if parent.this is child else parent.this
    else:
        return set()
    words: set[str] = set()
    for name in _column_names(other):
        words |= set(name_words(name)) | described.get(fold(name), frozenset())
    return words


def _column_names(node: exp.Expr | None, limit: int = 32) -> list[str]:
    """The names of the columns in ``node`` (and the part of an EXTRACT), reading at most ``limit`` nodes: the
    check's cost stays bounded on any tree."""
    out: list[str] = []
    if node is None:
        return out
    for k, sub in enumerate(node.walk()):
        if k >= limit:
            break
        if isinstance(sub, exp.Column):
            out.append(sub.name)
        elif isinstance(sub, exp.Extract) and sub.this is not None:
            out.append(sub.this.name)
    return out


@dataclass(frozen=True)
class DataWords:
    """The words of the data a schema text names: its columns' names, the values of the enumerations it
    shows (each word with the columns it is a value of), and what its comments say a column or a table holds
    (a unit, what a row is: ``rating NUMERIC(2,1), -- stars``)."""

    columns: frozenset[str] = frozenset()
    values: dict[str, frozenset[str]] = field(default_factory=dict)  # word -> columns (folded names)
    names: tuple[tuple[str, ...], ...] = ()  # each column's name as words (function words and units left out)
    dated: bool = False  # a column is a date or a time: its rows may be days
    described: dict[str, frozenset[str]] = field(default_factory=dict)  # column (folded) -> its comment's words
    tables: dict[str, frozenset[str]] = field(default_factory=dict)  # table (folded) -> its comment's words


MAX_SCHEMA_CHARS = 200_000
"""A schema text's statements that end within its first 200,000 characters are read for names and descriptions
(the check's cost stays bounded whatever the schema; a column past it names nothing, so its words are named)."""


def description_words(comment: str) -> frozenset[str]:
    """The content words of a schema comment: what a column or a table holds ("stars", "a place to eat"), its
    function words, cue words ("not", "higher") and the schema's words about itself ("free text · answer()")
    left out, so that a comment never stands in for an operator the query must have."""
    out = set()
    for w in re.findall(r"[^\W\d_]+", fold(comment[:MAX_LITERAL_CHARS])):
        if len(w) < 3 or w in FUNCTION_WORDS or w in CUES or w in MONTHS or w in NUMBER_WORDS or _superlative(w):
            continue
        if w in SCHEMA_WORDS or stem(w) in SCHEMA_WORDS:
            continue
        out.add(w)
    return frozenset(out)


def _trailing_comments(schema: str) -> list[str | None]:
    """For each ``;`` that carries comments, in order: the comment written on its own line after it (a
    statement's description, ``CREATE TABLE busy (...);  -- the student's own slots``), else None (comments on
    the lines below describe something else: the functions SUQL adds, a row count)."""
    out: list[str | None] = []
    try:
        toks = sqlglot.Dialect.get_or_raise("duckdb").tokenize(schema)
    except sqlglot.errors.SqlglotError:
        return out
    for tok in toks:
        if tok.token_type == sqlglot.TokenType.SEMICOLON and tok.comments:
            rest = schema[tok.end + 1 :].split("\n", 1)[0].lstrip()
            out.append(tok.comments[0] if rest.startswith(("--", "/*")) else None)
    return out


def schema_names(schema: str) -> DataWords:
    """The :class:`DataWords` of a schema text: ``CREATE TABLE`` statements, an enumeration's values in its
    type (``ENUM ('cheap', ...)``) or its column's comment (``-- enum: ['Adelie', ...]``), a column's comment,
    and the comment on the line that ends a table (``); -- one row per restaurant``)."""
    if len(schema) > MAX_SCHEMA_CHARS:  # the statements that end within the bound
        schema = schema[: schema.rfind(";", 0, MAX_SCHEMA_CHARS) + 1]
    columns: set[str] = set()
    values: dict[str, set[str]] = {}
    names: list[tuple[str, ...]] = []
    described: dict[str, set[str]] = {}
    tables: dict[str, set[str]] = {}
    dated = False
    try:
        statements = sqlglot.parse(schema, read="duckdb")
    except sqlglot.errors.SqlglotError:
        statements = []
    trailing = iter(_trailing_comments(schema)) if statements else iter(())
    last_table: str | None = None
    for st in statements:
        if isinstance(st, exp.Semicolon):  # the comments after the last statement's ";"
            comment = next(trailing, None)
            if comment and last_table is not None:
                tables.setdefault(last_table, set()).update(description_words(comment))
            continue
        last_table = None
        if not isinstance(st, exp.Create):
            continue
        target = st.this.this if isinstance(st.this, exp.Schema) else st.this
        if isinstance(target, exp.Table) and target.name:
            last_table = fold(target.name)
        if not isinstance(st.this, exp.Schema):
            continue
        for cd in st.this.expressions:
            if not isinstance(cd, exp.ColumnDef):
                continue
            column = fold(cd.name)
            columns |= {w for w in name_words(cd.name) if w not in FUNCTION_WORDS}
            kind = cd.args.get("kind")
            if isinstance(kind, exp.DataType) and kind.this in exp.DataType.TEMPORAL_TYPES:
                dated = True
            names.append(tuple(w for w in name_words(cd.name) if w not in FUNCTION_WORDS and w not in UNITS))
            if isinstance(kind, exp.DataType) and kind.this == exp.DataType.Type.ENUM:
                for value in kind.expressions:
                    if isinstance(value, exp.Literal) and value.is_string:
                        for w in re.findall(r"[^\W_]+", fold(value.name[:MAX_LITERAL_CHARS])):
                            values.setdefault(w, set()).add(column)
            for comment in cd.comments or []:
                shown = re.search(r"enum:\s*(\[.*\])\s*$", comment.strip())
                if shown:
                    for value in re.findall(r"'((?:[^']|'')*)'", shown.group(1)):
                        for w in re.findall(r"[^\W_]+", fold(value.replace("''", "'"))):
                            values.setdefault(w, set()).add(column)
                elif not re.match(r"\s*(?:list\s+)?enum\b", comment):
                    words = description_words(comment)
                    described.setdefault(column, set()).update(words)
                    columns |= words
    return DataWords(
        frozenset(columns),
        {w: frozenset(c) for w, c in values.items()},
        tuple(names),
        dated,
        {c: frozenset(w) for c, w in described.items() if w},
        {t: frozenset(w) for t, w in tables.items() if w},
    )


# --- the check ------------------------------------------------------------------------------------------------


def not_understood(
    question: str,
    trees: Sequence[exp.Expr],
    *,
    data: DataWords | None = None,
) -> tuple[str, ...]:
    """The phrases of ``question`` that the query (``trees``: the parser's tree and what ran) does not use.

    ``data``: the words of the data's column names and shown enumeration values (:func:`schema_names`): a
    number said next to a column's name must be compared with that column, and a word of the data is not
    taken for the noun that names the rows (unless it is a value of a column the query sets to another)."""
    data = data or DataWords()
    vocab = Vocabulary.of(trees, data)
    toks = tokens(question)
    said = {stem(str(t.value)) for t in toks if t.kind == "word"}
    vocab.literal_index = WordIndex(vocab.literal_words)
    vocab.claimed = {x for x in vocab.literal_words if stem(x) in said}
    for i, t in enumerate(toks):
        t.covered = _covered(t, i, toks, vocab, set(data.columns), data.values)
        t.data = t.covered and (t.kind != "word" or _of_data(str(t.value), vocab))
    for i, t in enumerate(toks):  # "around Palo Alto": the place is the query's; "near me" is no column's
        if t.kind == "word" and t.value in PLACE_PREPOSITIONS:
            after = next((u for u in toks[i + 1 :] if not (u.kind == "word" and u.value in ("the", "a", "an"))), None)
            t.covered = after is not None and after.data
    _rows_noun(toks, vocab, data)
    _paraphrased(toks, trees, data)
    rest = question[MAX_QUESTION_CHARS:].strip()
    return _phrases(question, toks) + ((rest[:60] + ("…" if len(rest) > 60 else ""),) if rest else ())


TEXT_FUNCTIONS = ("answer",)
MAX_TEXT_CONDITIONS = 32


def _paraphrased(toks: list[Token], trees: Sequence[exp.Expr], data: DataWords) -> None:
    """A text condition (SUQL's ``answer(reviews, 'is it family-friendly?')``) that shares no word with the
    question says some part of it in the parser's own words ("good for kids"): each such condition stands for
    one word the question has left, when every word left is such a word — no cue (a count, a comparison),
    nothing the schema names (a column, a value), so that a dropped value or operator is never taken for it.
    With more words left than such conditions, every one stays named."""
    questions: set[str] = set()
    for tree in trees:
        for k, node in enumerate(tree.find_all(exp.Anonymous)):
            if k >= MAX_TEXT_CONDITIONS:
                break
            args = node.expressions
            if str(node.this).lower() in TEXT_FUNCTIONS and len(args) == 2 and isinstance(args[1], exp.Literal):
                questions.add(fold(args[1].name[:MAX_LITERAL_CHARS]))
    if not questions:
        return
    said = [str(t.value) for t in toks if t.kind == "word" and t.value not in FUNCTION_WORDS]
    unanchored = [
        q
        for q in questions
        if not any(same_word(w, x) for x in re.findall(r"[^\W\d_]+", q) if x not in FUNCTION_WORDS for w in said)
    ]
    left = [t for t in toks if not t.covered]
    if not left or len(left) > len(unanchored):
        return
    schema_words = set(data.columns) | set(data.values)
    if all(t.kind == "word" and not t.cue and not any(same_word(str(t.value), c) for c in schema_words) for t in left):
        for t in left:
            t.covered = True


def _negated_value(w: str, v: Vocabulary, values: Mapping[str, frozenset[str]]) -> bool:
    """ "inexpensive", "unknown" ...: a value of an enumeration (the schema's) said with a negating prefix,
    where the query sets that column to another value (never to the value itself)."""
    for prefix in ("non", "in", "un", "im"):
        rest = w[len(prefix) :].lstrip("-")
        if w.startswith(prefix) and len(rest) >= 4 and rest in values:
            return bool(values[rest] & v.set_columns) and rest not in v.literal_words
    return False


def _covered(
    t: Token,
    i: int,
    toks: list[Token],
    v: Vocabulary,
    schema_words: set[str],
    values: Mapping[str, frozenset[str]] | None = None,
) -> bool:
    values = values or {}
    if t.kind == "quoted":
        quoted = str(t.value)  # a quoted token's value: its text, folded
        return quoted in v.literal_strings or any(quoted in s or s in quoted for s in v.literal_strings if s)
    if t.kind == "date":
        y, m, d = cast(tuple[int, int, int], t.value)  # a date token's value (tokens())
        if (y, m, d) in v.dates:
            return True
        said = {float(y), float(m), float(d)}
        return said <= {n for n, _ in v.numbers}
    if t.kind == "number":
        return _number_covered(t, i, toks, v, schema_words)
    w = str(t.value)
    if w in MONTHS and not (w == "may" and _is_modal(i, toks)):
        month = MONTHS[w]
        if any(m == month for _, m, _ in v.dates):
            return True
        if v.month and any(n == month for n, _ in v.numbers):
            return True
        return any(_is_word(x, w) for x in v.literal_words)
    if w in FUNCTION_WORDS:
        return True
    if w in PLACE_PREPOSITIONS:
        return False  # decided by what follows (not_understood)
    # the data's own words first: a value, a column the query reads, the table.  A value's word the question
    # says as it is ("Menlo Park") is not also another word it begins ("parking")
    # and a word the query's values say once covers one mention ("restaurants in Mountain View with a view")
    said_as = [
        x for x in v.literal_index.matches(w) if v.literal_counts[x] > 0 and (stem(x) == stem(w) or x not in v.claimed)
    ]
    if said_as:
        v.literal_counts[said_as[0]] -= 1
        return True
    if _negated_value(w, v, values):  # "inexpensive": the query sets the price to another of its values
        return True
    if any(same_word(w, x) for x in v.column_words | v.table_words):
        return True
    if w in v.dimension_words:
        return True
    t.cue = True
    if w in COUNT_CUES:
        return v.count
    if w in AVG_CUES:
        return v.avg
    if w in SUM_CUES:
        return v.sum or v.count
    if w in GROUP_CUES:
        return v.group
    if w in ORDER_CUES:
        return v.order or v.minmax
    if w in ("first", "last"):
        return v.order or v.minmax or bool(v.limits)
    if w in FREQUENCY_CUES:  # "the most popular": a count, or a column that holds one (num_reviews)
        return v.count or v.count_column
    if w in DISTINCT_CUES:
        return v.distinct or v.group
    if w in ("least", "most") and i > 0 and toks[i - 1].value == "at":  # "at least 3": a comparison
        return v.more if w == "least" else v.less
    if w in MORE_CUES:
        return v.more
    if w in LESS_CUES:
        return v.less
    if w == "than":
        return v.compare
    if w == "between":
        return v.more and v.less
    if w in NEGATION_CUES:
        return v.negation
    if _superlative(w):
        return v.order or v.minmax
    if len(w) > 3 and w.endswith("er") and i + 1 < len(toks) and toks[i + 1].value == "than":
        return v.compare  # "heavier than", "older than"
    t.cue = False
    return False


def _of_data(w: str, v: Vocabulary) -> bool:
    return w not in FUNCTION_WORDS and (
        bool(v.literal_index.matches(w)) or any(same_word(w, x) for x in v.column_words)
    )


def _superlative(w: str) -> bool:
    return w in SUPERLATIVES or (len(w) > 4 and w.endswith("est") and w not in SUPERLATIVE_NOT)


def _is_modal(i: int, toks: list[Token]) -> bool:
    """ "may" as a verb ("may I see ..."), not the month."""
    before = toks[i - 1].value if i > 0 else None
    after = toks[i + 1] if i + 1 < len(toks) else None
    return not (
        before in ("in", "of", "during", "since", "until", "before", "after") or (after and after.kind == "number")
    )


def _is_word(x: str, w: str) -> bool:
    return x == w or x == w[:3]


def _number_covered(t: Token, i: int, toks: list[Token], v: Vocabulary, schema_words: set[str]) -> bool:
    n = _number(t)
    if n in v.limits:
        return True
    if n.is_integer() and 1000 <= n <= 2999 and any(y == n for y, _, _ in v.dates):
        return True  # a year, in a date literal
    unit = _unit_after(i, toks)
    factors = [1.0]
    if unit is not None:
        factors += [1000.0, 0.001]
    near = _column_words_near(i, toks, schema_words)
    for value, columns in v.numbers:
        if not any(abs(value - n * f) <= 1e-9 * max(1.0, abs(value)) for f in factors):
            continue
        if near and columns and not any(any(same_word(w, c) for c in columns) for w in near):
            continue  # "4 cylinders" compared with another column
        return True
    return False


def _unit_after(i: int, toks: list[Token]) -> str | None:
    if i + 1 < len(toks) and toks[i + 1].kind == "word":
        w = str(toks[i + 1].value)
        if w in UNITS or any(w in words for words in UNITS.values()):
            return w
    return None


_BETWEEN_COLUMN_AND_NUMBER = frozenset(
    {"than", "is", "are", "was", "were", "of", "at", "least", "most", "to", "equal", "equals", "exactly", "about",
     "around", "a", "an", "the"}
) | MORE_CUES | LESS_CUES  # fmt: skip


def _column_words_near(i: int, toks: list[Token], schema_words: set[str]) -> list[str]:
    """Words naming a column of the data right after the number ("4 cylinders", "220 mm"), else before it
    across comparison words only ("flipper length over 220"; not "wind in 2013")."""
    after = []
    for t in toks[i + 1 : i + 3]:
        if t.kind != "word" or not any(same_word(str(t.value), c) for c in schema_words):
            break
        after.append(str(t.value))
    if after:
        return after
    before: list[str] = []
    for t in reversed(toks[max(0, i - 4) : i]):
        w = str(t.value)
        if t.kind != "word":
            break
        if w in _BETWEEN_COLUMN_AND_NUMBER and not before:
            continue
        if not any(same_word(w, c) for c in schema_words):
            break
        before.append(w)
    return before


TIME_ROWS = frozenset({"day", "date", "week", "month", "year", "hour"})
_COUNTED_AFTER = {("how", "many"), ("number", "of"), ("count", "of"), ("count", "the"), ("count", "all")}


def _rows_noun(toks: list[Token], v: Vocabulary, data: DataWords) -> None:
    """The noun that names the rows counted or listed — the last word of "how many <words>", the word before
    "per", after "the most" or "the N" (N the LIMIT), or after "of the" at the end of an aggregate — is
    understood when the query counts or lists them and the noun is: a time unit over a table with a date
    column ("days"); a value of a column the query sets to another value; or the one word of the question
    left, the rest mapping onto the query, some of it onto the data.  (The table's own name is understood
    anyway.)"""
    words = [str(t.value) if t.kind == "word" else None for t in toks]

    def noun_run(start: int) -> int | None:
        """The last word of the run of content words from ``start`` (a number or a superlative before it
        skipped: "the 4 youngest victims")."""
        last = None
        for j in range(start, len(toks)):
            w = words[j]
            if last is None and (toks[j].kind == "number" or (w is not None and _superlative(w))):
                continue
            if toks[j].kind != "word" or w is None or w in FUNCTION_WORDS or w in CUES or w in MONTHS:
                break
            if _superlative(w) or (j + 1 < len(toks) and words[j + 1] == "than"):
                break  # "how many boats longer than ...": the noun is before the comparison
            last = j
        return last

    candidates: list[int] = []
    for j in range(1, len(toks)):
        if (words[j - 1], words[j]) in _COUNTED_AFTER and v.count:
            k = noun_run(j + 1)
            if k is not None:
                candidates.append(k)
        if words[j] == "per" and v.count and toks[j - 1].kind == "word":  # "deaths per race"
            candidates.append(j - 1)
        if words[j - 1] in ("most", "fewest", "least") and v.count and v.order:  # "the most deaths"
            k = noun_run(j)
            if k is not None:
                candidates.append(k)
        if toks[j - 1].kind == "number" and _number(toks[j - 1]) in v.limits:
            k = noun_run(j)
            if k is not None:
                candidates.append(k)
    if v.count or v.avg or v.sum or v.minmax:  # "the average age of the victims"
        for j in range(len(toks) - 1, 0, -1):
            if toks[j].kind == "word" and words[j] not in FUNCTION_WORDS:
                if words[j - 1] == "the" and j >= 2 and words[j - 2] == "of":
                    candidates.append(j)
                break
    left = [t for t in toks if not t.covered]
    for k in candidates:
        w = str(toks[k].value)
        of = {c for d, cs in data.values.items() if same_word(w, d) for c in cs}
        if of and not of - v.set_columns:  # "how many deaths were homicides": 'Death' is of the column set to
            toks[k].covered = True  # another value, so the word names the rows, not a condition
        elif not of and data.dated and stem(w) in TIME_ROWS:  # "how many days had snow" over a daily table
            toks[k].covered = True
        elif (
            not of
            and left == [toks[k]]
            and any(t.data for t in toks)
            and not any(any(same_word(w, c) for c in name) for name in data.names)
        ):
            # the one word the data does not hold, where the rows are named, in a question whose other words
            # all map onto the query: "how many victims were Latino?" ("how many passengers flew from JFK?" has
            # two such words, "how many sunroofs are there?" nothing else of the data: both stay flagged)
            toks[k].covered = True


# --- a follow-up: what the dialogue carries over -------------------------------------------------------------

MAX_CARRIED = 32
"""A previous query's first 32 conditions are checked as carried over."""
REFERS_BACK = frozenset({"instead", "those", "these", "them", "ones", "same"})
"""Words that point back at the dialogue ("a café there instead", "the italian ones"): the turn is a follow-up."""


def carried_over_dropped(question: str, previous: exp.Expr | None, current: exp.Expr) -> tuple[exp.Expr, ...]:
    """The conditions of the previous turn's query (``previous``) that a follow-up's query (``current``) leaves
    out without putting anything in their place: "What about italian ones?" after "restaurants in Menlo Park"
    must still be in Menlo Park.

    The turn is a follow-up when its query keeps a condition of the previous one that the question itself does
    not say (the parser carried it over), or when the question points back ("what about", "there", "those",
    "instead").  A condition is in place when the query has it, or has any condition on its columns (the
    follow-up changed it: "How about in Palo Alto?").  A new question that says everything again carries
    nothing over, and nothing is dropped."""
    if not (isinstance(previous, exp.Select) and isinstance(current, exp.Select)):
        return ()
    before, now = _where_parts(previous), _where_parts(current)
    if not before:
        return ()
    toks = tokens(question)
    now_sql = {p.sql(dialect="postgres") for p in now}
    now_columns = {fold(c) for p in now for c in _column_names(p, limit=64)}
    kept_unsaid = False
    dropped: list[exp.Expr] = []
    for part in before[:MAX_CARRIED]:
        if part.sql(dialect="postgres") in now_sql:
            kept_unsaid = kept_unsaid or not _said(part, toks)
        elif not {fold(c) for c in _column_names(part, limit=64)} & now_columns:
            dropped.append(part)
    if dropped and (kept_unsaid or _refers_back(toks, question)):
        return tuple(dropped)
    return ()


def _where_parts(tree: exp.Select) -> list[exp.Expr]:
    where = tree.args.get("where")
    if where is None:
        return []
    out: list[exp.Expr] = []
    stack = [where.this]
    while stack and len(out) <= MAX_CARRIED:
        node = stack.pop()
        node = node.unnest() if isinstance(node, exp.Paren) else node
        if isinstance(node, exp.And):
            stack += [node.expression, node.this]
        else:
            out.append(node)
    return out


def _said(part: exp.Expr, toks: list[Token]) -> bool:
    """The question itself says a value of the condition (a word of a string, a number)."""
    words = [str(t.value) for t in toks if t.kind == "word" and t.value not in FUNCTION_WORDS]
    numbers = {_number(t) for t in toks if t.kind == "number"}
    for k, lit in enumerate(part.find_all(exp.Literal)):
        if k >= MAX_CARRIED:
            break
        if lit.is_string:
            if any(same_word(w, x) for x in re.findall(r"[^\W_]+", fold(lit.name[:MAX_LITERAL_CHARS])) for w in words):
                return True
        else:
            try:
                if float(lit.name) in numbers:
                    return True
            except ValueError:
                pass
    return False


def _refers_back(toks: list[Token], question: str) -> bool:
    words = [str(t.value) if t.kind == "word" else None for t in toks]
    if words[:2] in (["what", "about"], ["how", "about"]) or words[:1] == ["and"]:
        return True
    for i, w in enumerate(words):
        if w in REFERS_BACK:
            return True
        if w == "there":  # "a café there", not "there is / are ..."
            existential = toks[i].text.lower().endswith(("'s", "’s")) or (
                i + 1 < len(words) and words[i + 1] in ("is", "are", "was", "were", "be")
            )
            if not existential:
                return True
        if w == "which" and i + 1 < len(words) and words[i + 1] == "one":
            return True
    return False


def _phrases(question: str, toks: list[Token]) -> tuple[str, ...]:
    """Runs of tokens not understood, as said: two such tokens with at most two function words between are
    one phrase ("JFK to LAX"); "many" takes its "how"."""
    out: list[str] = []
    run: list[Token] = []
    gap = 0
    for t in toks:
        if not t.covered:
            if run and gap > 2:
                out.append(_span(question, run))
                run = []
            run.append(t)
            gap = 0
        elif run:
            if t.kind == "word" and t.value in FUNCTION_WORDS and not t.cue:
                gap += 1
            else:
                gap = 3
    if run:
        out.append(_span(question, run))
    return tuple(dict.fromkeys(out))


def _span(question: str, run: list[Token]) -> str:
    start = run[0].start
    if run[0].value == "many":
        m = re.search(r"how\s+$", question[:start], re.IGNORECASE)
        if m:
            start = m.start()
    return " ".join(question[start : run[-1].end].split())
