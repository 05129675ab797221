"""The course assistant of notes 003 and 002: hard conditions in SQL, the text condition in SUQL,
and an honest three-valued verdict per course.

Every condition is computed per course as True, False or Unknown (SQL NULL):

* term — the offering is in the term the student wants;
* time — no meeting of the offering overlaps a busy slot (``NOT EXISTS``; half-open
  intervals, so 14-16 and 16-18 do not conflict; any conflicting meeting excludes); an offering
  whose schedule is not completely recorded (``schedule_complete`` false) and shows no conflict is
  Unknown, since the missing meetings may conflict;
* prerequisites — every prerequisite done (True), any not done (False), otherwise Unknown;
* credits — the course fits under the credit cap;
* practical — ``answer(reviews, 'is it practical?')`` through the SUQL compiler, asked only
  of courses whose hard conditions are not already False (F AND U = F).

A course is *confirmed* when all are True, *excluded* when any is False (with the
reasons), and *to verify* otherwise (with what is unknown) — unknown is never shown as
satisfied or as failed.  ``top_k_trap`` reproduces note 002's ranking-first plan that
loses C1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engines.events import CallFinished, Emit, Event, ignore
from engines.jsonable import Jsonable, JsonShape
from engines.llm.client import LLM
from engines.retrieval.bm25 import ChunkIndex
from engines.sql.sandbox import Limits, Sandbox
from engines.suql.execute import SuqlEngine
from worlds.courses import CourseWorld, clock

if TYPE_CHECKING:
    from engines.settings import Settings
    from engines.suql.agent import SuqlAgent

PRACTICAL = "is it practical?"

TERM_SQL = """
SELECT o.course_id, o.term::VARCHAR AS term, p.term AS wanted, o.term::VARCHAR = p.term AS ok
FROM offerings o, profile p ORDER BY o.course_id
"""

# The notes' query: any meeting that overlaps a busy slot excludes the offering.  Alone it passes an
# offering whose meetings were never recorded (nothing to conflict with), so a schedule that is not
# complete makes the time check unknown, not true (note 003's schedule_complete).
NAIVE_TIME_SQL = """
SELECT o.course_id, NOT EXISTS (
    SELECT 1 FROM meetings AS m JOIN busy AS b ON m.day = b.day
    WHERE m.offering_id = o.id AND m.start_min < b.end_min AND b.start_min < m.end_min
) AS ok
FROM offerings AS o ORDER BY o.course_id
"""
TIME_SQL = """
SELECT o.course_id, CASE WHEN EXISTS (
    SELECT 1 FROM meetings AS m JOIN busy AS b ON m.day = b.day
    WHERE m.offering_id = o.id AND m.start_min < b.end_min AND b.start_min < m.end_min
) THEN FALSE WHEN o.schedule_complete THEN TRUE ELSE NULL END AS ok
FROM offerings AS o ORDER BY o.course_id
"""

CONFLICTS_SQL = """
SELECT o.course_id, m.day, m.start_min, m.end_min, b.start_min AS busy_start, b.end_min AS busy_end
FROM offerings o JOIN meetings m ON m.offering_id = o.id JOIN busy b ON m.day = b.day
WHERE m.start_min < b.end_min AND b.start_min < m.end_min ORDER BY o.course_id, m.day, m.start_min
"""

# Three states: a missing record is unknown, never "not done".
PREREQ_SQL = """
SELECT p.course_id, p.prerequisite_id, COALESCE(c.status::VARCHAR, 'unknown') AS status
FROM prerequisites p LEFT JOIN completed c ON c.course_id = p.prerequisite_id
ORDER BY p.course_id, p.prerequisite_id
"""

CREDITS_SQL = """
SELECT c.id AS course_id, c.credits, p.current_credits, p.credit_cap, p.current_credits + c.credits <= p.credit_cap AS ok
FROM courses c JOIN offerings o ON o.course_id = c.id, profile p ORDER BY c.id
"""

# Counting courses, not review rows: one row per course whatever its number of reviews.
COUNT_COURSES_SQL = "SELECT COUNT(DISTINCT c.id) FROM courses c JOIN reviews r ON r.course_id = c.id"
COUNT_ROWS_SQL = "SELECT COUNT(*) FROM courses c JOIN reviews r ON r.course_id = c.id"


@dataclass(frozen=True)
class ConditionChecked(Event):
    course: str
    condition: str
    truth: bool | None
    detail: str


@dataclass
class CourseVerdict:
    course: str
    conditions: dict[str, bool | None] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)

    @property
    def truth(self) -> bool | None:
        values = list(self.conditions.values())
        if any(v is False for v in values):
            return False
        if any(v is None for v in values):
            return None
        return True

    def reasons(self) -> list[str]:
        return [self.details[c] for c, v in self.conditions.items() if v is False]

    def unknowns(self) -> list[str]:
        return [self.details[c] for c, v in self.conditions.items() if v is None]


@dataclass(frozen=True)
class CoursePlan(Jsonable):
    confirmed: tuple[str, ...]
    to_verify: dict[str, str]
    excluded: dict[str, str]
    verdicts: dict[str, CourseVerdict]
    answer_calls: int

    __json__ = JsonShape(omitted=frozenset({"verdicts", "answer_calls"}))  # what `courses --json` prints


def plan(world: CourseWorld, sandbox: Sandbox, llm: LLM, *, emit: Emit = ignore) -> CoursePlan:
    """Every offered course ends confirmed, to verify, or excluded."""
    verdicts: dict[str, CourseVerdict] = {}

    def check(course: str, condition: str, truth: bool | None, detail: str) -> None:
        verdicts.setdefault(course, CourseVerdict(course))
        verdicts[course].conditions[condition] = truth
        verdicts[course].details[condition] = detail
        emit(ConditionChecked(course, condition, truth, detail))

    for rec in sandbox.run(TERM_SQL).records():
        check(rec["course_id"], "term", rec["ok"], f"offered in {rec['term']}, you want {rec['wanted']}")
    conflicts: dict[str, list[str]] = {}
    for rec in sandbox.run(CONFLICTS_SQL).records():
        conflicts.setdefault(rec["course_id"], []).append(
            f"{rec['day']} {clock(rec['start_min'])}-{clock(rec['end_min'])} overlaps your busy {clock(rec['busy_start'])}-{clock(rec['busy_end'])}"
        )
    for rec in sandbox.run(TIME_SQL).records():
        detail = "; ".join(conflicts.get(rec["course_id"], [])) or (
            "no meeting overlaps a busy slot"
            if rec["ok"] is not None
            else "its schedule is not completely recorded: no recorded meeting overlaps, the others are unknown"
        )
        check(rec["course_id"], "time", rec["ok"], detail)
    prereqs: dict[str, list[tuple[str, str]]] = {}
    for rec in sandbox.run(PREREQ_SQL).records():
        prereqs.setdefault(rec["course_id"], []).append((rec["prerequisite_id"], rec["status"]))
    for course in verdicts:
        states = prereqs.get(course, [])
        missing = [p for p, s in states if s == "not_done"]
        unknown = [p for p, s in states if s == "unknown"]
        if missing:
            check(course, "prerequisites", False, f"prerequisite {', '.join(missing)} not completed")
        elif unknown:
            check(course, "prerequisites", None, f"whether you completed prerequisite {', '.join(unknown)}")
        else:
            done = ", ".join(p for p, _ in states) or "none"
            check(course, "prerequisites", True, f"prerequisites done: {done}")
    for rec in sandbox.run(CREDITS_SQL).records():
        total, cap = rec["current_credits"] + rec["credits"], rec["credit_cap"]
        detail = f"would bring you to {total} credits, " + (
            f"within your cap of {cap}" if rec["ok"] else f"above your cap of {cap}"
        )
        check(rec["course_id"], "credits", rec["ok"], detail)

    # The text condition, only where the hard conditions leave it a say (F AND U = F).
    open_courses = [c for c, v in verdicts.items() if v.truth is not False]
    calls = 0
    if open_courses:
        engine = SuqlEngine(sandbox, llm)
        evidence: dict[str, tuple[str, ...]] = {}

        def listen(event: Event) -> None:
            if isinstance(event, CallFinished) and event.row_key:
                evidence[event.row_key.split()[-1]] = event.evidence
            emit(event)

        listed = ", ".join(f"'{c}'" for c in open_courses)
        result = engine.run(
            f"SELECT course_id, answer(reviews, '{PRACTICAL}') AS practical FROM course_reviews "
            f"WHERE course_id IN ({listed}) ORDER BY course_id",
            emit=listen,
        )
        calls = result.stats.answer_calls
        found = {rec["course_id"]: rec["practical"] for rec in result.records()}
        for course in open_courses:
            value = found.get(course)
            quote = "; ".join(evidence.get(course, ()))
            if value == "Yes":
                check(course, "practical", True, f"reviews say it is practical: “{quote}”")
            elif value == "No":
                check(course, "practical", False, f"reviews say it is not practical: “{quote}”")
            else:
                check(course, "practical", None, "whether it is practical: the reviews do not say")
    for v in verdicts.values():
        if "practical" not in v.conditions:
            v.conditions["practical"] = None  # never asked: F AND U = F already decided
            v.details["practical"] = "not asked: a hard condition already fails"
    confirmed = tuple(c for c, v in sorted(verdicts.items()) if v.truth is True)
    to_verify = {c: "; ".join(v.unknowns()) for c, v in sorted(verdicts.items()) if v.truth is None}
    excluded = {c: "; ".join(v.reasons()) for c, v in sorted(verdicts.items()) if v.truth is False}
    return CoursePlan(confirmed, to_verify, excluded, verdicts, calls)


@dataclass(frozen=True)
class TopKTrap:
    ranking: tuple[tuple[str, float], ...]  # every course by review similarity to the question
    k: int
    rank_then_filter: tuple[str, ...]
    filter_then_rank: tuple[str, ...]


def top_k_trap(
    world: CourseWorld, sandbox: Sandbox, llm: LLM, *, k: int = 2, planned: CoursePlan | None = None
) -> TopKTrap:
    """Note 002: ranking by similarity, keeping k, then filtering can lose the right course.

    ``planned``: the world's plan when the caller has it already (a sweep over k), else it is made here."""
    by_course: dict[str, list[str]] = {}
    for _, course, text in world.reviews:
        by_course.setdefault(course, []).append(text)
    scores = ChunkIndex.build(by_course.items()).scores(PRACTICAL)
    ranking = tuple(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])))
    result = planned or plan(world, sandbox, llm)
    ok = set(result.confirmed)
    top = [c for c, _ in ranking[:k]]
    return TopKTrap(
        ranking=ranking,
        k=k,
        rank_then_filter=tuple(c for c in top if c in ok),
        filter_then_rank=tuple(c for c, _ in ranking if c in ok)[:k],
    )


@dataclass
class CourseSession:
    """The agent tab's course world: the same shape as ``engines.compose.RestaurantSession``."""

    settings: Settings
    world: CourseWorld
    sandbox: Sandbox
    llm: LLM
    agent: SuqlAgent

    def close(self) -> None:
        self.sandbox.close()


def open_courses_agent(
    settings: Settings, *, clock: Callable[[], float] | None = None, world: CourseWorld | None = None
) -> CourseSession:
    """A SUQL dialogue agent over the course world, in a fresh sandbox, bounded by ``settings``.

    Raises ``ConfigurationError`` when the settings choose a backend that cannot run.
    """
    import time

    from engines.courses.tasks import COURSE_TASKS
    from engines.llm.client import llm_from_settings
    from engines.suql.agent import SuqlAgent
    from worlds import courses

    llm = llm_from_settings(settings, clock=clock or time.perf_counter)
    world = world or courses.build()
    sandbox = Sandbox.create(
        world.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s, limits=Limits.from_settings(settings)
    )
    agent = SuqlAgent.over(
        SuqlEngine.from_settings(sandbox, llm, settings),
        world.schema(),
        enum_fields={},
        classify_method=settings.classify_method,
    )
    agent.tasks = COURSE_TASKS  # the course world's simulated route, parse and respond (engines/courses/tasks.py)
    return CourseSession(settings, world, sandbox, llm, agent)
