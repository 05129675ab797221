"""Replaying a trajectory file headless, and finding one in it: what ``spinach --replay`` prints and what the
stepper's picker lists.

    trajectories = load("spinach_output_test.log")          # engines.spinach.trajectory
    t = pick(trajectories, 2)                                # the 2nd (1-based); ReplayError if there is none
    for line in replay_lines(t, 2, len(trajectories)): ...   # every step, complete, and the logged answer
    matching(trajectories, "witcher")                        # the positions (0-based) whose text matches
    summary(t)                                               # "7 steps · stop · 1 row"

Nothing here runs a query: the rows shown are the ones the file holds (SPINACH ran them on Wikidata).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from engines.errors import EngineError
from engines.spinach.trajectory import Step, Trajectory, result_bindings


class ReplayError(EngineError):
    """The trajectory asked for is not in the file."""


def pick(trajectories: Sequence[Trajectory], index: int) -> Trajectory:
    """The ``index``-th trajectory (1-based, as listed)."""
    if not trajectories:
        raise ReplayError("The file holds no trajectory.")
    if not 1 <= index <= len(trajectories):
        raise ReplayError(
            f"There is no trajectory {index}: the file holds {len(trajectories)} (1 to {len(trajectories)})."
        )
    return trajectories[index - 1]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def ended(trajectory: Trajectory) -> str:
    """How the run ended, as far as the file says: stop | budget | cancelled | error, or for a SPINACH log
    (which does not say) stopped with a final query, or none logged."""
    if trajectory.finish != "imported":
        return trajectory.finish or "?"
    if trajectory.final_sparql:
        return "stopped with a final query"
    return "no final query logged"


def answer_text(trajectory: Trajectory) -> str:
    """What the file holds as the answer: ``1 row``, ``no rows`` (the final query returned none), or ``none
    logged`` (no final query, or a SPINACH log that holds the final query but not its result)."""
    if trajectory.answer:
        return _plural(len(trajectory.answer), "row")
    if not trajectory.final_sparql or (trajectory.finish == "imported" and not trajectory.answer_logged):
        return "none logged"
    return "no rows"


def summary(trajectory: Trajectory) -> str:
    """One line: the steps, how it ended, the answer's rows."""
    rows = answer_text(trajectory)
    parts = [_plural(len(trajectory.steps), "step"), ended(trajectory)]
    if trajectory.final_sparql:
        parts.append(rows)
    if trajectory.rollbacks:
        parts.insert(1, f"{trajectory.rollbacks} rolled back")
    return " · ".join(parts)


def matching(trajectories: Sequence[Trajectory], text: str) -> list[int]:
    """Positions (0-based) of the trajectories whose question (or final query) holds every word of ``text``
    (case folded); a number alone matches that position (1-based) or a question holding the number."""
    words = text.casefold().split()
    number = int(text) if text.strip().isdigit() else None
    out: list[int] = []
    for n, t in enumerate(trajectories):
        if number is not None:  # a number: that position, or a question that holds it (not a query's IDs)
            hit = number == n + 1 or text.strip() in t.question
        else:
            hit = all(w in f"{t.question}\n{t.final_sparql or ''}".casefold() for w in words)
        if hit:
            out.append(n)
    return out


def cell_text(cell: Any) -> str:
    """A SPARQL JSON term as text: its value (an entity's IRI shortened to its ID)."""
    if not isinstance(cell, Mapping):
        return "" if cell is None else str(cell)
    value = str(cell.get("value", ""))
    if cell.get("type") == "uri" and value.startswith("http://www.wikidata.org/entity/"):
        return value.rsplit("/", 1)[-1]
    return value


def rows_lines(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """Every row as ``col = value · col = value`` lines (all of them: a replay is complete)."""
    cols = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
    return [indent + " · ".join(f"{c} = {cell_text(r.get(c))}" for c in cols if c in r) for r in rows]


def step_lines(step: Step) -> list[str]:
    mark = "↺" if step.rolled_back else " "
    head = f"[{step.index:2d}]{mark} {step.action}"
    if step.feedback:
        head += f"  · {step.feedback.replace('_', ' ')}"
        if step.row_count is not None and step.feedback == "rows":
            head += f" · {_plural(step.row_count, 'row')}"
    if step.rolled_back:
        head += f"  · rolled back ({step.rollback_reason or '?'})"
    out = [head, f"      Thought: {step.thought or '—'}"]
    arg = step.argument.splitlines() or [""]
    out.append(f"      Argument: {arg[0]}")
    out += [f"                {line}" for line in arg[1:]]
    obs = step.observation.splitlines()
    if obs:
        out.append("      Observation:")
        out += [f"      │ {line}" for line in obs]
    else:
        out.append("      Observation: (none)")
    if step.logged is not None:
        out += _record_lines(step.logged, "      ")
    for key, value in step.extra.items():
        text = value if isinstance(value, str) else repr(value)
        lines = text.splitlines() or [""]
        out.append(f"      {key}: {lines[0]}")
        out += [f"      │ {line}" for line in lines[1:]]
    return out


def _record_lines(record: Mapping[str, Any], indent: str, *, rows_too: bool = True) -> list[str]:
    """A logged query record: its status, its preverbalized form, its IDs' labels, its logged rows."""
    out: list[str] = []
    status = record.get("execution_status")
    columns, rows = result_bindings(record.get("execution_result"))
    if rows_too:
        what = "no result logged" if rows is None else _plural(len(rows), "row")
        out.append(f"{indent}Logged result: {what}" + (f" (status {status})" if status else ""))
    elif status:
        out.append(f"{indent}Logged status: {status}")
    labels = record.get("label_to_id_map")
    if isinstance(labels, Mapping) and labels:
        out.append(f"{indent}IDs: " + " · ".join(f"{v} = {k}" for k, v in labels.items()))
    pre = record.get("preverbalized")
    if isinstance(pre, str) and pre.strip() and pre.strip() != str(record.get("sparql", "")).strip():
        out.append(f"{indent}Preverbalized:")
        out += [f"{indent}│ {line}" for line in pre.splitlines()]
    if rows and rows_too:
        out += rows_lines(columns, rows, indent + "│ ")
    for key, value in record.items():
        if key not in ("sparql", "preverbalized", "execution_result", "execution_status", "label_to_id_map"):
            out.append(f"{indent}{key}: {value!r}")
    return out


def replay_lines(trajectory: Trajectory, index: int, of: int) -> Iterator[str]:
    """The whole trajectory as text: its question, every step in full, the final query and its rows."""
    yield f"Trajectory {index} of {of}: {trajectory.question}"
    policy = trajectory.policy or "?"
    engine = trajectory.meta.get("engine")
    yield f"  policy {policy}" + (f" ({engine})" if engine else "") + f" · {summary(trajectory)}"
    for key, value in trajectory.meta.items():
        if key != "engine":
            yield f"  {key}: {value if isinstance(value, str) else repr(value)}"
    yield ""
    for step in trajectory.steps:
        yield from step_lines(step)
    yield ""
    unused = len(trajectory.generated_sparqls) - sum(1 for s in trajectory.steps if s.logged is not None)
    if trajectory.generated_sparqls:
        yield f"generated queries: {len(trajectory.generated_sparqls)}" + (
            f" ({unused} not matched to a step: their actions were rolled back)" if unused > 0 else ""
        )
    if trajectory.error:
        yield f"error: {trajectory.error}"
    if trajectory.final_sparql:
        yield "final SPARQL:"
        yield from ("  " + line for line in trajectory.final_sparql.splitlines())
    else:
        yield "final SPARQL: none logged" + (
            " (SPINACH's log holds no final_sparql for this question; the queries above are the ones it ran)"
            if trajectory.finish == "imported" and any(s.action == "execute_sparql" for s in trajectory.steps)
            else ""
        )
    if trajectory.final is not None:
        yield from _record_lines(trajectory.final, "  ", rows_too=False)
    origin = " (as logged: not re-run)" if trajectory.answer_logged else ""
    yield f"answer: {answer_text(trajectory)}{origin}"
    if trajectory.answer:
        yield from rows_lines(trajectory.columns, trajectory.answer)


def replay_json(trajectories: Sequence[Trajectory], index: int | None, source: str) -> dict[str, Any]:
    """``{"file", "count", "trajectories": [{"index", ...the trajectory's JSON, "final_logged"}]}``: all, or only
    ``index``.  ``final_logged`` is false when the file holds no final query (``final_sparql`` is then null and
    ``answer`` empty: nothing was logged, which is not an answer with no rows)."""
    chosen = [(index, pick(trajectories, index))] if index is not None else list(enumerate(trajectories, 1))
    return {
        "file": source,
        "count": len(trajectories),
        "trajectories": [{"index": n, **t.to_json(), "final_logged": bool(t.final_sparql)} for n, t in chosen],
    }


__all__ = [
    "ReplayError",
    "answer_text",
    "cell_text",
    "ended",
    "matching",
    "pick",
    "replay_json",
    "replay_lines",
    "rows_lines",
    "step_lines",
    "summary",
]
