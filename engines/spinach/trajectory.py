"""A SPINACH trajectory is data: every step the agent took, saved and loaded as JSON.

:class:`Trajectory` keeps every step in the order it was taken, rolled-back steps included
(marked, with the reason), so a stepper can replay the run exactly; :meth:`Trajectory.state`
is what the policy saw at the end (the steps still in the state).  :func:`save` / :func:`load`
write and read our JSON; :func:`import_spinach_log` reads SPINACH's own logs — a JSON list of
states, each with ``question`` and ``actions`` of ``thought``, ``action_name``,
``action_argument`` and ``observation`` (the format of stanford-oval/spinach's parser state), and
usually ``generated_sparqls`` and ``final_sparql``: each query as SPINACH ran it on Wikidata, with its
``execution_result`` (SPARQL JSON bindings, or a boolean for ASK) and ``execution_status``.

Nothing the log holds is dropped: each ``execute_sparql`` step keeps the record of the query it ran
(:attr:`Step.logged`: the rows, the status, the preverbalized query) and gets its feedback and row count
from it; the trajectory keeps every generated query (:attr:`Trajectory.generated_sparqls`), the final
query's record (:attr:`Trajectory.final`) and its rows as the answer (:attr:`Trajectory.answer_logged`:
the rows are SPINACH's, not to be re-run on a graph that is not Wikidata), and every other field of the
state (``engine``, ``action_counter``, ``response``, ...) in :attr:`Trajectory.meta`.  A field of an
action this module does not model (``observation_markdown``, ...) stays in :attr:`Step.extra`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.errors import EngineError
from engines.jsonable import JsonShape, fields_json
from engines.spinach.steps import PolicyStep

ACTIONS = ("search_wikidata", "get_wikidata_entry", "get_property_examples", "execute_sparql", "stop")
FORMAT = "cs224v-spinach-trajectory/1"


class TrajectoryError(EngineError):
    """A trajectory file cannot be read."""


@dataclass(frozen=True)
class Step:
    index: int  # 1-based, in the order taken (rolled-back steps keep their number)
    thought: str
    action: str  # one of ACTIONS
    argument: str
    observation: str
    feedback: str | None = None  # execute_sparql: rows | empty | syntax_error | timeout | refused
    row_count: int | None = None  # execute_sparql: rows returned
    in_state: int = 0  # actions in the state after this step (the 15-action budget)
    total: int = 0  # actions taken in all after this step (the 30-action budget)
    rolled_back: bool = False
    rollback_reason: str | None = None  # repeat | premature stop
    logged: Mapping[str, Any] | None = None  # a SPINACH log's record of the query this step ran, as logged
    extra: Mapping[str, Any] = field(default_factory=dict)  # fields of a logged action not modelled above

    @property
    def logged_rows(self) -> tuple[Mapping[str, Any], ...] | None:
        """The rows SPINACH's log holds for this step's query (SPARQL JSON bindings; None: none logged)."""
        if self.logged is None:
            return None
        return result_bindings(self.logged.get("execution_result"))[1]

    def as_policy_step(self) -> PolicyStep:
        return PolicyStep(self.thought, self.action, self.argument, self.observation)

    def call(self) -> str:
        return f"{self.action}({self.argument})"


@dataclass(frozen=True)
class Trajectory:
    # the order a saved trajectory has always had its keys in
    __json__ = JsonShape(
        first=("question", "policy", "finish", "error", "final_sparql", "columns", "answer", "steps", "meta")
    )

    question: str
    steps: tuple[Step, ...] = ()
    final_sparql: str | None = None
    answer: tuple[Mapping[str, Any], ...] = ()  # SPARQL JSON bindings of the final query
    columns: tuple[str, ...] = ()
    finish: str = ""  # stop | declined (a stop with no answer) | budget | cancelled | error | imported
    policy: str = ""
    error: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    generated_sparqls: tuple[Mapping[str, Any], ...] = ()  # a SPINACH log's queries, each as logged
    final: Mapping[str, Any] | None = None  # a SPINACH log's final_sparql record, as logged
    answer_logged: bool = False  # ``answer`` is the logged result of the final query: never re-run it

    @property
    def state(self) -> tuple[Step, ...]:
        """The steps the policy saw last: every step not rolled back."""
        return tuple(s for s in self.steps if not s.rolled_back)

    @property
    def actions_in_state(self) -> int:
        return len(self.state)

    @property
    def rollbacks(self) -> int:
        return sum(1 for s in self.steps if s.rolled_back)

    def to_json(self) -> dict[str, Any]:
        """Its fields (the steps' too) after the file format's name, the one key that is not a field."""
        return {"format": FORMAT, **fields_json(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Trajectory:
        if not isinstance(data, Mapping) or "question" not in data or "steps" not in data:
            raise TrajectoryError('Not a trajectory: expected an object with "question" and "steps".')
        if not isinstance(data["steps"], list) or not all(isinstance(s, Mapping) for s in data["steps"]):
            raise TrajectoryError('A trajectory\'s "steps" must be a list of objects.')
        try:
            steps = tuple(Step(**{k: v for k, v in s.items() if k in Step.__dataclass_fields__}) for s in data["steps"])
        except TypeError as e:
            raise TrajectoryError(f"A step of the trajectory is malformed: {e}.") from None
        for s in steps:
            if s.action not in ACTIONS:
                raise TrajectoryError(f"Step {s.index} has an unknown action {s.action!r}.")
            for name in ("thought", "action", "argument", "observation"):
                if not isinstance(getattr(s, name), str):
                    raise TrajectoryError(f'Step {s.index}: "{name}" must be a string.')
            if not isinstance(s.index, int) or isinstance(s.index, bool):
                raise TrajectoryError(f'A step\'s "index" must be a whole number, not {s.index!r:.40}.')
            if s.logged is not None and not isinstance(s.logged, Mapping):
                raise TrajectoryError(f'Step {s.index}: "logged" must be an object (a logged query record).')
            if not isinstance(s.extra, Mapping):
                raise TrajectoryError(f'Step {s.index}: "extra" must be an object.')
        for key, kind in (("meta", Mapping), ("final", Mapping), ("generated_sparqls", list), ("answer", list)):
            value = data.get(key)
            if value is not None and not isinstance(value, kind):
                raise TrajectoryError(
                    f'A trajectory\'s "{key}" must be {"an object" if kind is Mapping else "a list"}.'
                )
        for key in ("generated_sparqls", "answer"):
            if not all(isinstance(x, Mapping) for x in data.get(key) or ()):
                raise TrajectoryError(f'A trajectory\'s "{key}" must be a list of objects.')
        return cls(
            question=str(data["question"]),
            steps=steps,
            final_sparql=data.get("final_sparql"),
            answer=tuple(data.get("answer") or ()),
            columns=tuple(data.get("columns") or ()),
            finish=str(data.get("finish") or ""),
            policy=str(data.get("policy") or ""),
            error=data.get("error"),
            meta=dict(data.get("meta") or {}),
            generated_sparqls=tuple(data.get("generated_sparqls") or ()),
            final=data.get("final"),
            answer_logged=bool(data.get("answer_logged")),
        )


def save(trajectory: Trajectory, path: str | Path) -> Path:
    """Write ``trajectory`` as JSON to ``path``: to a temporary file beside it, moved over ``path`` only when
    complete (a failed write leaves the old file as it was, and a symlink at ``path`` is replaced, never
    written through)."""
    path = Path(path)
    text = json.dumps(trajectory.to_json(), indent=2, ensure_ascii=False) + "\n"
    fd, temp = tempfile.mkstemp(prefix=".cs224v-trajectory-", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)  # mkstemp makes it private; the file gets the usual permissions
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)
    return path


MAX_BYTES = 64 << 20
"""The default cap of :func:`load` (the setting ``input_file_max_mb``)."""


def load(path: str | Path, *, max_bytes: int = MAX_BYTES) -> list[Trajectory]:
    """Our trajectory files (one object or a list) or a SPINACH log (a list of states).

    At most ``max_bytes`` are read (a bigger file, or a stream such as ``/dev/zero``, is refused at the cap),
    and arrays and objects may nest at most :data:`engines.reading.MAX_JSON_DEPTH` levels: every way the file
    cannot be read is a :class:`TrajectoryError` naming it."""
    from engines.reading import MAX_JSON_DEPTH, TooLarge, read_capped, too_deep

    where = os.fsencode(path).decode("utf-8", "backslashreplace")
    try:
        raw = read_capped(path, max_bytes)
    except TooLarge as e:
        raise TrajectoryError(f"{where} is too large to read: {e.describe()} (CS224V_INPUT_FILE_MAX_MB).") from None
    except IsADirectoryError:
        raise TrajectoryError(f"Cannot read {where}: it is a folder, not a file.") from None
    except OSError as e:
        raise TrajectoryError(f"Cannot read {where}: {e.strerror or e}.") from None
    except ValueError as e:  # a NUL in the name
        raise TrajectoryError(f"Cannot read {where!r}: {e}.") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise TrajectoryError(f"{where} is not a text file (not UTF-8 JSON).") from None
    except json.JSONDecodeError as e:
        raise TrajectoryError(f"{where} is not JSON: {e.msg} at line {e.lineno}.") from None
    except RecursionError:  # far deeper than MAX_JSON_DEPTH
        data = None
        deep = True
    except MemoryError:
        raise TrajectoryError(f"{where} is too large to hold in memory once read.") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise TrajectoryError(f"{where}: a number is too long to read ({str(e).split(';')[0]}).") from None
    else:
        deep = too_deep(data)
    if deep:
        raise TrajectoryError(
            f"{where} nests arrays or objects more than {MAX_JSON_DEPTH} levels deep: it is not a trajectory file."
        )
    items = data if isinstance(data, list) else [data]
    if items and all(isinstance(x, Mapping) and "actions" in x and "steps" not in x for x in items):
        return import_spinach_log(items)
    if items and all(isinstance(x, Mapping) and "predicted_sparql" in x and "actions" not in x for x in items):
        raise TrajectoryError(
            f"{where} is SPINACH's evaluation output (predicted_sparql, f1), which holds no steps: "
            'open its run log instead (the .log file next to it, a JSON list of states with "actions").'
        )
    return [Trajectory.from_json(x) for x in items]


#: SPINACH's ``execution_status`` (wikidata_utils.SparqlExecutionStatus) as our feedback names.
_STATUS_FEEDBACK = {
    "syntax_error": "syntax_error",
    "timed_out": "timeout",
    "other_error": "error",
    "too_large": "error",
}
#: The observations SPINACH writes for a query without rows (part_to_whole_parser.execute_sparql),
#: for a log without the query's record.
_OBSERVATION_FEEDBACK = {
    "Query returned empty result.": "empty",
    "Query had syntax error.": "syntax_error",
    "Query execution timed out.": "timeout",
    "Query execution ran into an error.": "error",
}
_XSD_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"


def result_bindings(result: Any) -> tuple[tuple[str, ...], tuple[Mapping[str, Any], ...] | None]:
    """(columns, rows) of a logged ``execution_result``: SPARQL JSON bindings, a boolean (ASK: one ``ASK``
    row, as the endpoint gives it), or None / anything else (no rows logged: ``None``)."""
    if isinstance(result, bool):
        return ("ASK",), ({"ASK": {"type": "literal", "value": str(result).lower(), "datatype": _XSD_BOOLEAN}},)
    if isinstance(result, list) and all(isinstance(b, Mapping) for b in result):
        return tuple(dict.fromkeys(k for b in result for k in b)), tuple(result)
    return (), None


def _logged_feedback(record: Mapping[str, Any] | None, observation: str) -> tuple[str | None, int | None]:
    """(feedback, row count) of an ``execute_sparql`` step, from its logged record, else its observation."""
    if record is not None:
        status = str(record.get("execution_status") or "ok")
        if status in _STATUS_FEEDBACK:
            return _STATUS_FEEDBACK[status], None
        rows = result_bindings(record.get("execution_result"))[1]
        if rows is not None:
            return ("rows", len(rows)) if rows else ("empty", 0)
    known = _OBSERVATION_FEEDBACK.get(observation.strip())
    if known is not None:
        return known, 0 if known == "empty" else None
    return ("rows", None) if observation.strip() else (None, None)


def _record(value: Any, where: str) -> Mapping[str, Any] | None:
    """A logged query record (``{"sparql", "execution_result", ...}``); a bare string is the query alone."""
    if value is None:
        return None
    if isinstance(value, str):
        return {"sparql": value}
    if isinstance(value, Mapping) and isinstance(value.get("sparql", ""), str):
        return dict(value)
    raise TrajectoryError(f'{where} is not a query record (an object with a "sparql" string).')


def _query_record(value: Any, where: str) -> Mapping[str, Any]:
    """An entry of ``generated_sparqls``: a query record, which (unlike ``final_sparql``) cannot be null."""
    record = _record(value, where)
    if record is None:
        raise TrajectoryError(f'{where} is not a query record (an object with a "sparql" string).')
    return record


def _folded(query: str) -> str:
    return " ".join(query.split())


_ACTION_KEYS = ("thought", "action_name", "action_argument", "observation")
_STATE_KEYS = ("question", "actions", "generated_sparqls", "final_sparql")


def import_spinach_log(states: Sequence[Mapping[str, Any]]) -> list[Trajectory]:
    """SPINACH's states (``question`` + ``actions``) as trajectories, one per state, keeping everything
    the state holds (see the module docstring)."""
    out: list[Trajectory] = []
    for n, state in enumerate(states, start=1):
        where = f"State {n} of the SPINACH log"
        if not isinstance(state, Mapping) or "question" not in state or not isinstance(state.get("actions"), list):
            raise TrajectoryError(f'{where} has no "question" and "actions" list.')
        if not isinstance(state["question"], str):
            raise TrajectoryError(f'{where}: "question" is not a string.')
        generated_raw = state.get("generated_sparqls")
        generated_raw = [] if generated_raw is None else generated_raw
        if not isinstance(generated_raw, list):
            raise TrajectoryError(f'{where}: "generated_sparqls" is not a list.')
        generated = [
            _query_record(g, f"Query {i} of generated_sparqls in state {n}") for i, g in enumerate(generated_raw, 1)
        ]
        final = _record(state.get("final_sparql"), f"The final_sparql of state {n}")
        unused = list(range(len(generated)))
        steps: list[Step] = []
        for i, a in enumerate(state["actions"], start=1):
            if not isinstance(a, Mapping):
                raise TrajectoryError(f"Action {i} of state {n} is not an object.")
            name = str(a.get("action_name") or "")
            if name not in ACTIONS:
                raise TrajectoryError(f"Action {i} of state {n} has an unknown action_name {name!r}.")
            for key in ("thought", "action_argument", "observation"):
                if a.get(key) is not None and not isinstance(a[key], str):
                    raise TrajectoryError(f'Action {i} of state {n}: "{key}" is not a string.')
            argument = a.get("action_argument") or ""
            observation = a.get("observation") or ""
            record = feedback = rows = None
            if name == "execute_sparql":
                # SPINACH sets the action's argument to the query it ran, so the record is found by its text
                k = next((k for k in unused if _folded(generated[k].get("sparql") or "") == _folded(argument)), None)
                if k is not None:
                    unused.remove(k)
                    record = generated[k]
                feedback, rows = _logged_feedback(record, observation)
            steps.append(
                Step(
                    i,
                    a.get("thought") or "",
                    name,
                    argument,
                    observation,
                    feedback=feedback,
                    row_count=rows,
                    in_state=i,
                    total=i,
                    logged=record,
                    extra={k: v for k, v in a.items() if k not in _ACTION_KEYS},
                )
            )
        # the final query is the one SPINACH logged, or none: a query the agent merely ran last is not its answer
        final_query = final.get("sparql") if final is not None else None
        columns: tuple[str, ...] = ()
        answer: tuple[Mapping[str, Any], ...] | None = None
        if final is not None and "execution_result" in final:
            columns, answer = result_bindings(final["execution_result"])
        out.append(
            Trajectory(
                state["question"],
                tuple(steps),
                final_sparql=final_query,
                answer=answer or (),
                columns=columns if answer else (),
                finish="imported",
                policy="spinach-log",
                meta={k: v for k, v in state.items() if k not in _STATE_KEYS},
                generated_sparqls=tuple(g for g in generated if g is not None),
                final=final,
                answer_logged=answer is not None,
            )
        )
    return out
