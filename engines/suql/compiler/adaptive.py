"""The adaptive row loop of the retrieval modes (E, F): it learns from the answers as they arrive.

A LIMIT needs matches, and a match needs every answer() of its conjunct to say 'Yes'.  Before the
first call the only evidence is retrieval (BM25 of the question over the row's sentences); every
answer adds some: the sentences a 'Yes' quoted (``Answer.evidence``, verbatim sentences of the text),
the sentences a 'No' quoted, and how often rows of each kind said what.  :class:`Learner` turns this
into, per row and per ``answer(...) = 'Yes'`` predicate, an estimate of P(Yes) and P(No):

- a sentence a 'Yes' quoted is labelled ``pos``, one a 'No' quoted ``neg``, every other sentence of
  an answered row ``silent`` (the answer did not rely on it);
- a row holding a ``pos`` sentence, or an unlabelled one resembling it (BM25 of the quoted sentence over
  the row's chunks, as a share of its own score), is in class ``pos``; one holding a ``neg`` sentence is
  ``neg``; one whose sentences are all labelled and neither is ``explained``; one whose unlabelled text
  mentions the question (BM25 of its words, or the cosine of embeddings, :mod:`engines.suql.compiler.semantic`:
  WordLlama's static word vectors by default, the sentence model all-MiniLM-L6-v2 with
  ``suql_ranker = "sentence"``) is ``mention``; else ``none``;
- each class has (Yes, No, Unknown) counts per predicate: a prior, plus the answers of rows that were
  in that class when they were asked; an unlabelled row's P(Yes) also grows with how close its closest
  sentence is to the question.

It reads only what a real executor sees: the rows' text, the question and the answers received.

:class:`AdaptiveLoop` then decides rows:

- under a LIMIT without ORDER BY, the next row is the one most likely to match: the product over its
  conjunct's predicates of P(Yes) (known answers count 1 or 0), the best conjunct of the DNF;
- a row's predicates are asked least-likely-Yes first under a LIMIT (it stops at the first answer that
  is not 'Yes': the row cannot match, and whether it is False or Unknown is only asked if the LIMIT is
  never met), most-likely-No first otherwise (only a 'No' stops a row under Kleene AND);
- rows run on the pool without a sample phase; they are taken in the order they were picked (the
  learner sees the answers in that order), so a run with the same inputs and pool makes the same calls
  and returns the same rows: the first matches in the visit order, not in arrival order; past the
  LIMIT the calls already in flight finish unused, at most pool - 1 of them.

The rows returned are the same as the static loop's; only which rows are asked, and in what order,
changes (a LIMIT without ORDER BY may return any matches: which ones depends on the pool, not on timing).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np
from sqlglot import exp

from engines.errors import Cancelled
from engines.retrieval.bm25 import ChunkIndex, as_text, chunks_of
from engines.suql.compiler.asker import BudgetExhausted, Halted
from engines.suql.compiler.context import RunContext, SelectContext
from engines.suql.compiler.cost import passes_if_yes
from engines.suql.compiler.kleene import DEFERRED, Deferred, Truth
from engines.suql.compiler.records import CallKey, Row, RowDecided
from engines.suql.compiler.rows import RowEvaluator
from engines.suql.compiler.semantic import question_vector, ranker_embedder
from engines.suql.dnf import Conjunct
from engines.suql.language import LLMCall, as_call, calls_in, is_llm_call

# (Yes, No, Unknown) pseudo-counts of each evidence class before any answer of this query
PRIORS: dict[str, tuple[float, float, float]] = {
    "pos": (8.0, 1.0, 1.0),  # resembles a sentence a 'Yes' quoted
    "neg": (0.1, 8.5, 1.4),  # holds a sentence a 'No' quoted
    "explained": (0.2, 0.3, 9.5),  # every sentence was in an answered row and relied on by no answer
    "mention": (4.0, 4.0, 2.0),  # mentions the question's words (BM25 at least half the best)
    "none": (1.0, 0.5, 8.5),  # says nothing the executor recognises
}
RESEMBLES = 0.6  # share of an evidence sentence's own BM25 score a row's best chunk needs to resemble it
MENTIONS = 0.5  # share of the best question score a row needs to mention the question
_MISSING = object()
SEMANTIC = True  # use the ranker's embeddings (static: when WordLlama is installed; sentence: always)
SEM_MENTIONS = 0.45  # share of the best candidate sentence's cosine to the question that counts as a mention
SEM_SCALE = True  # P(Yes) of an unlabelled row scales with its closest sentence's cosine share
SEM_FLOOR = 0.2  # ... as SEM_FLOOR + that share


def _norm(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def chunk_scores(index: ChunkIndex[Any], query: str) -> np.ndarray:
    """BM25 of ``query`` over every chunk (sentence) of ``index`` (``ChunkIndex.scores`` keeps each row's best)."""
    if index.retriever is None:
        return np.zeros(0)
    tokens = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
    vocab = index.retriever.vocab_dict
    query_tokens = [t for t in (tokens[0] if tokens else []) if t in vocab]
    if not query_tokens:
        return np.zeros(len(index.chunk_rows))
    return np.asarray(index.retriever.get_scores(query_tokens), dtype=float)


class _Learned:
    """What the run learned about one answer() call of the WHERE, sentence by sentence.

    A sentence an answer quoted is ``pos`` ('Yes') or ``neg`` ('No'); every other sentence of an answered
    row is ``silent``: the answer did not rely on it, so it is not a 'Yes' sentence (an Unknown says the
    whole text is silent).  A row's class for this call, from its sentences:

    - ``pos``: one is ``pos``, or an unlabelled one resembles a ``pos`` sentence (BM25 share ≥ RESEMBLES);
    - ``neg``: the same for ``neg``;
    - ``explained``: every sentence is labelled, none ``pos`` or ``neg``: nothing left that could say yes;
    - ``mention``: an unlabelled sentence mentions the question's words (BM25 share ≥ MENTIONS);
    - ``none``: otherwise.
    """

    def __init__(
        self, index: ChunkIndex[Any] | None, question: str, rows: Sequence[Row], text_sql: str, ranker: str = "static"
    ) -> None:
        self.index = index
        self.ranker = ranker
        self.sentences: dict[Any, list[str]] = {}  # row key -> its sentences, found when first needed
        self.chunks: dict[Any, tuple[int, int]] = {}  # row key -> its chunks' span in the index
        self.label: dict[str, str] = {}
        self.counts = {c: list(p) for c, p in PRIORS.items()}
        n_chunks = len(index.chunk_rows) if index is not None else 0
        self.pos_share = np.zeros(n_chunks)
        self.neg_share = np.zeros(n_chunks)
        self.question = np.zeros(n_chunks)
        self._seen: set[tuple[str, bool]] = set()
        self._rows = {r.key: r for r in rows}
        self._text_sql = text_sql
        self._position: dict[Any, int] = {}
        if index is not None and index.retriever is not None and n_chunks:
            self._position = {k: i for i, k in enumerate(index.keys)}
        self._semantic(question)
        if index is None or not self._position:
            return
        scores = chunk_scores(index, question)
        mine = np.isin(index.chunk_rows, [self._position[k] for k in self._rows if k in self._position])
        top = float(scores[mine].max()) if mine.any() else 0.0
        if top > 0:
            self.question = scores / top

    def _semantic(self, question: str) -> None:
        """Per candidate row, each sentence's cosine to the question as a share of the best candidate sentence's
        (the ranker's embeddings, :mod:`engines.suql.compiler.semantic`); nothing without them."""
        self.semantic: dict[Any, np.ndarray] = {}
        model = ranker_embedder(self.ranker) if SEMANTIC else None
        if model is None:
            return
        per_row = {k: self._sentences(k) for k in self._rows}
        distinct = list(dict.fromkeys(s for sents in per_row.values() for s in sents))
        if not distinct:
            return
        vectors = model.vectors(distinct)
        cos = vectors @ question_vector(model, question)
        top = float(cos.max())
        if top <= 0:
            return
        share = dict(zip(distinct, (cos / top).tolist()))
        for k, sents in per_row.items():
            self.semantic[k] = np.asarray([share[s] for s in sents])

    def _sentences(self, key: Any) -> list[str]:
        got = self.sentences.get(key)
        if got is not None:
            return got
        row = self._rows.get(key)
        sents = [_norm(c) for c in chunks_of(row.texts.get(self._text_sql))] if row is not None else []
        self.sentences[key] = sents
        p = self._position.get(key)
        if p is not None and self.index is not None:
            lo = int(np.searchsorted(self.index.chunk_rows, p, side="left"))
            hi = int(np.searchsorted(self.index.chunk_rows, p, side="right"))
            if hi - lo == len(sents):  # the index's chunks are this row's sentences, in order
                self.chunks[key] = (lo, hi)
        return sents

    def klass(self, key: Any) -> str:
        sents = self._sentences(key)
        labels = [self.label.get(s) for s in sents]
        span = self.chunks.get(key)
        open_ = [j for j, lab in enumerate(labels) if lab is None]

        def resembles(share: np.ndarray) -> bool:
            return span is not None and any(share[span[0] + j] >= RESEMBLES for j in open_)

        if "pos" in labels or resembles(self.pos_share):
            return "pos"
        if "neg" in labels:  # resembling a 'No' sentence is no sign: "no outdoor seating" ~ "outdoor seating"
            return "neg"
        if not open_ and sents:
            return "explained"
        if span is not None and any(self.question[span[0] + j] >= MENTIONS for j in open_):
            return "mention"
        sem = self.semantic.get(key)
        if sem is not None and any(sem[j] >= SEM_MENTIONS for j in open_):
            return "mention"
        return "none"

    def _closeness(self, key: Any) -> float:
        """How close the row's closest unlabelled sentence is to the question (1 without embeddings)."""
        sem = self.semantic.get(key)
        if sem is None:
            return 1.0
        open_ = [sem[j] for j, s in enumerate(self._sentences(key)) if s not in self.label]
        return SEM_FLOOR + max(0.0, max(open_, default=0.0))

    def p(self, key: Any) -> tuple[float, float]:
        """(P(Yes), P(No)) for the row ``key``."""
        klass = self.klass(key)
        yes, no, unknown = self.counts[klass]
        total = yes + no + unknown
        if klass in ("mention", "none") and SEM_SCALE:
            return min(0.95, yes / total * self._closeness(key)), no / total
        return yes / total, no / total

    def learn(self, key: Any, value: Any, quoted: Sequence[str]) -> None:
        """The row ``key`` answered ``value`` quoting ``quoted``: label its sentences."""
        said = "pos" if value == "Yes" else None if value is None else "neg"
        quoted_n = {_norm(q) for q in quoted} if said else set()
        for s in self._sentences(key):
            if s in quoted_n:
                self.label[s] = said  # type: ignore[assignment]
            else:
                self.label.setdefault(s, "silent")
        if said is None or self.index is None or self.index.retriever is None:
            return
        share = self.pos_share if said == "pos" else self.neg_share
        for q in quoted:
            if (q, said == "pos") in self._seen:
                continue
            self._seen.add((q, said == "pos"))
            scores = chunk_scores(self.index, q)
            top = float(scores.max()) if len(scores) else 0.0
            if top > 0:
                np.maximum(share, scores / top, out=share)


class Learner:
    """Per row and ``answer(...) = 'Yes'`` predicate: P(Yes) and P(No), from the answers so far."""

    def __init__(
        self,
        ctx: RunContext,
        sel: SelectContext,
        conjuncts: Sequence[Conjunct],
        orders: Sequence[Sequence[int]],
        rows: Sequence[Row],
        scores: Mapping[str, Mapping[Any, float]],
        indexes: Mapping[str, ChunkIndex[Any]],
    ) -> None:
        self.ctx = ctx
        self.sel = sel
        self.conjuncts = conjuncts
        self.static_orders = [list(o) for o in orders]
        self.calls: dict[tuple[str, str, str], _Learned] = {}
        self.call_of: dict[CallKey, LLMCall] = {}
        # (conjunct, predicate) -> (call key, the literal a 'Yes' must equal), or None: not learnable
        self.pred: dict[tuple[int, int], tuple[tuple[str, str, str], str] | None] = {}
        for i, c in enumerate(conjuncts):
            for k, lit in enumerate(c.text):
                self.pred[(i, k)] = None
                nodes = calls_in(lit)
                if len(nodes) != 1 or not passes_if_yes(lit):
                    continue
                call = as_call(nodes[0])
                if call.function != "answer":
                    continue
                inner = lit.unnest() if isinstance(lit, exp.Paren) else lit
                other = inner.expression if is_llm_call(inner.this) else inner.this
                if call.key not in self.calls:
                    self.calls[call.key] = _Learned(
                        indexes.get(call.sql()), call.question, rows, call.text_sql, ranker=ctx.ranker
                    )
                    self.call_of[call.key] = call
                self.pred[(i, k)] = (call.key, other.name)

    def _value(self, row: Row, ck: tuple[str, str, str]) -> Any:
        return self.sel.values.get((row.key, ck), _MISSING)

    def _p_true(self, row: Row, i: int, k: int) -> float:
        info = self.pred[(i, k)]
        if info is None:
            return 0.5
        ck, literal = info
        v = self._value(row, ck)
        if v is _MISSING:
            return self.calls[ck].p(row.key)[0]
        return 1.0 if v is not None and str(v) == literal else 0.0

    def priority(self, row: Row) -> float:
        """The chance the row matches per call it is expected to cost (the order that finds the first
        match in the fewest expected calls, for independent rows): per conjunct, the product of its
        predicates' P(True) over the expected calls when they are asked least likely first, each
        asked only while the ones before said True; the best conjunct."""
        best = 0.0
        for i, c in enumerate(self.conjuncts):
            if row.flags[i] is not True:
                continue  # False: out; Unknown: the conjunct cannot be True
            match, cost, going = 1.0, 0.0, 1.0
            for p, known in sorted((self._p_true(row, i, k), self._known(row, i, k)) for k in range(len(c.text))):
                match *= p
                if not known:
                    cost += going
                going *= p
            best = max(best, match / cost if cost > 0 else match * 1e9)
        return best

    def _known(self, row: Row, i: int, k: int) -> bool:
        info = self.pred[(i, k)]
        return info is not None and self._value(row, info[0]) is not _MISSING

    def row_orders(self, row: Row, *, defer: bool) -> list[list[int]]:
        """Each conjunct's predicates in the order to ask them on this row: known values first (free),
        then least likely Yes first (``defer``: a LIMIT wants matches) or most likely No first."""
        out = []
        for i, c in enumerate(self.conjuncts):
            static = self.static_orders[i]
            infos = [self.pred[(i, k)] for k in range(len(c.text))]
            if len(c.text) < 2 or any(info is None for info in infos):
                out.append(static)
                continue
            rank = {k: n for n, k in enumerate(static)}

            def key(k: int, i: int = i, rank: dict[int, int] = rank) -> tuple[float, int]:
                ck, _ = self.pred[(i, k)]  # type: ignore[misc]
                if self._value(row, ck) is not _MISSING:
                    return (-1.0, rank[k])
                yes, no = self.calls[ck].p(row.key)
                return (yes if defer else -no, rank[k])

            out.append(sorted(range(len(c.text)), key=key))
        return out

    def classes(self, row: Row) -> dict[tuple[str, str, str], str]:
        """The class of each call not yet asked on ``row``, when it is submitted."""
        return {ck: learned.klass(row.key) for ck, learned in self.calls.items() if self._value(row, ck) is _MISSING}

    def observe(self, row: Row, classes: dict[tuple[str, str, str], str]) -> None:
        """What the row's answers teach: class counts, and the sentences its 'Yes' and 'No' answers quoted."""
        for ck, klass in classes.items():
            v = self._value(row, ck)
            if v is _MISSING:
                continue  # not asked (the row stopped before)
            learned = self.calls[ck]
            learned.counts[klass][0 if v == "Yes" else 2 if v is None else 1] += 1.0
            call = self.call_of[ck]
            raw = row.texts.get(call.text_sql)
            if raw is None:
                continue
            quoted = self.ctx.asker.evidence.get(("answer", as_text(raw), call.question), ())
            learned.learn(row.key, v, quoted)


@dataclass
class _Progress:
    """Where one :meth:`AdaptiveLoop.decide` stands: matches counted, whether to stop, the last row kept
    (ordered, under a LIMIT), and how many rows were reported along the visit order."""

    matched: int = 0
    stop: bool = False
    cut: int | None = None
    reported: int = 0


Submitted = tuple[Row, dict[CallKey, str], list[list[int]]]  # a row, its calls' classes, its predicate orders


class AdaptiveLoop:
    """Decides rows on the pool in the order the :class:`Learner` suggests (see the module's docstring)."""

    def __init__(self, ctx: RunContext, evaluator: RowEvaluator, learner: Learner) -> None:
        self.ctx = ctx
        self.evaluator = evaluator
        self.learner = learner

    def decide(
        self,
        visit: Sequence[Row],
        *,
        lazy: bool,
        needed: int,
        ordered: bool,
        defer: Callable[[Row], bool] | None = None,
    ) -> list[tuple[Any, Truth | Deferred]]:
        """Each decided row's truth.  ``defer`` (lazy verification): every row stops at its first condition
        that is not 'Yes' (asked least likely 'Yes' first), and of the rows that can then no longer match only
        those ``defer`` says False for are decided in full; the others come back
        :data:`~engines.suql.compiler.kleene.DEFERRED` (unless a LIMIT was met: then no row is listed)."""
        ctx, learner = self.ctx, self.learner
        status: dict[int, Truth | Deferred] = {}
        done_order: list[int] = []
        deferred: list[int] = []
        state = _Progress()
        remaining = list(range(len(visit)))
        rerank = lazy and not ordered

        def pick() -> int | None:
            if not remaining:
                return None
            if not rerank:
                return remaining.pop(0)
            j = min(
                range(len(remaining)),
                key=lambda n: (-learner.priority(visit[remaining[n]]), -visit[remaining[n]].score, remaining[n]),
            )
            return remaining.pop(j)

        def record(j: int, truth: Truth | Deferred) -> None:
            if truth is DEFERRED:  # not decided (it cannot match): reported only if it is decided in full later
                deferred.append(j)
                status[j] = DEFERRED
            else:
                late = status.get(j) is DEFERRED  # decided in full after the LIMIT was not met
                status[j] = truth
                done_order.append(j)
                if not ordered or late:
                    self._report(visit[j], truth)
                    state.matched += truth is True
            if ordered:  # report, count and stop along the visit order only
                while state.reported < len(visit) and state.reported in status:
                    r = state.reported
                    decided = status[r]
                    if decided is not DEFERRED:
                        self._report(visit[r], decided)
                        state.matched += decided is True
                    state.reported += 1
                    if lazy and state.matched >= needed:
                        state.cut = r
                        break
            if lazy and state.matched >= needed:
                state.stop = True

        def task(j: int, defer: bool) -> Submitted:
            row = visit[j]
            return row, learner.classes(row), learner.row_orders(row, defer=defer)

        exhausted = False
        left: list[int] = []  # deferred rows lazy verification leaves unsettled
        # first every row until it cannot match (the matches first); then, unless a LIMIT was met, the rows
        # that stopped at an Unknown are decided in full (eager), or those ``defer`` lets go (lazy): so a lazy
        # run asks a prefix of what the eager run asks, and settling asks the rest
        for phase_defer in (True, False):
            if not phase_defer:
                left = [j for j in deferred if defer is not None and defer(visit[j])]
                remaining[:] = sorted(set(deferred) - set(left))
                deferred.clear()
                rerank = False
            if state.stop or exhausted:
                break
            if ctx.pool == 1:
                while not state.stop and (j := pick()) is not None:
                    ctx.check_cancel()
                    row, classes, orders = task(j, phase_defer)
                    try:
                        truth = self._truth(row, orders, phase_defer)
                    except BudgetExhausted:
                        exhausted = True
                        break
                    learner.observe(row, classes)
                    record(j, truth)
            else:
                exhausted = self._pooled(pick, task, record, state, phase_defer, lazy=lazy and phase_defer)
        cut = state.cut
        keep = [j for j in done_order if cut is None or j <= cut]
        if ordered:
            keep.sort()
        out: list[tuple[Any, Truth | Deferred]] = [(visit[j].key, _decided(status[j])) for j in keep]
        if not state.stop and not exhausted:  # unsettled: listed to verify with what is known
            for j in sorted(left):
                self._report(visit[j], None)
                out.append((visit[j].key, DEFERRED))
        return out

    def _pooled(
        self,
        pick: Callable[[], int | None],
        task: Callable[[int, bool], Submitted],
        record: Callable[[int, Truth | Deferred], None],
        state: _Progress,
        defer: bool,
        *,
        lazy: bool,
    ) -> bool:
        """One phase on the pool.  True when the budget ran out.

        Rows are taken in the order they were picked, whatever order their answers arrive in: the learner
        sees the answers in that order and row ``n + window`` is picked right after row ``n`` is taken, so
        every pick, and with it the calls and the rows returned, is the same from run to run (the first
        matches in the visit order, not in arrival order).  A row waiting for its next answer holds no
        call slot (the asker bounds the calls in flight to the pool).  Under a LIMIT the window is the
        pool (past the LIMIT at most pool - 1 calls are in flight, and their answers go unused); without
        one it is twice the pool, so the slots stay busy while rows wait for their earlier conditions.
        """
        ctx, learner = self.ctx, self.learner
        window = ctx.pool if lazy else 2 * ctx.pool
        exhausted = False
        with ThreadPoolExecutor(max_workers=window, thread_name_prefix="suql") as ex:
            pending: deque[tuple[int, Row, dict[CallKey, str], Future[Truth | Deferred]]] = deque()

            def fill() -> None:
                while not state.stop and not exhausted and len(pending) < window:
                    ctx.check_cancel()
                    j = pick()
                    if j is None:
                        return
                    row, classes, orders = task(j, defer)
                    pending.append((j, row, classes, ex.submit(self._truth, row, orders, defer)))

            try:
                fill()
                while pending:
                    j, row, classes, fut = pending.popleft()
                    try:
                        truth = fut.result()
                    except BudgetExhausted:
                        exhausted = True  # nothing new starts; the rows already answered are still taken
                        continue
                    learner.observe(row, classes)
                    record(j, truth)
                    if state.stop:
                        ctx.asker.halt.set()  # the rows still in flight start no further call
                        break
                    fill()
            finally:
                rest = [p[3] for p in pending]
                wait(rest)  # calls already started finish; their rows are not used
                ctx.asker.halt.clear()
                for fut in rest:
                    e = fut.exception()
                    if e is not None and not isinstance(e, (Cancelled, BudgetExhausted, Halted)):
                        raise e
        return exhausted

    def _truth(self, row: Row, orders: list[list[int]], defer: bool) -> Truth | Deferred:
        """The row's truth; a row decided in full after it stopped (``defer`` False) asks verification calls:
        it could no longer match."""
        if defer:
            return self.evaluator.truth(row, orders=orders, defer=True)
        asker = self.ctx.asker
        asker.set_verifying(True)
        try:
            return self.evaluator.truth(row, orders=orders, defer=False)
        finally:
            asker.set_verifying(False)

    def _report(self, row: Row, truth: Truth) -> None:
        self.ctx.state.rows_examined += 1
        self.ctx.emit(RowDecided(row.label, {True: "match", False: "no", None: "to verify"}[truth]))


def _decided(truth: Truth | Deferred) -> Truth:
    """A kept row's truth: a row is kept only once decided in full (a deferred row is decided again)."""
    if truth is DEFERRED:
        raise AssertionError("a deferred row was kept undecided")
    return truth
