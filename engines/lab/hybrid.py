"""Lecture 6 §5.3 and exercise 4: five ways to answer questions that need the database, the reviews, or both.

1. classify first (SK-TOD): the LLM parser says whether the question has a subjective condition;
   if it has one (or names a restaurant) the text branch answers — entity tracking, then the entity's
   reviews, or BM25 over all reviews when no restaurant is named — otherwise the Text-to-SQL agent.
2. both, then pick (Chirpy Cardinal): the Text-to-SQL agent and the text module both run; the database's
   answer is picked when it returned rows.
3. linearise everything (UniK-QA): every row becomes one passage (its cells, dishes and reviews); BM25
   retrieves the top k passages; a reader reads each: the cells against the question's structured
   conditions (by program) and the reviews with ``answer()`` (the LLM).  Only those k are ever seen.
4. retrieve both, then merge (HybridQA-style): the table side is the Text-to-SQL agent's conditions (its
   ORDER BY / LIMIT / COUNT left to the merger); the text side is BM25 over all reviews, top k, each
   confirmed with ``answer()``; the merger intersects them and applies the question type it reads off
   the words (how many → count, top-rated → the best, do the reviews → yes / no, else a list).
5. compositional (SUQL): the SUQL agent — parser, ``classify()``, the compiler: SQL filters first, then
   ``answer()`` on each remaining row, then ordering or counting over the whole filtered set.

Every approach shares the one LLM (and so the same reader, with its seeded 3% mistakes) and counts its
``answer()`` calls (the reader's calls; parsing is deterministic, so a question's parses are computed once
and shared by the approaches).  Gold answers come from the world's hidden truth (evaluator side).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import bm25s
import numpy as np
from sqlglot import exp

from engines.errors import EngineError
from engines.lab.judge import one_minus_relative_error, set_f1
from engines.sql.tasks import PARSE, Dialogue
from engines.suql.tasks import ANSWER, AnswerInput

if TYPE_CHECKING:
    from engines.events import Event
    from engines.llm.client import LLM
    from engines.llm.protocol import Answer
    from engines.retrieval.bm25 import ChunkIndex
    from engines.sql.agent import TextToSQLAgent, TurnResult
    from engines.sql.sandbox import Sandbox
    from engines.suql.agent import SuqlAgent
    from worlds.restaurants import HiddenTruth, Restaurant, RestaurantWorld

CLASSES = ("db only", "review of one", "both: set", "both: top", "both: count")
HYBRID_CLASSES = CLASSES[2:]
APPROACHES = (
    "1 classify first (SK-TOD)",
    "2 both, then pick (Chirpy)",
    "3 linearise (UniK-QA)",
    "4 retrieve both, merge (HybridQA)",
    "5 compositional (SUQL)",
)

# hidden feature -> how questions say it
FEATURE_WORDS: dict[str, dict[str, str]] = {
    "family_friendly": {
        "rel": "that are family-friendly",
        "top": "that is family-friendly",
        "pred": "are family-friendly",
        "one": "is family-friendly",
    },
    "romantic": {
        "rel": "that are good for a date",
        "top": "that is good for a date",
        "pred": "are good for a date",
        "one": "is good for a date",
    },
    "good_for_groups": {
        "rel": "that are good for large groups",
        "top": "that is good for large groups",
        "pred": "are good for large groups",
        "one": "is good for large groups",
    },
    "great_view": {
        "rel": "with a great view",
        "top": "with a great view",
        "pred": "have a great view",
        "one": "has a great view",
    },
    "outdoor_seating": {
        "rel": "with outdoor seating",
        "top": "with outdoor seating",
        "pred": "have outdoor seating",
        "one": "has outdoor seating",
    },
    "easy_parking": {
        "rel": "with easy parking",
        "top": "with easy parking",
        "pred": "have easy parking",
        "one": "has easy parking",
    },
    "spicy": {
        "rel": "with really spicy food",
        "top": "with really spicy food",
        "pred": "serve really spicy food",
        "one": "serves really spicy food",
    },
}


# --- questions with gold answers (evaluator side: reads the hidden truth) -------------------------


@dataclass(frozen=True)
class Question:
    cls: str
    text: str
    gold_ids: frozenset[int] = frozenset()  # set classes; for "top", every acceptable answer
    gold_count: int | None = None
    gold_yes: bool | None = None


def generate(world: RestaurantWorld, truth: HiddenTruth, rng: random.Random, per_class: int) -> list[Question]:
    """``per_class`` questions of each class over ``world``; ``truth`` (its hidden truth) decides the gold answers."""
    from engines.lab.questions import plain_cuisines
    from engines.sql.sim_parser import FOOD_WORDS
    from worlds.restaurants import LOCATIONS

    rows = world.rows
    plain = plain_cuisines()
    out: list[Question] = []

    def has(r: Restaurant, f: str) -> bool:
        return truth.has(r._id, f)

    def draw(make: Callable[[], Question | None]) -> None:
        made = 0
        for _ in range(200 * per_class):
            if made == per_class:
                break
            q = make()
            if q is not None and q.text not in {x.text for x in out}:
                out.append(q)
                made += 1

    def db_only() -> Question | None:
        loc, c = rng.choice(LOCATIONS), rng.choice(plain)
        price = rng.choice((None, "cheap", "moderate"))
        ids = frozenset(
            r._id for r in rows if r.location == loc and c in r.cuisines and (price is None or r.price == price)
        )
        if not ids:
            return None
        return Question("db only", f"List all {price + ' ' if price else ''}{c} restaurants in {loc}.", ids)

    # Names the simulated parser would read as a cuisine ("Corner Cafe") are left out of class 2.
    nameable = [
        r for r in rows if not any(re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", r.name.lower()) for k in FOOD_WORDS)
    ]
    yes_turn = [True]

    def review_of_one() -> Question | None:
        f = rng.choice(tuple(FEATURE_WORDS))
        want = yes_turn[0]
        pool = [r for r in nameable if has(r, f) == want]
        if not pool:
            return None
        r = rng.choice(pool)
        yes_turn[0] = not want
        return Question(
            "review of one",
            f"Do the reviews of {r.name} say it {FEATURE_WORDS[f]['one']}?",
            frozenset({r._id}),
            gold_yes=want,
        )

    def both_set() -> Question | None:
        loc, f = rng.choice(LOCATIONS), rng.choice(tuple(FEATURE_WORDS))
        c = rng.choice(plain) if rng.random() < 0.5 else None
        ids = frozenset(r._id for r in rows if r.location == loc and (c is None or c in r.cuisines) and has(r, f))
        if not ids:
            return None
        return Question(
            "both: set", f"List all {c + ' ' if c else ''}restaurants in {loc} {FEATURE_WORDS[f]['rel']}.", ids
        )

    def both_top() -> Question | None:
        loc, f = rng.choice(LOCATIONS), rng.choice(tuple(FEATURE_WORDS))
        sat = [r for r in rows if r.location == loc and has(r, f)]
        if not sat:
            return None
        best = max(r.rating for r in sat)
        return Question(
            "both: top",
            f"What is the top-rated restaurant in {loc} {FEATURE_WORDS[f]['top']}?",
            frozenset(r._id for r in sat if r.rating == best),
        )

    def both_count() -> Question | None:
        loc, f = rng.choice(LOCATIONS), rng.choice(tuple(FEATURE_WORDS))
        n = sum(1 for r in rows if r.location == loc and has(r, f))
        if not n:
            return None
        return Question("both: count", f"How many restaurants in {loc} {FEATURE_WORDS[f]['pred']}?", gold_count=n)

    for make in (db_only, review_of_one, both_set, both_top, both_count):
        draw(make)
    return out


# --- answers and scores ------------------------------------------------------------------------------


@dataclass
class Reply:
    ids: frozenset[int] = frozenset()
    count: int | None = None
    yes: bool | None = None
    top: int | None = None


def question_type(text: str) -> str:
    """Lexical analysis of the question type (S3HQA's reasoner does the same)."""
    low = text.lower()
    if re.search(r"\bhow many\b", low):
        return "count"
    if re.search(r"\b(top[- ]rated|best|highest[- ]rated)\b", low):
        return "top"
    if re.match(r"\s*(do|does|is|are)\b", low):
        return "yes/no"
    return "list"


def score(q: Question, r: Reply) -> float:
    if q.cls in ("db only", "both: set"):
        return set_f1(r.ids, q.gold_ids)
    if q.cls == "review of one":
        return float(bool(r.yes) == q.gold_yes)
    if q.cls == "both: top":
        return float(r.top is not None and r.top in q.gold_ids)
    return one_minus_relative_error(r.count, q.gold_count or 0)


# --- retrieval over linearised rows (UniK-QA) -----------------------------------------------------------


def linearise(row: Restaurant) -> str:
    """A row as one passage: every cell with its column name, then dishes and reviews."""
    return " | ".join(
        (
            f"name: {row.name}",
            f"cuisines: {', '.join(row.cuisines)}",
            f"price: {row.price}",
            f"rating: {row.rating}",
            f"num_reviews: {row.num_reviews}",
            f"address: {row.address}",
            f"phone: {row.phone_number}",
            f"opening_hours: {row.opening_hours}",
            f"location: {row.location}",
            f"popular_dishes: {', '.join(row.popular_dishes)}",
            "reviews: " + " ".join(row.reviews),
        )
    )


class PassageIndex:
    """BM25 (bm25s) over whole passages — one per row — returning the top k row ids."""

    def __init__(self, keys: Sequence[int], passages: Sequence[str]) -> None:
        self.keys = list(keys)
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(list(passages), stopwords="en", show_progress=False), show_progress=False)

    def top(self, query: str, k: int) -> list[int]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        words = [t for t in (tokens[0] if tokens else []) if t in self.retriever.vocab_dict]
        if not words:
            return []
        scores = np.asarray(self.retriever.get_scores(words), dtype=float)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], self.keys[i]))
        return [self.keys[i] for i in order[:k] if scores[i] > 0]


# --- the five approaches -------------------------------------------------------------------------------


@dataclass
class Toolkit:
    """The engines every approach uses, over one world, sandbox and LLM."""

    world: RestaurantWorld
    sandbox: Sandbox
    llm: LLM
    classify_method: str
    sql_agent: TextToSQLAgent = field(init=False)
    suql_agent: SuqlAgent = field(init=False)
    review_index: ChunkIndex[int] = field(init=False)
    passages: PassageIndex = field(init=False)

    def __post_init__(self) -> None:
        from engines.retrieval.bm25 import ChunkIndex
        from engines.sql.agent import TextToSQLAgent
        from engines.suql.agent import SuqlAgent, suql_schema
        from engines.suql.execute import SuqlEngine

        w = self.world
        self.suql_schema = suql_schema(w.schema())
        # diagnose_empty=False: the experiment measures what answering costs; the agents' hint for an empty
        # result (re-running without each condition) is for the person reading the reply, not part of the answer
        self.sql_agent = TextToSQLAgent(
            self.sandbox,
            self.llm,
            w.schema(),
            w.enum_fields,
            classify_method=self.classify_method,
            diagnose_empty=False,
        )
        self.suql_agent = SuqlAgent(
            self.sandbox,
            self.llm,
            self.suql_schema,
            w.enum_fields,
            classify_method=self.classify_method,
            engine=SuqlEngine(self.sandbox, self.llm, pool=1),
            mode="E",
            diagnose_empty=False,
        )
        self.review_index = ChunkIndex.build((r._id, r.reviews) for r in w.rows)
        self.passages = PassageIndex([r._id for r in w.rows], [linearise(r) for r in w.rows])
        self.by_id = {r._id: r for r in w.rows}
        self._sql_turns: dict[str, TurnResult] = {}
        self._text_questions: dict[str, list[str]] = {}
        self._structured: dict[str, set[int] | None] = {}
        self.by_name = {r.name.lower(): r._id for r in w.rows}
        self.suql_calls: list[tuple[str | None, str]] = []  # (row, question) of each answer() call of SUQL
        self.last_suql: TurnResult | None = None

    # -- pieces -------------------------------------------------------------------------------------

    def read(self, rid: int, question: str) -> bool:
        """The reader: ``answer()`` on one restaurant's reviews."""
        from engines.retrieval.bm25 import as_text

        said: Answer = self.llm.run(ANSWER, AnswerInput(as_text(self.by_id[rid].reviews), question))
        return said.value == "Yes"

    def text_questions(self, utterance: str) -> list[str]:
        """The answer() questions the LLM parser writes for the subjective part of a question."""
        from engines.lab.judge import meaning

        if utterance not in self._text_questions:
            parsed = meaning(self.llm.run(PARSE, Dialogue(utterance, (), self.suql_schema)))
            self._text_questions[utterance] = [q for col, q in parsed.texts if col == "reviews"]
        return self._text_questions[utterance]

    def track_entity(self, utterance: str) -> int | None:
        """SK-TOD's entity tracking: the longest restaurant name whose words appear in order in the question."""
        low = " " + re.sub(r"[^\w' ]+", " ", utterance.lower()) + " "
        best = None
        for name, rid in self.by_name.items():
            if f" {name} " in low and (best is None or len(name) > len(best[0])):
                best = (name, rid)
        return best[1] if best else None

    def retrieve_reviews(self, utterance: str, k: int) -> list[int]:
        scores = self.review_index.scores(utterance)
        ranked = sorted((rid for rid, s in scores.items() if s > 0), key=lambda rid: (-scores[rid], rid))
        return ranked[:k]

    def ask_sql(self, utterance: str) -> TurnResult:
        """The Text-to-SQL agent's turn for a question (deterministic: computed once, shared by approaches)."""
        if utterance not in self._sql_turns:
            self.sql_agent.reset()
            self._sql_turns[utterance] = self.sql_agent.ask(utterance)
        return self._sql_turns[utterance]

    def structured_ids(self, sql: str | None) -> set[int] | None:
        """The rows a statement's conditions select (its ORDER BY, LIMIT and COUNT left out)."""
        if not sql:
            return None
        if sql in self._structured:
            return self._structured[sql]
        self._structured[sql] = self._structured_ids(sql)
        return self._structured[sql]

    def _structured_ids(self, sql: str) -> set[int] | None:
        try:
            tree = self.sandbox.check(sql)
        except EngineError:
            return None
        if not isinstance(tree, exp.Select):
            return None
        tree = tree.copy()
        tree.set("expressions", [exp.column("_id")])
        for part in ("order", "limit", "offset", "group", "having", "distinct"):
            tree.set(part, None)
        try:
            return {r[0] for r in self.sandbox.run_tree(tree).rows}
        except EngineError:
            return None

    def rows_reply(self, turn: TurnResult, qtype: str) -> Reply:
        """What a database result says, read for the question type."""
        cols = list(turn.columns)
        if not cols:
            return Reply()
        if qtype == "count" and len(turn.rows) == 1 and len(cols) == 1 and "count" in cols[0].lower():
            return Reply(count=int(turn.rows[0][0]))
        if "_id" in cols:
            ids = [r[cols.index("_id")] for r in turn.rows]
        elif "name" in cols:
            ids = [self.by_name.get(str(r[cols.index("name")]).lower()) for r in turn.rows]
            ids = [i for i in ids if i is not None]
        else:
            ids = []
        return self.merge_reply(ids, qtype, ordered=True)

    def merge_reply(self, ids: Sequence[int], qtype: str, *, ordered: bool = False) -> Reply:
        """The reasoner: turn a set of rows into the answer the question type asks for."""
        ids = list(dict.fromkeys(ids))
        if qtype == "count":
            return Reply(ids=frozenset(ids), count=len(ids))
        if qtype == "top":
            if not ids:
                return Reply()
            best = ids[0] if ordered else max(ids, key=lambda i: (self.by_id[i].rating, self.by_id[i].num_reviews, -i))
            return Reply(ids=frozenset({best}), top=best)
        if qtype == "yes/no":
            return Reply(ids=frozenset(ids), yes=bool(ids))
        return Reply(ids=frozenset(ids))

    def text_module(self, utterance: str, qtype: str, k: int) -> Reply:
        """SK-TOD / Chirpy's text side: the named restaurant's reviews, else the top k reviews of the whole DB."""
        questions = self.text_questions(utterance) or [utterance]
        entity = self.track_entity(utterance)
        if entity is not None:
            yes = all(self.read(entity, q) for q in questions)
            return Reply(
                ids=frozenset({entity}) if yes else frozenset(), yes=yes, top=entity if yes else None, count=int(yes)
            )
        confirmed = [rid for rid in self.retrieve_reviews(utterance, k) if all(self.read(rid, q) for q in questions)]
        return self.merge_reply(confirmed, qtype)

    # -- the approaches ---------------------------------------------------------------------------------

    def classify_first(self, utterance: str, k: int) -> Reply:
        qtype = question_type(utterance)
        subjective = bool(self.text_questions(utterance)) or self.track_entity(utterance) is not None
        if subjective:
            return self.text_module(utterance, qtype, k)
        return self.rows_reply(self.ask_sql(utterance), qtype)

    def both_then_pick(self, utterance: str, k: int) -> Reply:
        qtype = question_type(utterance)
        turn = self.ask_sql(utterance)
        text = self.text_module(utterance, qtype, k)
        if turn.rows:
            return self.rows_reply(turn, qtype)
        return text

    def linearise(self, utterance: str, k: int) -> Reply:
        qtype = question_type(utterance)
        retrieved = self.passages.top(utterance, k)
        turn = self.ask_sql(utterance)
        cells_ok = self.structured_ids(turn.sql) or set()
        questions = self.text_questions(utterance)
        kept = []
        for rid in retrieved:  # the reader reads every retrieved passage
            text_ok = all([self.read(rid, q) for q in questions])
            if rid in cells_ok and text_ok:
                kept.append(rid)
        return self.merge_reply(kept, qtype)

    def retrieve_and_merge(self, utterance: str, k: int) -> Reply:
        qtype = question_type(utterance)
        table_side = self.structured_ids(self.ask_sql(utterance).sql) or set()
        questions = self.text_questions(utterance)
        if not questions:
            return self.merge_reply(sorted(table_side), qtype)
        text_side = [rid for rid in self.retrieve_reviews(utterance, k) if all(self.read(rid, q) for q in questions)]
        return self.merge_reply([rid for rid in text_side if rid in table_side], qtype)

    def compositional(self, utterance: str, k: int) -> Reply:
        self.suql_agent.reset()
        turn = self.suql_agent.ask(utterance, emit=self._watch_suql)
        self.last_suql = turn
        return self.rows_reply(turn, question_type(utterance))

    def _watch_suql(self, event: Event) -> None:
        from engines.events import CallStarted

        if isinstance(event, CallStarted) and event.function == "answer":
            self.suql_calls.append((event.row_key, event.prompt))

    def sql_filter_rows(self, sql: str | None) -> tuple[int, int] | None:
        """An independent count of what SUQL's cost should be: the rows the query's SQL part leaves (its
        top-level answer() conditions dropped, LIMIT and ORDER BY too) and the number of those conditions.
        None when the query is not a conjunction with its answer() conditions at the top (then the bound
        is not simply rows × conditions)."""
        import sqlglot

        if not sql:
            return None
        try:
            tree = sqlglot.parse_one(sql, read="postgres")
        except sqlglot.errors.ParseError:
            return None
        where = tree.args.get("where") if isinstance(tree, exp.Select) else None
        if where is None:
            return None
        conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]

        def asks(node: exp.Expr) -> bool:
            return any(f.name.lower() in ("answer", "summary") for f in node.find_all(exp.Anonymous))

        text = [c for c in conjuncts if asks(c)]
        if not text or any(isinstance(c, (exp.Or, exp.Not)) for c in text):
            return None
        kept = [c for c in conjuncts if not asks(c)]
        counted = exp.select(exp.Count(this=exp.Star())).from_(tree.args["from_"].this.copy())
        for join in tree.args.get("joins") or ():
            counted = counted.join(join.copy())
        if kept:
            counted = counted.where(exp.and_(*(c.copy() for c in kept)))
        n = self.sandbox.run(counted.sql(dialect="duckdb")).rows[0][0]
        return int(n), len({c.sql() for c in text})

    def run(self, approach: str, utterance: str, k: int) -> Reply:
        return {
            APPROACHES[0]: self.classify_first,
            APPROACHES[1]: self.both_then_pick,
            APPROACHES[2]: self.linearise,
            APPROACHES[3]: self.retrieve_and_merge,
            APPROACHES[4]: self.compositional,
        }[approach](utterance, k)
