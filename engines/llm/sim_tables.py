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

import sqlglot
from sqlglot import exp

from engines.llm.protocol import Results, Turn
from engines.llm.sim_parser import _NUM, _NUMBERS  # number words, as the restaurant parser reads them

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
_COMPARATORS: tuple[tuple[str, type[exp.Expression]], ...] = (
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
    conditions: list[tuple[str, exp.Expression]]  # (column name, condition)
    count: bool = False
    order: tuple[str, bool] | None = None  # (column, descending)
    limit: int | None = None
    said: tuple[str, ...] = ()  # what it recognised, for the route's reason


def _pick_table(tables: Sequence[Table], low: str) -> Table:
    for t in tables:
        if _find(t.words, low) or (t.words.endswith("s") and _find(t.words[:-1], low)):
            return t

    def score(t: Table) -> int:
        n = sum(1 for c in t.columns if _find(c.words, low))
        n += sum(1 for c in t.columns for v in c.values if _find(_fold(v), low))
        return n

    return max(tables, key=score)


def read_utterance(utterance: str, tables: Sequence[Table], *, suql: bool) -> Reading:
    low = _fold(utterance)
    table = _pick_table(tables, low)
    conditions: list[tuple[str, exp.Expression]] = []
    said: list[str] = []

    def col(c: Column) -> exp.Column:
        return exp.column(exp.to_identifier(c.name, quoted=True))

    for c in table.columns:
        # a shown enumeration's values, said word for word
        hits = [v for v in c.values if len(v.strip()) >= 2 and _find(_fold(v), low)]  # 'A' is not a word said
        if hits and c.role == "enum":
            cond: exp.Expression = (
                exp.EQ(this=col(c), expression=exp.Literal.string(hits[0]))
                if len(hits) == 1
                else exp.In(this=col(c), expressions=[exp.Literal.string(v) for v in hits])
            )
            conditions.append((c.name, cond))
            said.append(c.name)
            continue
        if hits and c.role == "list_enum":
            parts = [exp.EQ(this=exp.Literal.string(v), expression=exp.Any(this=exp.Paren(this=col(c)))) for v in hits]
            # "with wifi and pool": both; "wifi or pool": either
            joined = exp.Paren(this=exp.or_(*parts)) if re.search(r"\bor\b", low) else exp.and_(*parts)
            conditions.append((c.name, parts[0] if len(parts) == 1 else joined))
            said.append(c.name)
            continue
        m = _find(c.words, low)
        if m is None:
            continue
        after = utterance[m.end() :] if len(utterance) == len(low) else low[m.end() :]
        if c.role in ("enum", "text", "list_enum"):
            q = re.match(r"\s*(?:is|=|of|:|named|called)?\s*(['\"])(?P<v>[^'\"]+)\1", after)
            if q:
                value = exp.Literal.string(q.group("v"))
                cond = (
                    exp.EQ(this=value, expression=exp.Any(this=exp.Paren(this=col(c))))
                    if c.role == "list_enum"
                    else exp.EQ(this=col(c), expression=value)
                )
                conditions.append((c.name, cond))
                said.append(c.name)
        elif c.role == "number":
            rest = low[m.end() :]
            for words, kind in _COMPARATORS:
                n = re.match(rf"\s*(?:is\s+|are\s+|was\s+)?(?:{words})\s*{_NUMBER}\b", rest)
                if n:
                    conditions.append((c.name, kind(this=col(c), expression=exp.Literal.number(n.group(1)))))
                    said.append(c.name)
                    break
    count = bool(_COUNT.search(low))
    if count:
        said.append("count")
    order = None
    for c in table.columns:
        if c.role != "number":
            continue
        m = _find(c.words, low)
        if m is None:
            continue
        before = low[: m.start()].split()[-3:]
        if any(re.fullmatch(_HIGH, w) for w in before):
            order = (c.name, True)
        elif any(re.fullmatch(_LOW, w) for w in before):
            order = (c.name, False)
        if order:
            said.append("order")
            break
    limit = None
    if order:
        top = _TOP_N.search(low)
        limit = (int(top.group(1)) if top.group(1).isdigit() else _NUMBERS[top.group(1)]) if top else 1
    if suql:
        texts = [c for c in table.columns if c.role in ("free_text", "list_text")]
        if texts:
            for question, column in _text_wishes(low, texts):
                conditions.append(
                    (
                        column.name,
                        exp.EQ(
                            this=exp.Anonymous(this="answer", expressions=[col(column), exp.Literal.string(question)]),
                            expression=exp.Literal.string("Yes"),
                        ),
                    )
                )
                said.append("text")
    return Reading(table, conditions, count, order, limit, tuple(dict.fromkeys(said)))


def _text_wishes(low: str, texts: Sequence[Column]) -> list[tuple[str, Column]]:
    """What only the free text can tell: "X mentions Y" and the sim lexicon's wishes."""
    from engines.llm.sim_parser import TEXT_FEATURES

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
        c.name for c in reading.table.columns if _find(c.words, low)
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
    query = exp.select(exp.Count(this=exp.Star()) if counted else exp.Star()).from_(reading.table.ref.copy())
    if conditions:
        query = query.where(exp.and_(*[c.copy() for c in conditions]))
    order, limit = reading.order, reading.limit
    if order is None and base is not None and not counted:
        o = base.args.get("order")
        if o is not None:
            query.set("order", o.copy())
            lim = base.args.get("limit")
            if lim is not None:
                query.set("limit", lim.copy())
    if order is not None and not counted:
        column = exp.column(exp.to_identifier(order[0], quoted=True))
        query = query.order_by(exp.Ordered(this=column, desc=order[1], nulls_first=False))
        if limit:
            query = query.limit(limit)
    return query.sql(dialect="postgres", normalize_functions=False)  # answer() stays lower case


def _same_table(tree: exp.Select, table: Table) -> bool:
    source = tree.args.get("from") or tree.args.get("from_")
    return source is not None and isinstance(source.this, exp.Table) and source.this.name == table.name


def _conjuncts(e: exp.Expression) -> list[exp.Expression]:
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
