"""Which experiments exist: one module per lecture, each with a tuple ``EXPERIMENTS``.

Adding a lecture's experiments is adding its module (``engines.lab.lecture8`` is listed already and
picked up as soon as it exists); adding one experiment is one more entry in a module's ``EXPERIMENTS``.
"""

from __future__ import annotations

import importlib
import threading

from engines.errors import EngineError
from engines.lab.core import Experiment

MODULES: tuple[str, ...] = ("engines.lab.lecture6", "engines.lab.lecture7", "engines.lab.lecture8", "engines.lab.notes")

_lock = threading.Lock()
_loaded: tuple[Experiment, ...] | None = None


def _load() -> tuple[Experiment, ...]:
    global _loaded
    with _lock:
        if _loaded is None:
            found: list[Experiment] = []
            for name in MODULES:
                try:
                    module = importlib.import_module(name)
                except ModuleNotFoundError as e:
                    if e.name == name:  # this lecture's module is not written yet
                        continue
                    raise
                found.extend(getattr(module, "EXPERIMENTS", ()))
            names = [e.name for e in found]
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise RuntimeError(f"experiment names must be unique: {', '.join(dupes)}")
            _loaded = tuple(sorted(found, key=lambda e: e.lecture))  # stable: module order within a lecture
        return _loaded


def experiments(lecture: int | None = None) -> list[Experiment]:
    """Every experiment, grouped by lecture (in the order of their modules), or one lecture's."""
    return [e for e in _load() if lecture is None or e.lecture == lecture]


def lectures() -> list[int]:
    return sorted({e.lecture for e in _load()})


def get(name: str) -> Experiment:
    for e in _load():
        if e.name == name:
            return e
    raise EngineError(f"No experiment named {name!r}. Known: {', '.join(e.name for e in _load())}.")
