"""The one way a run asks the LLM: once per (function, text, question), within the run's budget."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace

from engines.events import CallFinished, CallStarted, Emit, Event
from engines.llm.client import LLM
from engines.retrieval.bm25 import as_text
from engines.suql.compiler.records import Row, Values
from engines.suql.language import LLMCall
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput

Pair = tuple[str, str, str]  # (function, text, question)
Known = tuple[Mapping[Pair, str | None], Mapping[Pair, tuple[str, ...]]]  # a run's answers and what they quoted


class BudgetExhausted(Exception):
    """The run's budget of real LLM calls is spent; the row being decided stays undecided."""


class Halted(Exception):
    """The row loop needs no more answers (its LIMIT is met): a speculative row stops before its next call."""


class Asker:
    """Asks answer() / summary() values for one run.

    A self-join's rows that read the same document share one answer; parallel workers asking the
    same pair wait for the first; a call that raised is not kept.  Cached answers cost nothing.

    ``pool``: at most this many calls are in flight at once, however many rows the row loop has in
    progress (a row waiting for its next answer holds no slot, so the pool's slots stay busy while
    rows remain).
    """

    def __init__(
        self,
        llm: LLM,
        emit: Emit,
        cancel: threading.Event | None,
        budget: int,
        *,
        pool: int = 1,
        known: Known | None = None,
    ) -> None:
        """``known``: the answers an earlier run of the same query already has (:meth:`known`), given back
        without a call: settling a lazy run asks only what it did not (``SuqlEngine.settle``)."""
        self._seen = threading.local()  # per thread: was the last LLM call answered from the cache?
        self._verifying = threading.local()  # per thread: is the row asking a condition after an Unknown?

        def tracking(event: Event) -> None:
            if isinstance(event, CallFinished):
                self._seen.cached = event.cached
            if isinstance(event, (CallStarted, CallFinished)):
                if self.verifying:
                    event = replace(event, verification=True)
                if self.phase:
                    event = replace(event, phase=self.phase)
            emit(event)

        self.llm = llm.bind(tracking, cancel)
        self.budget = budget
        self.budget_exhausted = False
        self._budget_lock = threading.Lock()
        self._spent = 0  # real (uncached) calls made or in flight in this run
        self._asked: dict[Pair, str | None] = dict(known[0]) if known is not None else {}
        self._asking: dict[Pair, threading.Event] = {}
        self._asked_lock = threading.Lock()
        # answer() pair -> the sentences its answer quoted
        self.evidence: dict[Pair, tuple[str, ...]] = dict(known[1]) if known is not None else {}
        self.settling = False  # every call of this run settles rows to verify (SuqlEngine.settle)
        self.phase = ""  # mode G: the cascade step asking ("pilot", "sample", "band"), marked on each call's events
        self.verification_calls = 0  # calls asked of rows already Unknown (what lazy verification leaves to settle)
        self.halt = threading.Event()  # set by the row loop once its LIMIT is met: no new call starts
        self._slots = threading.BoundedSemaphore(max(1, pool))  # calls in flight

    @property
    def verifying(self) -> bool:
        return self.settling or getattr(self._verifying, "depth", 0) > 0

    def set_verifying(self, on: bool) -> None:
        """The calls this thread asks from now on are verification calls (``on``), until the matching
        ``set_verifying(False)`` (they nest)."""
        self._verifying.depth = getattr(self._verifying, "depth", 0) + (1 if on else -1)

    def known(self) -> Known:
        """The answers this run has, for a later run of the same query (``known``)."""
        with self._asked_lock:
            return dict(self._asked), dict(self.evidence)

    def answer(self, text: str, question: str, *, row_key: str | None = None) -> str | None:
        pair = ("answer", text, question)

        def call() -> str | None:
            reply = self.llm.run(ANSWER, AnswerInput(text, question), row_key=row_key)
            self.evidence[pair] = tuple(reply.evidence)  # what the model quoted: the adaptive ranker learns from it
            return reply.value

        return self.ask(pair, call)

    def summary(self, text: str, *, row_key: str | None = None) -> str | None:
        return self.ask(("summary", text, ""), lambda: self.llm.run(SUMMARY, SummaryInput(text), row_key=row_key))

    def value(self, row: Row, call: LLMCall, values: Values) -> str | None:
        """``call``'s value on ``row``, kept in ``values``; a NULL text is NULL without a call."""
        k = (row.key, call.key)
        if k in values:
            return values[k]
        raw = row.texts.get(call.text_sql)
        if raw is None:  # SQL: a function of NULL is NULL (the missing side of a LEFT JOIN): no call
            values[k] = None
            return None
        text = as_text(raw)
        if call.function == "summary":
            v = self.summary(text, row_key=row.label)
        else:
            v = self.answer(text, call.question, row_key=row.label)
        values[k] = v
        return v

    def ask(self, pair: Pair, call: Callable[[], str | None]) -> str | None:
        while True:
            with self._asked_lock:
                if pair in self._asked:
                    return self._asked[pair]
                pending = self._asking.get(pair)
                if pending is None:
                    pending = self._asking[pair] = threading.Event()
                    mine = True
                else:
                    mine = False
            if not mine:
                pending.wait()
                continue
            try:
                value = self._spend(call)
                with self._asked_lock:
                    self._asked[pair] = value
                return value
            finally:
                with self._asked_lock:
                    self._asking.pop(pair, None)
                pending.set()

    def _spend(self, call: Callable[[], str | None]) -> str | None:
        """One LLM call within the budget of real calls.  A slot is reserved under the lock before the
        call, so parallel workers never exceed the budget; it is given back when the answer came from
        the cache."""
        if self.halt.is_set():
            raise Halted()
        with self._slots:
            if self.halt.is_set():  # the LIMIT was met while this call waited for a slot
                raise Halted()
            with self._budget_lock:
                if self._spent >= self.budget:
                    self.budget_exhausted = True
                    raise BudgetExhausted()
                self._spent += 1
            self._seen.cached = False
            value = call()  # a failed call keeps its budget slot: it may have cost
        with self._budget_lock:
            if self._seen.cached:
                self._spent -= 1
            if self.verifying:  # counted as answer_calls are, cached or not
                self.verification_calls += 1
        return value
