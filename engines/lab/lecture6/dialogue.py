"""§3.4: the eight-turn dialogue with the Text-to-SQL agent."""

from __future__ import annotations

from engines.lab.core import RunContext, Table
from engines.sql.dialogue import SAMPLE_DIALOGUE

DIALOGUE = SAMPLE_DIALOGUE


def dialogue(ctx: RunContext) -> Table:
    from engines.events import Event, ValuesClassified
    from engines.sql.agent import TextToSQLAgent

    world, sandbox = ctx.restaurants()
    agent = TextToSQLAgent(
        sandbox, ctx.llm(), world.schema(), world.enum_fields, classify_method=ctx.settings.classify_method
    )
    turns = list(ctx["turns"])
    rows, results = [], []
    for i, utterance in enumerate(turns):
        ctx.progress(i, len(turns), utterance)
        events: list[Event] = []
        turn = agent.ask(utterance, emit=events.append, cancel=ctx.cancel)
        decided = [e for e in events if isinstance(e, ValuesClassified) and tuple(e.chosen) != (e.value,)]
        classified = "; ".join(f"{e.value} → {', '.join(e.chosen) or '∅'} ({e.method})" for e in decided)
        results.append(turn)
        rows.append(
            [
                i + 1,
                utterance,
                "database" if turn.needs_database else "answer directly",
                classified or ("as written" if turn.sql else ""),
                turn.sql or "",
                len(turn.rows) if turn.needs_database else None,
                turn.reply,
            ]
        )
    ctx.progress(len(turns), len(turns), "done")
    if len(results) == len(DIALOGUE) and tuple(turns) == DIALOGUE:
        r = results
        ctx.claim(
            "a follow-up keeps the previous conditions and changes one",
            "Menlo Park" in (r[1].sql or "") and "italian" in (r[2].sql or "") and "Palo Alto" in (r[2].sql or ""),
            f"turn 2: {r[1].sql}; turn 3: {r[2].sql}",
        )
        ctx.claim(
            "the input classifier sends small talk and definitions straight to the LLM",
            not r[5].needs_database and not r[7].needs_database,
            "turns 6 and 8 made no query",
        )
        ctx.claim(
            "classify() turns the user's 'café' into real values",
            "coffee & tea" in (r[4].sql or "") or "'cafe'" in (r[4].sql or ""),
            r[4].sql or "no SQL",
        )
        ctx.claim(
            "no results is said, not made up",
            len(r[6].rows) == 0 and "no result" in r[6].reply.lower(),
            f"turn 7 returned {len(r[6].rows)} rows; reply: {r[6].reply}",
        )
        counts = [len(t.rows) for t in r if t.needs_database]
        ctx.note(
            f"Rows per database turn here: {', '.join(map(str, counts))}. The notes' walkthrough, on its own data, had "
            "99, 4, 10, 1, 4 and 0."
        )
    return ctx.table(("turn", "user", "classifier", "classify() decided", "SQL", "rows", "reply"), rows)
