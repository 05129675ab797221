"""What several of lecture 7's experiments share: the hidden truth (for the evaluators only), a SUQL engine on the
Lab's world, token usage, SQL literals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engines.lab.core import RunContext

if TYPE_CHECKING:
    from engines.llm.client import LLM
    from engines.suql.execute import SuqlEngine
    from worlds.restaurants import HiddenTruth, RestaurantWorld


def truth_of(world: RestaurantWorld) -> HiddenTruth:
    """The hidden truth of the Lab's restaurant world (``ctx.restaurants()``): the evaluators' side only."""
    from engines.lab.resources import restaurant_truth

    return restaurant_truth(world.seed)


SEED_NOTE = "The simulated LLM: seed {seed}, wrong {error_on_topic:.1%} on the topic and {error_off_topic:.1%} off it (settings)."


def gold_wrong_rate() -> float:
    from worlds.hybridqa import GOLD_WRONG_RATE

    return GOLD_WRONG_RATE


def engine_of(ctx: RunContext, cap: int | None = None) -> SuqlEngine:
    from engines.suql.execute import SuqlEngine

    _, sandbox = ctx.restaurants()
    # One worker: with instant simulated calls a pool would only make call counts depend on thread timing.
    return SuqlEngine(
        sandbox,
        ctx.llm(),
        pool=1,
        cap=cap if cap is not None else ctx.settings.suql_cap,
        call_budget=ctx.settings.suql_call_budget,
    )


def usage_since(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Tokens (input and output) and estimated cost between two readings of an LLM's usage."""
    tokens = (after["input_tokens"] - before["input_tokens"]) + (after["output_tokens"] - before["output_tokens"])
    cost = None if after["cost_usd"] is None else round(after["cost_usd"] - (before["cost_usd"] or 0.0), 4)
    return {"tokens": tokens, "cost_usd": cost}


def cost_follows_calls(points: list[tuple[int, int]]) -> bool:
    """More calls never cost fewer tokens, and no calls cost none (points: (calls, tokens))."""
    ordered = sorted(points)
    return all(t == 0 for c, t in ordered if c == 0) and all(
        a[1] <= b[1] for a, b in zip(ordered, ordered[1:]) if a[0] < b[0]
    )


def usage_columns(ctx: RunContext, per: str = "") -> tuple[str, ...]:
    """A table's usage columns: the tokens and their cost; the simulated LLM's tokens alone, said to be estimates
    (it costs nothing: no dollar figure for it)."""
    if ctx.settings.backend == "sim":
        return (f"tokens (estimated){per}",)
    return (f"tokens{per}", f"cost (USD){per}")


def usage_cells(ctx: RunContext, spent: dict[str, Any], n: int = 1) -> list[Any]:
    """The cells of :func:`usage_columns` for the usage ``spent`` (:func:`usage_since`), per ``n`` queries."""
    tokens = spent["tokens"] if n == 1 else round(spent["tokens"] / n)
    if ctx.settings.backend == "sim":
        return [tokens]
    return [tokens, None if spent["cost_usd"] is None else round(spent["cost_usd"] / n, 4)]


def usage_note(ctx: RunContext, llm: LLM | None) -> str:
    if ctx.settings.backend == "sim":
        return (
            "Tokens are the simulated LLM's estimate of what the rendered prompts and replies would use (4 characters a "
            "token); it costs nothing, so no cost is shown (a real backend's runs show their cost too)."
        )
    if llm is None:
        return f"Tokens and cost as the {ctx.settings.backend} backend reported them."
    return f"Tokens and cost as the {ctx.settings.backend} backend reported them ({llm.usage.line()} in all)."


def literal(value: str) -> str:
    """A parameter as an SQL string literal, quoted by sqlglot."""
    from sqlglot import exp

    return exp.Literal.string(str(value)).sql(dialect="duckdb")
