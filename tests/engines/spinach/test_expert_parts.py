"""The simulated policy's parts (engines.spinach.expert): each one idea, none reading the world or the gold."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

from engines.spinach import expert, sim_policy


def _sources() -> dict[str, Path]:
    files = {"sim_policy": Path(sim_policy.__file__)}
    for m in pkgutil.iter_modules(expert.__path__):
        files[m.name] = Path(expert.__path__[0]) / f"{m.name}.py"
    files["expert"] = Path(expert.__file__)
    return files


def test_the_parts_are_there_and_small():
    files = _sources()
    assert {"memory", "question", "state", "search", "clauses", "debugging", "compose"} <= set(files)
    for name, path in files.items():
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, name


def test_no_part_reads_the_world_its_truth_or_the_gold():
    for name, path in _sources().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        }
        assert not any(
            m and (m.startswith("worlds") or m.startswith("engines.kg") or m.startswith("engines.eval"))
            for m in imported
        ), name
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
        }
        assert not any("gold" in n or "truth" in n for n in names), name
