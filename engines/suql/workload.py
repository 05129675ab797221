"""The random SUQL workload of lecture 7 §3.4, judged against the world's hidden truth.

60 seeded queries over the restaurant world: one location; half with a cuisine; one
or two text conditions; 40% LIMIT 1, 30% LIMIT 3, 30% "list them all"; half write
answer() before the structured conditions.  Each query is run in every mode;
precision is the share of returned rows that really satisfy every condition (the
evaluator reads hidden truth), recall is computed on the list-all queries only.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from engines.events import Emit, ignore
from engines.suql.execute import SuqlEngine
from engines.suql.plan import MODES
from worlds.restaurants import LOCATIONS, HiddenTruth, RestaurantWorld

# text condition -> (the question the parser would write, the hidden feature it asks about)
TEXT_CONDITIONS: tuple[tuple[str, str], ...] = (
    ("is it family-friendly?", "family_friendly"),
    ("does it have a great view?", "great_view"),
    ("is the food spicy?", "spicy"),
    ("is it romantic?", "romantic"),
    ("is it good for groups?", "good_for_groups"),
    ("does it have outdoor seating?", "outdoor_seating"),
    ("is parking easy?", "easy_parking"),
)
WORKLOAD_CUISINES = (
    "italian",
    "mexican",
    "chinese",
    "japanese",
    "thai",
    "indian",
    "coffee & tea",
    "american (traditional)",
    "korean",
    "mediterranean",
)


@dataclass(frozen=True)
class WorkloadQuery:
    sql: str
    location: str
    cuisine: str | None
    features: tuple[str, ...]  # hidden features every answer must have (evaluator side)
    limit: int | None


def generate(seed: int = 7, n: int = 60) -> list[WorkloadQuery]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        location = rng.choice(LOCATIONS)
        cuisine = rng.choice(WORKLOAD_CUISINES) if rng.random() < 0.5 else None
        texts = rng.sample(TEXT_CONDITIONS, 2 if rng.random() < 0.5 else 1)
        r = rng.random()
        limit = 1 if r < 0.4 else (3 if r < 0.7 else None)
        structured = [f"location = '{location}'"] + ([f"'{cuisine}' = ANY(cuisines)"] if cuisine else [])
        text_sql = [f"answer(reviews, '{q}') = 'Yes'" for q, _ in texts]
        conds = text_sql + structured if rng.random() < 0.5 else structured + text_sql
        sql = "SELECT _id, name FROM restaurants WHERE " + " AND ".join(conds)
        if limit is not None:
            sql += f" LIMIT {limit}"
        out.append(WorkloadQuery(sql, location, cuisine, tuple(f for _, f in texts), limit))
    return out


def truly_matching(world: RestaurantWorld, truth: HiddenTruth, q: WorkloadQuery) -> set[int]:
    """The rows of ``world`` that really satisfy the query by ``truth`` (its hidden truth, which the world
    itself does not carry): for evaluators only."""
    return {
        r._id
        for r in world.rows
        if r.location == q.location
        and (q.cuisine is None or q.cuisine in r.cuisines)
        and all(truth.has(r._id, f) for f in q.features)
    }


@dataclass
class ModeScore:
    answer_calls: list[int]
    summary_calls: list[int]
    precisions: list[float]
    recalls: list[float]
    list_all_precisions: list[float] = field(default_factory=list)  # the queries without a LIMIT (their rows are fixed)

    # Hand-written: means of its lists, not the lists.
    def to_json(self) -> dict[str, float]:
        return {
            "answer_calls_mean": round(_mean(self.answer_calls), 3),
            "summary_calls_mean": round(_mean(self.summary_calls), 3),
            "precision": round(_mean(self.precisions), 4),
            "recall": round(_mean(self.recalls), 4),
            "precision_list_all": round(_mean(self.list_all_precisions), 4),
        }


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def evaluate(
    engine: SuqlEngine,
    world: RestaurantWorld,
    truth: HiddenTruth,
    queries: Iterable[WorkloadQuery],
    *,
    modes: Iterable[str] = tuple(MODES),
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    emit: Emit = ignore,
) -> dict[str, ModeScore]:
    queries = list(queries)
    modes = list(modes)
    scores = {m: ModeScore([], [], [], []) for m in modes}
    total, done = len(queries) * len(modes), 0
    for q in queries:
        gold = truly_matching(world, truth, q)
        for m in modes:
            result = engine.run(q.sql, mode=m, cancel=cancel, emit=emit)
            ids = {rec["_id"] for rec in result.records()}
            s = scores[m]
            s.answer_calls.append(result.stats.answer_calls)
            s.summary_calls.append(result.stats.summary_calls)
            if ids:
                s.precisions.append(len(ids & gold) / len(ids))
                if q.limit is None:
                    s.list_all_precisions.append(len(ids & gold) / len(ids))
            if q.limit is None and gold:
                s.recalls.append(len(ids & gold) / len(gold))
            done += 1
            if progress is not None:
                progress(done, total)
    return scores
