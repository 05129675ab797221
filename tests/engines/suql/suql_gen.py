"""A seeded generator of random SUQL queries over the restaurants world, for the differential test.

Every query comes with what the oracle (mode B-duckdb: DuckDB running the query as written, with
answer() a per-row function) needs to judge the other modes:

- ``query``: the SUQL text;
- ``full``: the same query without LIMIT / OFFSET (the rows a LIMIT may pick from), or None;
- ``verify``: a query whose rows are the display ids (``_row``) of the rows whose own WHERE is
  Unknown (``(where) IS NULL``), the rows "to verify"; None when the outer WHERE asks no answer();
- ``wide`` (CTE and IN-subquery cases): the query with the inner WHERE taken as true where it is
  Unknown (``(inner) IS NOT FALSE``): an output row in one of ``query`` / ``wide`` and not in the
  other depends on an unknown below the output, and is to verify with ``_row`` '—' (the engine's rule);
- ``ordered``: the ORDER BY is total (it ends with the row id), so the order of the rows is checked;
- ``limited``: a LIMIT may cut the result, so only "a subset of ``full`` of the right size" is checked
  when the order is not total;
- ``aggregated``: the rows are groups or counts;
- ``nested``: answer() also runs in a CTE or subquery (another SELECT may ask the same question of
  the same text, so "at most once per document" is not checked);
- ``questions``: the questions its answer() calls may ask, and ``texts_from``: the text columns they read.

The queries are built from a fixed vocabulary (no user input): the generator composes SQL text on
purpose, it is the input under test.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

YES_NO = (
    "is it romantic?",
    "is it good for groups?",
    "is it family-friendly?",
    "does it have outdoor seating?",
    "is parking easy?",
    "is it spicy?",
    "does it have a great view?",
    "does it serve pasta?",
    "is it cozy?",  # outside the simulated reader's lexicon: always Unknown
)
EXTRACT = ("what dishes does it serve?",)
LOCATIONS = ("Palo Alto", "Menlo Park", "Mountain View", "Sunnyvale", "Mission District", "Bernal Heights", "Nowhere")
PRICES = ("cheap", "moderate", "expensive", "luxury")


@dataclass
class Case:
    ident: str
    query: str
    full: str | None
    verify: str | None
    ordered: bool
    limited: bool
    aggregated: bool
    nested: bool
    kind: str
    limit: int | None = None
    questions: set[str] = field(default_factory=set)
    wide: str | None = None  # nested: the query with every unknown inner condition taken as true
    wide_full: str | None = None


class _Gen:
    def __init__(self, rng: random.Random, alias: str = "") -> None:
        self.rng = rng
        self.p = f"{alias}." if alias else ""
        self.questions: set[str] = set()

    def col(self, name: str) -> str:
        return f"{self.p}{name}"

    # -- predicates --------------------------------------------------------------------------

    def structured(self) -> str:
        r, c = self.rng, self.col
        kind = r.randrange(11)
        if kind == 0:
            op = r.choice([">", ">=", "<", "<=", "=", "<>"])
            return f"{c('rating')} {op} {r.choice(['3.0', '3.5', '4.0', '4.5', '2.5'])}"
        if kind == 1:
            lo = r.choice([0, 50, 100, 200])
            return f"{c('num_reviews')} BETWEEN {lo} AND {lo + r.choice([100, 300, 1000])}"
        if kind == 2:
            picks = r.sample(PRICES, r.randint(1, 3))
            neg = "NOT " if r.random() < 0.2 else ""
            return f"{c('price')} {neg}IN ({', '.join(repr(p) for p in picks)})"
        if kind == 3:
            picks = r.sample(LOCATIONS, r.randint(1, 3))
            return f"{c('location')} IN ({', '.join(repr(p) for p in picks)})"
        if kind == 4:
            return f"{c('location')} = {r.choice(LOCATIONS)!r}"
        if kind == 5:
            pat = r.choice(["%House%", "S%", "%a%", "Little%", "%Bar", "%o%"])
            neg = "NOT " if r.random() < 0.25 else ""
            return f"{c('name')} {neg}LIKE {pat!r}"
        if kind == 6:
            return f"{c('opening_hours')} LIKE {r.choice(['%pm', '11am%', '%10pm', '5pm%'])!r}"
        if kind == 7:  # a NULL from a structured column: NULLIF makes some ratings unknown
            neg = "NOT " if r.random() < 0.5 else ""
            return f"NULLIF({c('rating')}, {r.choice(['4.0', '3.5'])}) IS {neg}NULL"
        if kind == 8:
            return f"{c('rating')} IS NOT NULL"
        if kind == 9:
            return f"list_contains({c('cuisines')}, {r.choice(['cafe', 'pizza', 'bars', 'thai', 'mexican'])!r})"
        return f"{c('_id')} {r.choice(['<', '>', '<>'])} {r.randint(3, 30)}"

    def text(self) -> str:
        q = self.rng.choice(YES_NO)
        self.questions.add(q)
        a = f"answer({self.col('reviews')}, {q!r})"
        form = self.rng.randrange(10)
        if form < 4:
            return f"{a} = 'Yes'"
        if form < 6:
            return f"{a} = 'No'"
        if form == 6:
            return f"{a} IS NULL"
        if form == 7:
            return f"{a} IS NOT NULL"
        if form == 8:
            return f"{a} <> 'Yes'"
        return f"{a} IN ('Yes', 'No')"

    def condition(self, depth: int = 0, text_share: float = 0.45) -> str:
        r = self.rng
        if depth >= 3 or r.random() < 0.35 + 0.15 * depth:
            return self.text() if r.random() < text_share else self.structured()
        k = r.random()
        if k < 0.12:
            return f"NOT ({self.condition(depth + 1, text_share)})"
        parts = [self.condition(depth + 1, text_share) for _ in range(r.choice([2, 2, 3]))]
        op = " AND " if k < 0.6 else " OR "
        body = op.join(parts)
        return f"({body})" if depth else body

    def where(self, need_text: bool = True) -> str:
        cond = self.condition()
        if need_text and "answer(" not in cond:
            glue = self.rng.choice([" AND ", " OR "])
            cond = f"({cond}){glue}{self.text()}" if self.rng.random() < 0.5 else f"{self.text()}{glue}({cond})"
        return cond


def _limit(rng: random.Random) -> int | None:
    return rng.choice([None, None, None, 0, 1, 2, 3, 5, 1000])


def _single(rng: random.Random, ident: str) -> Case:
    g = _Gen(rng)
    cond = g.where()
    # the projection: plain columns, an alias, answer()/summary() in the SELECT list
    items: list[tuple[str, str | None]] = []  # (expression, alias)
    pool = ["_id", "name", "rating", "price", "location", "num_reviews"]
    if rng.random() < 0.12:
        items.append(("*", None))
    else:
        for name in rng.sample(pool, rng.randint(1, 3)):
            items.append((name, rng.choice([None, None, f"{name}_x"])))
    if rng.random() < 0.3:
        q = rng.choice(YES_NO + EXTRACT)
        g.questions.add(q)
        items.append((f"answer(reviews, {q!r})", "a"))
    if rng.random() < 0.2:
        items.append(("summary(reviews)", rng.choice([None, "s"])))
    select = ", ".join(e if a is None else f"{e} AS {a}" for e, a in items)

    order_keys: list[str] = []
    if rng.random() < 0.6:
        for _ in range(rng.randint(1, 2)):
            kind = rng.randrange(5)
            if kind == 0 and items[0][0] != "*":  # an ordinal
                j = rng.randrange(len(items))
                if items[j][0].startswith("summary("):
                    continue
                key = str(j + 1)
            elif kind == 1:  # an alias of the SELECT list
                aliased = [a for e, a in items if a and not e.startswith("summary(")]
                if not aliased:
                    continue
                key = rng.choice(aliased)
            elif kind == 2:
                key = f"NULLIF(rating, {rng.choice(['4.0', '3.5'])})"
            else:
                key = rng.choice(["rating", "num_reviews", "name", "price", "location"])
            key += rng.choice(["", " ASC", " DESC"]) + rng.choice(["", "", " NULLS FIRST", " NULLS LAST"])
            order_keys.append(key)
        if order_keys:
            order_keys.append("_id" + rng.choice(["", " DESC"]))  # a total order: the row id breaks ties
    limit = _limit(rng)
    offset = rng.choice([0, 0, 0, 1, 2]) if limit is not None and order_keys else 0
    base = f"SELECT {select} FROM restaurants WHERE {cond}"
    if order_keys:
        base += " ORDER BY " + ", ".join(order_keys)
    tail = (f" LIMIT {limit}" if limit is not None else "") + (f" OFFSET {offset}" if offset else "")
    return Case(
        ident,
        base + tail,
        base if tail else None,
        f"SELECT _id AS _row FROM restaurants WHERE ({cond}) IS NULL",
        ordered=bool(order_keys),
        limited=limit is not None,
        aggregated=False,
        nested=False,
        kind="single",
        limit=limit,
        questions=g.questions,
    )


def _aggregate(rng: random.Random, ident: str) -> Case:
    g = _Gen(rng)
    cond = g.where()
    verify = f"SELECT _id AS _row FROM restaurants WHERE ({cond}) IS NULL"
    if rng.random() < 0.5:
        query = f"SELECT COUNT(*) AS n FROM restaurants WHERE {cond}"
        return Case(
            ident,
            query,
            None,
            verify,
            ordered=False,
            limited=False,
            aggregated=True,
            nested=False,
            kind="count",
            questions=g.questions,
        )
    key = rng.choice(["location", "price"])
    limit = rng.choice([None, None, 2])
    query = f"SELECT {key}, COUNT(*) AS n FROM restaurants WHERE {cond} GROUP BY {key} ORDER BY {key}"
    full = query if limit is not None else None
    if limit is not None:
        query += f" LIMIT {limit}"
    return Case(
        ident,
        query,
        full,
        verify,
        ordered=True,
        limited=limit is not None,
        aggregated=True,
        nested=False,
        kind="group by",
        limit=limit,
        questions=g.questions,
    )


def _join(rng: random.Random, ident: str) -> Case:
    a, b = _Gen(rng, "a"), _Gen(rng, "b")
    b.questions = a.questions
    style = rng.randrange(3)
    if style == 0:
        src, kind = "restaurants a JOIN restaurants b ON a._id = b._id", "self-join"
    elif style == 1:
        src, kind = "restaurants a JOIN restaurants b ON a.location = b.location AND a._id < b._id", "join"
    else:
        src, kind = f"restaurants a LEFT JOIN restaurants b ON b._id = a._id + {rng.choice([1, 5, 100])}", "left join"
    parts = [a.structured() if rng.random() < 0.7 else a.condition(1), (b if rng.random() < 0.5 else a).text()]
    if rng.random() < 0.5:
        parts.append((b if rng.random() < 0.5 else a).condition(2))
    rng.shuffle(parts)
    cond = (" AND " if rng.random() < 0.7 else " OR ").join(f"({p})" for p in parts)
    cols = "a._id, b._id AS b_id, a.name, b.name AS b_name"
    if rng.random() < 0.25:
        q = rng.choice(YES_NO)
        a.questions.add(q)
        cols += f", answer(b.reviews, {q!r}) AS ba"
    ordered = rng.random() < 0.5
    order = " ORDER BY a.rating DESC NULLS LAST, a._id, b._id" if ordered else ""
    limit = _limit(rng)
    base = f"SELECT {cols} FROM {src} WHERE {cond}{order}"
    query = base + (f" LIMIT {limit}" if limit is not None else "")
    return Case(
        ident,
        query,
        base if limit is not None else None,
        f"SELECT concat_ws('|', {_part('a')}, {_part('b')}) AS _row FROM {src} WHERE ({cond}) IS NULL",
        ordered=ordered,
        limited=limit is not None,
        aggregated=False,
        nested=False,
        kind=kind,
        limit=limit,
        questions=a.questions,
    )


def _part(alias: str) -> str:
    """A joined row's id part as the engine names it: the side an outer join left empty is '-'."""
    return f"coalesce(CAST({alias}._id AS VARCHAR), '-')"


def _nested(rng: random.Random, ident: str) -> Case:
    inner, outer = _Gen(rng), _Gen(rng)
    inner.questions = outer.questions
    outer_text = rng.random() < 0.5
    outer_cond = outer.where() if outer_text else outer.condition(1, text_share=0.0)
    icond = inner.where()
    ordered = rng.random() < 0.5
    limit = _limit(rng)
    tail = " ORDER BY name DESC, _id" if ordered else ""
    cte = rng.random() < 0.5
    neg = "NOT " if rng.random() < 0.25 else ""
    first = rng.random() < 0.3

    def build(inner_where: str, verify: bool = False) -> str:
        if cte:
            src = (
                f"WITH t AS (SELECT _id, name, rating, price, location, num_reviews, opening_hours, cuisines, "
                f"reviews FROM restaurants WHERE {inner_where}) "
            )
            if verify:
                return f"{src}SELECT _id AS _row FROM t WHERE ({outer_cond}) IS NULL"
            return f"{src}SELECT _id, name FROM t WHERE {outer_cond}"
        sub = f"_id {neg}IN (SELECT _id FROM restaurants WHERE {inner_where})"
        cond = f"{sub} AND ({outer_cond})" if first else f"({outer_cond}) AND {sub}"
        if verify:
            return f"SELECT _id AS _row FROM restaurants WHERE ({cond}) IS NULL"
        return f"SELECT _id, name FROM restaurants WHERE {cond}"

    lim = f" LIMIT {limit}" if limit is not None else ""
    narrow, wide = build(icond) + tail, build(f"({icond}) IS NOT FALSE") + tail
    return Case(
        ident,
        narrow + lim,
        narrow if lim else None,
        build(icond, verify=True) if outer_text else None,
        ordered=ordered,
        limited=limit is not None,
        aggregated=False,
        nested=True,
        kind="cte" if cte else "in-subquery",
        limit=limit,
        questions=outer.questions,
        wide=wide + lim,
        wide_full=wide if lim else None,
    )


def generate(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.random()
        ident = f"q{i:03d}"
        if k < 0.62:
            out.append(_single(rng, ident))
        elif k < 0.74:
            out.append(_aggregate(rng, ident))
        elif k < 0.87:
            out.append(_join(rng, ident))
        else:
            out.append(_nested(rng, ident))
    return out
