"""One protocol for every LLM use in the project.

A *backend* (``sim`` or ``claude``) turns inputs a real model would be shown into
outputs; it knows nothing about events or caching.  ``engines.llm.client.LLM``
wraps a backend with the call events, the answer cache and cancellation, and is
what every engine calls.

The six functions:

``route``     does this dialogue turn need the database? (the input classifier)
``parse``     utterance + dialogue history + schema -> one SQL statement (PostgreSQL dialect)
``classify``  a value the user said + every value of an enum field -> the values meant
``answer``    a text + a question -> a value with its evidence, or Unknown
``summary``   a text -> a short summary
``respond``   the reply to the user: from the rows a query returned, or directly
``policy``    SPINACH's policy step (lecture 8 §3.4): the question and the whole thought / action /
              observation history -> the next thought and action
``hybrid_parse``  HybridQA's zero-shot parse (lecture 7 §6.2): one question + one table's schema (and
              the earlier attempts that returned nothing) -> one SUQL query
``short_answer``  HybridQA's last step: the question + the rows a query returned -> one short answer
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

FUNCTIONS = ("route", "parse", "classify", "answer", "summary", "respond", "policy", "hybrid_parse", "short_answer", "prune_entry")


@dataclass(frozen=True)
class Turn:
    """One earlier turn of the dialogue, as the model is shown it."""

    utterance: str
    sql: str | None = None  # the statement that ran for it, if any
    reply: str | None = None


@dataclass(frozen=True)
class Routed:
    needs_database: bool
    reason: str


@dataclass(frozen=True)
class Answer:
    """What ``answer()`` returns: a value with the sentences it relied on, or Unknown (value None)."""

    value: str | None
    evidence: tuple[str, ...] = ()

    @property
    def unknown(self) -> bool:
        return self.value is None

    def render(self) -> str:
        return "Unknown" if self.value is None else self.value


@dataclass(frozen=True)
class Results:
    """What ``respond`` is shown of an executed query: the read-back and the rows."""

    readback: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    total: int  # rows the query returned (``rows`` may be a prefix)
    why_empty: str | None = None  # no rows: which condition emptied it, found by the agent running the query without each


@dataclass(frozen=True)
class PolicyAction:
    """One SPINACH step as the policy writes it: a thought and an action with its one argument.

    ``action_name`` is one of ``search_wikidata``, ``get_wikidata_entry``,
    ``get_property_examples``, ``execute_sparql``, ``stop``.
    """

    thought: str
    action_name: str
    action_argument: str = ""


@dataclass(frozen=True)
class PolicyStep:
    """A step of the history the policy is shown: what it did and what it observed."""

    thought: str
    action_name: str
    action_argument: str
    observation: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


NO_USAGE = Usage()


@dataclass(frozen=True)
class Output:
    """A backend's output with its token usage."""

    value: Any
    usage: Usage = field(default=NO_USAGE)


@runtime_checkable
class Backend(Protocol):
    name: str  # "sim" | "claude"
    model: str
    prompt_version: str

    def route(self, utterance: str, history: Sequence[Turn], schema: str) -> Output:  # value: Routed
        ...

    def parse(self, utterance: str, history: Sequence[Turn], schema: str) -> Output:  # value: str (SQL)
        ...

    def classify(self, value: str, field: str, candidates: Sequence[str]) -> Output:  # value: tuple[str, ...]
        ...

    def answer(self, text: str, question: str) -> Output:  # value: Answer
        ...

    def summary(self, text: str) -> Output:  # value: str
        ...

    def respond(self, utterance: str, history: Sequence[Turn], results: Results | None,
                schema: str = "") -> Output:  # value: str (the schema tells a direct reply what the database holds)
        ...

    def policy(self, question: str, history: Sequence[PolicyStep], sample: int) -> Output:  # value: PolicyAction
        ...

    def hybrid_parse(self, question: str, schema: str, failed: Sequence[str]) -> Output:  # value: str (SUQL)
        ...

    def short_answer(self, question: str, results: Results) -> Output:  # value: str ("" when the rows hold none)
        ...

    def prune_entry(self, question: str, entry: str) -> Output:  # value: tuple[int, ...] (entry lines to keep, 0-based)
        ...


def backend_id(backend: Backend) -> str:
    """Identifies everything about a backend that changes its outputs (cache key part)."""
    return f"{backend.name}|{backend.model}|{backend.prompt_version}"
