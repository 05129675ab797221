"""The simulated parser and reply writer over a user's own tables: weak, generic and honest.

It plays a zero-shot LLM shown the schema text that ``engines.data.describe`` writes (``CREATE TABLE``
statements whose comments give each column's role, and the values of small enumerations).  It reads
that text with sqlglot — nothing else about the data — and knows no domain: from an utterance it takes

* the table named (else the one whose columns and values it mentions most);
* the values of a shown enumeration it mentions (``city = 'Paris'``, ``'x' = ANY(tags)``), and a quoted
  value right after a text column's name (``city 'Lyon'``; ``classify()`` maps it onto real values);
* a number compared with a numeric column named just before it (``price under 50``);
* "how many" (a count), and "highest / lowest <column>" (an order, with "top N");
* with SUQL's functions in the schema: "<free-text column> mention(s) X" or "mentioning X" as
  ``answer(col, 'does the text mention X?') = 'Yes'``, and the wishes of the sim's small lexicon
  ("quiet", "family-friendly" ...) as its questions.

What it does not recognise it leaves out (the reply then lists the whole table's rows the query
returns); it never invents a column.  A follow-up ("what about Rome?") keeps the previous query's
conditions on the other columns.  Every name is quoted through sqlglot: any column name works.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from engines.llm.protocol import Results, Turn
from engines.sql.sim_parser import _NUM, _NUMBERS  # number words, as the restaurant parser reads them

MARKER = "-- The user's data:"
"""How the described schema begins (engines.data.describe.SchemaDescription.render)."""

_FOLLOW_UP = re.compile(
    r"^(what|how) about\b|\binstead\b|\bthose\b|\bthem\b|\bthese\b|\bones\b|\bof them\b|\bamong\b"
    r"|^(and|also|only|just|now)\b|\bthe same\b"
)
_CHITCHAT = re.compile(
    r"^\s*(thanks|thank you|thx|ok(ay)?|great,? thanks|cool|hi|hello|hey|bye|goodbye|good night)\b[\s!.]*$"
)
_LOOKUP = re.compile(r"\b(show|list|find|give me|how many|count|search|look up|rows?|records?|entries)\b")
_DEFINITION = re.compile(r"^\s*(what|who)\s+(is|are)\s+(an?\s+|the\s+)?(?P<thing>[\w\s&'-]+?)\s*\??\s*$")
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b")
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_COMPARATORS: tuple[tuple[str, type[exp.Expr]], ...] = (
    (r"at least|no less than|minimum of|>=", exp.GTE),
    (r"at most|no more than|maximum of|up to|<=", exp.LTE),
    (r"over|above|more than|greater than|higher than|larger than|bigger than|after|>", exp.GT),
    (r"under|below|less than|lower than|smaller than|fewer than|cheaper than|before|<", exp.LT),
    (r"equal to|equals|exactly|of|is|=", exp.EQ),
)
_HIGH = r"highest|largest|biggest|greatest|most|maximum|max|top|best"
_LOW = r"lowest|smallest|least|fewest|minimum|min"
_TOP_N = re.compile(rf"\b(?:top|first)\s+{_NUM}\b")
_MENTION = re.compile(
    r"\b(?:mentions?|mentioning|talks? about|talking about|says?|saying|refers? to|referring to)\s+"
    r"(?:that\s+|the\s+|a\s+|an\s+)?(?P<x>[^.?!,;]+?)(?=\s+(?:and|but|or|in|with|whose|where|sorted|ordered|order)\b|[.?!,;]|$)"
)


# --- reading the schema text --------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    role: str
    values: tuple[str, ...] = ()  # a shown enumeration's values

    @property
    def words(self) -> str:
        return " ".join(self.name.lower().replace("_", " ").split())


@dataclass(frozen=True)
class Table:
    ref: exp.Table
    name: str
    columns: tuple[Column, ...]

    @property
    def words(self) -> str:
        return " ".join(self.name.lower().replace("_", " ").split())


def is_described(schema: str) -> bool:
    """The schema is a described user data source (not one of the built-in worlds)."""
    return schema.lstrip().startswith(MARKER)


def suql_schema(schema: str) -> bool:
    return "answer(text, 'question')" in schema


def read_schema(schema: str) -> list[Table]:
    """The tables of the schema text, each column with the role its comment gives."""
    try:
        statements = sqlglot.parse(schema, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return []
    tables: list[Table] = []
    for st in statements:
        if not isinstance(st, exp.Create) or not isinstance(st.this, exp.Schema):
            continue
        ref = st.this.this
        if not isinstance(ref, exp.Table):
            continue
        columns = []
        for cd in st.this.expressions:
            if not isinstance(cd, exp.ColumnDef):
                continue
            comment = " ".join(c.strip() for c in (cd.comments or []))
            role, values = _role(comment)
            kind = cd.args.get("kind")
            columns.append(Column(cd.name, kind.sql(dialect="duckdb") if kind is not None else "", role, values))
        table_ref = exp.table_(
            exp.to_identifier(ref.name, quoted=True), db=exp.to_identifier(ref.db, quoted=True) if ref.db else None
        )
        tables.append(Table(table_ref, ref.name, tuple(columns)))
    return tables


def _role(comment: str) -> tuple[str, tuple[str, ...]]:
    for prefix, role in (("list enum:", "list_enum"), ("enum:", "enum")):
        if comment.startswith(prefix):
            rest = comment[len(prefix) :].strip()
            values: tuple[str, ...] = ()
            if rest.startswith("["):
                try:
                    arr = sqlglot.parse_one(rest, read="duckdb")
                except sqlglot.errors.SqlglotError:
                    arr = None
                if isinstance(arr, exp.Array):
                    values = tuple(e.name for e in arr.expressions if isinstance(e, exp.Literal) and e.is_string)
            return role, values
    if comment.startswith("free text"):
        return "free_text", ()
    if comment.startswith("list of free texts"):
        return "list_text", ()
    for word, role in (("number", "number"), ("date", "date"), ("yes/no", "bool"), ("list", "list"), ("text", "text")):
        if comment.startswith(word):
            return role, ()
    return "other", ()


# --- reading an utterance -------------------------------------------------------------------------------


def _fold(text: str) -> str:
    """Lower case; offsets stay those of the text (whitespace and underscores are matched loosely)."""
    return text.lower()


def _find(phrase: str, low: str) -> re.Match[str] | None:
    """``phrase`` as whole words in ``low`` (spaces and underscores alike, a plural 's' allowed)."""
    words = phrase.lower().replace("_", " ").split()
    if not words or not re.search(r"\w", phrase):
        return None
    pattern = r"[\s_]+".join(re.escape(w) for w in words)
    return re.search(rf"(?<!\w){pattern}(?:s|es)?(?!\w)", low)


@dataclass
class Reading:
    table: Table
    conditions: list[tuple[str, exp.Expr]]  # (column name, condition)
    count: bool = False
    order: tuple[str, bool] | None = None  # (column, descending); column "" orders by the group's count
    limit: int | None = None
    said: tuple[str, ...] = ()  # what it recognised, for the route's reason
    aggregate: tuple[str, str] | None = None  # (AVG | SUM | MIN | MAX, column)
    group: str | None = None  # GROUP BY this column


def _pick_table(tables: Sequence[Table], low: str) -> Table:
    for t in tables:
        if _find(t.words, low) or (t.words.endswith("s") and _find(t.words[:-1], low)):
            return t

    def score(t: Table) -> int:
        n = sum(1 for c in t.columns if _find(c.words, low))
        n += sum(1 for c in t.columns for v in c.values if _find(_fold(v), low))
        return n

    return max(tables, key=score)


# --- the model's general knowledge: words about quantities, comparisons, time ----------------------------------
# Nothing here names a column or a value of any table: the reader finds those in the schema it is shown.

_STOP = frozenset(
    "a an the of in on at to from by for with and or is are was were be been has have had do does did how many much "
    "what which who show me list give find tell all any some there that this these those it its per each than as "
    "no not without".split()
)
_GLUE = frozenset({"of", "per", "in", "by", "to", "and"})  # may join the words of one column's name
UNIT_WORDS: dict[str, tuple[str, ...]] = {  # a unit at the end of a column's name -> how people say it
    "mm": ("mm", "millimeter", "millimeters", "millimetre", "millimetres"),
    "cm": ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
    "m": ("m", "meter", "meters", "metre", "metres"),
    "km": ("km", "kilometer", "kilometers", "kilometre", "kilometres"),
    "g": ("g", "gram", "grams"),
    "kg": ("kg", "kilo", "kilos", "kilogram", "kilograms"),
    "lbs": ("lbs", "lb", "pound", "pounds"),
    "lb": ("lb", "lbs", "pound", "pounds"),
    "ft": ("ft", "foot", "feet"),
    "in": ("inch", "inches"),
    "mph": ("mph",),
    "usd": ("usd", "dollar", "dollars"),
    "pct": ("pct", "percent"),
    "s": ("s", "sec", "second", "seconds"),
    "h": ("h", "hour", "hours"),
}
_SCALE = {("kg", "g"): 1000.0, ("g", "kg"): 0.001, ("km", "m"): 1000.0, ("m", "km"): 0.001, ("m", "mm"): 1000.0,
          ("mm", "m"): 0.001, ("cm", "mm"): 10.0, ("mm", "cm"): 0.1, ("m", "cm"): 100.0, ("cm", "m"): 0.01,
          ("lb", "lbs"): 1.0, ("lbs", "lb"): 1.0}  # fmt: skip
_MASS_UNITS = ("g", "kg", "lb", "lbs")
_LENGTH_UNITS = ("mm", "cm", "m", "km", "ft", "in")
# a quantity: the words naming it (in a column's name, or its unit) -> its adjectives (more, less)
_DIMENSIONS: tuple[tuple[frozenset[str], frozenset[str], frozenset[str]], ...] = (
    (frozenset({"weight", "mass", *_MASS_UNITS}), frozenset({"heavy", "heavier", "heaviest", "weigh", "weighs", "weighing"}),
     frozenset({"light", "lighter", "lightest"})),
    (frozenset({"length", *_LENGTH_UNITS}), frozenset({"long", "longer", "longest"}), frozenset({"short", "shorter", "shortest"})),
    (frozenset({"age"}), frozenset({"old", "older", "oldest"}), frozenset({"young", "younger", "youngest"})),
    (frozenset({"temp", "temperature"}), frozenset({"warm", "warmer", "warmest", "hot", "hotter", "hottest"}),
     frozenset({"cold", "colder", "coldest", "cool", "cooler", "coolest"})),
    (frozenset({"distance"}), frozenset({"far", "farther", "farthest", "further", "furthest"}), frozenset({"near", "nearer", "nearest"})),
    (frozenset({"price", "cost", "usd"}), frozenset({"expensive", "pricier", "priciest"}), frozenset({"cheap", "cheaper", "cheapest"})),
    (frozenset({"speed", "mph"}), frozenset({"fast", "faster", "fastest"}), frozenset({"slow", "slower", "slowest"})),
    (frozenset({"height"}), frozenset({"tall", "taller", "tallest", "high"}), frozenset({"low", "lower"})),
)  # fmt: skip
_MORE = (
    "more than",
    "greater than",
    "higher than",
    "larger than",
    "bigger than",
    "over",
    "above",
    "exceeding",
    "after",
    "since",
)
_LESS = ("less than", "fewer than", "lower than", "smaller than", "under", "below", "before", "until")
_AT_LEAST = ("at least", "no less than", "minimum of")
_AT_MOST = ("at most", "no more than", "maximum of", "up to")
_MORE_ADJ = frozenset(
    "more greater higher larger bigger heavier older longer taller wider warmer hotter later farther further faster".split()
)
_LESS_ADJ = frozenset(
    "less fewer lower smaller lighter younger shorter colder cooler earlier nearer slower cheaper".split()
)
_AGGREGATES = {
    "average": "AVG", "avg": "AVG", "mean": "AVG", "total": "SUM", "sum": "SUM", "combined": "SUM",
    "maximum": "MAX", "max": "MAX", "highest": "MAX", "largest": "MAX", "biggest": "MAX", "greatest": "MAX",
    "most": "MAX", "top": "MAX", "minimum": "MIN", "min": "MIN", "lowest": "MIN", "smallest": "MIN", "least": "MIN",
    "fewest": "MIN",
}  # fmt: skip
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        )
    )  # fmt: skip
    for name in names.split()
}
_NEGATION = frozenset({"no", "without", "missing", "unknown", "lacking"})
_ABSENCE_FILLER = frozenset({"recorded", "known", "listed", "given", "a", "an", "the", "reported", "stated"})
# where a value the schema does not list is said: the preposition before it -> words of the column it is for
_CUES: dict[str, frozenset[str]] = {
    "to": frozenset({"dest", "destination", "to", "arrival", "target"}),
    "into": frozenset({"dest", "destination", "to", "target"}),
    "from": frozenset({"origin", "source", "from", "departure", "start"}),
    "in": frozenset({"city", "town", "place", "location", "neighborhood", "neighbourhood", "area", "district",
                     "region", "state", "country", "county", "address"}),
    "at": frozenset({"city", "place", "location", "address", "venue"}),
    "by": frozenset({"author", "artist", "maker", "manufacturer", "brand", "owner", "creator", "by"}),
    "named": frozenset({"name", "title"}),
    "called": frozenset({"name", "title"}),
}  # fmt: skip
_LIST_WORDS = frozenset({"show", "list", "give", "find", "display", "which", "top", "first"})
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "twelve": 12, "twenty": 20}  # fmt: skip


def _name_words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _stem(w: str) -> str:
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("es") and w[-3] in "sxh":
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _word_is(said: str, named: str) -> bool:
    """The question's word ``said`` is the column name's word ``named`` (a plural, an abbreviation: "temp" for
    "temperature", "dest" for "destinations")."""
    a, b = _stem(said), _stem(named)
    return a == b or (len(b) >= 3 and a.startswith(b)) or (len(a) >= 4 and b.startswith(a))


@dataclass
class _Tok:
    kind: str  # word | number | date | quoted
    text: str  # as said
    low: str
    start: int
    end: int
    value: Any = None
    used: bool = False


_TOKEN = re.compile(
    r"(?P<quoted>'[^']{1,200}'|\"[^\"]{1,200}\")"
    r"|(?P<date>\b\d{4}-\d{1,2}-\d{1,2}\b)"
    r"|(?P<number>(?<![\w.])-?\d+(?:\.\d+)?)(?P<unit>[a-z]{1,3}\b)?"
    r"|(?P<word>[^\W\d_][\w'-]*|\d+[^\W\d_][\w-]*)",
    re.IGNORECASE,
)


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    for m in _TOKEN.finditer(text[:2000]):
        if m.group("quoted"):
            out.append(_Tok("quoted", m.group(0)[1:-1], m.group(0)[1:-1].lower(), m.start(), m.end()))
        elif m.group("date"):
            out.append(_Tok("date", m.group(0), m.group(0), m.start(), m.end(), m.group(0)))
        elif m.group("number") is not None:
            number = m.group("number")
            out.append(_Tok("number", number, number, m.start(), m.end("number"), float(number)))
            if m.group("unit"):
                unit = m.group("unit")
                out.append(_Tok("word", unit, unit.lower(), m.start("unit"), m.end("unit")))
        else:
            word = m.group("word")
            parts = [word] if not re.fullmatch(r"\d+-[a-z]+", word, re.IGNORECASE) else word.split("-", 1)  # 4-cylinder
            offset = m.start()
            for part in parts:
                low = part.lower()
                if low in _NUMBER_WORDS:
                    out.append(_Tok("number", part, low, offset, offset + len(part), float(_NUMBER_WORDS[low])))
                elif re.fullmatch(r"\d+", part):
                    out.append(_Tok("number", part, low, offset, offset + len(part), float(part)))
                else:
                    out.append(_Tok("word", part, low, offset, offset + len(part)))
                offset += len(part) + 1
    return out


def _unit_of(c: Column) -> str | None:
    words = _name_words(c.name)
    return words[-1] if len(words) > 1 and words[-1] in UNIT_WORDS else None


def _core(c: Column) -> list[str]:
    """The words of a column's name that say what it is (its unit and joining words apart)."""
    words = _name_words(c.name)
    unit = _unit_of(c)
    core = [w for w in (words[:-1] if unit else words) if w not in _GLUE or len(words) == 1]
    return core or words


def _dimension(c: Column) -> tuple[frozenset[str], frozenset[str]] | None:
    words = set(_name_words(c.name))
    for names, more, less in _DIMENSIONS:
        if words & names:
            return more, less
    return None


@dataclass
class _Mention:
    column: Column
    start: int  # token indexes, end exclusive
    end: int
    matched: int


def _mentions(toks: list[_Tok], columns: Sequence[Column]) -> list[_Mention]:
    """Where the question names a column: runs of its name's words (in any order, joined by "of", "per" ...),
    the longest and most complete first; no two overlap."""
    found: list[_Mention] = []
    for c in columns:
        core = _core(c)
        for i in range(len(toks)):
            left = list(core)
            j = i
            while j < len(toks) and toks[j].kind == "word":
                w = toks[j].low
                hit = next((x for x in left if w not in _STOP and _word_is(w, x)), None)
                if hit is not None:
                    left.remove(hit)
                    j += 1
                    continue
                if w in _GLUE and j > i and j + 1 < len(toks) and any(_word_is(toks[j + 1].low, x) for x in left):
                    j += 1
                    continue
                break
            matched = len(core) - len(left)
            if matched:
                found.append(_Mention(c, i, j, matched))
    found.sort(key=lambda m: (-m.matched, len(_core(m.column)), m.start))
    chosen: list[_Mention] = []
    taken: set[int] = set()
    for m in found:
        if not taken & set(range(m.start, m.end)):
            chosen.append(m)
            taken |= set(range(m.start, m.end))
    return sorted(chosen, key=lambda m: m.start)


def _names_table(toks: list[_Tok], m: _Mention, table: Table) -> bool:
    """The words are the table's own name ("flights" over the table flights, not its column flight)."""
    said = " ".join(t.low for t in toks[m.start : m.end])
    return said == table.words or (table.words.endswith("s") and said == table.words[:-1])


def _value_hits(utterance: str, toks: list[_Tok], c: Column) -> list[tuple[str, int]]:
    """The values of a shown enumeration the question says, with the token where each is said.  A code (short,
    or in capitals: 'JFK', '9E') is read only as written; a word also as a plural or an adjective ('rainy')."""
    out: list[tuple[str, int]] = []
    for v in c.values:
        if len(v.strip()) < 2:
            continue  # 'A' is not a word said
        if len(v) <= 3 or v.isupper() or any(ch.isdigit() for ch in v):
            m = re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", utterance)
        else:
            words = v.lower().split()
            pattern = r"[\s_]+".join(re.escape(w) for w in words)
            m = re.search(rf"(?<![\w-]){pattern}(?:s|es|y)?(?![\w-])", utterance.lower())
        if m:
            at = next((k for k, t in enumerate(toks) if t.start <= m.start() < t.end + 1), -1)
            out.append((v, at))
    return out


def _col(c: Column) -> exp.Column:
    return exp.column(exp.to_identifier(c.name, quoted=True))


def _num(value: float) -> exp.Literal | exp.Neg:  # a negative number is Neg(Literal)
    return exp.Literal.number(int(value) if float(value).is_integer() else round(value, 6))


def read_utterance(utterance: str, tables: Sequence[Table], *, suql: bool) -> Reading:
    """What the question asks of one table, read from its words against the schema alone."""
    low = _fold(utterance)
    table = _pick_table(tables, low)
    toks = _tokens(utterance)
    words = [t.low if t.kind == "word" else None for t in toks]
    mentions = [m for m in _mentions(toks, table.columns) if not _names_table(toks, m, table)]
    at_mention = {k: m for m in mentions for k in range(m.start, m.end)}
    conditions: list[tuple[str, exp.Expr]] = []
    said: list[str] = []

    def add(c: Column, cond: exp.Expr) -> None:
        conditions.append((c.name, cond))
        said.append(c.name)

    def before(i: int, n: int = 3) -> list[str]:
        return [w for w in words[max(0, i - n) : i] if w is not None]

    counted_head = _rows_noun_positions(toks, words)

    # values of shown enumerations
    for c in table.columns:
        hits = _value_hits(utterance, toks, c)
        if not hits:
            continue
        if c.role == "enum":
            # a value said where the rows are named, that also names a column ("deaths" beside death_date),
            # names the rows: "how many deaths were homicides?"
            hits = [
                (v, k)
                for v, k in hits
                if not (k in counted_head and k in at_mention) or len(hits) == 1 and k not in at_mention
            ]
            if not hits:
                continue
            for _, k in hits:
                if k >= 0:
                    toks[k].used = True
            values = [v for v, _ in hits]
            negated = any(words[k - 1] in ("not", "non", "except", "excluding") for _, k in hits if k > 0)
            cond: exp.Expr = (
                exp.EQ(this=_col(c), expression=exp.Literal.string(values[0]))
                if len(values) == 1
                else exp.In(this=_col(c), expressions=[exp.Literal.string(v) for v in values])
            )
            add(c, exp.Not(this=cond) if negated else cond)
        elif c.role == "list_enum":
            values = [v for v, _ in hits]
            parts = [
                exp.EQ(this=exp.Literal.string(v), expression=exp.Any(this=exp.Paren(this=_col(c)))) for v in values
            ]
            joined = exp.Paren(this=exp.or_(*parts)) if re.search(r"\bor\b", low) else exp.and_(*parts)
            add(c, parts[0] if len(parts) == 1 else joined)

    # a quoted value right after a text column's name ("city 'Lyon'"): classify() maps it onto real values
    for m in mentions:
        c = m.column
        if c.role in ("enum", "text", "list_enum") and m.end < len(toks):
            j = m.end + (1 if words[m.end] in ("is", "of", "named", "called") and m.end + 1 < len(toks) else 0)
            if toks[j].kind == "quoted":
                quoted = exp.Literal.string(toks[j].text)
                toks[j].used = True
                add(
                    c,
                    exp.EQ(this=quoted, expression=exp.Any(this=exp.Paren(this=_col(c))))
                    if c.role == "list_enum"
                    else exp.EQ(this=_col(c), expression=quoted),
                )

    # values the schema does not list: a capitalised name or a code, for a text column named beside it or by
    # the preposition before it ("to LAX" -> a destination, "in the Westlake neighborhood")
    for start, end, value in _names_said(utterance, toks, words, at_mention):
        column = _column_for_name(toks, words, start, end, mentions, table)
        if column is not None:
            for k in range(start, end):
                toks[k].used = True
            add(column, exp.EQ(this=_col(column), expression=exp.Literal.string(value)))

    # absence: "no recorded sex", "without a licence" -> IS NULL
    for m in mentions:
        near = [w for w in before(m.start, 3) if w not in _ABSENCE_FILLER]
        after = [w for w in words[m.end : m.end + 2] if w is not None]
        if (near and near[-1] in _NEGATION) or (
            after[:1] in (["missing"], ["unknown"]) or after[:2] == ["not", "recorded"]
        ):
            add(m.column, exp.Is(this=_col(m.column), expression=exp.Null()))
            m.matched = -1  # used up

    # dates and times
    dates = [c for c in table.columns if c.role == "date"]
    numeric = [c for c in table.columns if c.role == "number"]
    year_column = next((c for c in numeric if _core(c) == ["year"]), None)
    month_column = next((c for c in numeric if _core(c) == ["month"]), None)
    named_date = next((m.column for m in mentions if m.column.role == "date"), None)
    date_column = named_date or (dates[0] if dates else None)
    for i, t in enumerate(toks):
        if t.kind == "date" and date_column is not None:
            t.used = True
            op = _comparison(words, i) or exp.EQ
            add(
                date_column,
                op(
                    this=_col(date_column),
                    expression=exp.Cast(this=exp.Literal.string(t.value), to=exp.DataType.build("DATE")),
                ),
            )
        elif t.kind == "word" and t.low in _MONTHS and not (t.low == "may" and not _month_context(toks, words, i)):
            month = _MONTHS[t.low]
            if month_column is not None:
                t.used = True
                add(month_column, exp.EQ(this=_col(month_column), expression=_num(month)))
            elif date_column is not None:
                t.used = True
                add(date_column, exp.EQ(this=_extract("MONTH", date_column), expression=_num(month)))

    # numbers: "4 cylinders", "body mass over 5000 g", "heavier than 4.5 kg", "in 2008", "the top 5"
    limit: int | None = None
    for i, t in enumerate(toks):
        if t.kind != "number" or t.used:
            continue
        prev = words[i - 1] if i > 0 else None
        if (
            prev in ("top", "first", "the", "which", "show", "list")
            and t.value.is_integer()
            and not _is_measured(toks, words, i, mentions)
        ):
            limit = int(t.value)  # "the top 5", "the 3 heaviest", "which 3 destinations"
            t.used = True
            continue
        column, measured = _number_column(toks, words, i, mentions, table)
        if column is None and t.value.is_integer() and 1800 <= t.value <= 2100:
            if year_column is not None:
                column = year_column
            elif date_column is not None:
                t.used = True
                op = _comparison(words, i) or exp.EQ
                add(date_column, op(this=_extract("YEAR", date_column), expression=_num(t.value)))
                continue
        if column is None:
            continue  # a number the reader cannot place: left out (and so named as not understood)
        t.used = True
        low_value = measured if measured is not None else t.value
        between = _between(toks, words, i)
        if between is not None:
            add(column, exp.Between(this=_col(column), low=_num(between[0]), high=_num(between[1])))
            toks[between[2]].used = True
            continue
        op = _comparison(words, i) or exp.EQ
        add(column, op(this=_col(column), expression=_num(low_value)))

    count = bool(_COUNT.search(low))
    if count:
        said.append("count")

    # grouping: "per X", "for each X", "by X" (counting or aggregating), "which X has the most ..."
    group: str | None = None
    for m in mentions:
        lead = before(m.start, 2)
        if lead[-1:] == ["per"] or lead[-2:] == ["for", "each"] or lead[-1:] == ["each"]:
            group = m.column.name
        elif lead[-1:] == ["by"] and (count or any(w in _AGGREGATES for w in words if w)) and "top" not in words:
            group = group or m.column.name
    which = next((k for k, w in enumerate(words) if w == "which"), None)
    order: tuple[str, bool] | None = None
    if which is not None:
        k = which + 1 + (1 if which + 1 < len(toks) and toks[which + 1].kind == "number" else 0)
        asked = at_mention.get(k)
        tail = [w for w in words[k:] if w]
        if (
            asked is not None
            and asked.column.role in ("enum", "text", "number", "date")
            and ("most" in tail or "common" in tail or "fewest" in tail or "least" in tail)
        ):
            rest_names_column = any(
                x.start > asked.end and x.column.role == "number" and x.matched > 0 for x in mentions
            )
            if not rest_names_column:
                group = asked.column.name
                order = ("", not ("fewest" in tail or "least" in tail))
                limit = limit or 1

    # aggregates and superlatives over a column: "average flipper length", "the lowest acceleration",
    # "the 2 heaviest penguins", "top 5 cars by horsepower"
    aggregate: tuple[str, str] | None = None
    listing = bool(_LIST_WORDS & {w for w in words if w}) or limit is not None
    for m in mentions:
        if m.column.role not in ("number", "date") or m.matched < 0:
            continue
        lead = [w for w in before(m.start, 3) if w not in ("the", "a", "an", "with")]
        fn = next((_superlative(w) for w in reversed(lead[-2:]) if _superlative(w)), None)
        if fn is None and lead[-1:] == ["by"] and limit is not None:
            fn = "MAX"  # "top 5 cars by horsepower"
        if fn is None:
            continue
        if fn in ("MAX", "MIN") and (listing or group is not None) and order is None:
            order = (m.column.name, fn == "MAX")
        elif aggregate is None and (fn in ("AVG", "SUM") or order is None):
            aggregate = (fn, m.column.name)
        said.append("aggregate")
    if order is None and aggregate is None:  # a superlative of a quantity: "the 2 heaviest", "the most expensive"
        for k, w in enumerate(words):
            flip = False
            if w in ("most", "least") and k + 1 < len(words) and words[k + 1]:
                flip, w = w == "least", words[k + 1]
            elif w is None or not w.endswith("est"):
                continue
            for c in numeric:
                dim = _dimension(c)
                if dim and (w in dim[0] or w in dim[1]):
                    high = (w in dim[0]) != flip
                    if listing or limit is not None:
                        order = (c.name, high)
                    else:
                        aggregate = ("MAX" if high else "MIN", c.name)
                    break
            if order or aggregate:
                break
    if order is not None and order[0] and limit is None:
        top = _TOP_N.search(low)
        limit = (int(top.group(1)) if top.group(1).isdigit() else _NUMBERS[top.group(1)]) if top else 1
    if order is not None:
        said.append("order")
    if group is not None:
        said.append("group")

    if suql:
        texts = [c for c in table.columns if c.role in ("free_text", "list_text")]
        if texts:
            for question, column in _text_wishes(low, texts):
                conditions.append(
                    (
                        column.name,
                        exp.EQ(
                            this=exp.Anonymous(this="answer", expressions=[_col(column), exp.Literal.string(question)]),
                            expression=exp.Literal.string("Yes"),
                        ),
                    )
                )
                said.append("text")
    return Reading(table, conditions, count, order, limit, tuple(dict.fromkeys(said)), aggregate, group)


_LESS_EST = frozenset(
    "lowest smallest least fewest shortest lightest youngest earliest coldest coolest cheapest slowest nearest "
    "closest weakest thinnest narrowest".split()
)


def _superlative(w: str) -> str | None:
    """The aggregate a word asks of the column it qualifies: "average" AVG, "total" SUM, "highest" or any other
    superlative MAX, "lowest" MIN."""
    if w in _AGGREGATES:
        return _AGGREGATES[w]
    if len(w) > 4 and w.endswith("est") and w not in ("interest", "forest", "request", "harvest", "contest"):
        return "MIN" if w in _LESS_EST else "MAX"
    return None


def _rows_noun_positions(toks: list[_Tok], words: list[str | None]) -> set[int]:
    """Where a question names the rows it counts: the last word of "how many <words>", the word before "per",
    the word after "the most"."""
    out: set[int] = set()
    for j in range(1, len(toks)):
        if (words[j - 1], words[j]) in (("how", "many"), ("number", "of")):
            last = None
            for k in range(j + 1, len(toks)):
                if toks[k].kind != "word" or words[k] in _STOP:
                    break
                last = k
            if last is not None:
                out.add(last)
        if words[j] == "per":
            out.add(j - 1)
        if words[j - 1] in ("most", "fewest") and toks[j].kind == "word":
            out.add(j)
    return out


def _month_context(toks: list[_Tok], words: list[str | None], i: int) -> bool:
    """ "may" is the month after "in" / "of" or before a number ("in May 1992"), not the verb."""
    prev = words[i - 1] if i > 0 else None
    return prev in ("in", "of", "during", "since", "until", "before", "after") or (
        i + 1 < len(toks) and toks[i + 1].kind == "number"
    )


def _extract(part: str, c: Column) -> exp.Expr:
    return exp.Extract(this=exp.var(part), expression=_col(c))


def _comparison(words: list[str | None], i: int) -> type[exp.Expr] | None:
    """The comparison said just before token ``i`` ("over 5000", "at least 3", "heavier than 4.5") or after
    it ("3 or more")."""
    lead = " ".join(w for w in words[max(0, i - 3) : i] if w)
    for phrases, op in ((_AT_LEAST, exp.GTE), (_AT_MOST, exp.LTE), (_MORE, exp.GT), (_LESS, exp.LT)):
        if any(re.search(rf"\b{re.escape(p)}$", lead) for p in phrases):
            return op
    m = re.search(r"\b(\w+) than$", lead)
    if m:
        if m.group(1) in _MORE_ADJ or any(m.group(1) in more for _, more, _ in _DIMENSIONS):
            return exp.GT
        if m.group(1) in _LESS_ADJ or any(m.group(1) in less for _, _, less in _DIMENSIONS):
            return exp.LT
    tail = " ".join(w for w in words[i + 1 : i + 3] if w)
    if re.match(r"or (more|higher|above|greater|over)\b", tail):
        return exp.GTE
    if re.match(r"or (less|fewer|lower|below|under)\b", tail):
        return exp.LTE
    return None


def _between(toks: list[_Tok], words: list[str | None], i: int) -> tuple[float, float, int] | None:
    if (
        i > 0
        and words[i - 1] == "between"
        and i + 2 < len(toks)
        and words[i + 1] == "and"
        and toks[i + 2].kind == "number"
    ):
        return float(toks[i].value), float(toks[i + 2].value), i + 2
    return None


def _is_measured(toks: list[_Tok], words: list[str | None], i: int, mentions: list[_Mention]) -> bool:
    """A number right after "the" that a column or unit follows is a value ("the 4 cylinder cars")."""
    nxt = i + 1
    return nxt < len(toks) and (
        any(m.start == nxt and m.column.role == "number" for m in mentions) or (words[nxt] or "") in _ALL_UNITS
    )


_ALL_UNITS = frozenset(w for words in UNIT_WORDS.values() for w in words)


def _number_column(
    toks: list[_Tok], words: list[str | None], i: int, mentions: list[_Mention], table: Table
) -> tuple[Column | None, float | None]:
    """The numeric column a number is said of, and its value in that column's unit (4.5 kg -> 4500 for a
    column in g)."""
    numeric = [c for c in table.columns if c.role == "number"]
    value = float(toks[i].value)
    unit = words[i + 1] if i + 1 < len(toks) and (words[i + 1] or "") in _ALL_UNITS else None
    after = next((m for m in mentions if m.start in (i + 1, i + 2 if unit else -1) and m.column.role == "number"), None)
    if after is not None:
        return after.column, _convert(value, unit, after.column)
    # a column named before the number, across comparison words only ("flipper length over 220 mm")
    k = i - 1
    skip = {"than", "is", "are", "was", "were", "of", "at", "least", "most", "equal", "to", "exactly", "over", "above",
            "under", "below", "more", "less", "fewer", "greater", "higher", "lower", "no", "up", "between", "a", "an",
            "the", "had", "has", "have", "with"}  # fmt: skip
    while k >= 0 and (words[k] in skip or words[k] in _MORE_ADJ or words[k] in _LESS_ADJ):
        k -= 1
    m = next((m for m in mentions if m.start <= k < m.end and m.column.role == "number"), None)
    if m is not None:
        return m.column, _convert(value, unit, m.column)
    # the unit alone, or an adjective of a quantity ("heavier than 4.5 kg", "older than 40")
    if unit is not None:
        fitting = [c for c in numeric if _unit_of(c) and _convert(value, unit, c) is not None]
        if len(fitting) == 1:
            return fitting[0], _convert(value, unit, fitting[0])
    adjectives = {w for w in words[max(0, i - 3) : i] if w}
    for c in numeric:
        dim = _dimension(c)
        if dim and adjectives & (dim[0] | dim[1]):
            return c, _convert(value, unit, c)
    return None, None


def _convert(value: float, unit: str | None, c: Column) -> float | None:
    """``value`` said in ``unit`` as a value of column ``c`` (its unit the last word of its name); None when
    the units do not fit."""
    target = _unit_of(c)
    if unit is None:
        return value
    said = next((u for u, names in UNIT_WORDS.items() if unit in names), None)
    if target is None:
        return value if said is None else None
    if said == target:
        return value
    factor = _SCALE.get((said or "", target))
    return value * factor if factor is not None else None


def _names_said(
    utterance: str, toks: list[_Tok], words: list[str | None], at_mention: dict[int, _Mention]
) -> list[tuple[int, int, str]]:
    """Values the schema does not list: runs of capitalised words or codes not at the start of the question
    ("Westlake", "LAX", "Santa Monica"), and not a column, a month or a value already read."""
    out: list[tuple[int, int, str]] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        is_name = (
            t.kind == "word"
            and not t.used
            and k not in at_mention
            and t.low not in _MONTHS
            and t.low not in ("i",)
            and (t.text[:1].isupper() and (k > 0 or t.text.isupper() and len(t.text) > 1))
        )
        if not is_name:
            k += 1
            continue
        j = k + 1
        while (
            j < len(toks)
            and toks[j].kind == "word"
            and toks[j].text[:1].isupper()
            and j not in at_mention
            and not toks[j].used
        ):
            j += 1
        out.append((k, j, utterance[toks[k].start : toks[j - 1].end]))
        k = j
    return out


def _column_for_name(
    toks: list[_Tok], words: list[str | None], start: int, end: int, mentions: list[_Mention], table: Table
) -> Column | None:
    texts = [c for c in table.columns if c.role == "text" or (c.role == "enum" and not c.values)]
    if not texts:
        return None
    for m in mentions:  # "the Westlake neighborhood", "neighborhood Westlake"
        if m.column in texts and (m.start == end or m.end == start):
            return m.column
    cue = words[start - 1] if start > 0 else None
    if cue in ("the", "a") and start > 1:
        cue = words[start - 2]
    wanted = _CUES.get(cue or "")
    if not wanted:
        return None
    fits = [c for c in texts if any(_word_is(w, x) or _word_is(x, w) for w in _name_words(c.name) for x in wanted)]
    return fits[0] if len(fits) == 1 else None


def _text_wishes(low: str, texts: Sequence[Column]) -> list[tuple[str, Column]]:
    """What only the free text can tell: "X mentions Y" and the sim lexicon's wishes."""
    from engines.sql.sim_parser import TEXT_FEATURES

    out: list[tuple[str, Column]] = []
    for m in _MENTION.finditer(low):
        thing = m.group("x").strip().strip("'\"")
        if not thing:
            continue
        before = low[: m.start()]
        column = next((c for c in texts if _find(c.words, before)), texts[0])
        out.append((f"does the text mention {thing}?", column))
    if not out:
        for pattern, question in TEXT_FEATURES:
            if re.search(pattern, low):
                out.append((question, texts[0]))
    return out


# --- the tasks ------------------------------------------------------------------------------------------


def route(utterance: str, history: Sequence[Turn], schema: str) -> tuple[bool, str]:
    low = _fold(utterance)
    if not low:
        return False, "the message is empty"
    if _CHITCHAT.match(low):
        return False, "small talk: nothing to look up"
    tables = read_schema(schema)
    if not tables:
        return False, "the schema names no table"
    reading = read_utterance(utterance, tables, suql=suql_schema(schema))
    named = [t.name for t in tables if _find(t.words, low)] + [
        m.column.name for m in _mentions(_tokens(utterance), reading.table.columns)
    ]
    definition = _DEFINITION.match(low)
    if definition and not named and not set(reading.said) - {"text"}:
        return False, f"asks what {definition.group('thing').strip()} is: general knowledge, not a lookup"
    if reading.said or named:
        things = sorted(set(reading.said) | set(named))
        return True, "mentions " + ", ".join(things) + ": a database lookup"
    if _FOLLOW_UP.search(low) and any(t.sql for t in history):
        return True, "refers back to the previous results"
    if _LOOKUP.search(low):
        return True, "asks to look something up"
    return False, "names nothing in the database"


def parse(utterance: str, history: Sequence[Turn], schema: str) -> str:
    """One SQL statement (PostgreSQL dialect) over the described tables."""
    tables = read_schema(schema)
    if not tables:
        return "SELECT 1 WHERE FALSE"
    low = _fold(utterance)
    reading = read_utterance(utterance, tables, suql=suql_schema(schema))
    previous = next((t.sql for t in reversed(history) if t.sql), None)
    base: exp.Select | None = None
    names_table = any(_find(t.words, low) for t in tables)
    if previous and (_FOLLOW_UP.search(low) or not names_table):
        try:
            prior = sqlglot.parse_one(previous, read="postgres")
        except sqlglot.errors.SqlglotError:
            prior = None
        if isinstance(prior, exp.Select) and _same_table(prior, reading.table):
            base = prior
    conditions = [c for _, c in reading.conditions]
    if base is not None:
        constrained = {name for name, _ in reading.conditions}
        where = base.args.get("where")
        kept = [
            p
            for p in (_conjuncts(where.this) if where is not None else [])
            if not ({c.name for c in p.find_all(exp.Column)} & constrained)
        ]
        conditions = kept + conditions
    counted = reading.count or (
        base is not None and len(base.expressions) == 1 and isinstance(base.expressions[0].unalias(), exp.Count)
    )  # "what about south?" after "how many ...": still a count
    measure: exp.Expr = exp.Count(this=exp.Star()) if counted else exp.Star()
    if reading.aggregate is not None:
        fn, name = reading.aggregate
        measure = {"AVG": exp.Avg, "SUM": exp.Sum, "MIN": exp.Min, "MAX": exp.Max}[fn](this=_quoted(name))
    if reading.group is not None:
        if isinstance(measure, exp.Star):
            measure = exp.Count(this=exp.Star())
        query = exp.select(_quoted(reading.group), measure).from_(reading.table.ref.copy())
    else:
        query = exp.select(measure).from_(reading.table.ref.copy())
    if conditions:
        query = query.where(exp.and_(*[c.copy() for c in conditions]))
    if reading.group is not None:
        query = query.group_by(_quoted(reading.group))
    order, limit = reading.order, reading.limit
    if order is None and base is not None and not counted and reading.aggregate is None and reading.group is None:
        o = base.args.get("order")
        if o is not None:
            query.set("order", o.copy())
            lim = base.args.get("limit")
            if lim is not None:
                query.set("limit", lim.copy())
    aggregated = counted or reading.aggregate is not None
    if order is not None and (reading.group is not None or not aggregated):
        key: exp.Expr = exp.Count(this=exp.Star()) if not order[0] else _quoted(order[0])
        if reading.group is not None and order[0] and reading.aggregate is not None:
            key = measure.copy()
        query = query.order_by(exp.Ordered(this=key, desc=order[1], nulls_first=False))
        if limit:
            query = query.limit(limit)
    return query.sql(dialect="postgres", normalize_functions=False)  # answer() stays lower case


def _quoted(name: str) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True))


def _same_table(tree: exp.Select, table: Table) -> bool:
    source = tree.args.get("from") or tree.args.get("from_")
    return source is not None and isinstance(source.this, exp.Table) and source.this.name == table.name


def _conjuncts(e: exp.Expr) -> list[exp.Expr]:
    e = e.unnest() if isinstance(e, exp.Paren) else e
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    return [e]


def direct_reply(utterance: str, schema: str) -> str:
    low = _fold(utterance)
    names = ", ".join(t.name for t in read_schema(schema)) or "none"
    if re.match(r"^(thanks|thank you|thx|great,? thanks)", low):
        return "You're welcome! Ask me about your data any time."
    if re.match(r"^(bye|goodbye|good night)\b", low):
        return "Goodbye!"
    return (
        f"I can look things up in your tables ({names}): name a table, a column or one of its values. "
        "I don't have a good answer to that one."
    )


def results_reply(utterance: str, results: Results) -> str:
    lead = results.readback.rstrip(".")
    if results.total == 0:
        hint = f" {results.why_empty}" if results.why_empty else " Would you like me to relax one of its conditions?"
        return f"{lead}, and found no results.{hint}"
    cols = results.columns
    if len(cols) == 1 and results.total == 1:
        return f"{lead}: the answer is {results.rows[0][0]}."
    items = [", ".join(f"{c} {_short(v)}" for c, v in list(zip(cols, row))[:4]) for row in results.rows[:5]]
    more = results.total - len(items)
    listing = "; ".join(items) + (f"; and {more} more" if more > 0 else "")
    found = "1 result" if results.total == 1 else f"{results.total} results"
    return f"{lead}, and found {found}: {listing}."


def _short(value: object, n: int = 40) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text if len(text) <= n else text[: n - 1] + "…"
