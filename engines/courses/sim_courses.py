"""The simulated parser and reply writer for the course world (notes 002-003).

The course assistant's tasks (engines/courses/tasks.py) are simulated with it.  Like
``engines.sql.sim_parser`` it is shown only the utterance, the dialogue history and the
schema text — never the world's hidden truth (``CourseWorld.practical`` is
evaluator data).  It writes the notes' queries:

* "which courses can I take / fit my schedule / don't conflict" — the ``NOT EXISTS``
  conflict check over the offerings of the wanted term (the profile's, unless the
  utterance names one); with "practical" it joins ``course_reviews`` and adds
  ``answer(r.reviews, 'is it practical?') = 'Yes'`` (rows whose answer is unknown come
  back from SUQL as *to verify*);
* "is C3 practical?" — ``answer()`` on that course's reviews;
* "when does C1 meet?" — the meetings of its offering;
* "prerequisites of C3" — the three-state prerequisite query;
* "how many courses have reviews?" — ``COUNT(DISTINCT ...)``: courses, not review rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import SupportsInt, cast

from engines.llm.protocol import Results, Turn

PRACTICAL = "is it practical?"
TERMS = ("autumn", "winter", "spring", "summer")

_COURSE_WORDS = re.compile(
    r"\b(courses?|class(es)?|c\d+|prereq\w*|schedule|practical|hands[- ]on|meets?|meeting|credits?|"
    r"autumn|fall|winter|spring|summer|term|enrol\w*|take)\b",
    re.IGNORECASE,
)
_CHITCHAT = re.compile(r"^(thanks|thank you|thx|great,? thanks|hi|hello|hey|bye|goodbye)\b", re.IGNORECASE)
_COURSE_ID = re.compile(r"\b(c\d+)\b", re.IGNORECASE)
_FIT = re.compile(
    r"fit|conflict|clash|can i take|could i take|available|work with my|schedule|which courses|what courses",
    re.IGNORECASE,
)
_PRACTICAL = re.compile(r"practical|hands[- ]on|applied", re.IGNORECASE)
_MEET = re.compile(r"\b(when|meets?|meeting|times?|days?)\b", re.IGNORECASE)
_PREREQ = re.compile(r"prereq|require", re.IGNORECASE)
_COUNT = re.compile(r"how many|number of|count", re.IGNORECASE)

CONFLICT = (
    "NOT EXISTS (SELECT 1 FROM meetings AS m JOIN busy AS b ON m.day = b.day "
    "WHERE m.offering_id = o.id AND m.start_min < b.end_min AND b.start_min < m.end_min)"
)


def route(utterance: str, history: Sequence[Turn], schema: str) -> tuple[bool, str]:
    low = utterance.strip().lower()
    if not low:
        return False, "the message is empty"
    if _CHITCHAT.match(low):
        return False, "small talk: nothing to look up"
    words = sorted({m.group(0).lower() for m in _COURSE_WORDS.finditer(low)})
    if words:
        return True, "mentions " + ", ".join(words) + ": a course lookup"
    return False, "names nothing in the course database"


def _term(low: str) -> str | None:
    if "fall" in low.split():
        return "autumn"
    return next((t for t in TERMS if t in low), None)


def parse(utterance: str, history: Sequence[Turn], schema: str) -> str:
    """One SQL (SUQL) statement for this turn."""
    low = utterance.lower()
    ids = [m.group(1).upper() for m in _COURSE_ID.finditer(utterance)]
    practical = bool(_PRACTICAL.search(low))
    if _COUNT.search(low):
        if "review" in low:
            return (
                "SELECT COUNT(DISTINCT c.id) AS course_count FROM courses AS c JOIN reviews AS r ON r.course_id = c.id"
            )
        return "SELECT COUNT(DISTINCT c.id) AS course_count FROM courses AS c JOIN offerings AS o ON o.course_id = c.id"
    if ids and _PREREQ.search(low):
        return (
            "SELECT p.course_id, p.prerequisite_id, COALESCE(c.status::VARCHAR, 'unknown') AS status "
            "FROM prerequisites AS p LEFT JOIN completed AS c ON c.course_id = p.prerequisite_id "
            f"WHERE p.course_id IN ({_listed(ids)}) ORDER BY p.course_id, p.prerequisite_id"
        )
    if ids and practical:
        return (
            f"SELECT course_id, answer(reviews, '{PRACTICAL}') AS practical FROM course_reviews "
            f"WHERE course_id IN ({_listed(ids)}) ORDER BY course_id"
        )
    if ids and _MEET.search(low):
        return (
            "SELECT o.course_id, o.term, m.day, m.start_min, m.end_min FROM offerings AS o "
            f"JOIN meetings AS m ON m.offering_id = o.id WHERE o.course_id IN ({_listed(ids)}) "
            "ORDER BY o.course_id, m.day, m.start_min"
        )
    if ids:
        return (
            f"SELECT id AS course_id, title, credits, description FROM courses WHERE id IN ({_listed(ids)}) ORDER BY id"
        )
    if _FIT.search(low) or practical or _term(low):
        term = _term(low)
        wanted = f"o.term = '{term}'" if term else "o.term::VARCHAR = p.term"
        # with answer() the rows are labelled by the first table's course_id (no title join)
        tables = (
            "offerings AS o JOIN course_reviews AS r ON r.course_id = o.course_id"
            if practical
            else ("offerings AS o JOIN courses AS c ON c.id = o.course_id")
        )
        if not term:
            tables += ", profile AS p"
        where = [wanted]
        if _FIT.search(low):
            where.append(CONFLICT)
        if practical:
            where.append(f"answer(r.reviews, '{PRACTICAL}') = 'Yes'")
        columns = "o.course_id" if practical else "o.course_id, c.title"
        return f"SELECT {columns} FROM {tables} WHERE {' AND '.join(where)} ORDER BY o.course_id"
    return "SELECT id AS course_id, title, credits FROM courses ORDER BY id"


def _listed(ids: Sequence[str]) -> str:
    return ", ".join(f"'{i}'" for i in dict.fromkeys(ids))


# --- replies -------------------------------------------------------------------------------


def direct(utterance: str) -> str:
    low = utterance.strip().lower()
    if re.match(r"^(thanks|thank you|thx|great,? thanks)", low):
        return "You're welcome! Ask me about courses any time."
    if re.match(r"^(hi|hello|hey)\b", low):
        return "Hello! Ask me which courses fit your schedule, whether a course is practical, or about prerequisites."
    if re.match(r"^(bye|goodbye)\b", low):
        return "Goodbye!"
    return "I can answer questions about the courses in the database; I don't have a good answer to that one."


def is_course_result(results: Results) -> bool:
    return "course_id" in results.columns or "course_count" in results.columns


def reply(utterance: str, results: Results) -> str:
    lead = results.readback.rstrip(".")
    cols = results.columns
    if results.total == 0:
        return f"{lead}, and found no courses."
    if cols == ("course_count",):
        return f"{lead}: {results.rows[0][0]} courses (each course counted once, however many reviews it has)."
    items = [_describe(cols, row) for row in results.rows[:8]]
    more = results.total - len(items)
    found = "1 result" if results.total == 1 else f"{results.total} results"
    return f"{lead}, and found {found}: " + "; ".join(items) + (f"; and {more} more" if more > 0 else "") + "."


def _clock(minutes: object) -> str:
    m = int(cast(SupportsInt, minutes))  # a row's start_min/end_min: an integer column
    return f"{m // 60:02d}:{m % 60:02d}"


def _describe(columns: Sequence[str], row: Sequence[object]) -> str:
    rec = dict(zip(columns, row))
    course = rec.pop("course_id", "?")
    if "practical" in rec:
        value = rec["practical"]
        if value is None:
            return f"{course}: unknown — the reviews do not say whether it is practical (NULL, not No)"
        return f"{course}: practical? {value}"
    if "start_min" in rec and "end_min" in rec:
        return (
            f"{course} meets {rec.get('day')} {_clock(rec['start_min'])}-{_clock(rec['end_min'])} ({rec.get('term')})"
        )
    if "prerequisite_id" in rec:
        status = {"done": "completed", "not_done": "not completed", "unknown": "unknown whether completed"}.get(
            str(rec["status"]), str(rec["status"])
        )
        return f"{course} requires {rec['prerequisite_id']} ({status})"
    parts = [str(v) for k, v in rec.items() if k != "description" and v not in (None, "")]
    return f"{course}" + (f" ({', '.join(parts)})" if parts else "")
