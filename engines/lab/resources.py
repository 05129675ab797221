"""What experiments share: the settings, an LLM per experiment, the restaurant world, memoised simulations."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from engines.llm.client import LLM
from engines.settings import Settings

if TYPE_CHECKING:  # the world is built when an experiment asks for it
    from worlds.restaurants import Built, HiddenTruth, RestaurantWorld


def lab_settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else Settings()


def make_llm(settings: Settings, *, cancel: threading.Event | None = None, **sim_overrides: Any) -> LLM:
    """A fresh LLM with its own call counter.

    The simulated LLM runs without its display latency (an experiment makes thousands of calls) and
    without the persistent cache (it is faster than the cache); ``sim_overrides`` change its simulation
    parameters (e.g. ``error_on_topic=0`` for a careful reader).  Another backend (``claude``) is built
    from the settings, with the persistent cache when it is enabled.
    """
    if settings.backend == "sim":
        from engines.llm.sim import SimBackend

        params: dict[str, Any] = {
            "seed": settings.seed,
            "latency_s": 0.0,
            "error_on_topic": settings.sim_error_on_topic,
            "error_off_topic": settings.sim_error_off_topic,
        }
        params.update(sim_overrides)
        # The sim's tokens are estimates and cost nothing: modes compare by (estimated) tokens as well as by calls.
        return LLM(SimBackend(**params), cancel=cancel, prices=settings.llm_prices)
    from engines.llm.client import llm_from_settings

    return llm_from_settings(settings).bind(cancel=cancel)


@lru_cache(maxsize=2)
def _restaurants_built(seed: int) -> Built:
    from worlds import restaurants

    return restaurants.build(seed)


def _seed(seed: int | None) -> int:
    from worlds import restaurants

    return restaurants.DEFAULT_SEED if seed is None else seed


def restaurant_world(seed: int | None = None) -> RestaurantWorld:
    """The visible restaurant world of lectures 6-7 (what engines are handed), built once per process."""
    return _restaurants_built(_seed(seed)).world


def restaurant_truth(seed: int | None = None) -> HiddenTruth:
    """The hidden truth of :func:`restaurant_world` with the same seed (``world.seed``): for evaluators
    only, kept apart from the world so that an engine handed the world cannot reach it."""
    return _restaurants_built(_seed(seed)).truth


T = TypeVar("T")

_memo: dict[Hashable, Any] = {}
_memo_lock = threading.Lock()


def memo(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()`` once per key and process (a cancelled or failed computation is not kept).

    The values are of many types, one per key: a key names its computation, so a key's value is what
    that ``compute`` returns (the cast says so; no two computations share a key)."""
    with _memo_lock:
        if key in _memo:
            return cast(T, _memo[key])
    value = compute()
    with _memo_lock:
        return cast(T, _memo.setdefault(key, value))


def clear_memo() -> None:
    with _memo_lock:
        _memo.clear()
