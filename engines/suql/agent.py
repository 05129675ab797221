"""The SUQL agent (lecture 7 §4): the Text-to-SQL dialogue loop writing SUQL.

Everything but the execution step is the foundation's agent: input classifier,
multi-turn parser (shown a schema that offers answer() and summary(), so text-only
wishes become answer() conditions), classify() for enum values, read-back, and a
reply built only from the rows — with the honest "no results".
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from engines.events import Emit
from engines.sql.agent import Executed, TextToSQLAgent
from engines.suql.execute import SuqlEngine

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
    engine: SuqlEngine | None = None
    mode: str = "E"

    @classmethod
    def over(cls, engine: SuqlEngine, world_schema: str, *, enum_fields: dict, classify_method: str,
             mode: str = "E") -> "SuqlAgent":
        """The agent over ``engine``'s sandbox and LLM, shown the world's schema with SUQL's functions."""
        return cls(sandbox=engine.sandbox, llm=engine.llm, schema=suql_schema(world_schema), enum_fields=enum_fields,
                   classify_method=classify_method, engine=engine, mode=mode)

    def execute(self, sql: str, emit: Emit, cancel: threading.Event | None) -> Executed:
        assert self.engine is not None
        r = self.engine.run(sql, mode=self.mode, emit=emit, cancel=cancel)
        return Executed(r.columns, r.rows, r.truncated, r.stats.wall_s, r.to_verify)
