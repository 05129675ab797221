"""Start-up (issue 15 part 1): what the first frame needs, and tabs built when first shown.

Timings are the benchmark's (benchmarks/startup_bench.py); these tests check the behaviour behind them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from textual.widgets import Footer, Header

from tests.tui.support import SIZE, drive, make_app, settle
from tui.app import AREAS, CS224VApp

HEAVY = (
    "scipy",
    "anthropic",
    "bm25s",
    "rdflib",
    "pyoxigraph",
    "duckdb",
    "worlds",
    "markdown_it",
    "engines.kg",
    "engines.spinach",
    "engines.suql",
    "engines.sql",
    "engines.hybridqa",
    "engines.lab",
)


def test_the_first_frame_imports_no_engine_store_or_world() -> None:
    # what `cs224v-tui` imports before its first frame: the CLI, the settings and the app (whose compose,
    # header, empty tabs and footer, needs nothing more) — in a fresh interpreter, where nothing is imported yet
    code = (
        "import sys, json\n"
        "from tui.cli import _parser, _settings\n"
        "settings = _settings(_parser().parse_args([]))\n"
        "from tui.app import CS224VApp\n"  # compose uses only what tui.app imports (Header, TabbedContent, Footer)
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(root), "CS224V_BACKEND": "sim"},
        check=True,
    )
    modules = json.loads(out.stdout)
    allowed = {"worlds", "worlds.data"}  # the settings' default data folder: a path, no world
    loaded = sorted(m for m in modules if (m.split(".")[0] in HEAVY or m.startswith(HEAVY)) and m not in allowed)
    assert not loaded, f"the first frame imports {loaded}"


@drive
async def test_only_the_shown_tab_is_built_and_another_is_built_when_shown() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.query(Header) and app.query(Footer)
        await settle(pilot)
        assert [a.AREA_ID for a in app.areas] == ["restaurants"]
        for spec in AREAS[1:]:  # a tab not shown yet says it is opening, and has no area
            assert app.query_one(f"TabPane#{spec.id}").query(".area-loading")
        await pilot.press("f3")
        await settle(pilot)
        assert sorted(a.AREA_ID for a in app.areas) == ["restaurants", "suql"]
        assert not app.query_one("TabPane#suql").query(".area-loading")
        assert isinstance(app, CS224VApp)
