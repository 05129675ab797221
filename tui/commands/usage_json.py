"""The ``"usage"`` object of every ``--json`` output: the tokens and estimated cost of the LLM calls.

``{"input_tokens", "output_tokens", "cached_input_tokens", "cost_usd", "estimated"}``, from the
usage the API reported for each call (or, with the simulated backend, the tokens its rendered
prompts would have used, ``estimated: true``), priced with the settings' dated price table
(``CS224V_LLM_PRICES``, ``CS224V_LLM_PRICES_AS_OF``); ``cost_usd`` is null when no model of the
run has a price.  A JSON object gets a top-level ``"usage"``; a JSON list (several questions,
``suql --file``, ``lab run --all``) gets one in each item, for the calls of that item.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines.api import Settings


def take_usage() -> dict[str, Any]:
    """The usage of the calls since the last one taken (see :func:`engines.llm.usage.take_run_usage`)."""
    from engines.api import take_run_usage

    return take_run_usage()


def with_usage(payload: Any) -> Any:
    """``payload`` (a JSON object) with the ``"usage"`` of the calls made for it; a list or any other
    value is returned as it is (its items carry their own usage)."""
    if isinstance(payload, dict):
        return {**payload, "usage": take_usage()}
    return payload


def metered(handler: Callable[..., int]) -> Callable[..., int]:
    """``handler`` starting from zero usage: the calls of earlier commands of this process (the tests
    run many in one) are not counted in this one's outputs."""

    def run(settings: Settings, args: Any) -> int:
        take_usage()
        return handler(settings, args)

    run.__wrapped__ = handler  # type: ignore[attr-defined]
    return run
