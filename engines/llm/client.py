"""The LLM every engine calls: a backend wrapped with call events, the answer cache and cancellation."""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from engines.errors import Cancelled, ConfigurationError, EngineError, LLMError, ReplyError
from engines.events import CallFailed, CallFinished, CallStarted, Emit, ignore
from engines.llm.compat import ClientCalls, legacy_method
from engines.llm.protocol import Backend, backend_id
from engines.llm.task import Task
from engines.llm.waiting import cancellable
from engines.settings import Settings


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


class LLM(ClientCalls):
    """Runs tasks on a backend; emits ``CallStarted`` / ``CallFinished`` around every call.

    ``run(task, input)`` is the one call; the per-function methods (``answer``, ``parse``, …) are the
    transitional sugar of :mod:`engines.llm.compat`."""

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

    # --- the one place calls happen ---------------------------------------------------------

    def run(self, task: Task, input: Any, *, row_key: str | None = None) -> Any:
        """Run ``task`` on ``input``: the call events, the answer cache (for a cached task),
        cancellation, usage, and the task's fallback when the backend's reply cannot be used
        (:class:`ReplyError`: the call is reported failed, nothing is cached, the fallback value is
        returned; a task without a fallback raises it)."""
        if task.fallback is None:
            return self._run(task, input, row_key)
        try:
            return self._run(task, input, row_key)
        except ReplyError:
            return task.fallback(input)

    def _run(self, task: Task, input: Any, row_key: str | None) -> Any:
        function = task.name
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        call_id = self.counter.next_id()
        self.emit(CallStarted(call_id, function, _one_line(task.describe(input)), row_key, self.backend.name))
        start = self.clock()
        cache_key = task.cache_key(input) if task.cached and self.cache is not None else None
        if cache_key is not None:
            hit = self.cache.get(function, cache_key[0], cache_key[1], self.backend_id)
            if hit is not None:
                value = task.decode(hit)
                self.counter.add(function, cached=True)
                self.emit(CallFinished(call_id, function, _one_line(task.show(input, value)), task.evidence(value),
                                       self.clock() - start, True, row_key=row_key))
                return value
        legacy = legacy_method(self.backend, task)
        try:
            with cancellable(self.cancel):
                out = legacy(*task.legacy_args(input)) if legacy is not None else self.backend.run(task, input)
        except EngineError as e:
            self.emit(CallFailed(call_id, function, str(e), self.clock() - start))
            raise
        except Exception as e:  # a backend bug must still reach the user as a message
            self.emit(CallFailed(call_id, function, f"{type(e).__name__}: {e}", self.clock() - start))
            raise LLMError(f"the {self.backend.name} backend failed in {function}(): {type(e).__name__}: {e}") from e
        value = out.value
        if cache_key is not None:
            self.cache.put(function, cache_key[0], cache_key[1], self.backend_id, task.encode(value))
        self.counter.add(function, cached=False)
        self.emit(
            CallFinished(
                call_id,
                function,
                _one_line(task.show(input, value)),
                task.evidence(value),
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


def backend_from_settings(settings: Settings, **sim_params: Any) -> Backend:
    """The backend the settings choose, built with every parameter it needs (none is set later).

    ``sim_params`` are further parameters of the simulated backend (``hybrid_params=…``,
    ``policy_params=…``); another backend refuses them with a ConfigurationError, since no real model
    has them.  ``claude`` without a key raises a plain ConfigurationError.
    """
    if settings.backend in ("claude", "openai"):
        if sim_params:
            raise ConfigurationError(
                f"{', '.join(sorted(sim_params))} {'is a parameter' if len(sim_params) == 1 else 'are parameters'} "
                f"of the simulated LLM; use the sim backend.")
        if settings.backend == "openai":
            from engines.llm.openai_compat import make_openai_backend

            return make_openai_backend(settings)
        from engines.llm.claude import make_claude_backend

        return make_claude_backend(settings)
    from engines.llm.sim import SimBackend

    params: dict[str, Any] = {
        "seed": settings.seed,
        "latency_s": settings.sim_latency_s,
        "error_on_topic": settings.sim_error_on_topic,
        "error_off_topic": settings.sim_error_off_topic,
    }
    params.update(sim_params)
    return SimBackend(**params)


def llm_from_settings(
    settings: Settings, *, emit: Emit = ignore, clock: Callable[[], float] = time.perf_counter, **sim_params: Any
) -> LLM:
    """The backend the settings choose (see :func:`backend_from_settings`), with the persistent
    answer cache when it is enabled."""
    backend = backend_from_settings(settings, **sim_params)  # fails first: no cache folder for a backend that cannot run
    cache = None
    if settings.cache_enabled:
        from engines.llm.cache import AnswerCache

        cache = AnswerCache(settings.cache_dir)
    return LLM(backend, cache=cache, emit=emit, clock=clock)
