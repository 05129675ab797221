"""Static word embeddings for the adaptive ranker: WordLlama's weights, loaded from its own wheel and nothing else.

The loading lives in :mod:`engines.llm.word_vectors` (the simulated LLM reads the same vectors, and one
instance serves the process); this module is the ranker's door to it.  Nothing on this path imports the
``wordllama`` package or can download.  Without the package (or its files) :func:`embedder` is ``None`` and the
ranker uses BM25 alone.
"""

from __future__ import annotations

import threading
from pathlib import Path

from engines.llm import word_vectors
from engines.llm.word_vectors import MAX_CACHED, TOKENIZER, WEIGHTS, Embedder

__all__ = ["MAX_CACHED", "TOKENIZER", "WEIGHTS", "Embedder", "embedder", "package_dir"]

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
