"""Engines and worlds never import textual: one engine, three consumers."""
from __future__ import annotations

import pkgutil
import subprocess
import sys

import engines
import worlds


def _modules(package) -> list[str]:
    return [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]


def test_engines_and_worlds_never_load_textual():
    names = _modules(engines) + _modules(worlds)
    assert "engines.llm.claude" in names and "engines.sql.agent" in names
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_cli_does_not_load_textual_for_headless_commands():
    code = (
        "import sys\n"
        "from tui.cli import main\n"
        "main(['sql', 'SELECT 1', '--json'])\n"
        "assert 'textual' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
