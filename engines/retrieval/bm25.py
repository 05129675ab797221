"""BM25 over the chunks of a text column (bm25s), aggregated per row.

A row's text (one string, or a list such as all reviews of a restaurant) is cut
into chunks — sentences.  For a question, a row scores the *maximum* over its
chunks (one review that mentions it is enough); for several conditions the row's
scores are *summed* (rows like several conditions come first), as in lecture 7 §3.2.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import bm25s
import numpy as np

K = TypeVar("K", bound=Hashable)
"""A row's key (an id, a primary key, a course code)."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def chunks_of(value: Any) -> list[str]:
    """Sentences of a text value (a string or a list of strings); empty for NULL."""
    if value is None:
        return []
    parts = value if isinstance(value, (list, tuple)) else [value]
    out: list[str] = []
    for part in parts:
        if part is None:
            continue
        out.extend(s.strip() for s in _SENTENCE.split(str(part)) if s.strip())
    return out


def as_text(value: Any) -> str:
    """The text an LLM is shown for a value: list items on their own lines."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value if v is not None)
    return str(value)


@dataclass
class ChunkIndex(Generic[K]):
    """BM25 over every chunk of every row; scores come back per row (by the rows' keys, of type ``K``)."""

    keys: list[K]
    chunk_rows: np.ndarray  # chunk -> row position
    retriever: bm25s.BM25 | None

    @classmethod
    def build(cls, rows: Iterable[tuple[K, Any]]) -> ChunkIndex[K]:
        keys: list[K] = []
        owner: list[int] = []
        corpus: list[str] = []
        for key, value in rows:
            pos = len(keys)
            keys.append(key)
            for chunk in chunks_of(value):
                corpus.append(chunk)
                owner.append(pos)
        if not corpus:
            return cls(keys, np.zeros(0, dtype=np.int64), None)
        tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(keys, np.asarray(owner, dtype=np.int64), retriever)

    def scores(self, question: str) -> dict[K, float]:
        """Each row's score for a question: the maximum over its chunks."""
        best = np.zeros(len(self.keys))
        if self.retriever is not None:
            query = [t for t in _tokens(question) if t in self.retriever.vocab_dict]
            if query:
                chunk_scores = np.asarray(self.retriever.get_scores(query), dtype=float)
                np.maximum.at(best, self.chunk_rows, chunk_scores)
        return dict(zip(self.keys, best.tolist()))


def _tokens(text: str) -> list[str]:
    tokenized = bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)
    return list(tokenized[0]) if tokenized else []


def aggregate(per_condition: Sequence[dict[K, float]]) -> dict[K, float]:
    """Sum over conditions of each row's (max-over-chunks) score."""
    total: dict[K, float] = {}
    for scores in per_condition:
        for key, s in scores.items():
            total[key] = total.get(key, 0.0) + s
    return total


class IndexCache:
    """Indexes built once per (table, text expression, data version); thread-safe.

    A key can also be remembered as not indexed (``rows()`` returned None: a table too large to index
    whole), so the question is not asked again."""

    def __init__(self) -> None:
        self._indexes: dict[Hashable, ChunkIndex[Hashable] | None] = {}
        self._lock = threading.Lock()

    def get(
        self, key: Hashable, rows: Callable[[], Iterable[tuple[Hashable, Any]] | None]
    ) -> ChunkIndex[Hashable] | None:
        """``rows``: a callable returning (row key, text value) pairs, or None when the rows are not to be
        indexed (remembered: later calls return None without calling it); called only on a miss."""
        with self._lock:
            if key in self._indexes:
                return self._indexes[key]
        found = rows()
        index = None if found is None else ChunkIndex.build(found)
        with self._lock:
            self._indexes.setdefault(key, index)
            return self._indexes[key]
