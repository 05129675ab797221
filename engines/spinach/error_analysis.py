"""Why a knowledge-graph answer failed (lecture 8 §4.4): the error classes, read from a trajectory's final query
against the gold query.

The lecture's five classes come first (:data:`LECTURE_CLASSES`); the others name what the reader of a
trajectory can also tell apart (an ambiguous label, a probe named as the answer, no answer at all).
"""

from __future__ import annotations

import re
from typing import Any

from engines.spinach.scoring import answer_step
from engines.spinach.shape import Shape, query_shape

ERROR_CLASSES = (
    "complex clause",
    "property / structure",
    "format",
    "extra condition",
    "ran out of actions",
    "wrong entity",
    "a probe as the answer",
    "no answer",
    "other",
)
LECTURE_CLASSES = ERROR_CLASSES[:5]


def _probe_answer(trajectory: Any, final: Shape) -> bool:
    """The answer is a probe: a fragment with fewer triple patterns than a query run before it.  The answer is
    the query the agent's rule picks (:func:`engines.spinach.scoring.answer_step`: the query the stop names), so a
    check or a debugging fragment the stop names becomes the answer."""
    state = list(trajectory.state)
    answer = answer_step(trajectory)
    if answer is None:  # no stop named a query with rows: the latest step that ran the final query, if any
        final_text = " ".join((trajectory.final_sparql or "").split())
        answer = next(
            (s for s in reversed(state) if s.action == "execute_sparql" and " ".join(s.argument.split()) == final_text),
            None,
        )
    if answer is None:
        return False
    until = next(i for i, s in enumerate(state) if s is answer)
    for s in state[:until]:
        if s.action != "execute_sparql":
            continue
        try:
            fuller = query_shape(s.argument).counts.get("triples", 0) > final.counts.get("triples", 0)
        except Exception:  # a query with a syntax error: compare the lengths of the texts
            fuller = len(s.argument) > len(trajectory.final_sparql or "")
        if fuller:
            return True
    return False


def _modified_steps(paths: frozenset[str]) -> set[str]:
    """The properties that stand in a path with a modifier (``P131`` of ``wdt:P131*/wdt:P17``), read from the paths
    the parse tree gave."""
    return {pid for p in paths for pid in re.findall(r":(P\d+)[*+?]", p)}


def classify_error(trajectory: Any, gold_sparql: str) -> str:
    """Why an answer failed, from the trajectory (its steps and final query) against the gold query.

    In this order: the budget stopped it (ran out of actions); no query returned rows (no answer); the answer is
    a fragment smaller than a query run before it — a check or a debugging probe run last (a probe as the answer); only label columns (format —
    the answer has no entities, F1 is 0 whatever else); a gold entity is missing (wrong entity — an ambiguous
    label); the only gold properties missing are steps of a path with a modifier, nothing else added (complex
    clause: the P131* of the chain left out — a difference is read as the smallest change that explains it, a path
    before a property set); every gold property is there and more (extra condition); the properties differ (property / structure:
    a sibling property, the wrong side of a one-sided relation, a class written as an instance, a missing step of
    the P131 chain); property paths, qualifiers, ORDER BY, LIMIT, COUNT, GROUP BY or FILTER differ (complex clause
    — the §1.4 list: paths, qualifiers, grouping, sorting); the columns differ (format); otherwise other.
    """
    if trajectory.finish == "budget":
        return "ran out of actions"
    if not trajectory.final_sparql:
        return "no answer"
    try:
        got, want = query_shape(trajectory.final_sparql), query_shape(gold_sparql)
    except Exception:  # a final query the reader cannot parse
        return "other"
    if _probe_answer(trajectory, got):
        return "a probe as the answer"
    if got.label_only:
        return "format"
    if not want.entities <= got.entities:
        return "wrong entity"
    missing = want.properties - got.properties
    if missing and got.properties <= want.properties and missing <= _modified_steps(want.paths):
        return "complex clause"
    if want.properties < got.properties:
        return "extra condition"
    if want.properties != got.properties:
        return "property / structure"
    keys = ("order", "limit", "aggregate", "group", "filter", "having")
    if (
        want.paths != got.paths
        or want.qualifiers != got.qualifiers
        or (want.order, want.limit) != (got.order, got.limit)
        or any(want.counts.get(k, 0) != got.counts.get(k, 0) for k in keys)
    ):
        return "complex clause"
    if want.columns != got.columns:
        return "format"
    return "other"


def saw_no_error(trajectory: Any) -> bool:
    """No executed query in the trajectory failed: the agent never saw an error signal."""
    return all(s.feedback == "rows" for s in trajectory.state if s.action == "execute_sparql")


__all__ = ["ERROR_CLASSES", "LECTURE_CLASSES", "classify_error", "saw_no_error"]
