"""The data of the LLM layer: what backends return, and the values of the shared tasks.

A *task* (:class:`engines.llm.task.Task`, defined in the package of the agent that uses it) is one
kind of call: prompt template, input, output, simulated implementation.  A *backend* (``sim`` or
``claude``) answers any task with ``run(task, input)`` and knows nothing about events or caching;
:class:`engines.llm.client.LLM` runs tasks on a backend with the call events, the answer cache,
cancellation and usage in one place, and is what every engine calls.

The tasks: engines/sql/tasks.py (route, parse, classify, respond), engines/suql/tasks.py (answer,
summary), engines/hybridqa/tasks.py (hybrid_parse, short_answer), engines/spinach/tasks.py (policy,
prune_entry).  The values here (Turn, Routed, Answer, Results) are shared by several agents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from engines.llm.task import Task

I = TypeVar("I")
O = TypeVar("O")


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
    why_empty: str | None = (
        None  # no rows: which condition emptied it, found by the agent running the query without each
    )


@dataclass(frozen=True)
class Usage:
    """The tokens of one call, as the API's usage reports them (``None``: not reported).

    ``input_tokens`` counts every prompt token, the cached ones included (as OpenAI's
    ``prompt_tokens``; for Claude it is ``input_tokens + cache_creation_input_tokens +
    cache_read_input_tokens``); ``cached_input_tokens`` is the part read from the prompt cache, and
    ``cache_write_input_tokens`` the part written to it (priced differently, see engines/llm/usage.py).
    Every field is a token count, so two usages add field by field."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None


NO_USAGE = Usage()


@dataclass(frozen=True)
class Output(Generic[O]):
    """A backend's output with its token usage."""

    value: O
    usage: Usage = field(default=NO_USAGE)
    model: str | None = None  # the model that answered (its price prices the usage)
    batch: bool = False  # answered through a batch API (half price)


@runtime_checkable
class Backend(Protocol):
    """Answers any task (:class:`engines.llm.task.Task`): ``run(task, input)`` -> Output."""

    name: str  # "sim" | "claude"
    prompt_version: str

    @property
    def model(self) -> str:
        """Everything about the model(s) that changes an output (read-only: the sim's is computed)."""
        ...

    def run(self, task: Task[I, O], input: I) -> Output[O]: ...


def backend_id(backend: Backend) -> str:
    """Identifies everything about a backend that changes its outputs (cache key part)."""
    return f"{backend.name}|{backend.model}|{backend.prompt_version}"
