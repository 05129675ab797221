"""Read a query back to the user: one English sentence built from the query tree, not by an LLM.

The sentence says what *runs*, mistakes included: a text comparison such as
``opening_hours > '10pm'`` reads "whose opening hours come after '10pm' in
alphabetical order", because that is what the database will do.  Each rendering
is a small function of one node kind; unknown nodes fall back to their SQL text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any

import sqlglot
from sqlglot import exp

# How a column is named in a sentence; anything else: underscores become spaces.
COLUMN_WORDS: dict[str, str] = {
    "num_reviews": "number of reviews",
    "phone_number": "phone number",
    "opening_hours": "opening hours",
    "popular_dishes": "popular dishes",
    "_id": "id",
}
NUMERIC_HINTS = ("rating", "num_", "count", "price_level", "year", "credits", "stars")
NUMERIC_TYPES = (  # DuckDB's numeric types and their PostgreSQL-style aliases (engines.data reads them too)
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "DOUBLE",
    "REAL",
    "DECIMAL",
    "NUMERIC",
    "INT",
    "INT4",
    "INT8",
    "FLOAT4",
    "FLOAT8",
)

# While one sentence is built: the columns' database types (when the caller knows them) and the
# tables behind the statement's aliases.
_TYPES: ContextVar[Mapping[str, str]] = ContextVar("readback_types", default={})
_ALIASES: ContextVar[Mapping[str, str]] = ContextVar("readback_aliases", default={})


def column_words(name: str) -> str:
    return COLUMN_WORDS.get(name, name.replace("_", " ").strip())


def readback(query: str | exp.Expr, *, dialect: str = "postgres", types: Mapping[str, str] | None = None) -> str:
    """The sentence for a SELECT statement (a string or a parsed tree).

    ``types`` maps column names to their database types: a numeric column then reads "lowest
    first", a text one "alphabetical order", whatever its name suggests.
    """
    tree = sqlglot.parse_one(query, read=dialect) if isinstance(query, str) else query
    aliases = {t.alias: t.name for t in tree.find_all(exp.Table) if t.alias and t.name}
    types_token, aliases_token = _TYPES.set(dict(types or {})), _ALIASES.set(aliases)
    try:
        return _statement(tree) + "."
    finally:
        _TYPES.reset(types_token)
        _ALIASES.reset(aliases_token)


def is_numeric(column: str) -> bool:
    """Whether a column sorts as a number: its type when known, else its name."""
    typ = _TYPES.get().get(column)
    if typ is not None:
        return typ.upper().split("(")[0].strip() in NUMERIC_TYPES
    return column.startswith(NUMERIC_HINTS) or column == "rating"


def _text_column(column: str) -> bool:
    """Whether a column holds text: its type when known (so a phrasing made for a text column, "in Palo
    Alto", is used only on one), else assumed."""
    typ = _TYPES.get().get(column)
    if typ is None:
        return True
    base = typ.upper().split("(")[0].strip()
    return base in ("VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR", "ENUM")


def _numeric_column(column: str) -> bool:
    """Whether a column is a number: its type when known, else assumed."""
    return _TYPES.get().get(column) is None or is_numeric(column)


def _statement(tree: exp.Expr) -> str:
    if isinstance(tree, exp.Union):
        return f"{_statement(tree.this)}; and also {_lower_first(_statement(tree.expression))}"
    if isinstance(tree, exp.Except):
        return f"{_statement(tree.this)}, leaving out those where {_lower_first(_statement(tree.expression))}"
    if isinstance(tree, exp.Intersect):
        return f"{_statement(tree.this)}, keeping only those where also {_lower_first(_statement(tree.expression))}"
    if not isinstance(tree, exp.Select):
        return f"I ran {tree.sql(dialect='postgres')}"
    source = _from(tree)
    if source is None:
        return "I computed " + (_projection(tree, []).removeprefix("showing ") or "a value")
    table = _table(tree, source)
    parts: list[str] = []
    counts = [e for e in tree.expressions if isinstance(e.unalias(), exp.Count)]
    aggregates = [
        e for e in tree.expressions if isinstance(e.unalias(), exp.AggFunc) and not isinstance(e.unalias(), exp.Count)
    ]
    head = f"I counted {table}" if counts and len(tree.expressions) == 1 else f"I searched for {table}"
    where = tree.args.get("where")
    if where is not None:
        parts.append(condition(where.this, top=True))
    if not counts or len(tree.expressions) > 1:
        shown = _projection(tree, aggregates)
        if shown:
            parts.append(shown)
    group = tree.args.get("group")
    if group is not None:
        parts.append(
            "grouped by "
            + _and(column_words(g.name) if isinstance(g, exp.Column) else g.sql("postgres") for g in group.expressions)
        )
    order = tree.args.get("order")
    if order is not None:
        parts.append(_order(order, tree))
    limit = tree.args.get("limit")
    offset = tree.args.get("offset")
    if offset is not None:
        parts.append(f"skipping the first {offset.expression.sql('postgres')}")
    if limit is not None:
        n = limit.expression.sql("postgres")
        parts.append(f"keeping the first {n}" if order is None else f"keeping the top {n}")
    sentence = head
    for i, p in enumerate(p for p in parts if p):
        # the WHERE phrase ("in Palo Alto ...") follows the table directly; the rest after commas
        direct = i == 0 and where is not None and _joins_directly(p)
        sentence += (" " if direct or p.startswith("(") and i == 0 else ", ") + p
    return sentence


def _joins_directly(part: str) -> bool:
    return part.startswith(("in ", "whose ", "named ", "with ", "priced ", "rated ", "that ", "where "))


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:]


def _from(tree: exp.Select) -> exp.Expr | None:
    """The FROM clause (sqlglot names its key ``from_`` since 30, ``from`` before)."""
    source: exp.Expr | None = tree.args.get("from") or tree.args.get("from_")
    return source


def _table(tree: exp.Select, source: exp.Expr) -> str:
    """What ``tree`` reads, in words: its FROM clause ``source`` (and its joins)."""
    t: exp.Expr = source.this
    if isinstance(t, exp.Table):
        name = t.name
        joins = tree.args.get("joins") or []
        if joins:
            others = [j.this.name for j in joins if isinstance(j.this, exp.Table)]
            return f"{name} joined with {_and(others)}"
        return name
    if isinstance(t, exp.Subquery):
        return "rows of a subquery (" + _lower_first(_statement(t.this)) + ")"
    return t.sql("postgres")


# --- SUQL's LLM functions ------------------------------------------------------------------------

_SUBJECT = r"(?:this|the)\s+(?:restaurant|place|coffee shop|cafe|bar|course|laptop|person|team|event|game|text)|it|they|this|the food"


def _llm_function(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous) and str(node.this).lower() in ("answer", "summary"):
        return str(node.this).lower()
    return None


def _text_words(node: exp.Expr) -> str:
    """'the reviews', 'the popular dishes', 'the Flag Bearer_Info passage'."""
    if isinstance(node, exp.Column):
        name = node.name
        if name.endswith("_Info"):
            return f"the passage linked from {name[:-5]}"
        return "the " + column_words(name)
    return node.sql(dialect="postgres")


def statement_of(question: str) -> str | None:
    """'is it family-friendly?' -> 'it is family-friendly'; None when no simple statement fits."""
    import re

    q = question.strip().rstrip("?.! ").strip()
    m = re.match(rf"(?i)^(is|are|was|were)\s+({_SUBJECT})\s+(.+)$", q)
    if m:
        subject = m.group(2).lower()
        if subject.startswith("the food"):
            return f"the food {m.group(1).lower()} {m.group(3)}"
        verb = {"is": "is", "are": "is", "was": "was", "were": "was"}[m.group(1).lower()]
        return f"it {verb} {m.group(3)}"
    m = re.match(rf"(?i)^(does|do|did)\s+({_SUBJECT})\s+(\w+)(.*)$", q)
    if m:
        verb = m.group(3)
        if m.group(1).lower() == "did":
            conj = verb + "ed" if not verb.endswith("e") else verb + "d"
        else:
            conj = {"have": "has", "do": "does", "go": "goes"}.get(
                verb.lower(), verb + ("es" if verb.endswith(("s", "sh", "ch", "x")) else "s")
            )
        return f"it {conj}{m.group(4)}"
    m = re.match(rf"(?i)^(can|could|will|would|should)\s+({_SUBJECT}|i|we|you)\s+(.+)$", q)
    if m:
        who = "it" if m.group(2).lower() not in ("i", "we", "you") else "you"
        return f"{who} {m.group(1).lower()} {m.group(3)}"
    return None


def unknown_phrase(predicate: str, *, dialect: str = "postgres") -> str:
    """What an unknown condition leaves open, in words: ``answer(reviews, 'is it romantic?') = 'Yes'``
    reads "whether it is romantic"; anything else "whether <the condition's phrase>"."""
    try:
        node = sqlglot.parse_one(predicate, read=dialect)
    except sqlglot.errors.SqlglotError:
        return f"whether {predicate}"
    while isinstance(node, (exp.Paren, exp.Not)):  # NOT unknown is unknown: what is open is the same
        node = node.this
    if isinstance(node, exp.EQ):
        call = next((n for n in (node.this, node.expression) if _llm_function(n) == "answer"), None)
        if call is not None and len(call.expressions) > 1 and isinstance(call.expressions[1], exp.Literal):
            question = call.expressions[1].name
            statement = statement_of(question)
            return (
                f"whether {statement}" if statement else f"what {_text_words(call.expressions[0])} say to '{question}'"
            )
    return f"whether {node.sql(dialect=dialect)} holds"


def _verb(text: str, plural: str, singular: str) -> str:
    """'the reviews say' but 'the passage ... says'."""
    head = text.split(" linked from ")[0].split()[-1] if text else ""
    return plural if head.endswith("s") and not head.endswith("ss") else singular


def _llm_phrase(node: exp.Expr) -> str:
    fn = _llm_function(node)
    args = node.expressions
    if fn == "summary":
        return f"a summary of {_text_words(args[0])}" if args else "a summary"
    text = _text_words(args[0]) if args else "the text"
    q = args[1].name if len(args) > 1 and isinstance(args[1], exp.Literal) else "?"
    return f"what {text} {_verb(text, 'say', 'says')} to '{q}'"


def _render_llm_comparison(node: exp.Binary) -> str | None:
    """answer(t, 'is it romantic?') = 'Yes'  ->  'where the reviews say it is romantic'."""
    left, right = node.this, node.expression
    if not _llm_function(left) and _llm_function(right):
        left, right = right, left
    if _llm_function(left) != "answer" or not isinstance(right, exp.Literal):
        return None
    args = left.expressions
    text = _text_words(args[0]) if args else "the text"
    q = args[1].name if len(args) > 1 and isinstance(args[1], exp.Literal) else ""
    value = right.name
    statement = statement_of(q)
    say, answer, do = _verb(text, "say", "says"), _verb(text, "answer", "answers"), _verb(text, "do", "does")
    if isinstance(node, exp.EQ) and value.lower() == "yes" and statement:
        return f"where {text} {say} {statement}"
    if isinstance(node, exp.EQ) and value.lower() == "no" and statement:
        return f"where {text} {say} it is not so that {statement}"
    if isinstance(node, exp.EQ):
        return f"where {text} {answer} '{q}' with '{value}'"
    if isinstance(node, exp.NEQ):
        return f"where {text} {do} not answer '{q}' with '{value}'"
    words = {exp.GT: "after", exp.GTE: "at or after", exp.LT: "before", exp.LTE: "at or before"}
    if right.is_string and type(node) in words:
        return f"where what {text} {say} to '{q}' comes {words[type(node)]} '{value}' in alphabetical order"
    return None


def _projection(tree: exp.Select, aggregates: list[exp.Expr]) -> str:
    exprs = tree.expressions
    if len(exprs) == 1 and isinstance(exprs[0], exp.Star):
        return ""
    if any(isinstance(e, exp.Star) for e in exprs):  # SELECT *, summary(reviews): "with a summary of ..."
        rest = _projection_names([e for e in exprs if not isinstance(e, exp.Star)])
        return "with " + _and(rest)
    return "showing " + _and(_projection_names(exprs))


def _projection_names(exprs: list[exp.Expr]) -> list[str]:
    names = []
    for e in exprs:
        inner = e.unalias()
        if isinstance(inner, exp.Star):
            names.append("every column")
        elif _llm_function(inner):
            names.append(_llm_phrase(inner))
        elif e.alias:
            names.append(column_words(e.alias))
        elif isinstance(inner, exp.Column):
            names.append(column_words(inner.name))
        elif isinstance(inner, exp.Count):
            names.append("how many")
        else:
            names.append(words_of(inner))
    return names


def _order(order: exp.Order, tree: exp.Select | None = None) -> str:
    """'sorted by rating (highest first, unknown last)': a number reads highest/lowest first, a text
    alphabetical order, and where unknowns (NULLs) sort is said: in PostgreSQL's order, last when ascending
    and first when descending, unless NULLS FIRST / NULLS LAST says otherwise."""
    keys = []
    for o in order.expressions:
        desc = bool(o.args.get("desc"))
        nulls = "unknown first" if o.args.get("nulls_first") else "unknown last"
        words, target = _order_target(o.this, tree)
        kind = _kind(target)
        if kind == "number":
            direction = "highest first" if desc else "lowest first"
        elif kind == "text":
            direction = "reverse alphabetical order" if desc else "alphabetical order"
        else:
            direction = "descending" if desc else "ascending"
        keys.append(f"{words} ({direction}, {nulls})")
    return "sorted by " + ", then ".join(keys)


def _order_target(target: exp.Expr, tree: exp.Select | None) -> tuple[str, exp.Expr]:
    """The words for a sort key and the expression it sorts by: ``ORDER BY 2`` is the second column
    shown, ``ORDER BY r`` (a SELECT alias) the expression named r."""
    projection = tree.expressions if isinstance(tree, exp.Select) else []
    if isinstance(target, exp.Literal) and not target.is_string and target.name.isdigit():
        n = int(target.name)
        if 1 <= n <= len(projection) and not isinstance(projection[n - 1], exp.Star):
            shown = projection[n - 1]
            return (column_words(shown.alias) if shown.alias else words_of(shown.unalias())), shown.unalias()
        return f"column {n}", target
    if isinstance(target, exp.Column) and not target.table:
        aliased = next((e for e in projection if isinstance(e, exp.Alias) and e.alias == target.name), None)
        if aliased is not None:
            return column_words(target.name), aliased.unalias()
    return words_of(target), target


_TEXT_TYPES = ("VARCHAR", "TEXT", "CHAR", "STRING", "BPCHAR", "NAME")


def _kind(node: exp.Expr) -> str | None:
    """'number', 'text' or None (not known): how the database compares the values of an expression."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.Column):
        typ = _TYPES.get().get(node.name)
        if typ is not None and typ.upper().split("(")[0].strip() not in NUMERIC_TYPES:
            return "text" if typ.upper().split("(")[0].strip() in _TEXT_TYPES else None
        if typ is None:  # the type is not known: a number by its name, else not said
            return "number" if is_numeric(node.name) else None
        return "number"
    if isinstance(node, exp.Cast):
        typ = node.to.this.name.upper() if isinstance(node.to, exp.DataType) else ""
        if typ in NUMERIC_TYPES or typ in (
            "BIGDECIMAL",
            "FLOAT4",
            "FLOAT8",
            "INT2",
            "INT4",
            "INT8",
            "DOUBLE PRECISION",
        ):
            return "number"
        if typ in _TEXT_TYPES or typ in ("NVARCHAR", "NCHAR"):
            return "text"
        return None
    if isinstance(node, exp.Literal):
        return "text" if node.is_string else "number"
    if isinstance(
        node,
        (
            exp.Add,
            exp.Sub,
            exp.Mul,
            exp.Div,
            exp.Mod,
            exp.Neg,
            exp.Count,
            exp.Sum,
            exp.Avg,
            exp.Abs,
            exp.Round,
            exp.Length,
        ),
    ):
        return "number"
    if isinstance(node, (exp.Max, exp.Min, exp.Coalesce)):
        return _kind(node.this)
    if isinstance(node, (exp.Lower, exp.Upper, exp.Concat, exp.Trim)):
        return "text"
    return None


_ARITHMETIC: dict[type[exp.Expr], str] = {
    exp.Add: "plus",
    exp.Sub: "minus",
    exp.Mul: "times",
    exp.Div: "divided by",
    exp.Mod: "modulo",
}


def words_of(node: exp.Expr) -> str:
    """An expression in words, never in SQL for the common kinds: ``CAST(o.term AS VARCHAR)`` reads
    "term (as text)", ``rating * 2`` "rating times 2".  An expression of another kind keeps its SQL."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if _llm_function(node):
        return _llm_phrase(node)
    if isinstance(node, exp.Column):
        return column_words(node.name)
    if isinstance(node, exp.Literal):
        return f"'{node.name}'" if node.is_string else node.name
    if isinstance(node, exp.Cast):
        kind = _kind(node)
        inner = words_of(node.this)
        return f"{inner} as {'a number' if kind == 'number' else 'text' if kind == 'text' else node.to.sql('postgres').lower()}"
    if type(node) in _ARITHMETIC:
        return f"{words_of(node.this)} {_ARITHMETIC[type(node)]} {words_of(node.expression)}"
    if isinstance(node, exp.Neg):
        return f"minus {words_of(node.this)}"
    if isinstance(node, exp.Count):
        return "how many"
    if isinstance(node, (exp.Avg, exp.Max, exp.Min, exp.Sum)):
        word = {exp.Avg: "the average", exp.Max: "the highest", exp.Min: "the lowest", exp.Sum: "the total"}[type(node)]
        return f"{word} {words_of(node.this)}"
    if isinstance(node, (exp.Lower, exp.Upper)):
        return f"{words_of(node.this)} (ignoring case)"
    if isinstance(node, exp.Coalesce):
        others = [words_of(e) for e in node.expressions]
        return f"{words_of(node.this)} (or {_or(others)} when unknown)" if others else words_of(node.this)
    if isinstance(node, exp.Abs):
        return f"the size of {words_of(node.this)}"
    if isinstance(node, exp.Round):
        return f"{words_of(node.this)} rounded"
    if isinstance(node, exp.Length):
        return f"the length of {words_of(node.this)}"
    return node.sql(dialect="postgres")


def _and(parts: Iterable[str]) -> str:
    items = [i for i in parts if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _or(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


# --- conditions --------------------------------------------------------------------------------


def condition(node: exp.Expr, *, top: bool = False) -> str:
    """The phrase for a WHERE condition."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if top and isinstance(node, exp.Or):
        either = _render_or(node)
        return either[1:-1] if either.startswith("(") else either  # nothing around it to bind to
    for kind, render in _RENDERERS:
        if isinstance(node, kind):
            phrase = render(node)
            if phrase is not None:
                return phrase
    return f"where {node.sql(dialect='postgres')}"


def _render_and(node: exp.And) -> str:
    parts = _flatten(node, exp.And)
    # AND commutes, so the phrases may be put in the order that reads best.
    phrases = sorted((condition(p) for p in parts), key=_phrase_rank)
    return _join_conditions(phrases)


_PHRASE_ORDER = ("named ", "in ", "whose cuisines", "priced ", "rated ", "with ", "whose ", "where ")


def _phrase_rank(phrase: str) -> int:
    return next((i for i, p in enumerate(_PHRASE_ORDER) if phrase.startswith(p)), len(_PHRASE_ORDER))


def _join_conditions(phrases: list[str]) -> str:
    """'in Palo Alto whose cuisines include x, priced cheap and rated at least 4.0'."""
    if phrases and phrases[0].startswith("in ") and len(phrases) > 1:
        return f"{phrases[0]} {_and(phrases[1:])}"
    return _and(phrases)


def _render_or(node: exp.Or) -> str:
    parts = _flatten(node, exp.Or)
    # 'a' = ANY(c) OR 'b' = ANY(c): one phrase "whose c include a or b"
    anys = [a for p in parts if (a := _any_parts(p)) is not None]
    if len(anys) == len(parts) and len({a[1] for a in anys}) == 1:
        column = anys[0][1]
        return f"whose {column_words(column)} include {_or([a[0] for a in anys])}"
    rendered = [
        f"({condition(p)})" if isinstance(p.unnest() if isinstance(p, exp.Paren) else p, exp.And) else condition(p)
        for p in parts
    ]
    return "(" + _or(rendered) + ")"


def _flatten(node: exp.Expr, kind: type) -> list[exp.Expr]:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, kind):
        return _flatten(node.this, kind) + _flatten(node.expression, kind)
    return [node]


def _any_parts(node: exp.Expr) -> tuple[str, str] | None:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.EQ):
        for lit, other in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(lit, exp.Literal) and isinstance(other, exp.Any):
                inner = other.this.unnest() if isinstance(other.this, exp.Paren) else other.this
                if isinstance(inner, exp.Column):
                    return lit.name, inner.name
    return None


def _render_exists(node: exp.Exists, *, negated: bool = False) -> str | None:
    """'where there is no row of meetings joined with busy with …': the subquery's own conditions."""
    query = node.this.unnest() if isinstance(node.this, exp.Subquery) else node.this
    source = _from(query) if isinstance(query, exp.Select) else None
    if not isinstance(query, exp.Select) or source is None:
        return None
    where = query.args.get("where")
    head = f"where there is {'no' if negated else 'a'} row of {_table(query, source)}"
    return head if where is None else f"{head} ({condition(where.this)})"


def _render_not(node: exp.Not) -> str:
    inner = node.this.unnest() if isinstance(node.this, exp.Paren) else node.this
    if isinstance(inner, exp.Exists):
        phrase = _render_exists(inner, negated=True)
        if phrase is not None:
            return phrase
    if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
        return f"whose {_operand(inner.this)} is known"
    anyp = _any_parts(inner)
    if anyp is not None:
        return f"whose {column_words(anyp[1])} do not include {anyp[0]}"
    return f"not {condition(inner)}"


def _operand(node: exp.Expr) -> str:
    if isinstance(node, exp.Literal):
        return node.name if not node.is_string else f"'{node.name}'"
    return words_of(node)


def _is_text(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _render_comparison(node: exp.Binary) -> str | None:
    left, right = node.this, node.expression
    llm = _render_llm_comparison(node)
    if llm is not None:
        return llm
    anyp = _any_parts(node) if isinstance(node, exp.EQ) else None
    if anyp is not None:
        return f"whose {column_words(anyp[1])} include {anyp[0]}"
    bare_left, bare_right = _uncast(left), _uncast(right)
    if (
        isinstance(bare_left, exp.Column)
        and isinstance(bare_right, exp.Column)
        and (bare_left.table or bare_right.table)
    ):
        words = {
            exp.EQ: "equal to",
            exp.NEQ: "different from",
            exp.GT: "above",
            exp.GTE: "at least",
            exp.LT: "below",
            exp.LTE: "at most",
        }
        return f"with {_qualified(bare_left)} {words[type(node)]} {_qualified(bare_right)}"
    if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
        left, right = right, left
        node = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE}.get(type(node), type(node))(
            this=left, expression=right
        )
    if isinstance(_uncast(left), exp.Column) and not isinstance(_uncast(right), exp.Column):
        col = _uncast(left).name
        value = _operand(right)
        if isinstance(node, exp.EQ):
            if col == "location" and _text_column(col):
                return f"in {right.name if _is_text(right) else value}"
            if col == "name" and _text_column(col):
                return f"named {right.name if _is_text(right) else value}"
            if col == "price" and _text_column(col):
                return f"priced {right.name if _is_text(right) else value}"
            if col == "rating" and _numeric_column(col):
                return f"rated exactly {value}"
            return f"whose {column_words(col)} is {value}"
        if isinstance(node, exp.NEQ):
            return f"whose {column_words(col)} is not {value}"
        if _is_text(right):
            order_words = {
                exp.GT: "come after",
                exp.GTE: "come at or after",
                exp.LT: "come before",
                exp.LTE: "come at or before",
            }
            return f"whose {column_words(col)} {order_words[type(node)]} {value} in alphabetical order"
        if col == "rating" and _numeric_column(col):
            words = {exp.GT: "rated above", exp.GTE: "rated at least", exp.LT: "rated below", exp.LTE: "rated at most"}
            return f"{words[type(node)]} {_fmt_rating(right)}"
        if col == "num_reviews" and _numeric_column(col):
            words = {
                exp.GT: "with more than",
                exp.GTE: "with at least",
                exp.LT: "with fewer than",
                exp.LTE: "with at most",
            }
            return f"{words[type(node)]} {value} reviews"
        words = {exp.GT: "is above", exp.GTE: "is at least", exp.LT: "is below", exp.LTE: "is at most"}
        return f"whose {column_words(col)} {words[type(node)]} {value}"
    # any other comparison: both sides in words
    words = {
        exp.EQ: "is",
        exp.NEQ: "is not",
        exp.GT: "is above",
        exp.GTE: "is at least",
        exp.LT: "is below",
        exp.LTE: "is at most",
    }
    return f"where {_operand(left)} {words[type(node)]} {_operand(right)}"


def _uncast(node: exp.Expr) -> exp.Expr:
    """A column under a type cast (``o.term::VARCHAR``) compares as that column."""
    while isinstance(node, exp.Cast):
        node = node.this
    return node


def _qualified(column: exp.Column) -> str:
    """'the meetings' start min': a column named with the table behind its alias."""
    if not column.table:
        return f"the {column_words(column.name)}"
    table = _ALIASES.get().get(column.table, column.table)
    owner = table + ("'" if table.endswith("s") else "'s")
    return f"the {owner} {column_words(column.name)}"


def _fmt_rating(node: exp.Expr) -> str:
    """'4.0' for 4; a value with more decimals as written (4.25 is not rounded to 4.2)."""
    try:
        value = float(node.name)
    except ValueError:
        return _operand(node)
    return f"{value:.1f}" if float(f"{value:.1f}") == value else node.name


def _render_in(node: exp.In) -> str | None:
    if not isinstance(node.this, exp.Column):
        return None
    query = node.args.get("query")
    if query is not None:
        return f"whose {column_words(node.this.name)} is among the results of a subquery ({_lower_first(_statement(query.unnest()))})"
    values = [e.name if _is_text(e) else _operand(e) for e in node.expressions]
    col = node.this.name
    if col == "location" and _text_column(col):
        return f"in {_or(values)}"
    if col == "price" and _text_column(col):
        return f"priced {_or(values)}"
    return f"whose {column_words(col)} is {_or(values)}"


def _render_like(node: exp.Like | exp.ILike) -> str | None:
    case = " (ignoring case)" if isinstance(node, exp.ILike) else ""
    return f"whose {_operand(node.this)} matches the pattern {_operand(node.expression)}{case}"


def _render_between(node: exp.Between) -> str:
    return f"whose {_operand(node.this)} is between {_operand(node.args['low'])} and {_operand(node.args['high'])}"


def _render_is(node: exp.Is) -> str:
    if isinstance(node.expression, exp.Null):
        return f"whose {_operand(node.this)} is missing"
    return f"whose {_operand(node.this)} is {_operand(node.expression)}"


def _render_contains_all(node: exp.ArrayContainsAll) -> str | None:
    if isinstance(node.this, exp.Column) and isinstance(node.expression, exp.Array):
        items = [e.name for e in node.expression.expressions]
        return f"whose {column_words(node.this.name)} include {_and(items)}"
    return None


def _render_boolean(node: exp.Boolean) -> str:
    return "with no condition" if node.this else "matching nothing (the condition is always false)"


# each renderer takes a node of its kind (``condition`` checks isinstance first): a pairing of a type with a
# function of that type that mypy cannot express, so the functions are typed as taking Any
_RENDERERS: list[tuple[type[exp.Expr] | tuple[type[exp.Expr], ...], Callable[[Any], str | None]]] = [
    (exp.And, _render_and),
    (exp.Or, _render_or),
    (exp.Not, _render_not),
    (exp.In, _render_in),
    (exp.Like, _render_like),
    (exp.ILike, _render_like),
    (exp.Between, _render_between),
    (exp.Is, _render_is),
    (exp.ArrayContainsAll, _render_contains_all),
    (exp.Boolean, _render_boolean),
    (exp.Exists, _render_exists),
    ((exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE), _render_comparison),
]
