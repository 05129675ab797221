"""SUQL's LLM tasks (lecture 7): ``answer()`` and ``summary()``, the per-row calls.

Both are per-row (the row model answers them) and cached: the answer cache keys them on the
text, the question (``summary()`` for a summary) and the backend id.  A reply that cannot be used
is Unknown (``answer``) or ``None`` (``summary``), so one bad reply loses its own row only.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, field_validator

from engines.llm.protocol import Answer
from engines.llm.replies import UNKNOWN_WORDS, normalise_for_match, read_text, validated
from engines.llm.task import Task
from engines.sql import sim

log = logging.getLogger(__name__)

PACKAGE = "engines.suql"  # its prompts/ folder holds these tasks' templates


@dataclass(frozen=True)
class AnswerInput:
    text: str
    question: str


@dataclass(frozen=True)
class SummaryInput:
    text: str


_YES_NO = re.compile(r"(yes|no)[.!]?", re.IGNORECASE)


class AnswerReply(BaseModel):
    """``answer()``: the value (null when the text does not say) and the sentences it relied on."""

    value: str | None
    evidence: list[str] = []

    @field_validator("value", mode="before")
    @classmethod
    def _scalar(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return "Yes" if v else "No"
        if isinstance(v, (int, float)):
            return str(v)
        return v

    @field_validator("evidence", mode="before")
    @classmethod
    def _sentences(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        if isinstance(v, list):
            return [s for s in v if isinstance(s, str)]
        return v


def read_answer(reply: str, source: str) -> Answer:
    """``{"value": str | null, "evidence": [...]}`` -> the Answer (null is Unknown; evidence keeps
    only sentences found verbatim in ``source``, the text asked about)."""
    obj = validated(AnswerReply, reply, "answer")
    if obj.value is None:
        return Answer(None)
    value = obj.value.strip()
    if value.casefold() in UNKNOWN_WORDS:
        return Answer(None)
    if _YES_NO.fullmatch(value):
        value = "Yes" if value[0] in "yY" else "No"
    haystack = normalise_for_match(source)
    evidence: list[str] = []
    for sentence in obj.evidence:
        if not sentence.strip():
            continue
        sentence = sentence.strip()
        if normalise_for_match(sentence) not in haystack:
            log.debug("answer: dropped evidence not found verbatim in the text: %r", sentence)
        elif sentence not in evidence:
            evidence.append(sentence)
    return Answer(value, tuple(evidence))


ANSWER: Task[AnswerInput, Answer] = Task(
    name="answer",
    input=AnswerInput,
    output=Answer,
    template="answer",
    package=PACKAGE,
    role="row",
    max_tokens=1024,
    context=lambda i: {"text": i.text, "question": i.question},
    read=lambda reply, i: read_answer(reply, i.text),
    reply_model=AnswerReply,
    simulate=lambda b, i: sim.simulate_answer(b, i.text, i.question),
    describe=lambda i: i.question,
    show=lambda _i, a: a.render(),
    evidence=lambda a: a.evidence,
    cache_key=lambda i: (i.text, i.question),
    encode=lambda a: {"value": a.value, "evidence": list(a.evidence)},
    decode=lambda d: Answer(d["value"], tuple(d.get("evidence", ()))),
    fallback=lambda _i: Answer(None),
)

# the value is a str; None only where the reply could not be used (``fallback``: the row's summary is unknown)
SUMMARY: Task[SummaryInput, str | None] = Task(
    name="summary",
    input=SummaryInput,
    output=str,
    template="summary",
    package=PACKAGE,
    role="row",
    max_tokens=600,
    context=lambda i: {"text": i.text},
    read=lambda reply, _i: read_text("summary", reply),
    simulate=lambda b, i: sim.simulate_summary(i.text),
    sim_latency=2.0,
    describe=lambda _i: "summarise",
    show=lambda _i, s: s or "",  # (shown for a reply read, always a str)
    cache_key=lambda i: (i.text, "summary()"),
    encode=lambda s: {"value": s},
    decode=lambda d: str(d["value"]),
    fallback=lambda _i: None,
)
