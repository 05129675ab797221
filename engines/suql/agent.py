"""The SUQL agent (lecture 7 §4): the Text-to-SQL dialogue loop writing SUQL.

Everything but the execution step is the foundation's agent: input classifier,
multi-turn parser (shown a schema that offers answer() and summary(), so text-only
wishes become answer() conditions), classify() for enum values, read-back, and a
reply built only from the rows — with the honest "no results".
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from engines.events import CallFailed, CallFinished, CallStarted, Emit, Event
from engines.sources import SuqlRunner
from engines.sql.agent import Executed, TextToSQLAgent, asks_llm
from engines.sql.classify import EnumSpec

VARIANT_LIMIT = 10  # an empty result's variants stop at this many rows (or the query's own LIMIT, if smaller)

SUQL_FUNCTIONS = (
    "-- SUQL adds two functions usable wherever a text value may stand:\n"
    "--   answer(text, 'question')  an LLM reads the text and answers ('Yes' / 'No' / a value, NULL when it does not say)\n"
    "--   summary(text)             an LLM summarises the text\n"
    "-- free-text columns: reviews TEXT[], popular_dishes TEXT[]"
)


def suql_schema(schema: str) -> str:
    return f"{schema}\n{SUQL_FUNCTIONS}"


@dataclass
class SuqlAgent(TextToSQLAgent):
    engine: SuqlRunner | None = None  # DuckDB's SuqlEngine, or PostgreSQL's that pushes the structured part down
    mode: str = "E"

    @classmethod
    def over(
        cls,
        engine: SuqlRunner,
        world_schema: str,
        *,
        enum_fields: Mapping[str, EnumSpec],
        classify_method: str,
        mode: str = "E",
    ) -> SuqlAgent:
        """The agent over ``engine``'s sandbox and LLM, shown the world's schema with SUQL's functions."""
        return cls(
            sandbox=engine.sandbox,
            llm=engine.llm,
            schema=suql_schema(world_schema),
            enum_fields=enum_fields,
            classify_method=classify_method,
            engine=engine,
            mode=mode,
        )

    def execute(self, sql: str, emit: Emit, cancel: threading.Event | None) -> Executed:
        assert self.engine is not None
        # eager verification: the agent's reply and its rows to verify are final (it has no key to settle them)
        r = self.engine.run(sql, mode=self.mode, emit=emit, cancel=cancel, verify="eager")
        return Executed(r.columns, r.rows, r.truncated, r.stats.wall_s, r.to_verify)

    def rows_without(self, variant: exp.Select, emit: Emit, cancel: threading.Event | None) -> tuple[int, bool]:
        """Run a variant of an empty query through the engine, bounded so that it costs few LLM calls:
        no ORDER BY (rows either come back or not), LLM functions dropped from the projection, and at
        most ``VARIANT_LIMIT`` rows (the query's own LIMIT when smaller), which answer() is asked for lazily.
        Only the variant's LLM calls are reported (they are part of the turn's cost)."""
        probe = variant.copy()
        probe.set("order", None)
        probe.set("offset", None)
        kept = [e for e in probe.expressions if not asks_llm(e)]
        probe.set("expressions", kept or [exp.Literal.number(1).as_("found")])
        limit = probe.args.get("limit")
        own = limit.expression if limit is not None else None
        n = VARIANT_LIMIT
        if isinstance(own, exp.Literal) and own.is_int:
            n = min(n, int(own.name))
        probe.set("limit", None)
        probe = probe.limit(n)

        def calls_only(event: Event) -> None:
            if isinstance(event, (CallStarted, CallFinished, CallFailed)):
                emit(event)

        r = self.execute(probe.sql(dialect="postgres"), calls_only, cancel)
        return len(r.rows), len(r.rows) >= n
