"""The facade (engines/api.py): the one module of the engines the app (tui/) and the command line import.  Its
names resolve, the type checker's list and the run-time list agree, importing it loads no engine, the import-linter
contract that keeps tui on it lists every other module, and no tui module imports another one, not even for types.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import engines
import engines.api as api

ROOT = Path(__file__).resolve().parents[2]


def test_every_exported_name_resolves_to_its_module_s_own_object() -> None:
    assert sorted(api.__all__) == sorted(api._EXPORTS) and len(set(api.__all__)) == len(api.__all__)
    for name, (module, attribute) in api._EXPORTS.items():
        defined = importlib.import_module(module)
        assert getattr(api, name) is (getattr(defined, attribute) if attribute else defined), name
    assert "open_graph" in api.__all__ and "TableSource" in api.__all__ and "GraphSource" in api.__all__
    assert set(dir(api)) >= set(api.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        api.no_such_name  # noqa: B018 - the lookup is the test
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("engines.api.no_such_name resolved")


def test_the_type_checker_reads_the_same_names() -> None:
    """The imports under ``if TYPE_CHECKING:`` (what mypy sees) name exactly the modules and names of _EXPORTS."""
    tree = ast.parse((ROOT / "engines" / "api.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    seen: dict[str, tuple[str, str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
        for alias in node.names:
            where = ROOT / node.module.replace(".", "/") / alias.name
            if where.is_dir() or where.with_suffix(".py").is_file():  # `from engines import lab`: a module itself
                seen[alias.asname or alias.name] = (f"{node.module}.{alias.name}", "")
            else:
                seen[alias.asname or alias.name] = (node.module, alias.name)
    assert seen == api._EXPORTS


def test_importing_the_facade_loads_no_engine() -> None:
    """The app draws its first frame, and --help answers, before any engine loads."""
    code = (
        "import sys\nimport engines.api\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('engines.') and m != 'engines.api')\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_facade_contract_forbids_every_engines_module_but_the_facade() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in config if c["name"] == "The app and the CLI import the engines only through engines.api"]
    assert contract["type"] == "forbidden"
    assert contract["source_modules"] == ["tui"]
    top = {f"engines.{m.name}" for m in pkgutil.iter_modules(engines.__path__)}
    assert set(contract["forbidden_modules"]) == top - {"engines.api"}


def test_no_tui_module_imports_an_engines_module_but_the_facade() -> None:
    """The contract skips imports under ``if TYPE_CHECKING:`` (pyproject's exclude_type_checking_imports); the app
    names the engines' types through the facade too, so mypy reads what the app sees."""
    found = []
    for path in sorted((ROOT / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module] if node.module != "engines" else [f"engines.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {m}" for m in modules if m.startswith("engines")]
    assert found and all(f.endswith(" engines.api") for f in found), [
        f for f in found if not f.endswith(" engines.api")
    ]


def test_a_name_is_looked_up_at_each_import_never_kept(monkeypatch) -> None:
    """A test that replaces a module's function for a while (monkeypatch) is seen through the facade then, and the
    original after: neither engines.api nor engines.compose's re-exports keep a copy (one did, and a spy installed
    by one CLI test broke the next ones)."""
    import engines.hybridqa.session as session

    original = session.open_hybridqa

    def spy(*_a: object, **_k: object) -> None:
        raise AssertionError("not called")

    with monkeypatch.context() as patch:
        patch.setattr(session, "open_hybridqa", spy)
        assert api.open_hybridqa is spy
        from engines.api import open_hybridqa

        assert open_hybridqa is spy
    assert api.open_hybridqa is original
    from engines.api import open_hybridqa as again

    assert again is original
