"""What the HybridQA tab's run panes say, as text: the question card (type, answer beside the gold, EM, F1,
the human judgement and what an error class means) and the SUQL of every attempt with what it returned.  Pure
functions of the run's state: the tab puts their ``Content`` on screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.widgets.option_list import Option

from tui.hybridqa_keys import RUN_HINT, SUQL_HINT
from tui.suql_view import layout_sql
from tui.widgets import as_text, count_rows, sql_content, truncate

if TYPE_CHECKING:
    from tui.hybridqa_work import Answered
    from worlds.hybridqa import HybridQuestion

QUESTION_CHARS = 200
ERROR_CLASS_NOTES: dict[str, str] = {
    "format variant": "the gold's answer in another form — the evaluation's fault",
    "gold incomplete": "another of several right answers — the evaluation's fault",
    "gold wrong": "the annotator's gold is not a correct answer — the evaluation's fault",
    "no result": "nothing came back, even after the retries",
    "wrong query": "the query's table conditions or order mean something else",
    "wrong column": "answer() read another passage column than the one holding the fact",
    "reader error": "the query was right; answer() misread a passage",
}
"""What each error class of engines.hybridqa.scoring means, in a few words (lecture 7 §6.4–§6.5)."""


def question_card(
    question: HybridQuestion | None,
    *,
    result: Answered | None,
    short: str | None,
    running: bool,
    simulated_on_real: bool,
    state: str = "",
) -> tuple[str, Content]:
    """The question card's title and lines: the question (the running one, else the chosen one), its type, the
    short answer beside the gold, and once ``result`` (the last run to the end) is this question's, EM, F1, the
    human judgement and the error class.  ``state`` is ``running``, ``cancelled``, ``error`` or ``""``."""
    from engines.api import EVALUATION_CLASSES

    muted = "$foreground-muted"
    if question is None:
        return "Question", Content.styled("choose a table and a question", "$foreground-muted italic")
    if question.qtype:
        from worlds.hybridqa import TYPE_TITLES

        title = f"Question · type {question.qtype}"
        kind = Content.assemble(
            Content.styled(f"type {question.qtype}  ", "bold $text-accent"),
            Content.styled(TYPE_TITLES.get(question.qtype, ""), "$text-accent"),
        )
    else:
        title = "Question · real HybridQA"
        kind = Content.styled("a real HybridQA dev question (the dataset does not label its type)", muted)
    result = result if result is not None and result.question is question else None
    hint: Content | None = None
    if state == "running":
        answer = Content.styled("…", muted)
        hint = Content.styled("running… — Esc cancels", "$text-warning")
    elif state == "cancelled":
        answer = Content.styled("cancelled (Esc)", "$text-warning")
    elif state == "error":
        answer = Content.styled("error — see the error pane", "$text-error")
    elif short is not None and (result is not None or running):
        answer = (
            Content.styled(short, "bold $text-success")
            if short
            else Content.styled("(nothing came back)", "italic $text-warning")
        )
    else:
        answer = Content.styled("—", muted)
        if simulated_on_real:
            hint = Content.styled(
                "not run: the simulated LLM cannot answer on real tables (see below)", "$text-warning"
            )
        else:
            hint = Content.styled(f"not run yet — {RUN_HINT}", "$foreground-muted italic")
    lines = [
        kind,
        Content(truncate(question.question, QUESTION_CHARS)),
        Content.assemble(
            Content.styled("answer ", muted),
            answer,
            Content.styled("   gold ", muted),
            Content.styled(question.gold or "—", "bold"),
        ),
    ]
    if result is not None:
        score = result.score
        em_style = "bold $text-success" if score.em == 1 else "bold $text-error"
        scores = [
            Content.styled("EM ", muted),
            Content.styled(f"{score.em:.0f}", em_style),
            Content.styled("   F1 ", muted),
            Content.styled(f"{score.f1:.2f}", "bold"),
            Content.styled("   human judgement ", muted),
        ]
        if score.judged is None:
            scores.append(Content.styled("— (real tables have no hidden truth)", muted))
        else:
            scores.append(
                Content.styled("✓ correct", "bold $text-success")
                if score.judged
                else Content.styled("✗ wrong", "bold $text-error")
            )
        if score.error:
            fault = "$text-warning" if score.error in EVALUATION_CLASSES else "$text-error"
            scores += [
                Content.styled("   ", muted),
                Content.styled(score.error, f"bold {fault}"),
                Content.styled(f": {ERROR_CLASS_NOTES.get(score.error, '')}", muted),
            ]
        lines.append(Content.assemble(*scores))
    elif hint is not None:
        lines.append(hint)
    return title, Content("\n").join(lines)


def suql_attempts(attempts: list[dict[str, Any]], *, final: bool) -> tuple[str, str, Content]:
    """The SUQL pane's title, subtitle and lines: each attempt's query, with what it returned (rows and their
    first values, no rows, an error), ``→ retried`` where the pipeline parsed again, and ``final`` on the last
    one once the run is over (``final``)."""
    if not attempts:
        return "SUQL", "", SUQL_HINT
    muted = "$foreground-muted"
    blocks: list[Content] = []
    last = attempts[-1]["number"]
    for attempt in attempts:
        n = attempt["number"]
        head = [Content.styled(f"attempt {n}", "bold $text-accent")]
        state = attempt["state"]
        if state == "running":
            head.append(Content.styled(" · running…", "$text-warning"))
        elif state == "cancelled":
            head.append(Content.styled(" · cancelled", "$text-warning"))
        elif attempt.get("error"):
            head.append(Content.styled(f" · ✗ could not run: {truncate(attempt['error'], 60)}", "$text-error"))
        elif attempt.get("empty"):
            what = "no rows" if not attempt.get("rows") else "no value in the rows"
            head.append(Content.styled(f" · ✗ {what}", "$text-error"))
        else:
            rows = attempt.get("rows") or ()
            values = [str(v) for row in rows for v in row if v is not None and str(v).strip()]
            shown = ", ".join(truncate(v, 24) for v in values[:3]) + (", …" if len(values) > 3 else "")
            head.append(Content.styled(f" · ✓ {count_rows(len(rows))}: ", "$text-success"))
            head.append(Content.styled(shown, "bold"))
        if "retried" in attempt:
            head.append(Content.styled(" → retried", "bold $text-warning"))
        elif n == last and state == "done" and final:
            head.append(Content.styled(" · final", muted))
        blocks.append(Content.assemble(*head))
        blocks.append(sql_content(layout_sql(attempt["suql"])))
    retries = len(attempts) - 1
    title = f"SUQL · {count_rows(len(attempts), 'attempt')}"
    subtitle = (
        "no retry" if retries == 0 else f"{retries} {'retry' if retries == 1 else 'retries'} · nothing came back before"
    )
    return title, subtitle, Content("\n").join(blocks)


def question_option(question: HybridQuestion) -> Option:
    """A question's entry in the list: its HybridQA type as a badge, then the question."""
    badge = f"{question.qtype:<4}" if question.qtype else "·   "
    return Option(
        as_text(Content.assemble(Content.styled(badge, "bold $text-accent"), question.question)),
        id=question.question_id,
    )
