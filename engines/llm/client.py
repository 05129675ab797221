"""The LLM every engine calls: a backend wrapped with call events, the answer cache, cancellation
and usage (tokens and estimated cost, summed in :attr:`LLM.usage`)."""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from engines.errors import Cancelled, ConfigurationError, EngineError, LLMError, ReplyError
from engines.events import CallFailed, CallFinished, CallStarted, Emit, ignore
from engines.llm.protocol import NO_USAGE, Backend, Output, Usage, backend_id
from engines.llm.task import I, O, Task
from engines.llm.usage import UsageTotals, cost_usd, estimate_tokens
from engines.llm.waiting import cancellable
from engines.settings import ModelPrice, Settings

if TYPE_CHECKING:
    from engines.llm.cache import AnswerStore

log = logging.getLogger(__name__)


@dataclass
class CallCounter:
    """Counts calls per function, and sums their usage; shared by every binding of one LLM."""

    counts: dict[str, int] = field(default_factory=dict)
    cached: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def add(self, function: str, cached: bool) -> None:
        with self._lock:
            self.counts[function] = self.counts.get(function, 0) + 1
            self.cached += int(cached)


class LLM:
    """Runs tasks on a backend; emits ``CallStarted`` / ``CallFinished`` around every call.

    ``run(task, input)`` is the one call: ``llm.run(ANSWER, AnswerInput(text, question))`` with the
    task of the agent package (engines/sql/tasks.py, engines/suql/tasks.py, …).

    Usage: every call's tokens (the API's usage, or for the simulated backend an estimate on the
    rendered prompt, :func:`estimated_usage`) are priced with ``prices`` (model id -> price per
    million tokens, ``Settings.llm_prices``), shown on its ``CallFinished`` and summed in
    :attr:`usage`.  The simulated backend's tokens are an estimate and are never priced: it costs
    nothing, so its calls have no cost (``cost_usd`` None) and no model."""

    def __init__(
        self,
        backend: Backend,
        *,
        cache: AnswerStore | None = None,
        emit: Emit = ignore,
        cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.perf_counter,
        counter: CallCounter | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.emit = emit
        self.cancel = cancel
        self.clock = clock
        self.counter = counter or CallCounter()
        self.prices: Mapping[str, ModelPrice] = prices or {}

    @property
    def usage(self) -> UsageTotals:
        """Tokens and estimated cost of every call of this LLM (all its bindings) so far."""
        return self.counter.usage

    @property
    def backend_id(self) -> str:
        return backend_id(self.backend)

    def bind(self, emit: Emit | None = None, cancel: threading.Event | None = None) -> LLM:
        """The same LLM reporting to another listener (and checking another cancel flag)."""
        return LLM(
            self.backend,
            cache=self.cache,
            emit=emit or self.emit,
            cancel=cancel if cancel is not None else self.cancel,
            clock=self.clock,
            counter=self.counter,
            prices=self.prices,
        )

    # --- the one place calls happen ---------------------------------------------------------

    def run(self, task: Task[I, O], input: I, *, row_key: str | None = None) -> O:
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

    def _run(self, task: Task[I, O], input: I, row_key: str | None) -> O:
        function = task.name
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        call_id = self.counter.next_id()
        self.emit(CallStarted(call_id, function, _one_line(task.describe(input)), row_key, self.backend.name))
        start = self.clock()
        cache, key_of, encode, decode = self.cache, task.cache_key, task.encode, task.decode
        if cache is None or key_of is None or encode is None or decode is None:  # not a cached task (or no cache)
            cache = None
        cache_key = key_of(input) if cache is not None and key_of is not None else None
        if cache is not None and cache_key is not None and decode is not None:
            hit = cache.get(function, cache_key[0], cache_key[1], self.backend_id)
            if hit is not None:
                value = decode(hit)
                self.counter.add(function, cached=True)
                self._finished(call_id, task, input, value, start, row_key, cached=True)
                return value
        try:
            with cancellable(self.cancel):
                out = self.backend.run(task, input)
        except EngineError as e:
            self.emit(CallFailed(call_id, function, str(e), self.clock() - start))
            raise
        except Exception as e:  # a backend bug must still reach the user as a message
            self.emit(CallFailed(call_id, function, f"{type(e).__name__}: {e}", self.clock() - start))
            raise LLMError(f"the {self.backend.name} backend failed in {function}(): {type(e).__name__}: {e}") from e
        value = out.value
        if cache is not None and cache_key is not None and encode is not None:
            cache.put(function, cache_key[0], cache_key[1], self.backend_id, encode(value))
        self.counter.add(function, cached=False)
        usage, model, estimated = self._usage(task, input, out)
        # an estimate (the simulated backend) is not a bill: no cost
        cost = None if estimated else cost_usd(usage, model, self.prices, batch=getattr(out, "batch", False))
        self.counter.usage.add(usage, cost, estimated=estimated)
        self._finished(
            call_id,
            task,
            input,
            value,
            start,
            row_key,
            cached=False,
            usage=usage,
            cost=cost,
            estimated=estimated,
            model=model,
        )
        return value

    def _finished(
        self,
        call_id: int,
        task: Task[I, O],
        input: I,
        value: O,
        start: float,
        row_key: str | None,
        *,
        cached: bool,
        usage: Usage = NO_USAGE,
        cost: float | None = None,
        estimated: bool = False,
        model: str | None = None,
    ) -> None:
        """Report a finished call (from the cache: ``cached``, no usage)."""
        self.emit(
            CallFinished(
                call_id,
                task.name,
                _one_line(task.show(input, value)),
                task.evidence(value),
                self.clock() - start,
                cached,
                usage.input_tokens,
                usage.output_tokens,
                row_key,
                usage.cached_input_tokens,
                cost,
                estimated,
                model,
            )
        )

    def _usage(self, task: Task[Any, Any], input: Any, out: Output[Any]) -> tuple[Usage, str | None, bool]:
        """The call's usage, the model that prices it, and whether the tokens are an estimate."""
        usage = getattr(out, "usage", NO_USAGE)
        if self.backend.name == "sim" and usage.input_tokens is None and usage.output_tokens is None:
            return estimated_usage(task, input, out.value), None, True
        return usage, getattr(out, "model", None), False


_SYSTEM_TOKENS: list[int] = []


def estimated_usage(task: Task[I, O], input: I, value: O) -> Usage:
    """The tokens a real model would have used for this call: the rendered system prompt and
    prompt, and the reply (its JSON encoding when the task has one), counted by
    :func:`~engines.llm.usage.estimate_tokens` (characters / 4).  The simulated backend's calls
    are reported with it; a prompt that cannot be rendered is reported without tokens."""
    from engines.llm.prompting import system_prompt

    try:
        if not _SYSTEM_TOKENS:
            _SYSTEM_TOKENS.append(estimate_tokens(system_prompt()))
        context = task.context(input)
        if all(type(v) is str for v in context.values()):  # a row call (text, question): asked again and again
            prompt_tokens = _text_prompt_tokens(task.template, task.package, tuple(context.items()))
        else:
            prompt_tokens = _prompt_tokens(task.template, task.package, context)
    except Exception as error:
        log.debug("no token estimate for %s(): %s", task.name, error)
        return NO_USAGE
    if task.encode is not None:
        reply = json.dumps(task.encode(value), ensure_ascii=False, default=str)
    else:
        reply = "" if value is None else str(value)
    return Usage(_SYSTEM_TOKENS[0] + prompt_tokens, estimate_tokens(reply), 0, 0)


def _prompt_tokens(template: str, package: str | None, context: Mapping[str, Any]) -> int:
    from engines.llm.prompting import render_prompt

    return estimate_tokens(render_prompt(template, package=package, **context))


@lru_cache(maxsize=16384)
def _text_prompt_tokens(template: str, package: str | None, context: tuple[tuple[str, str], ...]) -> int:
    """The tokens of a prompt whose variables are all strings: the same strings render the same prompt, so a
    per-row call asked again (the same text and question, in another mode or query) is not rendered again."""
    return _prompt_tokens(template, package, dict(context))


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
                f"of the simulated LLM; use the sim backend."
            )
        if settings.backend == "openai":
            from engines.llm.openai_compat import make_openai_backend

            return make_openai_backend(settings)
        from engines.llm.batch import wrap  # --batch: answered from message batches while a batch run is active
        from engines.llm.claude import make_claude_backend

        return wrap(make_claude_backend(settings))
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
    backend = backend_from_settings(
        settings, **sim_params
    )  # fails first: no cache folder for a backend that cannot run
    cache: AnswerStore | None = None
    if settings.cache_enabled:
        from engines.llm.cache import AnswerCache

        cache = AnswerCache(settings.cache_dir)
    from engines.llm.batch import wrap_cache  # --batch: the collect rounds of a batched run store no answers

    cache = wrap_cache(cache)
    return LLM(backend, cache=cache, emit=emit, clock=clock, prices=settings.llm_prices)
