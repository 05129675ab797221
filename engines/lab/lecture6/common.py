"""What several of lecture 6's experiments share: reading rows and ids back from the sandbox, the seed note."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from engines.errors import EngineError

if TYPE_CHECKING:
    from engines.sql.sandbox import Sandbox

Row = tuple[Any, ...]

SEED_NOTE = "The simulated LLM: seed {seed}, wrong {error_on_topic:.1%} on the topic and {error_off_topic:.1%} off it (settings)."


def parse_drop_rate() -> float:
    """The share of conditions the simulated parser drops (a parameter of the sim backend the Lab uses)."""
    from engines.llm.sim import SimBackend

    return SimBackend().parse_drop_rate


def rows_of(sandbox: Sandbox, sql: str) -> list[Row]:
    return [tuple(r) for r in sandbox.run(sql).rows]


def same_rows(a: list[Row], b: list[Row]) -> bool:
    return Counter(map(repr, a)) == Counter(map(repr, b))


def ids_of(sandbox: Sandbox, sql: str | None) -> set[int] | None:
    """The restaurant ids a statement returns (its projection replaced by _id; ORDER/LIMIT kept)."""
    if not sql:
        return None
    try:
        tree = sandbox.check(sql)
        ids = exp.select("_id").from_("restaurants")
        if isinstance(tree, exp.Select):
            tree = tree.copy()
            tree.set("expressions", [exp.column("_id")])
            ids = tree
        elif isinstance(tree, (exp.Union, exp.Except, exp.Intersect)):
            return {r[0] for r in sandbox.run(sql).rows}
        return {r[0] for r in sandbox.run(ids.sql(dialect="postgres")).rows}
    except EngineError:
        return None


class IdCache:
    """``ids_of`` memoised per statement: methods that write the same SQL run it once."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._seen: dict[str | None, set[int] | None] = {}

    def __call__(self, sql: str | None) -> set[int] | None:
        if sql not in self._seen:
            self._seen[sql] = ids_of(self.sandbox, sql)
        return self._seen[sql]


def parser_agrees(sandbox: Sandbox, parsed: str, expected: list[Row]) -> bool:
    try:
        got = rows_of(sandbox, parsed)
    except EngineError:
        return False
    return same_rows(got, expected)
