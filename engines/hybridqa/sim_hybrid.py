"""The simulated LLM for HybridQA (lecture 7 §6.2): a zero-shot SUQL parser and the short answer.

**The parser** is shown one question and one table's schema — column names and types, no rows,
no values — exactly what the zero-shot prompt of §6.1 shows a model.  A small lexicon and a
grammar of the six HybridQA question types (§2.3) turn the question into SUQL over *any*
schema of that kind:

* what is asked — a passage value (when born, which event, where held: ``answer()`` in the
  SELECT list), a table cell (who, which year, which Olympiad), or a superlative/comparison
  (``ORDER BY answer(...)::date``);
* the conditions — a value written in the question (a year, a Roman numeral, a person's name,
  a gender) becomes a structured predicate on the column whose name fits it; a relation a
  passage states ("held in X", "born on D", "competed in X") becomes an ``answer() = 'Yes'``;
* columns are resolved by word overlap between the question's phrases, a few synonyms
  (Olympics ~ games ~ event ~ edition) and the schema's column names; ``answer()`` reads the
  ``_Info`` column of the entity the relation is about.

Its mistakes are those of §6.5, at seeded rates keyed on (seed, question, attempt), so a retry
after "no results" resamples them: a wrong text column (15%), a condition that finds nothing
(6%, 'Male' written 'M'), a semantic slip (10%, youngest read as oldest, a condition dropped,
a neighbouring Games).

**The short answer** turns the rows a query returned into the one short entity HybridQA's
gold answers are: the first value of the first row, and at a seeded rate (30%) written in
another format than the passage's (a date spelt out, a city with its country, an event
without "men's").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engines.errors import LLMError
from engines.llm.protocol import Results
from engines.llm.seeded import unit
from engines.sql.sim_reader import DATE, MONTHS, parse_date


@dataclass(frozen=True)
class HybridRates:
    """The seeded mistake rates of §6.5 (exercise 4 sets ``format_rate`` to 0)."""

    wrong_column: float = 0.15  # answer() reads another _Info column than the one that holds the answer
    no_result: float = 0.06  # a condition written so that it finds nothing ('Male' as 'M')
    semantic: float = 0.10  # youngest read as oldest, a condition dropped, a neighbouring Games
    format_rate: float = 0.30  # the short answer is written in another format than the passage's


DEFAULT_RATES = HybridRates()

INFO = "_Info"

# --- the schema as the parser reads it ----------------------------------------------------------


@dataclass(frozen=True)
class Schema:
    table: str
    columns: tuple[str, ...]

    @property
    def info(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c.endswith(INFO))

    @property
    def cells(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if not c.endswith(INFO))


def read_schema(schema: str) -> Schema:
    m = re.search(r'CREATE TABLE\s+("(?:[^"]|"")+"|\w+)\s*\((.*)\)', schema, re.S | re.I)
    if not m:
        return Schema("", ())
    table = m.group(1)
    cols = []
    for line in m.group(2).split("\n"):
        c = re.match(r'\s*("(?:[^"]|"")+"|\w+)\s+\w', line)
        if c:
            cols.append(_unquote(c.group(1)))
    return Schema(table, tuple(cols))


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]+", text.lower())}


# Synonyms the model knows: a phrase's words -> words a column about it may be named with.
ENTITY_WORDS: dict[str, tuple[str, ...]] = {
    "games": ("game", "olympic", "olympiad", "event", "edition", "year", "season", "competition"),
    "person": ("flag", "bearer", "athlete", "person", "player", "competitor", "name"),
}
VALUE_COLUMNS: dict[str, tuple[str, ...]] = {
    "year": ("year", "season", "date"),
    "roman": ("name", "edition", "olympiad", "game", "no"),
    "gender": ("gender", "sex"),
    "person": ("bearer", "athlete", "person", "player", "name", "competitor"),
}


def _best(columns: Sequence[str], words: Sequence[str], phrase: str = "", *, exclude: Sequence[str] = ()) -> str | None:
    """The column whose name shares most words with the phrase, then with the synonyms."""
    best, score = None, 0.0
    pw = _words(phrase)
    for i, c in enumerate(columns):
        if c in exclude:
            continue
        cw = _words(c.removesuffix(INFO))
        s = 2.0 * len(cw & pw) + len(cw & set(words)) - 0.01 * i
        if s > score:
            best, score = c, s
    return best


def _info_of(schema: Schema, entity: str, phrase: str = "") -> str | None:
    return _best(schema.info, ENTITY_WORDS[entity], phrase)


def _cell(schema: Schema, kind: str, phrase: str = "") -> str | None:
    return _best(schema.cells, VALUE_COLUMNS[kind], phrase)


# --- the grammar -------------------------------------------------------------------------------

_ROMAN = r"(?=[MDCLXVI])M{0,3}(?:C[MD]|D?C{0,3})(?:X[CL]|L?X{0,3})(?:I[XV]|V?I{0,3})"
_GAMES_REF = re.compile(
    rf"\bthe (?:(?P<year>\d{{4}})|(?P<roman>{_ROMAN})) (?:Summer )?(?:Olympics|Olympic Games|Games|Olympiad)\b"
)
_PERSON_PHRASE = r"(?:flag bearer|flagbearer|athlete|bearer)"


@dataclass
class Query:
    select: str  # the SELECT expression
    where: list[str] = field(default_factory=list)
    order: str | None = None
    limit: int | None = None
    # what the mistakes can touch
    literals: list[tuple[int, str, str]] = field(default_factory=list)  # (where index, column, value)
    text_calls: list[str] = field(default_factory=list)  # the _Info columns answer() reads

    def sql(self, table: str) -> str:
        out = f"SELECT {self.select} FROM {table}"
        if self.where:
            out += " WHERE " + " AND ".join(self.where)
        if self.order:
            out += f" ORDER BY {self.order}"
        if self.limit is not None:
            out += f" LIMIT {self.limit}"
        return out


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _answer(column: str, question: str) -> str:
    return f"answer({_ident(column)}, {_q(question)})"


class _Reader:
    """Reads one question against one schema into a :class:`Query`."""

    def __init__(self, question: str, schema: Schema) -> None:
        self.raw = " ".join(question.strip().split())
        self.low = self.raw.lower()
        self.s = schema
        self.person_info = _info_of(schema, "person", self._person_phrase())
        self.games_info = _info_of(schema, "games", "olympics games")
        if self.person_info == self.games_info and len(schema.info) > 1:
            self.games_info = next(c for c in schema.info if c != self.person_info)

    def _person_phrase(self) -> str:
        m = re.search(_PERSON_PHRASE, self.low)
        return m.group(0) if m else "flag bearer"

    # -- conditions ----------------------------------------------------------------------

    def conditions(self, q: Query, *, games_refs: bool = True) -> None:
        if games_refs:
            refs = list(_GAMES_REF.finditer(self.raw))
            if len(refs) == 1:
                self._games_literal(q, refs[0])
        m = re.search(r"\bheld in (?P<x>[A-Z][\w.' -]*?)(?: born| compete|\?|$| whose| at which)", self.raw)
        if m and self.games_info:
            city = m.group("x").strip()
            q.where.append(f"{_answer(self.games_info, f'were the games held in {city}?')} = 'Yes'")
            q.text_calls.append(self.games_info)
        m = re.search(r"\bborn on (?P<x>" + DATE.pattern + r")", self.raw)
        if m and self.person_info:
            born_on = f"was this person born on {m.group('x')}?"
            q.where.append(f"{_answer(self.person_info, born_on)} = 'Yes'")
            q.text_calls.append(self.person_info)
        m = re.search(r"\b(?P<g>male|female|men's|women's)\s+" + _PERSON_PHRASE, self.low)
        if m:
            gender = "Female" if m.group("g").startswith(("female", "women")) else "Male"
            col = _cell(self.s, "gender")
            if col:
                q.literals.append((len(q.where), col, gender))
                q.where.append(f"{_ident(col)} = {_q(gender)}")
        m = re.search(r"\bcompeted in (?P<x>.+?)\?$", self.raw)
        if m and self.person_info and not re.match(r"^(which|what) event", self.low):
            thing = m.group("x").strip()
            q.where.append(f"{_answer(self.person_info, f'did this person compete in {thing}?')} = 'Yes'")
            q.text_calls.append(self.person_info)
        m = re.search(r"\bat which (?P<x>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*)+) carried the flag\b", self.raw)
        if m:
            col = _cell(self.s, "person", self._person_phrase())
            if col:
                q.literals.append((len(q.where), col, m.group("x")))
                q.where.append(f"{_ident(col)} = {_q(m.group('x'))}")

    def _games_literal(self, q: Query, ref: re.Match[str]) -> None:
        if ref.group("year"):
            col, value = _cell(self.s, "year"), ref.group("year")
        else:
            col, value = _cell(self.s, "roman"), ref.group("roman")
        if col:
            q.literals.append((len(q.where), col, value))
            q.where.append(f"{_ident(col)} = {_q(value)}")

    # -- what is asked ---------------------------------------------------------------------

    def query(self) -> Query:
        low = self.low
        born = _answer(self.person_info, "when was this person born?") if self.person_info else None
        # V: who is older / younger, A or B?
        m = re.match(r"^who is (?P<w>older|younger)\b", low)
        if m and born and self.person_info:
            refs = list(_GAMES_REF.finditer(self.raw))
            q = Query(_ident(_cell(self.s, "person", self._person_phrase()) or self.s.cells[0]))
            if len(refs) >= 2:
                kind = "year" if refs[0].group("year") else "roman"
                col = _cell(self.s, kind)
                values = [r.group("year") or r.group("roman") for r in refs[:2]]
                if col:
                    q.literals.append((0, col, values[0]))
                    q.where.append(f"{_ident(col)} IN ({', '.join(_q(v) for v in values)})")
            q.order = f"{born}::date {'ASC' if m.group('w') == 'older' else 'DESC'}"
            q.limit = 1
            q.text_calls.append(self.person_info)
            return q
        # VI: the youngest / oldest ...
        m = re.match(r"^who (?:is|was) the (?P<w>youngest|oldest)\b", low)
        if m and born and self.person_info:
            q = Query(_ident(_cell(self.s, "person", self._person_phrase()) or self.s.cells[0]))
            self.conditions(q)
            q.order = f"{born}::date {'DESC' if m.group('w') == 'youngest' else 'ASC'}"
            q.limit = 1
            q.text_calls.append(self.person_info)
            return q
        # a passage value: when born / which event / where held
        if re.match(r"^when was .*\bborn\b", low) and born and self.person_info:
            q = Query(born, text_calls=[self.person_info])
        elif re.match(r"^(which|what) event did\b", low) and self.person_info:
            q = Query(
                _answer(self.person_info, "which event did this person compete in?"), text_calls=[self.person_info]
            )
        elif (
            re.match(r"^(where were|where was|in which city were|in which city was|which city hosted)\b", low)
            and self.games_info
        ):
            q = Query(_answer(self.games_info, "where were the games held?"), text_calls=[self.games_info])
        # a table cell
        elif re.match(r"^who\b|^which (?:\w+ )?" + _PERSON_PHRASE + r"\b", low):
            q = Query(_ident(_cell(self.s, "person", self._person_phrase()) or self.s.cells[0]))
        elif re.match(r"^in which year\b|^what year\b|^which year\b", low):
            q = Query(_ident(_cell(self.s, "year") or self.s.cells[0]))
        elif re.match(r"^which (olympiad|olympics|games|edition)\b", low):
            q = Query(_ident(_cell(self.s, "roman") or self.s.cells[0]))
        else:
            return self.fallback()
        self.conditions(q)
        if not q.where:
            return self.fallback()
        return q

    def fallback(self) -> Query:
        """A question outside the grammar: ask it of the passage column that shares most words with it."""
        column = _best(self.s.info, (), self.raw) or (self.s.info[0] if self.s.info else None)
        if column is None:
            column = self.s.cells[0] if self.s.cells else "*"
            return Query(_ident(column) if column != "*" else "*")
        return Query(_answer(column, self.raw), text_calls=[column])


# --- the seeded mistakes of §6.5 ------------------------------------------------------------------


def _wrong_column(q: Query, schema: Schema, sql: str, table: str) -> str:
    columns = sorted(set(q.text_calls))
    if not columns or len(schema.info) < 2:
        return sql
    victim = columns[0]
    other = next(c for c in schema.info if c != victim)
    return sql.replace(f"answer({_ident(victim)},", f"answer({_ident(other)},")


def _no_result(q: Query, sql: str, u: float) -> str:
    """A condition that finds nothing: a value written in another form than the table's."""
    if q.literals:
        _, column, value = q.literals[int(u * len(q.literals))]
        if value in ("Male", "Female"):
            bad = value[0]
        elif value.isdigit():
            bad = f"{value} Summer Olympics"
        elif re.fullmatch(_ROMAN, value):
            bad = f"{value} Olympiad"
        else:
            bad = value.upper()
        return sql.replace(f"{_ident(column)} = {_q(value)}", f"{_ident(column)} = {_q(bad)}", 1).replace(
            f"{_ident(column)} IN ({_q(value)}", f"{_ident(column)} IN ({_q(bad)}", 1
        )
    if "= 'Yes'" in sql:
        return sql.replace("= 'Yes'", "= 'True'", 1)
    return sql


_ROMANS = (
    "I",
    "II",
    "III",
    "IV",
    "V",
    "VI",
    "VII",
    "VIII",
    "IX",
    "X",
    "XI",
    "XII",
    "XIII",
    "XIV",
    "XV",
    "XVI",
    "XVII",
    "XVIII",
    "XIX",
    "XX",
    "XXI",
    "XXII",
    "XXIII",
    "XXIV",
    "XXV",
    "XXVI",
    "XXVII",
    "XXVIII",
    "XXIX",
    "XXX",
    "XXXI",
    "XXXII",
    "XXXIII",
    "XXXIV",
)


def _semantic(q: Query, sql: str, u: float) -> str:
    """A slip in meaning: the opposite superlative, a dropped condition, a neighbouring Games."""
    if q.order:
        return sql.replace(" DESC", " \x00").replace(" ASC", " DESC").replace(" \x00", " ASC")
    structured = [(i, c, v) for i, c, v in q.literals if v not in ("Male", "Female")]
    gender = [(i, c, v) for i, c, v in q.literals if v in ("Male", "Female")]
    if gender and len(q.where) > 1:  # the table condition is forgotten
        _, c, v = gender[0]
        return re.sub(
            rf"{re.escape(_ident(c))} = {re.escape(_q(v))} AND |AND {re.escape(_ident(c))} = {re.escape(_q(v))}",
            "",
            sql,
            count=1,
        ).replace("  ", " ")
    if structured:
        _, c, v = structured[0]
        if v.isdigit():
            new = str(int(v) + (4 if u < 0.5 else -4))
        elif v in _ROMANS:
            k = _ROMANS.index(v)
            new = _ROMANS[k + 1] if u < 0.5 or k == 0 else _ROMANS[k - 1]
        else:
            return sql
        return sql.replace(f"{_ident(c)} = {_q(v)}", f"{_ident(c)} = {_q(new)}", 1)
    return sql


def parse(
    question: str, schema: str, failed: Sequence[str] = (), *, seed: int, rates: HybridRates | None = None
) -> str:
    """SUQL for one question over one table's schema; ``failed`` are earlier attempts that returned nothing."""
    r = rates or DEFAULT_RATES
    s = read_schema(schema)
    if not s.columns:
        raise LLMError("The simulated parser found no CREATE TABLE with columns in the schema it was shown.")
    q = _Reader(question, s).query()
    sql = q.sql(s.table)
    attempt = str(len(failed))
    key = (question, schema, attempt)
    if unit(seed, "hybrid-semantic", *key) < r.semantic:
        sql = _semantic(q, sql, unit(seed, "hybrid-semantic-how", *key))
    if unit(seed, "hybrid-column", *key) < r.wrong_column:
        sql = _wrong_column(q, s, sql, s.table)
    if unit(seed, "hybrid-no-result", *key) < r.no_result:
        sql = _no_result(q, sql, unit(seed, "hybrid-no-result-which", *key))
    # Told that a query returned nothing, a model does not write it again: it rephrases.
    variant = 0
    while sql in failed and variant < len(_PARAPHRASES[0][1]):
        variant += 1
        sql = _rephrase(sql, variant)
    return sql


# A retry that came out as a query already tried rephrases its answer() questions.
_PARAPHRASES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(r"^were the games held in (?P<x>.+)\?$"),
        ("did {x} host the games?", "was {x} the host city of the games?"),
    ),
    (
        re.compile(r"^when was this person born\?$"),
        ("what is this person's date of birth?", "on what date was this person born?"),
    ),
    (
        re.compile(r"^which event did this person compete in\?$"),
        ("in which event did this person compete?", "what event did this person take part in?"),
    ),
    (
        re.compile(r"^where were the games held\?$"),
        ("in which city were the games held?", "which city hosted the games?"),
    ),
    (
        re.compile(r"^did this person compete in (?P<x>.+)\?$"),
        ("did this person take part in {x}?", "did this person participate in {x}?"),
    ),
    (
        re.compile(r"^was this person born on (?P<x>.+)\?$"),
        ("was this athlete born on {x}?", "was the athlete born on {x}?"),
    ),
)


def _rephrase(sql: str, variant: int) -> str:
    def swap(m: re.Match[str]) -> str:
        question = m.group(2).replace("''", "'")
        for pattern, forms in _PARAPHRASES:
            pm = pattern.match(question)
            if pm:
                question = forms[(variant - 1) % len(forms)].format(**pm.groupdict())
                break
        return f"answer({m.group(1)}, {_q(question)})"

    return re.sub(r"answer\((\"(?:[^\"]|\"\")+\"), '((?:[^']|'')*)'\)", swap, sql)


# --- the short answer -----------------------------------------------------------------------------


def _first_value(results: Results) -> str | None:
    for row in results.rows:
        for v in row:
            if v is not None and str(v).strip():
                return str(v).strip()
    return None


def _reformat(value: str, u: float) -> str:
    """The same answer in another form than the passage's."""
    d = parse_date(value)
    if d is not None:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return (
                f"{MONTHS[d.month - 1].capitalize()} {d.day}, {d.year}"
                if u < 0.5
                else f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}"
            )
        return d.isoformat()
    if "," in value:  # "Rio de Janeiro, Brazil" -> the form without the country was the default; keep it whole
        return value
    m = re.match(r"^(men's|women's) (.+)$", value)
    if m:
        return m.group(2)
    if re.fullmatch(r"\d{4}", value):
        return f"the {value} Olympics"
    if re.fullmatch(_ROMAN, value):
        return f"the {value} Olympiad"
    return value


def _plain(value: str) -> str:
    """The default short form: one entity, as the passage writes it, without qualifiers."""
    if "," in value and not DATE.fullmatch(value):
        return value.split(",")[0].strip()  # "Rio de Janeiro, Brazil" -> "Rio de Janeiro"
    return value


def short_answer(question: str, results: Results, *, seed: int, rates: HybridRates | None = None) -> str:
    """The short answer HybridQA expects: one entity from the rows (the first), maybe reformatted."""
    value = _first_value(results)
    if value is None:
        return ""
    plain = _plain(value)
    u = unit(seed, "hybrid-format", question, value)
    if u < (rates or DEFAULT_RATES).format_rate:
        return _reformat(value, unit(seed, "hybrid-format-how", question, value))
    return plain
