"""mypy (pyproject's [tool.mypy], the pydantic plugin) finds no error in the code.

Every module of engines/ is checked in strict mode (pyproject's strict override, ``engines.*``); worlds/ and the
app, tui/ (its commands included), in the default mode.  A module put in ``NOT_YET`` is read for its types but its
own errors are not reported (``--follow-imports=silent``); the list is empty, and should stay so.  One run in a
child process (its ~2 GB of memory is freed when it ends), its cache under pytest's tmp, so it does not read a
cache the working tree left."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECKED = ("engines", "worlds", "tui")
"""What must be clean: files and packages (every module under them, but ``NOT_YET``)."""

NOT_YET: frozenset[str] = frozenset()


def checked_files() -> list[str]:
    out: list[str] = []
    for entry in CHECKED:
        path = ROOT / entry
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        out += [str(f.relative_to(ROOT)) for f in files if str(f.relative_to(ROOT)) not in NOT_YET]
    return out


PROBE = """from engines.errors import EngineError

wrong: int = EngineError("a probe")
"""
"""A module with one type error, checked in the same run: the run reports errors (and reads the engines' types)."""

TASK_PROBE = """from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.sql.tasks import PARSE, Dialogue

parsed: str = LLM(SimBackend()).run(PARSE, Dialogue("a probe", (), ""))
wrong: int = LLM(SimBackend()).run(PARSE, Dialogue("a probe", (), ""))
not_its_input: str = LLM(SimBackend()).run(PARSE, "a probe")

from pathlib import Path  # imported here: lines 5-7 above keep their numbers

from engines.llm.batch import BatchingBackend, wrap_cache
from engines.llm.cache import AnswerCache, AnswerStore
from engines.llm.claude import ClaudeBackend
from engines.llm.openai_compat import OpenAICompatBackend
from engines.llm.protocol import Backend


def every_backend_is_a_backend(c: ClaudeBackend, o: OpenAICompatBackend, s: SimBackend, b: BatchingBackend) -> None:
    backends: list[Backend] = [c, o, s, b]
    stores: list[AnswerStore | None] = [AnswerCache(Path("answers")), wrap_cache(None)]
    print(backends, stores)
"""
"""The LLM seam is typed: ``LLM.run(task, input)`` is the task's value (PARSE's a str: line 5 is clean) and takes
only the task's input (PARSE's a Dialogue: given a str, mypy cannot infer its I); lines 6 and 7 are errors.  Every
backend satisfies the ``Backend`` Protocol, and the answer cache and the batched run's cache the ``AnswerStore`` one
(no error after line 7)."""


def strict_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    return {m for o in config["overrides"] if o.get("disallow_untyped_defs") for m in o["module"]}


def test_mypy_finds_no_error_in_the_checked_packages(tmp_path):
    files = checked_files()
    assert len(files) > 250 and "engines/eval/metrics.py" in files and "tui/kg/tab.py" in files
    assert "engines" in {m.removesuffix(".*") for m in strict_modules()}  # strict on every engines module
    for entry in CHECKED:  # every engines package checked here is checked in strict mode
        if entry.startswith("engines/"):
            name = entry.removesuffix(".py").replace("/", ".")
            assert name in strict_modules() or f"{name}.*" in strict_modules(), name
    probe = tmp_path / "probe" / "typesa_probe.py"
    probe.parent.mkdir()
    probe.write_text(PROBE)
    task_probe = probe.parent / "typesb_probe.py"
    task_probe.write_text(TASK_PROBE)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "--follow-imports=silent",
            "--hide-error-context",
            *files,
            str(probe),
            str(task_probe),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,  # a cold run takes ~100 s of CPU
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 1 and len(errors) == 3, "mypy:\n" + done.stdout + done.stderr
    first, wrong_value, wrong_input = sorted(errors)
    assert "typesa_probe.py:3: error: Incompatible types in assignment" in first and '"EngineError"' in first
    assert "typesb_probe.py:6: error: Incompatible types in assignment" in wrong_value
    assert '(expression has type "str", variable has type "int")' in wrong_value
    assert "typesb_probe.py:7: error:" in wrong_input and '"run" of "LLM"' in wrong_input  # I: Dialogue or str
