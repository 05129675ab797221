"""§3.7: a function-calling agent against k."""

from __future__ import annotations

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.judge import rounded, share
from engines.lab.lecture7.common import engine_of, truth_of


def agent_against_k(ctx: RunContext) -> Table:
    from engines.lab.tool_agent import ToolAgent
    from engines.suql.workload import generate, truly_matching

    world, sandbox = ctx.restaurants()
    queries = [q for q in generate(ctx["workload_seed"], ctx["queries"]) if q.limit is not None]
    truth = truth_of(world)
    answerable = [q for q in queries if truly_matching(world, truth, q)]
    ks = list(ctx["ks"])
    llm = ctx.llm()
    agent = ToolAgent(world, sandbox, llm)
    total = len(answerable) * (len(ks) + 1)
    done = 0
    rows, success = [], {}
    for k in ks:
        wins = calls = after = 0
        for q in answerable:
            ctx.progress(done, total, f"agent, k={k}")
            run = agent.run(q.sql, k)
            wins += bool(set(run.ids) & truly_matching(world, truth, q))
            calls += run.answer_calls
            after += run.after_sql
            done += 1
        success[k] = share(wins, len(answerable))
        rows.append(
            [
                "function-calling agent",
                k,
                rounded(success[k]),
                round(calls / len(answerable), 1),
                round(after / len(answerable), 1),
            ]
        )
    engine = engine_of(ctx)
    wins = calls = 0
    for q in answerable:
        ctx.progress(done, total, "SUQL, mode E")
        r = engine.run(q.sql, mode="E", cancel=ctx.cancel)
        wins += bool({x[0] for x in r.rows} & truly_matching(world, truth, q))
        calls += r.stats.answer_calls
        done += 1
    suql = share(wins, len(answerable))
    rows.append(["SUQL (mode E)", "—", rounded(suql), round(calls / len(answerable), 1), None])
    ctx.progress(total, total, "done")
    ctx.note(
        f"{len(queries)} workload queries with a LIMIT, {len(answerable)} of them with at least one right answer in the world; "
        "success = at least one returned restaurant truly satisfies the query."
    )
    ordered = [success[k] for k in sorted(ks)]
    ctx.claim(
        "the agent's success depends on guessing k: small k retrieves the wrong places",
        ordered[0] < ordered[-1],
        ", ".join(f"k={k}: {success[k]:.0%}" for k in sorted(ks)),
    )
    ctx.claim(
        "SUQL succeeds without choosing k: the compiler filters by location before it retrieves",
        suql >= max(ordered),
        f"SUQL {suql:.0%} against the agent's best {max(ordered):.0%}",
    )
    chart = Chart(
        "line",
        "Function-calling agent against k",
        "k",
        "success",
        tuple(str(k) for k in sorted(ks)),
        (Series("agent", tuple(ordered)), Series("SUQL", tuple(suql for _ in ks))),
    )
    return ctx.table(("approach", "k", "success", "answer() / query", "rows left after run_sql"), rows, chart)
