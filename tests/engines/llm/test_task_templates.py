"""Each agent package keeps its tasks' prompt templates in its own ``prompts/`` folder (issue 27 item 5), read
through the package (jinja2's PackageLoader): every task's template is where its package says, no template is
left without a task, engines/llm keeps only the shared system prompt, and a wheel built from pyproject ships them
all -- rendered here from the installed copy, in a process that imports the installed packages."""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engines.llm.prompting import PACKAGE, environment, render_prompt
from engines.llm.task import Task

ROOT = Path(__file__).resolve().parents[3]

# The modules that define tasks (a test below finds every module-level Task(...) under engines/ and checks it is here).
TASK_MODULES = (
    "engines.sql.tasks",
    "engines.suql.tasks",
    "engines.hybridqa.tasks",
    "engines.spinach.tasks",
    "engines.lab.search_query",
)

# One input per task, to render its prompt (in this process and in the installed copy's).
SAMPLES = """
from engines.hybridqa.tasks import ParseInput, ShortAnswerInput
from engines.lab.search_query import SearchQueryInput
from engines.llm.protocol import Results, Turn
from engines.spinach.graph import GraphInfo
from engines.spinach.tasks import PolicyInput, PruneInput
from engines.sql.tasks import ClassifyInput, Dialogue, RespondInput
from engines.suql.tasks import AnswerInput, SummaryInput

HISTORY = (Turn("thai food", "SELECT * FROM restaurants", "I found 2."),)
ROWS = Results("I searched.", ("name",), (("Siam Garden",),), 1)
GRAPH = GraphInfo(what="your own RDF graph", wikidata=False, prefixes=(("ex", "http://example.org/"),))
SAMPLES = {
    "engines.sql.tasks.ROUTE": Dialogue("cheaper ones?", HISTORY, "CREATE TABLE restaurants (name TEXT)"),
    "engines.sql.tasks.PARSE": Dialogue("cheaper ones?", HISTORY, "CREATE TABLE restaurants (name TEXT)"),
    "engines.sql.tasks.CLASSIFY": ClassifyInput("asian", "cuisines", ("thai", "chinese")),
    "engines.sql.tasks.RESPOND": RespondInput("any thai?", HISTORY, ROWS, "CREATE TABLE restaurants (name TEXT)"),
    "engines.suql.tasks.ANSWER": AnswerInput("The patio is heated.", "is there a patio?"),
    "engines.suql.tasks.SUMMARY": SummaryInput("The patio is heated."),
    "engines.hybridqa.tasks.HYBRID_PARSE": ParseInput("Who?", 'CREATE TABLE "t" ("Name" TEXT)', ("SELECT 1",)),
    "engines.hybridqa.tasks.SHORT_ANSWER": ShortAnswerInput("Who?", ROWS),
    "engines.spinach.tasks.POLICY": PolicyInput("How high is it?", ()),
    "engines.spinach.tasks.POLICY_ON_GRAPH": PolicyInput("How high is it?", (), 0, GRAPH),
    "engines.spinach.tasks.PRUNE_ENTRY": PruneInput("How high is it?", "label: Mount X\\nheight: 4,000 m"),
    "engines.lab.search_query.SEARCH_QUERY": SearchQueryInput("find me a quiet cafe"),
}
"""

# Run with the installed copy first on sys.path: every task's template and every template of its package, found
# and rendered, with the file each was read from.
PROBE = (
    SAMPLES
    + """
import hashlib, importlib, json, sys
from engines.llm.prompting import environment, render_prompt, system_prompt
from engines.llm.task import Task

report = {"engines": importlib.import_module("engines").__file__, "templates": {}, "rendered": {}}
report["system"] = environment(None).get_template("_system.j2").filename if system_prompt() else None
for module in sys.argv[1:]:
    for name, task in vars(importlib.import_module(module)).items():
        if isinstance(task, Task):
            env = environment(task.package)
            for template in env.list_templates():
                report["templates"][f"{task.package}:{template}"] = env.get_template(template).filename
            prompt = render_prompt(task.template, package=task.package, **task.context(SAMPLES[f"{module}.{name}"]))
            report["rendered"][f"{module}.{name}"] = hashlib.sha256(prompt.encode()).hexdigest()
print(json.dumps(report))
"""
)


def _tasks() -> dict[str, Task]:
    found: dict[str, Task] = {}
    for module in TASK_MODULES:
        for name, value in vars(importlib.import_module(module)).items():
            if isinstance(value, Task):
                found[f"{module}.{name}"] = value
    return found


def test_every_task_module_is_listed_here():
    """A module of engines/ that makes a Task at module level is in TASK_MODULES (so the checks below see it)."""
    makers = set()
    for path in (ROOT / "engines").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Task":
                makers.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    assert makers == set(TASK_MODULES)


def test_each_task_names_its_package_and_its_template_is_in_that_package():
    tasks = _tasks()
    assert len(tasks) == 12
    for where, task in tasks.items():
        assert task.package is not None and where.startswith(task.package + "."), where
        template = importlib.resources.files(task.package) / "prompts" / f"{task.template}.j2"
        assert template.is_file(), f"{where}: no {template}"


def test_no_template_is_left_without_a_task_and_engines_llm_keeps_only_the_system_prompt():
    tasks = _tasks().values()
    for package in {t.package for t in tasks}:
        assert package is not None
        shipped = {p.name for p in (importlib.resources.files(package) / "prompts").iterdir() if p.name.endswith(".j2")}
        own = {f"{t.template}.j2" for t in tasks if t.package == package}
        partials = {name for name in shipped if name.startswith("_")}
        assert shipped - partials == own, package
    shared = {p.name for p in (importlib.resources.files(PACKAGE) / "prompts").iterdir()}
    assert shared == {"_system.j2"}


def test_a_template_of_another_package_is_not_found():
    """A task renders from its own package's folder (and the shared one): another agent's template is not there."""
    import jinja2

    assert render_prompt("route", package="engines.sql", utterance="x", history=(), schema="s")
    with pytest.raises(jinja2.TemplateNotFound):
        render_prompt("route", package="engines.suql", utterance="x", history=(), schema="s")
    with pytest.raises(ValueError, match="prompts"):  # a package without a prompts/ folder
        environment("engines.retrieval")


def _copy_source(dest: Path) -> None:
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    for package in ("engines", "worlds", "tui"):
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pyproject builds (setuptools, offline), installed with pip into a folder of its own."""
    source = tmp_path_factory.mktemp("source")
    _copy_source(source)
    dist, site = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("site")
    build = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    subprocess.run([sys.executable, "-c", build, str(dist)], cwd=source, check=True, capture_output=True, timeout=120)
    (wheel,) = dist.glob("*.whl")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--no-compile",
            "--target",
            site,
            wheel,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return site


def _rendered_here() -> dict[str, str]:
    namespace: dict = {}
    exec(SAMPLES, namespace)  # the sample inputs above
    return {
        where: hashlib.sha256(
            render_prompt(task.template, package=task.package, **task.context(namespace["SAMPLES"][where])).encode()
        ).hexdigest()
        for where, task in _tasks().items()
    }


def test_the_installed_wheel_renders_every_task_from_its_own_copy(installed: Path, tmp_path: Path):
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *TASK_MODULES],
        cwd=tmp_path,  # not the checkout: only the installed copy (and site-packages) can be imported
        env={**os.environ, "PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    report = json.loads(probe.stdout)
    assert Path(report["engines"]).is_relative_to(installed)
    assert Path(report["system"]).is_relative_to(installed)
    # every template of every task's package, partials included, was read from the installed copy ...
    assert {"engines.sql:_dialogue.j2", "engines.suql:answer.j2", "engines.hybridqa:hybrid_parse.j2"} <= set(
        report["templates"]
    )
    for name, filename in report["templates"].items():
        assert Path(filename).is_relative_to(installed), name
    # ... and every task's prompt renders there as here, byte for byte
    assert report["rendered"] == _rendered_here()
