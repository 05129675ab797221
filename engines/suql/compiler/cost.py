"""The cost model (note 002): what a predicate costs, how often it lets a row go on, in which order to ask.

One frozen dataclass, :class:`CostModel`, holds every constant; its methods are pure.  The plan shows
its :class:`PredicateEstimate` values; the row loop re-estimates them after a sample of rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sqlglot import exp

from engines.suql.compiler.kleene import Truth
from engines.suql.dnf import Conjunct
from engines.suql.language import as_call, calls_in, is_llm_call, pretty
from engines.suql.plan import PredicateEstimate

__all__ = ["COST_MODEL", "CostModel", "PredicateEstimate", "Scores", "passes_if_yes"]


def passes_if_yes(pred: exp.Expr) -> bool:
    """``answer(...) = 'Yes'`` (either side): retrieval scores estimate how often it passes."""
    pred = pred.unnest() if isinstance(pred, exp.Paren) else pred
    if isinstance(pred, exp.EQ):
        for a, b in ((pred.this, pred.expression), (pred.expression, pred.this)):
            if is_llm_call(a) and isinstance(b, exp.Literal) and b.is_string and b.name.lower() == "yes":
                return True
    return False


Scores = Mapping[str, Mapping[Any, float]]  # answer() call sql -> row key -> BM25 score


@dataclass(frozen=True)
class CostModel:
    call_cost: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({"answer": 1.0, "summary": 2.0}))
    strong_match: float = 0.5  # share of the best BM25 score a row needs to count as mentioning a question
    no_given_mention: float = 0.5  # prior: share of rows mentioning a topic whose text says no
    sample_rows: int = 8  # rows evaluated in full to estimate how often each answer() predicate says no
    prior_weight: float = 4.0  # the prior counts as this many sampled rows

    def predicate_cost(self, pred: exp.Expr) -> float:
        return sum(self.call_cost[as_call(n).function] for n in calls_in(pred))

    @staticmethod
    def expected_cost(order: Sequence[PredicateEstimate]) -> float:
        """Expected calls per row with short-circuit: c1 + s1 c2 + s1 s2 c3 + ..."""
        total, passing = 0.0, 1.0
        for p in order:
            total += passing * p.cost
            passing *= p.selectivity
        return total

    @staticmethod
    def order(estimates: Sequence[PredicateEstimate], *, by_rank: bool) -> list[int]:
        """The evaluation order (indexes into ``estimates``): by rank, or as written."""
        order = list(range(len(estimates)))
        if by_rank:
            order.sort(key=lambda k: (estimates[k].rank, k))
        return order

    def prior(self, conjunct: Conjunct, candidate_keys: Sequence[Any], scores: Scores) -> list[PredicateEstimate]:
        """Each text predicate of ``conjunct`` estimated from the candidates' retrieval scores."""
        estimates = []
        for pos, pred in enumerate(conjunct.text):
            cost = self.predicate_cost(pred)
            sel, source = 0.5, "no estimate"
            pred_calls = [as_call(n).sql() for n in calls_in(pred)]
            if pred_calls and candidate_keys and all(pc in scores for pc in pred_calls):
                # a row "mentions" the question when its best chunk scores at least half the best
                # score anywhere: a chunk sharing only a common word ("great") does not count
                strong = [(self.strong_match * max(scores[pc].values(), default=0.0), scores[pc]) for pc in pred_calls]
                hits = sum(1 for k in candidate_keys if all(0 < bar <= got.get(k, 0.0) for bar, got in strong))
                share = hits / len(candidate_keys)
                # Under Kleene AND only a False stops a row; Unknown (the text is silent) goes on
                # to the next predicate.  Only rows that mention the topic can answer No, so a
                # predicate stops about half of the rows that mention it.
                if passes_if_yes(pred):
                    sel = min(0.98, max(0.02, 1 - self.no_given_mention * share))
                    source = f"{share:.0%} of candidates mention it; about half of those say no"
                else:
                    sel, source = min(0.95, max(0.05, 1 - share / 2)), "a non-'Yes' test: most rows go on"
            estimates.append(PredicateEstimate(pretty(pred), pos, cost, sel, source))
        return estimates

    def blend(
        self, estimates: Sequence[PredicateEstimate], observed: Mapping[int, Sequence[Truth]]
    ) -> list[PredicateEstimate]:
        """Each prior blended with what a sample of rows showed (``observed``: written position -> truths)."""
        updated = []
        for k, est in enumerate(estimates):
            seen = observed.get(k, [])
            false = sum(1 for t in seen if t is False)
            stop = (false + (1 - est.selectivity) * self.prior_weight) / (len(seen) + self.prior_weight)
            source = f"{false} of {len(seen)} sampled rows said no, blended with the prior"
            updated.append(
                PredicateEstimate(est.sql, est.written_position, est.cost, min(0.98, max(0.02, 1 - stop)), source)
            )
        return updated


COST_MODEL = CostModel()
