"""The statistics of mode G's cascade: SUPG's importance sampling and two thresholds with a confidence level.

After SUPG (D. Kang, E. Gan, P. Bailis, T. Hashimoto, M. Zaharia: "Approximate Selection with Guarantees using
Proxies", VLDB 2020).  A proxy gives every candidate row a score in [0, 1] for the condition; an oracle (here
the LLM) labels a sample of rows.  SUPG's importance-sampling algorithms (IS-CI-P, IS-CI-R):

- draw ``n`` rows with replacement, row ``i`` with probability ``p_i ∝ sqrt(score_i)`` mixed with the uniform
  distribution (defensive importance sampling: no row has probability 0, so the estimates are unbiased whatever
  the proxy);
- every count over the population is estimated Horvitz–Thompson style: draw ``j`` contributes
  ``1[condition] / p_j``, whose mean over the draws is an unbiased estimate of the count (weights ``1/(n·p)``);
- a precision (the 'Yes' rows among those above a threshold) and a recall (the 'Yes' rows above a threshold among
  all 'Yes' rows) are ratios of two such estimates; a one-sided normal-approximation (delta-method) bound on each
  uses the importance-weighted sample variance;
- the candidate thresholds are quantiles of the scores (fixed before any label is seen), tested in a fixed sequence
  (the precision side from the highest down, the recall side from the lowest up), each at the side's full level,
  stopping at the first that fails: fixed-sequence testing keeps the chance of any false claim on a side within
  its level without SUPG's Bonferroni factor.

Two thresholds, not one set: rows scoring at least the accept threshold ``a`` are accepted without a call (their
precision is at least the precision target with probability ≥ 1 − δ/2), rows scoring below the reject threshold
``r`` are rejected without a call (the rows scoring at least ``r`` hold at least the recall target of the
positives, with probability ≥ 1 − δ/2), and only the band between goes to the LLM.  SUPG states the two targets
separately; the cascade needs both, so δ is split in two.

Where a sample is all one way (no positive seen below a threshold, every draw above one positive) the normal bound
would claim certainty from nothing; one pseudo-draw against the claim (a positive at the median weight of the draws
below, a negative at the median weight of those above) is added to that bound's sample.  Positive means "the LLM said Yes"; a sampled
Unknown is not a positive (so it counts against precision, and a row the LLM would call Unknown needs no
recalling: a rejected row is "not asked", never "No").

Pure functions of numpy arrays: no database, no LLM (the benchmark, the Lab and the tests call them directly).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

_Z = NormalDist()  # the standard normal's quantiles (the standard library's: scipy.stats costs 0.5 s to import)

__all__ = [
    "ratio_bound",
    "MAX_THRESHOLDS",
    "MIN_DRAWS",
    "MIX",
    "Targets",
    "Thresholds",
    "choose_thresholds",
    "decide",
    "draw",
    "proof_draws",
    "RecallOutlook",
    "recall_outlook",
    "sampling_probabilities",
]

MIX = 0.1  # share of the uniform distribution in the sampling distribution (SUPG's defensive mixing)
MAX_THRESHOLDS = 50  # candidate thresholds (score quantiles) tested on each side
MIN_DRAWS = 30  # a threshold with fewer draws on the side it decides (above to accept, below to reject) is not tested


@dataclass(frozen=True)
class Targets:
    """What the cascade guarantees, against what the LLM would have said: the precision of the rows returned
    and the recall of its 'Yes' rows, together with probability at least ``1 - delta``."""

    precision: float = 0.9
    recall: float = 0.9
    delta: float = 0.05

    def __post_init__(self) -> None:
        for name, v in (("precision", self.precision), ("recall", self.recall)):
            if not 0.0 < v <= 1.0:
                raise ValueError(f"the cascade's {name} target must be in (0, 1], not {v}")
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"the cascade's delta must be in (0, 1), not {self.delta}")

    @property
    def exact(self) -> bool:
        """Both targets 1.0: no proxy decision is allowed (mode G asks what E asks)."""
        return self.precision >= 1.0 and self.recall >= 1.0


@dataclass(frozen=True)
class Thresholds:
    """The two thresholds and the estimates they were chosen by (``None``: that side decides no row)."""

    accept: float | None  # rows scoring >= accept are accepted without a call
    reject: float | None  # rows scoring < reject (and below accept) are rejected without a call
    positives: float  # Horvitz–Thompson estimate of the population's positives
    positives_interval: tuple[float, float]  # its two-sided 1 - delta normal interval
    precision_bound: float | None  # the lower confidence bound of the accepted rows' precision
    recall_bound: float | None  # the lower confidence bound of the recall kept by the rows not rejected
    draws: int
    distinct: int


def sampling_probabilities(scores: np.ndarray, mix: float = MIX) -> np.ndarray:
    """SUPG's sampling distribution: ``(1 - mix) · sqrt(s) / Σ sqrt(s) + mix / N`` (uniform when every score is 0)."""
    s = np.sqrt(np.clip(np.asarray(scores, dtype=float), 0.0, None))
    n = len(s)
    if n == 0:
        return np.zeros(0)
    total = float(s.sum())
    if total <= 0.0 or not np.isfinite(total):
        return np.full(n, 1.0 / n)
    p = (1.0 - mix) * s / total + mix / n
    out: np.ndarray = p / p.sum()
    return out


def draw(p: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` row indexes drawn with replacement by ``p``."""
    out: np.ndarray = rng.choice(len(p), size=n, replace=True, p=p)
    return out


def ratio_bound(a: np.ndarray, b: np.ndarray, z: float, *, upper: bool) -> float:
    """A one-sided normal (delta-method) bound on the ratio ``E[a] / E[b]`` from paired i.i.d. draws: the
    self-normalised importance-sampling estimate ``Σa / Σb`` and the variance of ``a - R·b`` (SUPG's
    estimates of a precision or a recall are such ratios).  ``nan`` when ``Σb`` is 0."""
    n = len(a)
    total = float(b.sum())
    if n < 2 or total <= 0.0:
        return float("nan")
    r = float(a.sum()) / total
    resid = a - r * b
    se = float(np.sqrt(resid.var(ddof=1) / n)) / (total / n)
    return r + z * se if upper else r - z * se


def _candidates(scores: np.ndarray) -> list[float]:
    """Up to MAX_THRESHOLDS distinct score quantiles, ascending."""
    qs = np.quantile(scores, np.linspace(0.0, 1.0, MAX_THRESHOLDS + 1)[1:-1]) if len(scores) else np.zeros(0)
    out = sorted({float(q) for q in qs} | {float(scores.max())} if len(scores) else set())
    return out[:MAX_THRESHOLDS]


def choose_thresholds(
    scores: np.ndarray, p: np.ndarray, drawn: np.ndarray, positive: np.ndarray, targets: Targets
) -> Thresholds:
    """The accept and reject thresholds for ``scores`` (every candidate's proxy score), the sampling
    probabilities ``p``, the draws (row indexes, with repeats) and whether each draw's row is a positive
    (the LLM said Yes).  A target of 1.0 decides no row on its side (no sample proves a certainty)."""
    scores = np.asarray(scores, dtype=float)
    n = len(drawn)
    big_n = len(scores)
    s_d = scores[drawn]
    inv_p = 1.0 / p[drawn]
    y = np.asarray(positive, dtype=float)
    z_all = y * inv_p
    half = targets.delta / 2.0
    two = float(_Z.inv_cdf(1.0 - half / 2.0)) if n > 1 else float("inf")
    est = float(z_all.mean()) if n else 0.0
    sd = float(z_all.std(ddof=1)) if n > 1 else 0.0
    interval = (max(0.0, est - two * sd / np.sqrt(max(n, 1))), min(float(big_n), est + two * sd / np.sqrt(max(n, 1))))
    cands = _candidates(scores)

    w = inv_p  # each draw's importance weight (the 1/n is common to numerator and denominator)

    # precision: test the thresholds from the highest down, each at delta/2; the first failure stops.  The
    # precision of the rows above t is Σ y·w / Σ w over the draws above t
    accept: float | None = None
    precision_bound: float | None = None
    if targets.precision < 1.0 and n > 1:
        zp = float(_Z.inv_cdf(1.0 - half))
        for t in reversed(cands):
            above = s_d >= t
            if above.sum() < MIN_DRAWS:
                continue  # too few draws to test: not a test (the draws, not the labels, decide this)
            wa, ya = np.where(above, w, 0.0), y
            if not (y[above] < 1.0).any():  # no negative seen above t: one pseudo-negative at the median weight
                wa, ya = np.append(wa, float(np.median(w[above]))), np.append(y, 0.0)
            lb = ratio_bound(ya * wa, wa, zp, upper=False)
            if not lb >= targets.precision:
                break
            accept, precision_bound = t, min(1.0, lb)

    # recall: test the thresholds from the lowest up (recall falls as the threshold rises), each at delta/2;
    # the recall kept above t is Σ y·w·1[above] / Σ y·w; the first failure stops
    reject: float | None = None
    recall_bound: float | None = None
    if targets.recall < 1.0 and n > 1 and float(y.sum()) > 0:
        zr = float(_Z.inv_cdf(1.0 - half))
        for t in cands:
            below = scores < t
            if not below.any():
                continue
            above_d, wy = s_d >= t, w * y
            if (~above_d).sum() < MIN_DRAWS:
                continue  # too few draws below t to test (the draws, not the labels, decide this)
            if not (y[~above_d] > 0.0).any():  # no positive seen below t: one pseudo-positive below
                above_d, wy = np.append(above_d, False), np.append(wy, float(np.median(w[~above_d])))
            rb = ratio_bound(wy * above_d, wy, zr, upper=False)
            if not rb >= targets.recall:
                break
            reject, recall_bound = t, min(1.0, rb)

    return Thresholds(
        accept=accept,
        reject=reject,
        positives=est,
        positives_interval=interval,
        precision_bound=precision_bound,
        recall_bound=recall_bound,
        draws=n,
        distinct=len(set(drawn.tolist())),
    )


def proof_draws(candidates: float, positives: float, recall: float, delta: float) -> float:
    """A floor under any recall proof from a sample, whatever the proxy: the draws among the rows left out needed to
    show, with none of them a positive, that those rows hold at most ``(1 - recall) · positives`` of the
    ``positives`` among ``candidates``, at confidence ``1 - delta/2``: the least ``m`` with
    ``(1 - share)^m ≤ delta/2``, ``share = (1 - recall) · positives / (candidates - positives)`` (uniform draws
    are the best case: any other distribution over those rows misses a worst-placed positive more often).
    ``inf`` when no row may be left out (a recall target of 1, or no positive)."""
    allowed = (1.0 - recall) * positives
    if allowed <= 0.0:
        return float("inf")
    share = allowed / (candidates - positives) if candidates > positives else 1.0
    if share >= 1.0:
        return 0.0
    return float(np.ceil(np.log(delta / 2.0) / np.log1p(-share)))


@dataclass(frozen=True)
class RecallOutlook:
    """What a pilot says of the recall side before the sample is drawn."""

    positives: float  # Horvitz–Thompson estimate of the positives among the candidates
    upper: float  # its upper normal bound at 1 - delta/2
    need: float  # proof_draws at ``upper``: the fewest draws a recall proof could need

    def hopeless(self, draws: int) -> bool:
        """Can no sample of ``draws`` draws leave a row out, even at the optimistic count of positives?"""
        return self.need > draws


def recall_outlook(p: np.ndarray, drawn: np.ndarray, positive: np.ndarray, targets: Targets) -> RecallOutlook:
    """From a pilot's draws (``p``: every candidate's sampling probability; ``drawn``: the draws; ``positive``: which
    draws were positives), how many draws a recall proof would take at the most the positives could be.  Only a
    decision to give the cascade up rests on it, and giving up changes no guarantee (every row is then the LLM's):
    the upper bound keeps the cascade from giving up where a proof was possible."""
    n = len(drawn)
    z = np.asarray(positive, dtype=float) / p[drawn] if n else np.zeros(0)
    est = float(z.mean()) if n else 0.0
    sd = float(z.std(ddof=1)) if n > 1 else 0.0
    upper = min(float(len(p)), est + float(_Z.inv_cdf(1.0 - targets.delta / 2.0)) * sd / np.sqrt(max(n, 1)))
    return RecallOutlook(est, upper, proof_draws(len(p), upper, targets.recall, targets.delta))


def decide(scores: np.ndarray, th: Thresholds) -> np.ndarray:
    """Per row: 1 accepted by the proxy, -1 rejected by the proxy, 0 in the band (the LLM decides)."""
    scores = np.asarray(scores, dtype=float)
    out = np.zeros(len(scores), dtype=int)
    if th.accept is not None:
        out[scores >= th.accept] = 1
    if th.reject is not None:
        low = scores < th.reject
        if th.accept is not None:
            low &= scores < th.accept
        out[low] = -1
    return out
