"""The adaptive ranker's sense of a question: embeddings loaded from a wheel and nothing else.

Two rankers (the setting ``suql_ranker``, :data:`RANKERS`):

- ``static`` (the default): WordLlama's static word embeddings.  The loading lives in
  :mod:`engines.llm.word_vectors` (the simulated LLM reads the same vectors, and one instance serves the
  process); nothing on this path imports the ``wordllama`` package or can download.  Without the package (or
  its files) :func:`embedder` is ``None`` and the ranker uses BM25 alone.
- ``sentence``: the sentence model all-MiniLM-L6-v2 (:mod:`engines.llm.sentence_vectors`, the optional extra
  ``sentence``), loaded offline from its wheel; chosen but not installed, it is an error that names the extra
  (:class:`~engines.llm.sentence_vectors.SentenceModelMissing`), never a silent fallback.

A question is embedded twice, as written and as its content words (its words, hyphenated ones kept whole, without
bm25s's English stopwords: the list the BM25 side drops), and the two vectors averaged (:func:`question_vector`): in a mean
of token vectors, "is it" and "does it have" otherwise weigh as much as "romantic" and pull the question
toward sentences that share its function words.

Either only orders rows: the rows a query returns are the same (as many matches as the LIMIT asks, or all).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from engines.errors import ConfigurationError
from engines.llm import sentence_vectors, word_vectors
from engines.llm.word_vectors import MAX_CACHED, TOKENIZER, WEIGHTS, CachedVectors, Embedder

__all__ = [
    "MAX_CACHED",
    "RANKERS",
    "TOKENIZER",
    "WEIGHTS",
    "Embedder",
    "check_ranker",
    "embedder",
    "package_dir",
    "question_vector",
]

RANKERS = ("static", "sentence")

_WORD = re.compile(r"[^\W_][\w'-]*")
_STOPWORDS = frozenset(STOPWORDS_EN)

_embedder: Embedder | None = None
_tried = False
_load_lock = threading.Lock()


def package_dir() -> Path | None:
    """Where the installed ``wordllama`` package lives, if it has the two files (found without importing it)."""
    return word_vectors.package_dir()


def embedder() -> Embedder | None:
    """The process's embedder, loaded on first use; None when WordLlama or its packaged files are missing."""
    global _embedder, _tried
    with _load_lock:
        if not _tried:
            _tried = True
            _embedder = word_vectors.embedder_at(package_dir())
        return _embedder


def check_ranker(ranker: str) -> str:
    """``ranker`` if it names a ranker that can run here; a ConfigurationError (naming the extra to install when
    the sentence model is missing) otherwise.  Cheap: nothing is loaded."""
    if ranker not in RANKERS:
        raise ConfigurationError(f"Unknown SUQL ranker {ranker!r}: choose one of {', '.join(RANKERS)}.")
    if ranker == "sentence":
        why = sentence_vectors.missing()
        if why is not None:
            raise sentence_vectors.SentenceModelMissing(why)
    return ranker


def ranker_embedder(ranker: str) -> CachedVectors | None:
    """The embedder of ``ranker`` (an object with ``vectors(sentences)``: normalised rows), or None (static
    ranker without WordLlama).  The sentence model is loaded on first use and raises when it cannot be."""
    if ranker == "sentence":
        return sentence_vectors.embedder()
    return embedder()


def question_vector(model: CachedVectors, question: str) -> np.ndarray:
    """The normalised vector ``model`` gives ``question``: the mean of the vectors of the question as written
    (lower-cased) and of its content words (see the module's docstring); the first alone when every word is a
    stopword."""
    written = question.lower()
    content = " ".join(w for w in _WORD.findall(written) if w not in _STOPWORDS)
    if not content or content == written:
        alone: np.ndarray = model.vectors([written])[0]
        return alone
    vectors = model.vectors([written, content])
    both: np.ndarray = vectors.sum(axis=0)
    norm = float(np.linalg.norm(both))
    if norm > 0:
        return both / norm
    first: np.ndarray = vectors[0]
    return first
