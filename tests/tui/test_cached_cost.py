"""A fully cached run with a real backend costs "$0 (cached)", not "$?"; the simulated backend still shows no
dollar figure (issue 28 item 5)."""

from __future__ import annotations

from engines.events import CallFinished
from tui.area import RunUsage


def _cached() -> CallFinished:
    return CallFinished(1, "answer", "Yes", cached=True)


def _priced() -> CallFinished:
    return CallFinished(2, "answer", "Yes", input_tokens=100, output_tokens=5, cost_usd=0.0012, model="m")


def _estimated() -> CallFinished:
    return CallFinished(3, "answer", "Yes", input_tokens=100, output_tokens=5, estimated=True)


def test_a_real_backends_fully_cached_run_costs_zero_and_says_cached():
    usage = RunUsage()
    usage.add(_cached(), real=True)
    usage.add(_cached(), real=True)
    assert usage.cost_text() == "$0 (cached)"
    assert usage.short().endswith("· $0 (cached)") and usage.line().endswith("· $0 (cached)")


def test_a_mixed_run_shows_its_price():
    usage = RunUsage()
    usage.add(_cached(), real=True)
    usage.add(_priced(), real=True)
    assert usage.cost_text() == "$0.0012"


def test_the_simulated_backend_shows_no_dollar_figure_cached_or_not():
    usage = RunUsage()
    usage.add(_cached(), real=False)
    usage.add(_estimated(), real=False)
    assert usage.cost_text() == "" and "$" not in usage.short() and "$" not in usage.line()
