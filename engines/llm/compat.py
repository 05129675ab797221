"""The per-function API from before tasks, kept as thin sugar over ``run(task, input)``.

TRANSITIONAL.  This is the one module of engines/llm that imports agent packages (deferred, in
each method), for the callers that still name a function instead of running a task:

* :class:`ClientCalls` (``LLM.answer(text, question, row_key=…)``, ``LLM.summary(text, row_key=…)``,
  ``LLM.parse``, ``LLM.classify``, …): engines/suql/execute.py (answer, summary), the Lab
  (parse, classify, answer), and tests;
* :class:`BackendCalls` (``backend.answer(text, question)`` -> Output, …): tests.

New code calls ``llm.run(TASK, Input(...))`` with the task of the agent package.  When the callers
above have moved, this module goes, and engines/llm imports no agent at all.

A backend written against the old protocol (a test double with ``policy(...)`` but no ``run``, a
subclass of the sim that overrides ``hybrid_parse``, a method set on an instance) keeps working: :func:`legacy_method` finds its
own per-function method, and the client calls that instead of ``run``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines.llm.protocol import Answer, Output, Results, Routed, Turn
    from engines.llm.task import Task


def _sugar(method: Callable) -> Callable:
    method.task_sugar = True  # type: ignore[attr-defined]
    return method


def legacy_method(backend: Any, task: Task) -> Callable[..., Output] | None:
    """The backend's own per-function method for ``task`` (bound), if it has one that is not the
    sugar below; ``None`` when ``backend.run(task, input)`` answers it."""
    if task.legacy_args is None:
        return None
    impl = getattr(backend, task.name, None)  # the instance's own (a test may set one), else its class's
    if impl is None or getattr(getattr(impl, "__func__", impl), "task_sugar", False):
        return None
    return impl


class BackendCalls:
    """The per-function methods of a backend (each returns an Output), over ``self.run``."""

    run: Callable[..., Output]

    @_sugar
    def route(self, utterance: str, history: Sequence[Turn], schema: str) -> Output:
        from engines.sql import tasks as t

        return self.run(t.ROUTE, t.Dialogue(utterance, tuple(history), schema))

    @_sugar
    def parse(self, utterance: str, history: Sequence[Turn], schema: str) -> Output:
        from engines.sql import tasks as t

        return self.run(t.PARSE, t.Dialogue(utterance, tuple(history), schema))

    @_sugar
    def classify(self, value: str, field: str, candidates: Sequence[str]) -> Output:
        from engines.sql import tasks as t

        return self.run(t.CLASSIFY, t.ClassifyInput(value, field, tuple(candidates)))

    @_sugar
    def respond(self, utterance: str, history: Sequence[Turn], results: Results | None, schema: str = "") -> Output:
        from engines.sql import tasks as t

        return self.run(t.RESPOND, t.RespondInput(utterance, tuple(history), results, schema))

    @_sugar
    def answer(self, text: str, question: str) -> Output:
        from engines.suql import tasks as t

        return self.run(t.ANSWER, t.AnswerInput(text, question))

    @_sugar
    def summary(self, text: str) -> Output:
        from engines.suql import tasks as t

        return self.run(t.SUMMARY, t.SummaryInput(text))

    @_sugar
    def hybrid_parse(self, question: str, schema: str, failed: Sequence[str] = ()) -> Output:
        from engines.hybridqa import tasks as t

        return self.run(t.HYBRID_PARSE, t.ParseInput(question, schema, tuple(failed)))

    @_sugar
    def short_answer(self, question: str, results: Results) -> Output:
        from engines.hybridqa import tasks as t

        return self.run(t.SHORT_ANSWER, t.ShortAnswerInput(question, results))

    @_sugar
    def policy(self, question: str, history: Sequence[Any], sample: int = 0) -> Output:
        from engines.spinach import tasks as t

        return self.run(t.POLICY, t.PolicyInput(question, tuple(history), sample))

    @_sugar
    def prune_entry(self, question: str, entry: str) -> Output:
        from engines.spinach import tasks as t

        return self.run(t.PRUNE_ENTRY, t.PruneInput(question, entry))


class ClientCalls:
    """The per-function methods of the client (each returns the value), over ``self.run``."""

    run: Callable[..., Any]

    def route(self, utterance: str, history: Sequence[Turn], schema: str) -> Routed:
        from engines.sql import tasks as t

        return self.run(t.ROUTE, t.Dialogue(utterance, tuple(history), schema))

    def parse(self, utterance: str, history: Sequence[Turn], schema: str) -> str:
        from engines.sql import tasks as t

        return self.run(t.PARSE, t.Dialogue(utterance, tuple(history), schema))

    def classify(self, value: str, field: str, candidates: Sequence[str]) -> tuple[str, ...]:
        from engines.sql import tasks as t

        return self.run(t.CLASSIFY, t.ClassifyInput(value, field, tuple(candidates)))

    def respond(self, utterance: str, history: Sequence[Turn], results: Results | None, schema: str = "") -> str:
        from engines.sql import tasks as t

        return self.run(t.RESPOND, t.RespondInput(utterance, tuple(history), results, schema))

    def answer(self, text: str, question: str, *, row_key: str | None = None) -> Answer:
        """The answer, or Unknown when the backend's reply cannot be used (the call is reported
        failed and nothing is cached, so one bad reply loses its own row only)."""
        from engines.suql import tasks as t

        return self.run(t.ANSWER, t.AnswerInput(text, question), row_key=row_key)

    def summary(self, text: str, *, row_key: str | None = None) -> str | None:
        """The summary, or ``None`` when the backend's reply cannot be used (as :meth:`answer`)."""
        from engines.suql import tasks as t

        return self.run(t.SUMMARY, t.SummaryInput(text), row_key=row_key)

    def hybrid_parse(self, question: str, schema: str, failed: Sequence[str] = ()) -> str:
        from engines.hybridqa import tasks as t

        return self.run(t.HYBRID_PARSE, t.ParseInput(question, schema, tuple(failed)))

    def short_answer(self, question: str, results: Results) -> str:
        from engines.hybridqa import tasks as t

        return self.run(t.SHORT_ANSWER, t.ShortAnswerInput(question, results))

    def policy(self, question: str, history: Sequence[Any], *, sample: int = 0) -> Any:
        from engines.spinach import tasks as t

        return self.run(t.POLICY, t.PolicyInput(question, tuple(history), sample))

    def prune_entry(self, question: str, entry: str) -> str:
        """The entity page with only the lines that bear on the question (SPINACH's pruning)."""
        from engines.spinach import tasks as t

        return t.kept_page(entry, self.run(t.PRUNE_ENTRY, t.PruneInput(question, entry)))
