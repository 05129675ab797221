"""Scoring answers that are tables (lecture 8 §5.3): SPINACH's row-wise EM and F1, set F1, bootstrap.

Rows are SPARQL JSON bindings (``{variable: {"type", "value", …}}``).  :func:`row_f1` is the
metric of the SPINACH paper (§5.1) and its ``eval.f1(…, maximal_matching=True)``:

1. the recall of gold row *i* by predicted row *j* is the share of gold *i*'s values (columns
   whose names end in ``Label`` or ``Description`` left out) found among *j*'s values — variable
   names do not matter, extra predicted columns cost nothing;
2. gold and predicted rows are paired one to one to maximise the summed recall (the Hungarian
   method, ``scipy.optimize.linear_sum_assignment``);
3. ``tp`` is the summed recall of the pairs; a pair with recall in (0, 1) adds ``1 − recall`` to
   ``fp + fn``; a pair with recall 0 adds 2; every unpaired row (more rows on one side) adds 1;
4. ``F1 = 2·tp / (2·tp + fp + fn)``; EM is 1 exactly when F1 is 1.

:func:`set_f1` pours every value of each table into a set and compares the sets — the naive
metric the lecture contrasts (it punishes extra columns and ignores which values share a row).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engines.errors import EngineError
from engines.jsonable import Jsonable, JsonShape

if TYPE_CHECKING:  # numpy and scipy are imported by the functions that compute, not by importing the metrics
    import numpy as np

Binding = Mapping[str, Mapping[str, Any]]
Rows = Sequence[Binding] | bool | None
Cell = tuple[tuple[str, Any], ...]
"""One value of a binding, hashable: its sorted (key, value) pairs."""

__all__ = [
    "row_f1",
    "row_em",
    "em_of",
    "check_size",
    "TooManyRows",
    "MAX_PAIRS",
    "set_f1",
    "Interval",
    "bootstrap",
    "bootstrap_difference",
    "is_label_column",
]


def is_label_column(name: str) -> bool:
    return name.endswith("Label") or name.endswith("Description")


def _cell(value: Mapping[str, Any]) -> Cell:
    return tuple(sorted(value.items()))


def _match_ratio(predicted: Binding, gold: Binding) -> float:
    """Recall of one gold row by one predicted row (the definition; :func:`_recall_matrix` computes it for all pairs)."""
    gold_values = [_cell(v) for k, v in gold.items() if not is_label_column(k)]
    if not gold_values:
        return 0.0
    gold_set = set(gold_values)
    useful = [c for c in (_cell(v) for v in predicted.values()) if c in gold_set]
    overlap = sum((Counter(gold_values) & Counter(useful)).values())
    return overlap / len(gold_values)


MAX_PAIRS = 25_000_000
"""The most (predicted rows × gold rows) :func:`row_f1` matches: 5,000 × 5,000.  The recall matrix
then takes 200 MB and the Hungarian method (cubic) a few seconds; beyond it both grow past what an
interactive command should take, so larger tables are refused with :class:`TooManyRows`."""


class TooManyRows(EngineError, ValueError):
    """The tables are too large to pair row by row within the bound."""


def _recall_matrix(predicted: Sequence[Binding], gold: Sequence[Binding]) -> np.ndarray:
    """``_match_ratio(p, g)`` for every pair, as a (len(predicted), len(gold)) array — same values, vectorised.

    The overlap of two multisets is the number of (value, occurrence) pairs they share: the second
    copy of a value in a row is the token (value, 1).  Every token of the gold rows gets a column;
    each side becomes a 0/1 sparse matrix and the overlaps are one sparse product.
    """
    import numpy as np
    from scipy.sparse import csr_matrix

    tokens: dict[tuple[Cell, int], int] = {}
    g_rows: list[int] = []
    g_cols: list[int] = []
    g_len = np.zeros(len(gold))
    for j, row in enumerate(gold):
        seen: Counter[Cell] = Counter()
        for k, v in row.items():
            if is_label_column(k):
                continue
            c = _cell(v)
            g_rows.append(j)
            g_cols.append(tokens.setdefault((c, seen[c]), len(tokens)))
            seen[c] += 1
        g_len[j] = sum(seen.values())
    p_rows: list[int] = []
    p_cols: list[int] = []
    for i, row in enumerate(predicted):
        seen = Counter()
        for v in row.values():
            c = _cell(v)
            token = tokens.get((c, seen[c]))
            seen[c] += 1
            if token is not None:
                p_rows.append(i)
                p_cols.append(token)
    width = max(1, len(tokens))
    p = csr_matrix((np.ones(len(p_rows)), (p_rows, p_cols)), shape=(len(predicted), width))
    g = csr_matrix((np.ones(len(g_rows)), (g_rows, g_cols)), shape=(len(gold), width))
    recall = (p @ g.T).toarray()  # the overlaps; a gold row with no values overlaps nothing, so stays 0
    np.divide(recall, g_len, out=recall, where=g_len > 0)
    return recall


def check_size(predicted: Rows, gold: Rows) -> None:
    """Raise :class:`TooManyRows` when :func:`row_f1` would pair more than :data:`MAX_PAIRS` rows."""
    if isinstance(predicted, bool) or isinstance(gold, bool) or not predicted or not gold:
        return
    pairs = len(predicted) * len(gold)
    if pairs > MAX_PAIRS:
        raise TooManyRows(
            f"row-wise F1 pairs every predicted row with every gold row (Hungarian matching, cubic time): "
            f"{len(predicted):,} × {len(gold):,} rows make {pairs:,} pairs, more than the {MAX_PAIRS:,} "
            f"(5,000 × 5,000) it scores; score a sample of the rows"
        )


def row_f1(predicted: Rows, gold: Rows) -> float:
    """SPINACH's row-wise F1 with maximal (Hungarian) matching.

    Raises :class:`TooManyRows` beyond :data:`MAX_PAIRS` pairs of rows.
    """
    if predicted is None:
        return 0.0
    if isinstance(predicted, bool) or isinstance(gold, bool):
        return float(predicted == gold)
    if gold is None:
        return 0.0
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    check_size(predicted, gold)
    cost = _recall_matrix(predicted, gold)
    rows, cols = linear_sum_assignment(cost, maximize=True)
    assigned = cost[rows, cols]
    tp = float(assigned[assigned > 0].sum())
    partial = assigned[(assigned < 1) & (assigned > 0)]
    fp_or_fn = float((1 - partial).sum())
    fp_or_fn += 2 * int(np.sum(assigned <= 0))
    fp_or_fn += (len(predicted) - len(rows)) + (len(gold) - len(cols))
    if tp == 0:
        return 0.0
    return 2 * tp / (2 * tp + fp_or_fn)


def em_of(f1: float) -> float:
    """Row-wise EM from row-wise F1: 1 exactly when F1 is 1."""
    return 1.0 if f1 == 1.0 else 0.0


def row_em(predicted: Rows, gold: Rows) -> float:
    return em_of(row_f1(predicted, gold))


def overlap_f1(overlap: float, predicted: float, gold: float) -> float:
    """F1 from the size of the overlap and of each side (0 when nothing overlaps)."""
    if overlap == 0:
        return 0.0
    precision, recall = overlap / predicted, overlap / gold
    return 2 * precision * recall / (precision + recall)


def set_f1(predicted: Rows, gold: Rows) -> float:
    """F1 of the set of every value in each table (the naive metric, for contrast)."""
    if predicted is None or gold is None:
        return 0.0
    if isinstance(predicted, bool) or isinstance(gold, bool):
        return float(predicted == gold)
    p = {_cell(v) for row in predicted for v in row.values()}
    g = {_cell(v) for row in gold for k, v in row.items() if not is_label_column(k)}
    if not p and not g:
        return 1.0
    return overlap_f1(len(p & g), len(p), len(g))


# --- bootstrap -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval(Jsonable):
    __json__ = JsonShape(places=4)

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def bootstrap(scores: Sequence[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of the mean: resample the questions with replacement."""
    if not scores:
        return Interval(0.0, 0.0, 0.0, 0)
    rng = random.Random(seed)
    n = len(scores)
    means = sorted(sum(scores[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    lo = means[int((1 - confidence) / 2 * resamples)]
    hi = means[min(resamples - 1, int((1 + confidence) / 2 * resamples))]
    return Interval(sum(scores) / n, lo, hi, n)


def bootstrap_difference(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> Interval:
    """Interval of mean(a) − mean(b) for paired scores on the same questions."""
    if len(a) != len(b):
        raise ValueError("paired scores must have the same length")
    return bootstrap([x - y for x, y in zip(a, b)], resamples=resamples, confidence=confidence, seed=seed)
