"""Tokens and their estimated cost: per call, and summed over a run.

Every call's :class:`~engines.llm.protocol.Usage` comes from the API's own usage (a real backend)
or is estimated on the rendered prompt (the simulated backend, see :func:`estimate_tokens`).
:class:`UsageTotals` sums them for one :class:`~engines.llm.client.LLM` (all its bindings) and
prices a real backend's with the price table of the settings (``Settings.llm_prices``, dated by
``Settings.llm_prices_as_of``).  The simulated backend costs nothing: its tokens are estimates, never
priced, and no dollar figure is shown for them.

:meth:`UsageTotals.as_json` is the ``"usage"`` object of every ``--json`` output:
``{"input_tokens", "output_tokens", "cached_input_tokens", "cost_usd", "estimated"}`` —
``cost_usd`` the summed price of the calls that had one, ``null`` when none had (every call of the
simulated backend, a model missing from the price table); ``estimated`` true when some of the tokens
are the simulated backend's estimate.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engines.llm.protocol import Usage

if TYPE_CHECKING:
    from engines.settings import ModelPrice

#: The simulated backend's token estimate: one token per this many characters of the rendered
#: prompt (and of the reply).  About right for English prose with Anthropic's and OpenAI's
#: tokenizers (their documentation's rule of thumb is ~4 characters a token); no tokenizer
#: dependency, and the same text always gives the same count.
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by :data:`CHARS_PER_TOKEN` (at least 1 for a non-empty text)."""
    return 0 if not text else max(1, -(-len(text) // CHARS_PER_TOKEN))


def price_for(model: str | None, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model``: its own entry, else that of the longest listed prefix
    (``claude-haiku-4-5-20251001`` -> ``claude-haiku-4-5``); ``None`` when none is listed."""
    if not model:
        return None
    if model in prices:
        return prices[model]
    best = max((key for key in prices if model.startswith(key)), key=len, default=None)
    return prices[best] if best is not None else None


def cost_usd(usage: Usage, model: str | None, prices: Mapping[str, ModelPrice], *, batch: bool = False) -> float | None:
    """The estimated cost of one call in US dollars; ``None`` when the model has no price or the
    usage has no token counts.  Cached input is priced at the cache-read price, input written to
    the cache at the cache-write price, the rest at the input price; a batch call costs half."""
    price = price_for(model, prices)
    if price is None or (usage.input_tokens is None and usage.output_tokens is None):
        return None
    cached = usage.cached_input_tokens or 0
    written = usage.cache_write_input_tokens or 0
    plain = max((usage.input_tokens or 0) - cached - written, 0)
    read_price = price.cache_read if price.cache_read is not None else price.input
    write_price = price.cache_write if price.cache_write is not None else price.input
    dollars = (
        plain * price.input + cached * read_price + written * write_price + (usage.output_tokens or 0) * price.output
    ) / 1_000_000
    return dollars / 2 if batch else dollars


@dataclass
class UsageTotals:
    """Tokens and cost summed over the calls of a run (thread-safe).

    ``cost_usd`` is ``None`` while no call had a price (the simulated backend's never have one: its tokens
    are estimates of what the prompts would have used, and it costs nothing); ``unpriced`` counts the calls
    of a real backend that had tokens but no price, ``estimated`` the calls whose tokens are estimates."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 0
    unpriced: int = 0
    estimated: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, usage: Usage, cost: float | None, *, estimated: bool = False) -> None:
        if self is not RUN_USAGE:
            RUN_USAGE.add(usage, cost, estimated=estimated)
        with self._lock:
            self.calls += 1
            self.input_tokens += usage.input_tokens or 0
            self.output_tokens += usage.output_tokens or 0
            self.cached_input_tokens += usage.cached_input_tokens or 0
            self.cache_write_input_tokens += usage.cache_write_input_tokens or 0
            self.estimated += int(estimated)
            if estimated:  # an estimate is never a bill
                return
            if cost is not None:
                self.cost_usd = (self.cost_usd or 0.0) + cost
            elif usage.input_tokens is not None or usage.output_tokens is not None:
                self.unpriced += 1

    def as_json(self) -> dict[str, Any]:
        """The ``"usage"`` object of a ``--json`` output (``estimated``: the tokens are the simulated
        backend's estimate of what real prompts would have used; it costs nothing, ``cost_usd`` null)."""
        with self._lock:
            return self._json()

    def _json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "estimated": self.estimated > 0,
        }

    def take(self) -> dict[str, Any]:
        """:meth:`as_json`, and start again from zero (atomically)."""
        with self._lock:
            data = self._json()
            self.input_tokens = self.output_tokens = self.cached_input_tokens = self.cache_write_input_tokens = 0
            self.cost_usd = None
            self.calls = self.unpriced = self.estimated = 0
            return data

    def line(self) -> str:
        """One line for a header or a stats line: ``1,234 in (200 cached) · 56 out · $0.0031``; the simulated
        backend's ``~1,234 in · ~56 out (estimated tokens)``, with no cost (it costs nothing)."""
        with self._lock:
            data = self._json()
            billed = self.cost_usd is not None or self.unpriced > 0  # some call of a real backend had tokens
            estimated = self.estimated
        cached = f" ({data['cached_input_tokens']:,} cached)" if data["cached_input_tokens"] else ""
        approx = "~" if estimated else ""
        tokens = f"{approx}{data['input_tokens']:,} in{cached} · {approx}{data['output_tokens']:,} out"
        if not billed:
            return f"{tokens} (estimated tokens)" if estimated else tokens
        cost = "cost unknown" if data["cost_usd"] is None else f"${data['cost_usd']:.4f}"
        return f"{tokens} · {cost}"


#: Every call of every LLM in this process (each :class:`UsageTotals` also adds here).  The command
#: line reads it for the ``"usage"`` of a ``--json`` output with :func:`take_run_usage`.
RUN_USAGE = UsageTotals()


def take_run_usage() -> dict[str, Any]:
    """The usage of every LLM call since the last time this was taken (one CLI run prints one JSON
    output, or one per item of a list), as the ``"usage"`` object of a ``--json`` output."""
    return RUN_USAGE.take()
