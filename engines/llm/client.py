"""The LLM every engine calls: a backend wrapped with call events, the answer cache and cancellation."""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from engines.errors import Cancelled, EngineError, LLMError, ReplyError
from engines.events import CallFailed, CallFinished, CallStarted, Emit, ignore
from engines.llm.protocol import Answer, Backend, Output, PolicyAction, PolicyStep, Results, Routed, Turn, backend_id
from engines.settings import Settings
from engines.llm.waiting import cancellable


@dataclass
class CallCounter:
    """Counts calls per function; shared by every binding of one LLM."""

    counts: dict[str, int] = field(default_factory=dict)
    cached: int = 0
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def add(self, function: str, cached: bool) -> None:
        with self._lock:
            self.counts[function] = self.counts.get(function, 0) + 1
            self.cached += int(cached)


class LLM:
    """Calls a backend; emits ``CallStarted`` / ``CallFinished`` around every call."""

    def __init__(
        self,
        backend: Backend,
        *,
        cache: Any | None = None,  # engines.llm.cache.AnswerCache
        emit: Emit = ignore,
        cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.perf_counter,
        counter: CallCounter | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.emit = emit
        self.cancel = cancel
        self.clock = clock
        self.counter = counter or CallCounter()

    @property
    def backend_id(self) -> str:
        return backend_id(self.backend)

    def bind(self, emit: Emit | None = None, cancel: threading.Event | None = None) -> "LLM":
        """The same LLM reporting to another listener (and checking another cancel flag)."""
        return LLM(
            self.backend,
            cache=self.cache,
            emit=emit or self.emit,
            cancel=cancel if cancel is not None else self.cancel,
            clock=self.clock,
            counter=self.counter,
        )

    # --- the protocol -----------------------------------------------------------------

    def route(self, utterance: str, history: Sequence[Turn], schema: str) -> Routed:
        out = self._call("route", utterance, lambda: self.backend.route(utterance, history, schema), render=lambda r: ("database" if r.needs_database else "no database") + f": {r.reason}")
        return out

    def parse(self, utterance: str, history: Sequence[Turn], schema: str) -> str:
        return self._call("parse", utterance, lambda: self.backend.parse(utterance, history, schema), render=str)

    def classify(self, value: str, field: str, candidates: Sequence[str]) -> tuple[str, ...]:
        return self._call(
            "classify",
            f"{field}: {value!r} among {len(candidates)} values",
            lambda: self.backend.classify(value, field, candidates),
            render=lambda v: ", ".join(v) if v else "(none)",
        )

    def answer(self, text: str, question: str, *, row_key: str | None = None) -> Answer:
        """The answer, or Unknown when the backend's reply cannot be used (:class:`ReplyError`):
        the call is reported failed and nothing is cached, so one bad reply loses its own row only."""
        try:
            return self._answer(text, question, row_key)
        except ReplyError:
            return Answer(None)

    def _answer(self, text: str, question: str, row_key: str | None) -> Answer:
        return self._call(
            "answer",
            question,
            lambda: self.backend.answer(text, question),
            render=Answer.render,
            evidence=lambda a: a.evidence,
            row_key=row_key,
            cache_key=(text, question),
            encode=lambda a: {"value": a.value, "evidence": list(a.evidence)},
            decode=lambda d: Answer(d["value"], tuple(d.get("evidence", ()))),
        )

    def prune_entry(self, question: str, entry: str) -> str:
        """The entity page with only the lines that bear on the question (SPINACH's pruning)."""
        lines = entry.splitlines()
        keep = self._call(
            "prune_entry",
            question,
            lambda: self.backend.prune_entry(question, entry),
            render=lambda k: f"kept {len(k)} of {len(lines)} lines",
        )
        return "\n".join(lines[i] for i in keep if 0 <= i < len(lines))

    def summary(self, text: str, *, row_key: str | None = None) -> str | None:
        """The summary, or ``None`` when the backend's reply cannot be used (as :meth:`answer`)."""
        try:
            return self._summary(text, row_key)
        except ReplyError:
            return None

    def _summary(self, text: str, row_key: str | None) -> str:
        return self._call(
            "summary",
            "summarise",
            lambda: self.backend.summary(text),
            render=lambda s: s,
            row_key=row_key,
            cache_key=(text, "summary()"),
            encode=lambda s: {"value": s},
            decode=lambda d: str(d["value"]),
        )

    def respond(self, utterance: str, history: Sequence[Turn], results: Results | None, schema: str = "") -> str:
        return self._call("respond", utterance, lambda: self.backend.respond(utterance, history, results, schema), render=str)

    def policy(self, question: str, history: Sequence[PolicyStep], *, sample: int = 0) -> PolicyAction:
        """SPINACH's next thought and action (never cached: the policy samples at temperature 1)."""
        return self._call(
            "policy",
            f"step {len(history) + 1}: {question}",
            lambda: self.backend.policy(question, history, sample),
            render=lambda a: f"{a.action_name}({a.action_argument})",
            evidence=lambda a: (a.thought,) if a.thought else (),
        )

    def hybrid_parse(self, question: str, schema: str, failed: Sequence[str] = ()) -> str:
        """HybridQA's zero-shot SUQL for one question over one table (``failed``: earlier attempts
        that returned nothing, so a retry writes another query)."""
        attempt = f" (attempt {len(failed) + 1})" if failed else ""
        return self._call("hybrid_parse", question + attempt, lambda: self.backend.hybrid_parse(question, schema, tuple(failed)), render=str)

    def short_answer(self, question: str, results: Results) -> str:
        """The one short answer HybridQA expects, from the rows a query returned."""
        return self._call(
            "short_answer",
            f"{question} ({results.total} row{'s' if results.total != 1 else ''})",
            lambda: self.backend.short_answer(question, results),
            render=lambda v: v or "(no answer)",
        )

    # --- the one place calls happen ---------------------------------------------------------

    def _call(
        self,
        function: str,
        prompt: str,
        run: Callable[[], Output],
        *,
        render: Callable[[Any], str],
        evidence: Callable[[Any], tuple[str, ...]] = lambda _v: (),
        row_key: str | None = None,
        cache_key: tuple[str, str] | None = None,
        encode: Callable[[Any], dict] | None = None,
        decode: Callable[[dict], Any] | None = None,
    ) -> Any:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        call_id = self.counter.next_id()
        self.emit(CallStarted(call_id, function, _one_line(prompt), row_key, self.backend.name))
        start = self.clock()
        if cache_key is not None and self.cache is not None and decode is not None:
            hit = self.cache.get(function, cache_key[0], cache_key[1], self.backend_id)
            if hit is not None:
                value = decode(hit)
                self.counter.add(function, cached=True)
                self.emit(CallFinished(call_id, function, _one_line(render(value)), evidence(value), self.clock() - start, True, row_key=row_key))
                return value
        try:
            with cancellable(self.cancel):
                out = run()
        except EngineError as e:
            self.emit(CallFailed(call_id, function, str(e), self.clock() - start))
            raise
        except Exception as e:  # a backend bug must still reach the user as a message
            self.emit(CallFailed(call_id, function, f"{type(e).__name__}: {e}", self.clock() - start))
            raise LLMError(f"the {self.backend.name} backend failed in {function}(): {type(e).__name__}: {e}") from e
        value = out.value
        if cache_key is not None and self.cache is not None and encode is not None:
            self.cache.put(function, cache_key[0], cache_key[1], self.backend_id, encode(value))
        self.counter.add(function, cached=False)
        self.emit(
            CallFinished(
                call_id,
                function,
                _one_line(render(value)),
                evidence(value),
                self.clock() - start,
                False,
                out.usage.input_tokens,
                out.usage.output_tokens,
                row_key,
            )
        )
        return value


def _one_line(text: str, width: int = 240) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def backend_from_settings(settings: Settings) -> Backend:
    """The backend the settings choose.  ``claude`` without a key raises a plain ConfigurationError."""
    if settings.backend == "claude":
        from engines.llm.claude import make_claude_backend

        return make_claude_backend(settings)
    from engines.llm.sim import SimBackend

    return SimBackend(
        seed=settings.seed,
        latency_s=settings.sim_latency_s,
        error_on_topic=settings.sim_error_on_topic,
        error_off_topic=settings.sim_error_off_topic,
    )


def llm_from_settings(settings: Settings, *, emit: Emit = ignore, clock: Callable[[], float] = time.perf_counter) -> LLM:
    """The backend the settings choose, with the persistent answer cache when it is enabled."""
    backend = backend_from_settings(settings)  # fails first: no cache folder for a backend that cannot run
    cache = None
    if settings.cache_enabled:
        from engines.llm.cache import AnswerCache

        cache = AnswerCache(settings.cache_dir)
    return LLM(backend, cache=cache, emit=emit, clock=clock)
