"""Static word embeddings: WordLlama's weights, loaded from its own wheel and nothing else.

WordLlama (PyPI ``wordllama``) ships its token embeddings (``weights/l2_supercat_256.safetensors``) and its
tokenizer (``tokenizers/l2_supercat_tokenizer_config.json``) inside the package.  Its own ``WordLlama.load``
may fetch files from a model hub; this module never imports the package: it finds the two packaged files,
reads them with ``safetensors`` and ``tokenizers`` and pools the token vectors itself (as WordLlama's
inference does), so no code path here can download (and the import costs nothing).

Two readers share the one instance a process loads (:func:`embedder_at`): the SUQL ranker
(``engines.suql.compiler.semantic``) and the simulated LLM's sense of words (``engines.sql.sim``, whose
classify() compares a phrase with the candidate values it is shown).  Without the package (or its files)
:func:`embedder` is ``None``.

A sentence's vector is the mean of its tokens' vectors, normalised; vectors are kept per sentence for the
process (review sentences repeat across rows and queries).
"""

from __future__ import annotations

import importlib.util
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

import numpy as np

WEIGHTS = Path("weights") / "l2_supercat_256.safetensors"
TOKENIZER = Path("tokenizers") / "l2_supercat_tokenizer_config.json"
MAX_CACHED = 200_000  # sentences whose vectors are kept


class CachedVectors(ABC):
    """Normalised sentence vectors kept per sentence for the process: a subclass sets ``dim`` and encodes in
    ``_embed`` (one normalised row per text); each distinct sentence is encoded once (up to ``MAX_CACHED``)."""

    dim: int

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @abstractmethod
    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """One normalised row per text, encoded by the model."""

    def vectors(self, sentences: Sequence[str]) -> np.ndarray:
        """One normalised row per sentence."""
        with self._lock:
            missing = list(dict.fromkeys(s for s in sentences if s not in self._cache))
            if missing:
                if len(self._cache) + len(missing) > MAX_CACHED:
                    self._cache.clear()
                for s, v in zip(missing, self._embed(missing)):
                    self._cache[s] = np.asarray(v, dtype=np.float32)
            if not sentences:
                return np.zeros((0, self.dim), dtype=np.float32)
            return np.stack([self._cache[s] for s in sentences])


class Embedder(CachedVectors):
    """Sentence vectors from WordLlama's packaged weights (see the module's docstring)."""

    def __init__(self, package_dir: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        super().__init__()
        self._weights = np.ascontiguousarray(load_file(str(package_dir / WEIGHTS))["embedding.weight"], np.float32)
        self._tokenizer = Tokenizer.from_file(str(package_dir / TOKENIZER))
        self._tokenizer.enable_padding()
        self._tokenizer.no_truncation()
        self.dim = int(self._weights.shape[1])

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """WordLlama's sentence vector: the mean of the tokens' vectors (padding masked out), normalised."""
        out = []
        for i in range(0, len(texts), 64):
            encoded = self._tokenizer.encode_batch(list(texts[i : i + 64]), add_special_tokens=False)
            ids = np.clip(np.array([e.ids for e in encoded], dtype=np.int64), 0, len(self._weights) - 1)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            pooled = (self._weights[ids] * mask[..., None]).sum(axis=1) / np.maximum(
                mask.sum(axis=1, keepdims=True), 1.0
            )
            out.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out) if out else np.zeros((0, self.dim), dtype=np.float32)


_loaded: dict[Path, Embedder | None] = {}
_load_lock = threading.Lock()


def package_dir() -> Path | None:
    """Where the installed ``wordllama`` package lives, if it has the two files (found without importing it)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    return root if (root / WEIGHTS).is_file() and (root / TOKENIZER).is_file() else None


def embedder_at(root: Path | None) -> Embedder | None:
    """The process's embedder of the package at ``root``, loaded on first use; None without one or for a broken
    install."""
    if root is None:
        return None
    with _load_lock:
        if root not in _loaded:
            try:
                _loaded[root] = Embedder(root)
            except Exception:  # a broken install: the readers fall back to what they do without embeddings
                _loaded[root] = None
        return _loaded[root]


def embedder() -> Embedder | None:
    """The process's embedder of the installed package; None when WordLlama or its packaged files are missing."""
    return embedder_at(package_dir())
