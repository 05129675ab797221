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


def test_the_layers_hold():
    """The import-linter contracts of pyproject.toml: the layers (worlds, engines core, llm/eval, sql/kg/retrieval,
    suql, the agents, the Lab, composition, the app) and that engines and worlds never import textual or tui.
    Imports inside functions count: a deferred import that runs upward breaks the contract too."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    done = subprocess.run([exe, str(root / "pyproject.toml"), "--no-cache"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_importing_the_engines_builds_no_world():
    """Worlds are built when a session asks for one, never when a module is imported (the SUQL worlds' examples
    used to build the HybridQA world at import)."""
    names = _modules(engines) + ["tui.cli", "tui.commands.suql", "tui.commands.hybridqa", "tui.commands.kg"]
    code = (
        "import importlib\n"
        "from worlds import courses, hybridqa, kg, restaurants\n"
        "def refuse(*a, **k):\n"
        "    raise AssertionError('a world was built at import time')\n"
        "for w in (courses, hybridqa, kg, restaurants):\n"
        "    w.build = refuse\n"
        "hybridqa.load_real = refuse\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ruff_lint_and_format_pass():
    """ruff (configured in pyproject.toml) finds nothing to lint and nothing to reformat."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    for args in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        done = subprocess.run([exe, *args], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, f"ruff {' '.join(args)}:\n" + done.stdout[-4000:] + done.stderr[-2000:]
