"""The course-assistant world of the notes (003, 002): six courses C1-C6 for one student.

Tables: ``courses``, ``offerings`` (term enum), ``meetings`` (half-open minute intervals
``[start_min, end_min)``), ``prerequisites``, ``completed`` (the student's courses: done,
not done, or unknown), ``busy`` (the student's own slots), ``profile`` (term wanted,
credits already taken, credit cap) and ``reviews`` (free text).

The contents reproduce the notes: on hard conditions alone C1, C5 and C6 pass; C2
conflicts in time; C3's prerequisite is unknown; C4 is offered in the wrong term.  On
"is it practical?" the reviews of C1 and C3 support it, C5's oppose it and C6's say
nothing.  The reviews read as reviews do: C2's and C4's short ones repeat the word, C1's says it once
in a longer review about its projects, C5's uses it to say the course is not; so BM25's similarity to
"is it practical?" ranks C2 and C4 first and C1 third, below two courses that fail a hard condition
(note 002's top-k trap comes from the ranking, and C5 shows similarity is not support).  ``build()``
takes the knobs the notes' metamorphic tests turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

TERMS = ("autumn", "winter", "spring", "summer")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def hm(hours: int, minutes: int = 0) -> int:
    """Minutes since midnight."""
    return hours * 60 + minutes


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass(frozen=True)
class CourseWorld:
    courses: tuple[tuple[str, str, int, str], ...]  # id, title, credits, description
    offerings: tuple[tuple[int, str, str, int, bool], ...]  # id, course_id, term, year, schedule_complete
    meetings: tuple[tuple[int, str, int, int], ...]  # offering_id, day, start_min, end_min
    prerequisites: tuple[tuple[str, str], ...]  # course_id, prerequisite_id
    completed: tuple[tuple[str, str], ...]  # course_id, status: done | not_done | unknown
    busy: tuple[tuple[str, int, int], ...]  # day, start_min, end_min
    profile: tuple[str, int, int]  # term wanted, current credits, credit cap
    reviews: tuple[tuple[int, str, str], ...]  # review id, course_id, text
    # hidden truth for evaluators: which courses really are practical
    practical: frozenset[str] = field(default=frozenset(), repr=False)

    table = "courses"

    def schema(self) -> str:
        terms = ", ".join(f"'{t}'" for t in TERMS)
        return (
            "CREATE TABLE courses (id TEXT PRIMARY KEY, title TEXT, credits INTEGER, description TEXT);\n"
            f"CREATE TABLE offerings (id INTEGER PRIMARY KEY, course_id TEXT, term ENUM ({terms}), year INTEGER, "
            "schedule_complete BOOLEAN);  -- false: not every meeting of the offering is recorded\n"
            "CREATE TABLE meetings (offering_id INTEGER, day TEXT, start_min INTEGER, end_min INTEGER);  -- [start_min, end_min) minutes since midnight\n"
            "CREATE TABLE prerequisites (course_id TEXT, prerequisite_id TEXT);\n"
            "CREATE TABLE completed (course_id TEXT, status ENUM ('done', 'not_done', 'unknown'));  -- the student's record; a missing course is unknown\n"
            "CREATE TABLE busy (day TEXT, start_min INTEGER, end_min INTEGER);  -- the student's own slots: their schedule "
            "(a course fits it when none of its meetings overlaps one)\n"
            "CREATE TABLE profile (term TEXT, current_credits INTEGER, credit_cap INTEGER);\n"
            "CREATE TABLE reviews (id INTEGER, course_id TEXT, text TEXT);\n"
            "CREATE VIEW course_reviews AS SELECT course_id, list(text ORDER BY id) AS reviews FROM reviews GROUP BY course_id;"
        )

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        terms = ", ".join(f"'{t}'" for t in TERMS)
        con.execute(
            "CREATE TABLE courses (id VARCHAR PRIMARY KEY, title VARCHAR, credits INTEGER, description VARCHAR)"
        )
        con.execute(
            f"CREATE TABLE offerings (id INTEGER PRIMARY KEY, course_id VARCHAR, term ENUM ({terms}), year INTEGER, "
            "schedule_complete BOOLEAN)"
        )
        con.execute("CREATE TABLE meetings (offering_id INTEGER, day VARCHAR, start_min INTEGER, end_min INTEGER)")
        con.execute("CREATE TABLE prerequisites (course_id VARCHAR, prerequisite_id VARCHAR)")
        con.execute("CREATE TABLE completed (course_id VARCHAR, status ENUM ('done', 'not_done', 'unknown'))")
        con.execute("CREATE TABLE busy (day VARCHAR, start_min INTEGER, end_min INTEGER)")
        con.execute("CREATE TABLE profile (term VARCHAR, current_credits INTEGER, credit_cap INTEGER)")
        con.execute("CREATE TABLE reviews (id INTEGER, course_id VARCHAR, text VARCHAR)")
        for table, rows in (
            ("courses", self.courses),
            ("offerings", self.offerings),
            ("meetings", self.meetings),
            ("prerequisites", self.prerequisites),
            ("completed", self.completed),
            ("busy", self.busy),
            ("profile", (self.profile,)),
            ("reviews", self.reviews),
        ):
            if rows:
                marks = ", ".join("?" for _ in rows[0])
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", [list(r) for r in rows])
        con.execute(
            "CREATE VIEW course_reviews AS SELECT course_id, list(text ORDER BY id) AS reviews FROM reviews GROUP BY course_id"
        )

    def records(self, table: str) -> list[dict[str, Any]]:
        con = duckdb.connect()
        try:
            self.load(con)
            cur = con.execute(f"SELECT * FROM {table}")
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]
        finally:
            con.close()


def build(
    *,
    c2_start: int = hm(15),
    credit_cap: int = 10,
    current_credits: int = 4,
    second_c1_review: bool = False,
    term: str = "autumn",
    unrecorded: tuple[str, ...] = (),
) -> CourseWorld:
    """The notes' world.  The knobs are the metamorphic tests' changes:

    ``c2_start=hm(16)`` moves C2 to 16:00 (half-open intervals: no longer a conflict);
    ``credit_cap=6`` leaves no room for any 3-credit course; ``second_c1_review`` adds a
    review to C1 (it must not add a candidate).  ``unrecorded`` courses lose every meeting record, as a
    data feed that dropped them would, and their offerings say so (``schedule_complete`` false).
    """
    courses = (
        ("C1", "Applied Machine Learning", 3, "Building and evaluating learning systems on real data."),
        ("C2", "Systems Programming Studio", 3, "Low-level programming in C with weekly labs."),
        ("C3", "Databases in Practice", 3, "Designing, querying and tuning relational databases."),
        ("C4", "Robotics Workshop", 3, "Designing and programming small robots."),
        ("C5", "Theory of Computation", 3, "Automata, computability and complexity."),
        ("C6", "Human-Computer Interaction", 3, "Principles of interface design and evaluation."),
        ("A", "Introduction to Programming", 4, "Programming fundamentals."),
        ("B", "Data Structures", 4, "Lists, trees, graphs and their algorithms."),
    )
    offerings = tuple(
        (i, course, when, year, course not in unrecorded)
        for i, course, when, year in (
            (1, "C1", "autumn", 2026),
            (2, "C2", "autumn", 2026),
            (3, "C3", "autumn", 2026),
            (4, "C4", "spring", 2027),
            (5, "C5", "autumn", 2026),
            (6, "C6", "autumn", 2026),
        )
    )
    meetings: tuple[tuple[int, str, int, int], ...] = (
        (1, "Mon", hm(10), hm(12)),
        (1, "Wed", hm(16), hm(18)),  # C1: the lab starts when the busy slot ends
        (2, "Mon", hm(13), hm(14)),
        (2, "Wed", c2_start, c2_start + hm(2)),  # C2: Wed 15-17 overlaps busy 14-16
        (3, "Tue", hm(9), hm(11)),
        (4, "Thu", hm(14), hm(16)),
        (5, "Fri", hm(10), hm(12)),
        (6, "Thu", hm(9), hm(10, 30)),
        (6, "Fri", hm(13), hm(14, 30)),
    )
    lost = {o[0] for o in offerings if o[1] in unrecorded}
    meetings = tuple(m for m in meetings if m[0] not in lost)
    prerequisites = (("C1", "A"), ("C3", "B"), ("C5", "A"), ("C2", "A"))
    completed = (("A", "done"), ("B", "unknown"))
    busy = (("Wed", hm(14), hm(16)), ("Tue", hm(13), hm(15)))
    reviews = [
        (
            1,
            "C1",
            "Lots of hands-on projects; we built a working recommender by week six, and every assignment ends with "
            "evaluating a model on real data. The most practical thing I learned was how to test a model honestly.",
        ),
        (2, "C2", "Practical labs every week, and the tooling you learn is practical too."),
        (3, "C3", "Very practical course, you design and tune a real database for a client."),
        (
            4,
            "C4",
            "The most practical course I took: practical skills from day one, and we build robots in every session.",
        ),
        (
            5,
            "C5",
            "Anyone hoping for something practical will be disappointed: entirely theoretical, no projects or applied "
            "work at all; proofs every week.",
        ),
        (6, "C6", "The lecturer is wonderful and the readings are well chosen."),
    ]
    if second_c1_review:
        reviews.append((7, "C1", "The projects use real datasets and you deploy a model at the end."))
    return CourseWorld(
        courses=courses,
        offerings=offerings,
        meetings=meetings,
        prerequisites=prerequisites,
        completed=completed,
        busy=busy,
        profile=(term, current_credits, credit_cap),
        reviews=tuple(reviews),
        practical=frozenset({"C1", "C2", "C3", "C4"}),
    )
