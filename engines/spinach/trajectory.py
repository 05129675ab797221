"""A SPINACH trajectory is data: every step the agent took, saved and loaded as JSON.

:class:`Trajectory` keeps every step in the order it was taken, rolled-back steps included
(marked, with the reason), so a stepper can replay the run exactly; :meth:`Trajectory.state`
is what the policy saw at the end (the steps still in the state).  :func:`save` / :func:`load`
write and read our JSON; :func:`import_spinach_log` reads SPINACH's own logs — a JSON list of
states, each with ``question`` and ``actions`` of ``thought``, ``action_name``,
``action_argument`` and ``observation`` (the format of stanford-oval/spinach's parser state).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from engines.errors import EngineError
from engines.spinach.tasks import PolicyStep

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

    def as_policy_step(self) -> PolicyStep:
        return PolicyStep(self.thought, self.action, self.argument, self.observation)

    def call(self) -> str:
        return f"{self.action}({self.argument})"


@dataclass(frozen=True)
class Trajectory:
    question: str
    steps: tuple[Step, ...] = ()
    final_sparql: str | None = None
    answer: tuple[Mapping[str, Any], ...] = ()  # SPARQL JSON bindings of the final query
    columns: tuple[str, ...] = ()
    finish: str = ""  # stop | budget | cancelled | error | imported
    policy: str = ""
    error: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

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

    def with_steps(self, steps: Iterable[Step]) -> Trajectory:
        return replace(self, steps=tuple(steps))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "question": self.question,
            "policy": self.policy,
            "finish": self.finish,
            "error": self.error,
            "final_sparql": self.final_sparql,
            "columns": list(self.columns),
            "answer": [dict(b) for b in self.answer],
            "steps": [asdict(s) for s in self.steps],
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Trajectory:
        if not isinstance(data, Mapping) or "question" not in data or "steps" not in data:
            raise TrajectoryError('Not a trajectory: expected an object with "question" and "steps".')
        try:
            steps = tuple(Step(**{k: v for k, v in s.items() if k in Step.__dataclass_fields__}) for s in data["steps"])
        except TypeError as e:
            raise TrajectoryError(f"A step of the trajectory is malformed: {e}.") from None
        for s in steps:
            if s.action not in ACTIONS:
                raise TrajectoryError(f"Step {s.index} has an unknown action {s.action!r}.")
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
        )


def save(trajectory: Trajectory, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(trajectory.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load(path: str | Path) -> list[Trajectory]:
    """Our trajectory files (one object or a list) or a SPINACH log (a list of states)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise TrajectoryError(f"Cannot read {path}: {e.strerror or e}.") from None
    except json.JSONDecodeError as e:
        raise TrajectoryError(f"{path} is not JSON: {e.msg} at line {e.lineno}.") from None
    items = data if isinstance(data, list) else [data]
    if items and all(isinstance(x, Mapping) and "actions" in x and "steps" not in x for x in items):
        return import_spinach_log(items)
    return [Trajectory.from_json(x) for x in items]


def import_spinach_log(states: Sequence[Mapping[str, Any]]) -> list[Trajectory]:
    """SPINACH's states (``question`` + ``actions``) as trajectories, one per state."""
    out: list[Trajectory] = []
    for n, state in enumerate(states):
        if not isinstance(state, Mapping) or "question" not in state or not isinstance(state.get("actions"), list):
            raise TrajectoryError(f'State {n} of the SPINACH log has no "question" and "actions" list.')
        steps: list[Step] = []
        for i, a in enumerate(state["actions"], start=1):
            if not isinstance(a, Mapping):
                raise TrajectoryError(f"Action {i} of state {n} is not an object.")
            name = str(a.get("action_name") or "")
            if name not in ACTIONS:
                raise TrajectoryError(f"Action {i} of state {n} has an unknown action_name {name!r}.")
            steps.append(
                Step(
                    i,
                    str(a.get("thought") or ""),
                    name,
                    str(a.get("action_argument") or ""),
                    str(a.get("observation") or ""),
                    in_state=i,
                    total=i,
                )
            )
        final = state.get("final_sparql")
        if isinstance(final, Mapping):
            final = final.get("sparql")
        if final is None:
            final = next((s.argument for s in reversed(steps) if s.action == "execute_sparql"), None)
        out.append(
            Trajectory(
                str(state["question"]), tuple(steps), final_sparql=final, finish="imported", policy="spinach-log"
            )
        )
    return out
