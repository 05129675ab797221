"""What a row "to verify" is unknown on, read from the predicates the engine lists for it.

The engine names each predicate it could not decide for a row as SUQL text
(``answer(reviews, 'is it romantic?') = 'Yes'``); a person wants the question.
The text is parsed with sqlglot and the question read off the tree.
"""

from __future__ import annotations


def unknown_question(predicate: str) -> str | None:
    """The question of a Yes-test ``answer(text, 'question') = 'Yes'``; ``None`` for any other predicate."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    from engines.suql.language import SuqlError, as_call, is_llm_call

    try:
        tree = sqlglot.parse_one(predicate, read="postgres")
    except (SqlglotError, RecursionError):
        return None
    if not (
        isinstance(tree, exp.EQ)
        and is_llm_call(tree.this)
        and isinstance(tree.expression, exp.Literal)
        and tree.expression.is_string
        and tree.expression.name == "Yes"
    ):
        return None
    try:
        call = as_call(tree.this)
    except SuqlError:
        return None
    return call.question if call.function == "answer" else None


__all__ = ["unknown_question"]
