"""classify(): map the value a user said onto the real values of an enum field (lecture 6 §3.2–3.3).

The rewrite ``x = ANY(f)  =>  c1 = ANY(f) OR c2 = ANY(f) ...`` with ``ci in classify(x, V)``
is done by this program on the parsed tree; the parser never needs the full list of values.

Four methods, as compared in §3.3:

``exact``         the value is one of V (ignoring case and accents), else nothing
``similarity``    every value of V whose character-trigram similarity is at least a threshold
``llm_all``       the LLM is shown all of V and picks
``retrieve_llm``  the k most similar values by trigrams, then the LLM picks among them
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from engines.events import Emit, ValuesClassified, ignore
from engines.llm.task import I, O, Task
from engines.sql.folding import fold
from engines.sql.tasks import CLASSIFY, ClassifyInput

__all__ = ["METHODS", "Classifier", "fold", "similarity", "classify_exact", "classify_similarity", "top_similar"]

METHODS = ("exact", "similarity", "llm_all", "retrieve_llm")


class EnumSpec(Protocol):
    """A column of enumerated values (read-only: a world's frozen ``EnumField`` is one)."""

    @property
    def column(self) -> str: ...
    @property
    def values(self) -> tuple[str, ...]: ...
    @property
    def is_list(self) -> bool: ...


class Chooser(Protocol):
    """What picks among the candidates: an :class:`~engines.llm.client.LLM` (it runs the
    :data:`~engines.sql.tasks.CLASSIFY` task), or anything else that runs tasks."""

    def run(self, task: Task[I, O], input: I) -> O: ...


def trigrams(text: str) -> set[str]:
    t = f"  {fold(text)} "
    return {t[i : i + 3] for i in range(len(t) - 2)}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of character trigrams (padded), in [0, 1]."""
    ta, tb = trigrams(a), trigrams(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def classify_exact(value: str, values: Sequence[str]) -> tuple[str, ...]:
    v = fold(value)
    return tuple(c for c in values if fold(c) == v)


def classify_similarity(value: str, values: Sequence[str], threshold: float = 0.3) -> tuple[str, ...]:
    scored = sorted(((similarity(value, c), c) for c in values), key=lambda t: (-t[0], t[1]))
    return tuple(c for s, c in scored if s >= threshold)


def top_similar(value: str, values: Sequence[str], k: int) -> tuple[str, ...]:
    scored = sorted(((similarity(value, c), c) for c in values), key=lambda t: (-t[0], t[1]))
    return tuple(c for s, c in scored[:k] if s > 0)


@dataclass
class Classifier:
    """Classifies values of the enum fields of one table and rewrites a parsed query."""

    fields: Mapping[str, EnumSpec]
    method: str = "llm_all"
    llm: Chooser | None = None
    threshold: float = 0.3
    k: int = 5

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown classify method {self.method!r}; choose one of {', '.join(METHODS)}")
        if self.method in ("llm_all", "retrieve_llm") and self.llm is None:
            raise ValueError(f"classify method {self.method!r} needs an LLM")

    def classify(self, value: str, field: str) -> tuple[str, ...]:
        values = self.fields[field].values
        exact = classify_exact(value, values)
        if exact:  # what a program can guarantee is not left to the LLM
            return exact
        if self.method == "exact":
            return ()
        if self.method == "similarity":
            return classify_similarity(value, values, self.threshold)
        candidates = values if self.method == "llm_all" else top_similar(value, values, self.k)
        if not candidates:
            return ()
        assert self.llm is not None
        chosen = self.llm.run(CLASSIFY, ClassifyInput(value, field, tuple(candidates)))
        allowed = set(candidates)
        return tuple(dict.fromkeys(c for c in chosen if c in allowed))

    # --- the rewrite ---------------------------------------------------------------------

    def rewrite(self, tree: exp.Expr, emit: Emit = ignore) -> exp.Expr:
        """Replace enum literals in comparisons by the classified values (a new tree)."""
        memo: dict[tuple[str, str], tuple[str, ...]] = {}

        def values_for(value: str, field: str) -> tuple[str, ...]:
            key = (field, value)
            if key not in memo:
                memo[key] = self.classify(value, field)
                decided_by = "exact" if classify_exact(value, self.fields[field].values) else self.method
                emit(ValuesClassified(field, value, decided_by, memo[key]))
            return memo[key]

        def visit(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.EQ):
                hit = _literal_any(node, self.fields)
                if hit is not None:
                    literal, column = hit
                    chosen = values_for(literal, column.name)
                    if not chosen:
                        return node  # nothing close: keep what was asked, it matches no row
                    return _any_of(chosen, column)
                hit2 = _column_literal(node, self.fields)
                if hit2 is not None:
                    column, literal = hit2
                    chosen = values_for(literal, column.name)
                    if not chosen:
                        return node
                    if len(chosen) == 1:
                        return exp.EQ(this=column.copy(), expression=exp.Literal.string(chosen[0]))
                    return exp.In(this=column.copy(), expressions=[exp.Literal.string(c) for c in chosen])
            if isinstance(node, exp.In) and isinstance(node.this, exp.Column) and _scalar_enum(node.this, self.fields):
                literals = [e for e in node.expressions if isinstance(e, exp.Literal) and e.is_string]
                if literals and len(literals) == len(node.expressions):
                    chosen = tuple(
                        dict.fromkeys(
                            c for lit in literals for c in (values_for(lit.name, node.this.name) or (lit.name,))
                        )
                    )
                    return exp.In(this=node.this.copy(), expressions=[exp.Literal.string(c) for c in chosen])
            if (
                isinstance(node, exp.ArrayContainsAll)
                and isinstance(node.this, exp.Column)
                and _list_enum(node.this, self.fields)
            ):
                array = node.expression
                if isinstance(array, exp.Array) and all(isinstance(e, exp.Literal) for e in array.expressions):
                    parts = []
                    for lit in array.expressions:
                        chosen = values_for(lit.name, node.this.name)
                        parts.append(_any_of(chosen, node.this) if chosen else _eq_any(lit.name, node.this))
                    return exp.and_(*parts) if len(parts) > 1 else parts[0]
            return node

        return tree.copy().transform(visit)


def _list_enum(column: exp.Column, fields: Mapping[str, EnumSpec]) -> bool:
    spec = fields.get(column.name)
    return spec is not None and spec.is_list


def _scalar_enum(column: exp.Column, fields: Mapping[str, EnumSpec]) -> bool:
    spec = fields.get(column.name)
    return spec is not None and not spec.is_list


def _literal_any(node: exp.EQ, fields: Mapping[str, EnumSpec]) -> tuple[str, exp.Column] | None:
    """``'x' = ANY(col)`` (either side) with col a list enum."""
    for lit, other in ((node.this, node.expression), (node.expression, node.this)):
        if isinstance(lit, exp.Literal) and lit.is_string and isinstance(other, exp.Any):
            inner = other.this.unnest() if isinstance(other.this, exp.Paren) else other.this
            if isinstance(inner, exp.Column) and _list_enum(inner, fields):
                return lit.name, inner
    return None


def _column_literal(node: exp.EQ, fields: Mapping[str, EnumSpec]) -> tuple[exp.Column, str] | None:
    """``col = 'x'`` (either side) with col a scalar enum."""
    for col, lit in ((node.this, node.expression), (node.expression, node.this)):
        if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string and _scalar_enum(col, fields):
            return col, lit.name
    return None


def _any_of(values: Sequence[str], column: exp.Column) -> exp.Expr:
    parts = [_eq_any(v, column) for v in values]
    if len(parts) == 1:
        return parts[0]
    return exp.Paren(this=exp.or_(*parts))


def _eq_any(value: str, column: exp.Column) -> exp.EQ:
    """``'value' = ANY(column)``."""
    return exp.EQ(this=exp.Literal.string(value), expression=exp.Any(this=exp.Paren(this=column.copy())))
