"""The Lab's framework: an experiment is a named function that runs the engines and returns a table.

    Experiment(name, lecture, title, section, caption, fn, full={...}, small={...})
        .run(size="full" | "small", params=None, *, progress=None, cancel=None, settings=None) -> Table

``fn(ctx)`` receives a :class:`RunContext`: the parameters of the run (the experiment's defaults for
the size, updated with ``params``), a progress callback, the cancel flag, an LLM built from the
settings and the restaurant world in a sandbox.  It returns a :class:`Table` — columns, rows, notes
and optionally a :class:`Chart` for a tab to draw.  Nothing here imports textual: the Lab tab runs
``Experiment.run`` in a worker, shows ``progress(done, total, message)`` and sets the cancel flag.

Every number in a table is measured by running the engines; the notes say, claim by claim, whether
the shape the lecture notes report holds here (:meth:`RunContext.claim`), and why not when it does not.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from engines.errors import Cancelled, EngineError
from engines.jsonable import Jsonable, JsonShape, fields_json

if TYPE_CHECKING:  # what the resources are; each is imported when an experiment asks for it
    from engines.llm.client import LLM
    from engines.settings import Settings
    from engines.sql.sandbox import Sandbox
    from worlds.restaurants import RestaurantWorld

Progress = Callable[[int, int, str], None]
"""``progress(done, total, message)``: ``done`` of ``total`` steps of the running experiment."""

Size = Literal["full", "small"]

T = TypeVar("T")


def _no_progress(_done: int, _total: int, _message: str) -> None:
    pass


# --- what an experiment returns ------------------------------------------------------------------


@dataclass(frozen=True)
class Series(Jsonable):
    """One named series of a chart: a value per category (``None`` where there is none)."""

    name: str
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class Chart(Jsonable):
    """What a tab draws beside the table: a bar chart (categories on x, one bar per series in each
    category) or a line chart (``x`` are the points of the x axis, in order)."""

    kind: Literal["bar", "line"]
    title: str
    x_label: str
    y_label: str
    x: tuple[str, ...]
    series: tuple[Series, ...]

    def __post_init__(self) -> None:
        for s in self.series:
            if len(s.values) != len(self.x):
                raise ValueError(f"series {s.name!r} has {len(s.values)} values for {len(self.x)} x points")


@dataclass(frozen=True)
class Table:
    # The cells as the Lab writes any value (a NaN or infinity as null, an unknown object as its text); a
    # caption only when set, a chart only when there is one.
    __json__ = JsonShape(
        first=("columns", "rows", "notes", "caption", "chart"),
        omit_empty=frozenset({"caption", "chart"}),
        leaf=lambda v: jsonable(v),
    )

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    notes: tuple[str, ...] = ()
    chart: Chart | None = None
    caption: str = ""  # the experiment's caption with the parameters this table ran with (set by Experiment.run)

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"a row has {len(row)} cells for {len(self.columns)} columns: {row!r}")

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [row[i] for row in self.rows]

    def row(self, first_cell: Any) -> dict[str, Any]:
        """The row whose first cell is ``first_cell``, as a dict."""
        for row in self.rows:
            if row[0] == first_cell:
                return dict(zip(self.columns, row))
        raise KeyError(first_cell)

    def to_json(self, name: str) -> dict[str, Any]:
        """Its fields after the experiment's ``name`` (the one key that is not a field)."""
        return {"name": name, **fields_json(self)}


def _joined(values: Sequence[Any]) -> str:
    """(10, 30) -> "10 and 30"; (8, 25, 40) -> "8, 25 and 40"."""
    items = [str(v) for v in values]
    if len(items) <= 1:
        return items[0] if items else "none"
    return ", ".join(items[:-1]) + " and " + items[-1]


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)


# --- running -------------------------------------------------------------------------------------


class RunContext:
    """What an experiment's function is given.  Resources it opens are closed when the run ends."""

    def __init__(
        self,
        experiment: Experiment,
        params: Mapping[str, Any],
        size: Size,
        progress: Progress,
        cancel: threading.Event | None,
        settings: Settings,
        stack: ExitStack,
    ) -> None:
        self.experiment = experiment
        self.params = dict(params)
        self.size = size
        self._progress = progress
        self.cancel = cancel
        self.settings = settings
        self._stack = stack
        self._notes: list[str] = []
        self._restaurants: tuple[RestaurantWorld, Sandbox] | None = None

    # -- parameters, progress, cancellation ------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self.params[key]

    def progress(self, done: int, total: int, message: str = "") -> None:
        self.check_cancel()
        self._progress(done, total, message)

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    # -- notes --------------------------------------------------------------------------------------

    def note(self, text: str) -> None:
        self._notes.append(text)

    def claim(self, claim: str, holds: bool, measured: str, why_not: str = "") -> bool:
        """A note on one shape the lecture notes report: "holds" or "differs", with what was measured
        and, when it differs, why (our world, our simulated components)."""
        if holds:
            self._notes.append(f"holds — {claim}: {measured}.")
        else:
            reason = f" Why: {why_not}" if why_not else ""
            self._notes.append(f"differs — {claim}: {measured}.{reason}")
        return holds

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], chart: Chart | None = None) -> Table:
        return Table(tuple(columns), tuple(tuple(r) for r in rows), tuple(self._notes), chart)

    # -- resources ----------------------------------------------------------------------------------

    def llm(self, **sim_overrides: Any) -> LLM:
        """A fresh LLM (its own call counter) on the settings' backend, bound to the cancel flag."""
        from engines.lab.resources import make_llm

        return make_llm(self.settings, cancel=self.cancel, **sim_overrides)

    def restaurants(self) -> tuple[RestaurantWorld, Sandbox]:
        """The restaurant world (built once per process) and a sandbox over it (one per run)."""
        if self._restaurants is None:
            from engines.lab.resources import restaurant_world

            world = restaurant_world()
            self._restaurants = (world, self.sandbox(world.load))
        return self._restaurants

    def sandbox(self, load: Callable[..., Any]) -> Sandbox:
        """A sandbox over the tables ``load`` creates, bounded by the run's settings (rows, time, memory),
        closed when the run ends."""
        from engines.sql.sandbox import Limits, Sandbox

        sandbox: Sandbox = self.enter(
            Sandbox.create(
                load,
                row_cap=self.settings.row_cap,
                timeout_s=self.settings.query_timeout_s,
                limits=Limits.from_settings(self.settings),
            )
        )
        return sandbox

    def enter(self, resource: Any) -> Any:
        """Use a context manager (a session, a sandbox) for the rest of the run; it is closed when the run ends."""
        return self._stack.enter_context(resource)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """A result shared by experiments that tabulate one simulation several ways (computed once per
        process for the same key, the backend included)."""
        from engines.lab.resources import memo

        return memo((self.settings_key(), key), compute)

    def settings_key(self) -> tuple[Hashable, ...]:
        s = self.settings
        return (
            s.backend,
            s.seed,
            s.sim_error_on_topic,
            s.sim_error_off_topic,
            s.classify_method,
            self._model_key(),
        )

    def _model_key(self) -> tuple[Hashable, ...]:
        """What, beyond the backend's name, changes a real backend's answers: its models (and for an
        OpenAI-compatible server, which server: two servers may serve different weights under one name)."""
        s = self.settings
        if s.backend == "claude":
            return (s.claude_model, s.claude_row_model)
        if s.backend == "openai":
            return (s.openai_base_url, s.openai_model, s.openai_row_model or s.openai_model, s.openai_structured)
        return ()


@dataclass(frozen=True)
class Experiment:
    """One table of a lecture, computed by running the engines.

    ``caption`` says which inputs are simulation parameters and which numbers are measured.  Figures in it
    are fields filled from what runs (:meth:`caption_for`): ``{runs}``, ``{error_rate:.0%}``, ``{ks_text}``
    (a tuple parameter joined with "and"), ``{error_on_topic:.0%}`` (a setting) or a constant the module
    passes in ``facts``; a caption never states a figure that can disagree with the run.
    ``full`` and ``small`` are the parameters of the two sizes (``small`` updates ``full``; tests run it).
    """

    name: str
    lecture: int
    title: str
    section: str
    caption: str
    fn: Callable[[RunContext], Table] = field(repr=False)
    full: Mapping[str, Any] = field(default_factory=dict)
    small: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)  # constants the caption quotes (a callable: read when shown)

    def caption_for(
        self, size: Size = "full", params: Mapping[str, Any] | None = None, settings: Settings | None = None
    ) -> str:
        """The caption with its fields filled from the parameters of ``size`` (and ``params``), the
        settings' simulation error rates and the module's ``facts``."""
        from engines.lab.resources import lab_settings

        known = lab_settings(settings)
        values: dict[str, Any] = {
            "error_on_topic": known.sim_error_on_topic,
            "error_off_topic": known.sim_error_off_topic,
            "seed": known.seed,
            **{k: v() if callable(v) else v for k, v in self.facts.items()},
        }
        for key, value in self.parameters(size, params).items():
            values[key] = value
            if isinstance(value, (tuple, list)):
                values[f"{key}_text"] = _joined(value)
            if key == "runs":
                values["runs_text"] = "1 run" if value == 1 else f"{value} runs"
        try:
            return self.caption.format_map(values)
        except (KeyError, IndexError, ValueError) as e:  # a caption naming a field it is not given
            raise EngineError(f"{self.name}: its caption cannot be filled ({e!r}).") from e

    def parameters(self, size: Size = "full", params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        if size not in ("full", "small"):
            raise ValueError(f"size must be 'full' or 'small', not {size!r}")
        out = dict(self.full)
        if size == "small":
            out.update(self.small)
        if params:
            unknown = set(params) - set(out)
            if unknown:
                raise EngineError(
                    f"{self.name}: unknown parameter(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(out)) or 'none'}."
                )
            out.update(params)
        return out

    def run(
        self,
        size: Size = "full",
        params: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        settings: Settings | None = None,
    ) -> Table:
        """Run the experiment.  Raises :class:`engines.errors.Cancelled` when ``cancel`` is set."""
        from engines.lab.resources import lab_settings

        merged = self.parameters(size, params)
        known = lab_settings(settings)
        with ExitStack() as stack:
            ctx = RunContext(self, merged, size, progress or _no_progress, cancel, known, stack)
            ctx.check_cancel()
            table = self.fn(ctx)
        return replace(table, caption=self.caption_for(size, params, known))

    def to_json(self) -> dict[str, Any]:
        # Hand-written: an experiment's JSON is three of its fields (the others are a function and parameters
        # that describe() writes its own way).
        return {"name": self.name, "lecture": self.lecture, "title": self.title}

    def describe(self) -> dict[str, Any]:
        return {
            **self.to_json(),
            "section": self.section,
            "caption": self.caption_for("full"),
            "parameters": {k: jsonable(v) for k, v in self.full.items()},
            "small": {k: jsonable(v) for k, v in self.small.items()},
        }
