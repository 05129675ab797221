"""engines.jsonable: a dataclass's JSON derived from its fields, shaped by the options its class declares."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from engines.eval.metrics import Interval
from engines.hybridqa.scoring import Score, Totals
from engines.jsonable import MAX_DEPTH, Jsonable, JsonShape, fields_json, json_value
from engines.lab.core import Chart, Series, Table
from engines.spinach.trajectory import FORMAT, Step, Trajectory


class Colour(enum.Enum):
    RED = "r"
    BLUE = "b"


@dataclass(frozen=True)
class Point(Jsonable):
    x: float
    y: float


@dataclass(frozen=True)
class Shaped(Jsonable):
    __json__ = JsonShape(
        places=2,
        rounded={"exact": 5},
        renamed={"number": "n"},
        omitted=frozenset({"secret"}),
        omit_empty=frozenset({"note", "maybe", "extras"}),
        first=("colour", "number"),
        enums="name",
    )

    number: int
    share: float
    exact: float
    colour: Colour
    points: tuple[Point, ...] = ()
    note: str = ""
    maybe: float | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    secret: str = "hidden"


def test_every_option_declared_once_shapes_the_json() -> None:
    s = Shaped(7, 1 / 3, 2 / 3, Colour.BLUE, (Point(0.123456, 2.0),))
    assert s.to_json() == {
        "colour": "BLUE",  # first, by name
        "n": 7,  # renamed, second
        "share": 0.33,  # every float to 2 places
        "exact": 0.66667,  # this field to 5
        "points": [{"x": 0.123456, "y": 2.0}],  # a nested dataclass by its own (plain) shape, a tuple as a list
    }  # note, maybe and extras empty: left out; secret: never written
    full = Shaped(1, 0.5, 0.5, Colour.RED, note="n", maybe=0.129, extras={"k": (1, 2.555)})
    got = full.to_json()
    assert got["note"] == "n" and got["maybe"] == 0.13 and got["extras"] == {"k": [1, 2.56]}
    assert "secret" not in got and list(got)[:2] == ["colour", "n"]


def test_enums_by_value_unless_the_class_says_name() -> None:
    @dataclass
    class ByValue(Jsonable):
        colour: Colour

    assert ByValue(Colour.RED).to_json() == {"colour": "r"}


def test_a_nested_dataclass_keeps_its_own_shape() -> None:
    @dataclass
    class Outer(Jsonable):
        inner: Shaped
        values: list[float]

    got = Outer(Shaped(1, 0.5, 0.5, Colour.RED), [1 / 3]).to_json()
    assert got["inner"] == {"colour": "RED", "n": 1, "share": 0.5, "exact": 0.5, "points": []}
    assert got["values"] == [1 / 3]  # the outer class rounds nothing


def test_a_bool_or_an_int_is_never_rounded_and_nan_stays_unless_leaf_maps_it() -> None:
    @dataclass
    class Mixed(Jsonable):
        __json__ = JsonShape(places=1)
        flag: bool
        count: int
        value: float

    assert Mixed(True, 3, math.inf).to_json() == {"flag": True, "count": 3, "value": math.inf}

    @dataclass
    class Finite(Jsonable):
        __json__ = JsonShape(leaf=lambda v: None if isinstance(v, float) and not math.isfinite(v) else v)
        value: float
        row: tuple[Any, ...]

    assert Finite(math.nan, (1, math.inf, "a")).to_json() == {"value": None, "row": [1, None, "a"]}


def test_it_refuses_what_is_not_a_dataclass_instance() -> None:
    with pytest.raises(TypeError, match="dataclass instance, not dict"):
        fields_json({"a": 1})
    with pytest.raises(TypeError, match="not type"):
        fields_json(Point)  # the class, not an instance


def test_a_shape_naming_a_field_the_class_lacks_is_refused() -> None:
    @dataclass
    class Typo(Jsonable):
        __json__ = JsonShape(omit_empty=frozenset({"nmae"}))
        name: str

    with pytest.raises(TypeError, match="Typo has no field nmae"):
        Typo("x").to_json()


def test_a_bad_shape_is_refused_where_it_is_declared() -> None:
    with pytest.raises(ValueError, match="places"):
        JsonShape(places=-1)

    @dataclass
    class Wrong(Jsonable):
        __json__ = "not a shape"  # type: ignore[assignment]
        a: int

    with pytest.raises(TypeError, match="must be a JsonShape"):
        Wrong(1).to_json()


def test_a_value_nested_past_the_bound_is_refused_not_a_recursion_error() -> None:
    deep: list[Any] = []
    cur = deep
    for _ in range(MAX_DEPTH + 5):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    with pytest.raises(ValueError, match=f"deeper than {MAX_DEPTH}"):
        json_value(deep)
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="a cycle"):
        json_value({"c": cycle})
    shallow: list[Any] = [[["leaf"]]]  # nested, without a cycle: written as it is
    assert json_value(shallow) == [[["leaf"]]]


# --- the engines' classes that derive their JSON: the same JSON text the hand-written methods gave -------------


def test_the_engines_classes_write_what_their_hand_written_methods_wrote() -> None:
    assert json.dumps(Interval(0.123456, 0.1, 0.29999, 40).to_json()) == (
        '{"mean": 0.1235, "low": 0.1, "high": 0.3, "n": 40}'
    )
    assert json.dumps(Score(1.0, 2 / 3, None, None).to_json()) == (
        '{"em": 1.0, "f1": 0.6667, "judged": null, "error": null}'
    )
    assert json.dumps(Totals(3, 2 / 3, 1 / 3, None).to_json()) == (
        '{"questions": 3, "em": 0.6667, "f1": 0.3333, "judged": null}'
    )
    chart = Chart("bar", "T", "x", "y", ("a", "b"), (Series("s", (1.5, None)),))
    assert json.dumps(Table(("a", "b"), ((1, math.nan), ("z", {3})), ("n",), chart, "cap").to_json("e")) == (
        '{"name": "e", "columns": ["a", "b"], "rows": [[1, null], ["z", [3]]], "notes": ["n"], "caption": "cap", '
        '"chart": {"kind": "bar", "title": "T", "x_label": "x", "y_label": "y", "x": ["a", "b"], '
        '"series": [{"name": "s", "values": [1.5, null]}]}}'
    )
    assert list(Table(("a",), ()).to_json("e")) == ["name", "columns", "rows", "notes"]  # no caption, no chart


def test_a_trajectory_keeps_its_keys_order_and_round_trips() -> None:
    step = Step(1, "t", "execute_sparql", "ASK {}", "yes", logged={"q": ("a", "b")}, extra={"k": 1})
    t = Trajectory("q?", steps=(step,), answer=({"x": {"type": "literal", "value": "1"}},), meta={"m": 1})
    got = t.to_json()
    assert list(got) == [
        "format",
        "question",
        "policy",
        "finish",
        "error",
        "final_sparql",
        "columns",
        "answer",
        "steps",
        "meta",
        "generated_sparqls",
        "final",
        "answer_logged",
    ]
    assert got["format"] == FORMAT and got["steps"][0]["logged"] == {"q": ["a", "b"]}
    assert Trajectory.from_json(json.loads(json.dumps(got))).to_json() == got
