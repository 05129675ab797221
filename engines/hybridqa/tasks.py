"""HybridQA's LLM tasks (lecture 7 §6): the zero-shot parse and the one short answer.

``hybrid_parse``: one question + one table's schema (and the earlier attempts that returned
nothing, so a retry writes another query) -> one SUQL query.  ``short_answer``: the question + the
rows a query returned -> one short answer ("" when the rows hold none); a per-row call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, field_validator

from engines.hybridqa import sim_hybrid
from engines.llm.prompting import MAX_ROWS_SHOWN
from engines.llm.protocol import Results
from engines.llm.replies import UNKNOWN_WORDS, validated
from engines.llm.task import Task
from engines.sql.tasks import SqlReply, read_sql_reply

PACKAGE = "engines.hybridqa"  # its prompts/ folder holds these tasks' templates


@dataclass(frozen=True)
class ParseInput:
    question: str
    schema: str
    failed: tuple[str, ...] = ()  # earlier attempts that returned nothing


@dataclass(frozen=True)
class ShortAnswerInput:
    question: str
    results: Results


class ShortAnswerReply(BaseModel):
    """``short_answer``: the answer, null when the rows hold none."""

    answer: str | None

    @field_validator("answer", mode="before")
    @classmethod
    def _one(cls, v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            v = v[0] if v else ""
        return None if v is None else str(v)


def read_short_answer(text: str) -> str:
    """``{"answer": str | null}`` -> the answer ("" for null or a word for unknown)."""
    value = validated(ShortAnswerReply, text, "short_answer").answer
    if value is None:
        return ""
    value = value.strip().strip('"').strip()
    return "" if value.casefold() in UNKNOWN_WORDS else value


HYBRID_PARSE: Task[ParseInput, str] = Task(
    name="hybrid_parse",
    input=ParseInput,
    output=str,
    template="hybrid_parse",
    package=PACKAGE,
    max_tokens=1024,
    context=lambda i: {"question": i.question, "schema": i.schema, "failed": list(i.failed)},
    read=lambda text, _i: read_sql_reply("parse", text),
    reply_model=SqlReply,
    simulate=lambda b, i: sim_hybrid.parse(i.question, i.schema, i.failed, seed=b.seed, rates=b.hybrid_params),
    describe=lambda i: i.question + (f" (attempt {len(i.failed) + 1})" if i.failed else ""),
)

SHORT_ANSWER: Task[ShortAnswerInput, str] = Task(
    name="short_answer",
    input=ShortAnswerInput,
    output=str,
    template="short_answer",
    package=PACKAGE,
    role="row",
    max_tokens=256,
    context=lambda i: {"question": i.question, "results": i.results, "rows": i.results.rows[:MAX_ROWS_SHOWN]},
    read=lambda text, _i: read_short_answer(text),
    reply_model=ShortAnswerReply,
    simulate=lambda b, i: sim_hybrid.short_answer(i.question, i.results, seed=b.seed, rates=b.hybrid_params),
    sim_latency=0.3,
    describe=lambda i: f"{i.question} ({i.results.total} row{'s' if i.results.total != 1 else ''})",
    show=lambda _i, v: v or "(no answer)",
)
