"""A built-in world (the restaurants, the course assistant's courses, the HybridQA tables) as a
:class:`~engines.sources.TableSource`: the world loaded into a fresh sandbox, its own schema text for the parser,
the enumerations its agent classifies, the lecture's example queries, and the same description of its tables a
user's data gets (:func:`engines.data.describe.describe_world`, made when first asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from engines.data.describe import SchemaDescription, describe_world
from engines.sources import SuqlRunner, TableKind
from engines.sql.sandbox import Limits, QueryResult, Sandbox

if TYPE_CHECKING:
    import duckdb

    from engines.llm.client import LLM
    from engines.settings import Settings
    from engines.sql.classify import EnumSpec
    from engines.suql.examples import Example

__all__ = ["World", "WorldSource"]


class World(Protocol):
    """What a built-in world gives a source: its schema text (as the lecture writes it) and its tables."""

    def schema(self) -> str: ...

    def load(self, con: duckdb.DuckDBPyConnection) -> None: ...


def _no_examples() -> tuple[Example, ...]:
    return ()


@dataclass
class WorldSource:
    """A built-in world in its own sandbox."""

    name: str  # restaurants | courses | hybridqa
    world: World
    sandbox: Sandbox
    enum_fields: Mapping[str, EnumSpec] = field(default_factory=dict)  # what its agent classifies ({}: nothing)
    example_source: Callable[[], tuple[Example, ...]] = _no_examples  # made on first use (some read the world)
    kind: TableKind = "world"
    _schema: SchemaDescription | None = field(default=None, repr=False)

    lazy = False

    @classmethod
    def open(
        cls,
        name: str,
        world: World,
        settings: Settings,
        *,
        enum_fields: Mapping[str, EnumSpec] | None = None,
        examples: Callable[[], tuple[Example, ...]] = _no_examples,
        row_cap: int | None = None,
    ) -> WorldSource:
        """``world`` loaded into a fresh sandbox under ``settings``' bounds (``row_cap``: a larger cap than the
        setting, for a world whose tables must come back whole)."""
        sandbox = Sandbox.create(
            world.load,
            row_cap=max(settings.row_cap, row_cap or 0),
            timeout_s=settings.query_timeout_s,
            limits=Limits.from_settings(settings),
        )
        return cls(name, world, sandbox, dict(enum_fields or {}), examples)

    @property
    def schema(self) -> SchemaDescription:
        """The world's tables described as a user's are (read through the sandbox on first use)."""
        if self._schema is None:
            self._schema = describe_world(self.sandbox, source=self.name, enum_fields=self.enum_fields)
        return self._schema

    def parser_schema(self, *, suql: bool = False) -> str:
        """The world's own schema text (with SUQL's answer() and summary() when ``suql``)."""
        if not suql:
            return self.world.schema()
        from engines.suql.agent import suql_schema

        return suql_schema(self.world.schema())

    def described(self, tables: Iterable[str] | None = None) -> SchemaDescription:
        if tables is None:
            return self.schema
        return describe_world(self.sandbox, source=self.name, enum_fields=self.enum_fields, tables=list(tables))

    def described_for(self, question: str) -> SchemaDescription:
        return self.schema

    def run_sql(self, sql: str) -> QueryResult:
        return self.sandbox.run(sql)

    def suql_engine(self, llm: LLM, settings: Settings, *, pool: int = 1) -> SuqlRunner:
        from engines.suql.execute import SuqlEngine

        return SuqlEngine.from_settings(self.sandbox, llm, settings, pool=pool)

    def examples(self) -> tuple[Example, ...]:
        return self.example_source()

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> WorldSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
