"""A dataclass's JSON derived from its fields, shaped by options the class declares once.

A class that inherits :class:`Jsonable` gets ``to_json()``: a dict with one key per field, in the order the
fields are declared, each value made JSON-ready (:func:`json_value`).  The class may shape it once, in a class
attribute ``__json__`` holding a :class:`JsonShape`: floats rounded (all of them, or per field), fields renamed,
omitted always or when empty/None, keys put first in a given order, enums by value or by name, a function for the
leaf values.  :func:`fields_json` derives the same dict for any dataclass instance (a class whose JSON is its
fields plus a key or two builds on it).  Nothing else is derived: a class whose JSON is not its fields (computed
values, fields of other objects) keeps a hand-written ``to_json``.

Dataclasses nested in a field are derived with their own class's shape; tuples and lists become lists,
mappings dicts (keys as they are), enums their value (or name); floats are rounded only where the shape says
(NaN and infinities stay as they are unless ``leaf`` maps them); sets and other values go through ``leaf``.  A value nested too deeply for
JSON (:data:`MAX_DEPTH`) is refused, as is a non-dataclass given to :func:`fields_json`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

MAX_DEPTH = 100
"""How deeply values may nest (a cycle through mutable containers would otherwise recurse without end)."""


def _same(value: object) -> object:
    return value


@dataclass(frozen=True)
class JsonShape:
    """How a dataclass's fields become its JSON.  Every option names fields by their Python name."""

    places: int | None = None  # round every float field to this many decimal places (None: as it is)
    rounded: Mapping[str, int] = field(default_factory=dict)  # per field: its floats to these places
    renamed: Mapping[str, str] = field(default_factory=dict)  # field -> its key in the JSON
    omitted: frozenset[str] = frozenset()  # fields never written
    omit_empty: frozenset[str] = frozenset()  # fields left out when None or empty ("", (), [], {})
    first: tuple[str, ...] = ()  # fields written first, in this order (the others follow in declaration order)
    enums: Literal["value", "name"] = "value"
    leaf: Callable[[object], object] = _same  # applied to each value that is no dataclass, container or enum

    def __post_init__(self) -> None:
        if self.places is not None and self.places < 0:
            raise ValueError(f"places must be 0 or more, not {self.places}")
        if any(p < 0 for p in self.rounded.values()):
            raise ValueError("rounded places must be 0 or more")


PLAIN = JsonShape()
"""The shape of a dataclass that declares none: every field, as it is."""


def shape_of(cls: type) -> JsonShape:
    """The class's declared ``__json__`` shape (inherited like any class attribute), else :data:`PLAIN`."""
    shape = getattr(cls, "__json__", PLAIN)
    if not isinstance(shape, JsonShape):
        raise TypeError(f"{cls.__name__}.__json__ must be a JsonShape, not {type(shape).__name__}")
    return shape


def fields_json(obj: object, shape: JsonShape | None = None) -> dict[str, Any]:
    """The dataclass instance ``obj`` as a dict of its fields, shaped by ``shape`` (default: its class's).

    Raises TypeError for anything but a dataclass instance, and for a shape naming a field the class lacks
    (a typo would otherwise silently change the JSON); ValueError for values nested past :data:`MAX_DEPTH`."""
    return _fields(obj, shape, 0)


def _fields(obj: object, shape: JsonShape | None, depth: int) -> dict[str, Any]:
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError(f"fields_json needs a dataclass instance, not {type(obj).__name__}")
    shape = shape if shape is not None else shape_of(type(obj))
    names = [f.name for f in dataclasses.fields(obj)]
    named = set(shape.rounded) | set(shape.renamed) | set(shape.omitted) | set(shape.omit_empty) | set(shape.first)
    unknown = named - set(names)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {', '.join(sorted(unknown))} (named by its JSON shape)")
    ordered = [*shape.first, *(n for n in names if n not in shape.first)]
    out: dict[str, Any] = {}
    for name in ordered:
        if name in shape.omitted:
            continue
        value = getattr(obj, name)
        if name in shape.omit_empty and _empty(value):
            continue
        places = shape.rounded.get(name, shape.places)
        out[shape.renamed.get(name, name)] = _value(value, shape, places, depth + 1)
    return out


def _empty(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, (str, bytes, tuple, list, dict, set, frozenset, Mapping)):
        return len(value) == 0
    return False


def json_value(value: object, shape: JsonShape = PLAIN, places: int | None = None) -> Any:
    """``value`` made JSON-ready: dataclasses by their own shape, containers as lists/dicts, enums by
    ``shape.enums``, floats rounded to ``places`` (None: as they are), any other value through ``shape.leaf``."""
    return _value(value, shape, places, 0)


def _value(value: object, shape: JsonShape, places: int | None, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"a value nests deeper than {MAX_DEPTH} levels (a cycle?)")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields(value, None, depth)
    if isinstance(value, enum.Enum):
        return value.name if shape.enums == "name" else value.value
    if isinstance(value, Mapping):
        return {k: _value(v, shape, places, depth + 1) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_value(v, shape, places, depth + 1) for v in value]
    if isinstance(value, float) and places is not None:
        return round(value, places)
    return shape.leaf(value)


class Jsonable:
    """A dataclass whose JSON is its fields: ``to_json()`` is :func:`fields_json` with the class's ``__json__``."""

    __slots__ = ()
    __json__: ClassVar[JsonShape] = PLAIN

    def to_json(self) -> dict[str, Any]:
        return fields_json(self)
