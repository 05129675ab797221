"""The SPARQL worker may read this project's code wherever it is imported from.

Its audit hook lets it read only Python's own files and code on ``sys.path``.  An editable install (``pip install
-e .``, what the Quickstart does) finds ``engines`` through an import hook, not through ``sys.path``, and the app is
usually started outside the checkout, so the checkout is on no path: a module the worker imports lazily after the
hook closes the file system (``engines.kg.agreement``, for a query on Oxigraph) was refused, and every such query of the
built-in world came back as "the SPARQL worker stopped while loading the graph"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engines.kg import worker

ROOT = Path(__file__).resolve().parents[3]
QUERY = (
    "SELECT DISTINCT ?musician ?musicianLabel WHERE { ?musician wdt:P106 wd:Q1014 ; wdt:P1303 ?i . "
    '?i wdt:P279* wd:Q1020 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } } LIMIT 3'
)


def test_the_projects_code_is_readable_when_it_is_on_no_path(monkeypatch: pytest.MonkeyPatch) -> None:
    outside = [p for p in sys.path if p and not os.path.realpath(p).startswith(str(ROOT))]
    monkeypatch.setattr(sys, "path", outside)
    whole, code = worker._allowed_roots()
    for module in ("agreement", "dialect", "store", "results", "rdf_scan", "sparql"):
        path = os.path.realpath(ROOT / "engines" / "kg" / f"{module}.py")
        assert worker._under(path, code) and path.endswith(worker._CODE_SUFFIXES), module
    readme = os.path.realpath(ROOT / "README.md")  # code only: the checkout's other files stay closed
    assert not worker._under(readme, whole) and not readme.endswith(worker._CODE_SUFFIXES)


def test_a_query_runs_from_outside_the_checkout(tmp_path: Path) -> None:
    """End to end, as a user runs it: isolated mode (-I: no PYTHONPATH, no script folder on the path) from another
    folder, so ``engines`` is found only as installed."""
    found = subprocess.run(
        [sys.executable, "-I", "-c", "import engines; print(engines.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if found.returncode != 0 or not os.path.realpath(found.stdout.strip()).startswith(str(ROOT)):
        pytest.skip("this checkout is not the installed cs224v-tui (pip install -e . from it)")
    done = subprocess.run(
        [sys.executable, "-I", "-m", "tui.cli", "sparql", QUERY],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "feedback: rows" in done.stdout and "stopped" not in done.stdout, done.stdout
