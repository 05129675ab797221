"""The knowledge graph's data model: items, properties, claims and their values, the world an engine is handed.

Values are written exactly as Wikidata writes them; the seven quirks the graph keeps (see :mod:`worlds.kg`) are
named in :data:`QUIRKS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

QUIRKS: tuple[str, ...] = (
    "no fixed schema",
    "similar properties",
    "subclass, not instance",
    "one-sided relations",
    "qualifiers",
    "the P131 chain",
    "ambiguous labels",
)


@dataclass(frozen=True)
class Value:
    """The object of a claim: an item (a QID) or a literal written exactly as Wikidata writes it."""

    kind: str  # item | quantity | time | string
    value: str

    def render(self, labels: Mapping[str, str] | None = None) -> str:
        if self.kind == "item":
            name = (labels or {}).get(self.value)
            return f"{name} ({self.value})" if name else self.value
        return self.value


def item(qid: str) -> Value:
    return Value("item", qid)


def quantity(n: int | float) -> Value:
    return Value("quantity", str(n))


def time(year: int, month: int = 1, day: int = 1) -> Value:
    return Value("time", f"{year:04d}-{month:02d}-{day:02d}T00:00:00Z")


@dataclass(frozen=True)
class Claim:
    """One statement: subject, property, value and its qualifiers."""

    subject: str
    pid: str
    value: Value
    qualifiers: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class Entity:
    qid: str
    label: str
    description: str
    kind: str  # class | country | province | city | university | music school | instrument | person | company | mountain | film | award | occupation
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Property:
    pid: str
    label: str
    description: str
    datatype: str  # item | quantity | time | string
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class KGWorld:
    """The graph an engine is handed: entities, properties, claims (the hidden truth is returned apart, see
    :class:`Built`)."""

    seed: int
    entities: Mapping[str, Entity]
    properties: Mapping[str, Property]
    claims: tuple[Claim, ...]
    classes: Mapping[str, str] = field(default_factory=dict)  # class name -> QID (e.g. "mountain")

    @property
    def statement_count(self) -> int:
        return len(self.claims)

    def label(self, qid: str) -> str:
        e = self.entities.get(qid)
        if e is not None:
            return e.label
        p = self.properties.get(qid)
        return p.label if p is not None else qid

    def kind(self, kind: str) -> list[Entity]:
        return [e for e in self.entities.values() if e.kind == kind]
