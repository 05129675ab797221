"""Start-up (issue 15 part 1): what the first frame needs, and tabs built when first shown.

Timings are the benchmark's (benchmarks/startup_bench.py); these tests check the behaviour behind them:
what is imported when the first frame reaches the terminal, that the settings come after it, and that
tabs are built when first shown.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from textual.widgets import Footer, Header

from tests.tui.support import SIZE, drive, make_app, settle
from tui.app import AREAS, CS224VApp
from tui.cli import COMMAND_MODULES, _parser, _the_app_alone

ROOT = Path(__file__).resolve().parents[2]

HEAVY = (
    "scipy",
    "numpy",
    "anthropic",
    "openai",
    "httpx",
    "bm25s",
    "rdflib",
    "pyoxigraph",
    "duckdb",
    "sqlglot",
    "pydantic",
    "pydantic_settings",
    "worlds",
    "markdown_it",
    "engines.settings",
    "engines.llm",
    "engines.kg",
    "engines.spinach",
    "engines.suql",
    "engines.sql",
    "engines.hybridqa",
    "engines.lab",
    "tui.restaurants",
    "tui.suql",
    "tui.hybridqa",
    "tui.kg",
    "tui.lab",
    *COMMAND_MODULES,  # the commands' parsers: opening the app reads only its own options
    "textual.widgets._data_table",  # no table before a tab is built
)
"""Nothing of these may be imported when the first frame is drawn (a name covers its submodules)."""

# `cs224v-tui` as the console script starts it, with the driver's write wrapped: when the bytes written so
# far hold the header's title and a footer key's label (the first frame with both), the modules imported
# at that moment go to a file, and the app runs on.
PROBE = """
import json, os, sys
import textual.drivers.linux_driver as driver

written, done = [], []
write = driver.LinuxDriver.write

def probe(self, data):
    if not done:
        written.append(data)
        frame = "".join(written)
        if "cs224v-tui" in frame and "Help" in frame:
            done.append(True)
            with open(os.environ["PROBE_OUT"], "w") as f:
                json.dump(sorted(sys.modules), f)
    return write(self, data)

driver.LinuxDriver.write = probe
from tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _on_a_terminal(
    tmp_path: Path, *argv: str, env: dict[str, str] | None = None, quit_at_first_frame: bool = True
) -> tuple[list[str] | None, int, str]:
    """Run ``cs224v-tui ARGV`` on an 80x24 pseudo-terminal until its first frame (then Ctrl+Q) or, when not
    ``quit_at_first_frame``, until it ends by itself (at most 90 s, then Ctrl+Q).

    Returns (the modules imported at the first frame or None, the exit code, what it wrote)."""
    out = tmp_path / "first-frame.json"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    environ = {
        **os.environ,
        "TERM": "xterm-256color",
        "PYTHONPATH": str(ROOT),
        "CS224V_BACKEND": "sim",
        "CS224V_CACHE_ENABLED": "false",
        "CS224V_HISTORY_DIR": str(tmp_path / "history"),
        "PROBE_OUT": str(out),
        **(env or {}),
    }
    environ.pop("TEXTUAL", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE, *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env=environ,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and not (quit_at_first_frame and out.exists()) and proc.poll() is None:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        if proc.poll() is None:
            os.write(master, b"\x11")  # Ctrl+Q
        end = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < end:  # keep reading: the app must never block writing
            if select.select([master], [], [], 0.05)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
    finally:
        os.close(master)
    modules = json.loads(out.read_text()) if out.exists() else None
    return modules, code, seen.decode("utf-8", "replace")


def test_the_first_frame_is_drawn_before_the_settings_the_engines_or_any_tab(tmp_path: Path) -> None:
    modules, code, _ = _on_a_terminal(tmp_path)
    assert modules is not None, "no first frame with the header and the footer's keys"
    loaded = sorted(h for h in HEAVY if any(m == h or m.startswith(f"{h}.") for m in modules))
    assert not loaded, f"imported before the first frame: {loaded}"
    assert "tui.app" in modules and code == 0


def test_settings_that_do_not_validate_close_the_app_with_the_command_line_s_message(tmp_path: Path) -> None:
    # built after the first frame now: the app closes, the terminal is restored, and the message is the one
    # the command line gave before the app started
    modules, code, text = _on_a_terminal(tmp_path, env={"CS224V_SEED": "many"}, quit_at_first_frame=False)
    assert modules is not None  # the app had started
    assert code == 2
    assert "cs224v-tui: invalid setting seed:" in text and "Traceback" not in text


@drive
async def test_settings_given_as_a_function_are_built_after_the_first_frame_and_the_tab_follows() -> None:
    given = make_app().settings
    calls: list[bool] = []

    def build():
        calls.append(True)
        return given

    app = CS224VApp(build, clock=lambda: 0.0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert calls == [True] and app.settings is given
        assert app.sub_title.startswith("sim · seed 224")
        assert [a.AREA_ID for a in app.areas] == ["restaurants"]


@drive
async def test_settings_that_cannot_be_built_close_the_app_and_are_kept() -> None:
    def build():
        raise ValueError("no such backend")

    app = CS224VApp(build, clock=lambda: 0.0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            if app.start_error is not None:
                break
            await pilot.pause(0.02)
    assert isinstance(app.start_error, ValueError) and app.return_code == 2
    assert not app.areas


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


def test_the_default_settings_are_built_without_httpx_and_other_urls_are_still_checked() -> None:
    # after the first frame the settings are built before the first tab: the default server URL needs no
    # parser (it is the form httpx would give it); any other URL is still parsed and checked by httpx
    code = (
        "import sys\n"
        "from engines.settings import OPENAI_DEFAULT_BASE_URL, Settings\n"
        "assert Settings().openai_base_url == OPENAI_DEFAULT_BASE_URL\n"
        "assert 'httpx' not in sys.modules, 'httpx imported for the default settings'\n"
        "import httpx\n"
        "assert str(httpx.URL(OPENAI_DEFAULT_BASE_URL)).rstrip('/') == OPENAI_DEFAULT_BASE_URL\n"
        "assert Settings(openai_base_url='HTTP://Example.org:8000/v1/').openai_base_url == 'http://example.org:8000/v1'\n"
        "try:\n"
        "    Settings(openai_base_url='localhost:11434')\n"
        "except ValueError as e:\n"
        "    assert 'http://' in str(e)\n"
        "else:\n"
        "    raise AssertionError('a URL without a scheme was accepted')\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120
    )


def test_the_app_s_options_alone_are_read_as_the_full_parser_reads_them() -> None:
    for argv in (
        [],
        ["--no-cache"],
        ["--backend", "claude", "--seed", "3", "--classify", "exact"],
        ["--rdf", "a.ttl", "b.ttl"],
        ["--db", "mine.csv", "--latency", "0.5"],
    ):
        alone = _the_app_alone(argv)
        assert alone is not None, argv
        assert {**vars(alone[1]), "command": None} == vars(_parser().parse_args(argv))
    # a command, a help request (abbreviated too) or an error goes to the full parser, which says what is wrong
    for argv in (
        ["sql", "SELECT 1"],
        ["--no-cache", "ask", "a question"],
        ["--help"],
        ["-h"],
        ["--he"],
        ["--seed", "many"],
        ["--backend", "nope"],
        ["--bogus"],
    ):
        assert _the_app_alone(argv) is None, argv


@drive
async def test_a_second_app_parses_no_css_and_gets_the_same_rules(monkeypatch) -> None:
    # every app of a process shares the parsed stylesheets (the widgets' defaults, app.tcss, the tabs')
    import textual.css.stylesheet as textual_stylesheet

    first = make_app()
    async with first.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rules = list(first.stylesheet.rules)
    parsed: list[object] = []
    real_parse = textual_stylesheet.parse

    def counting_parse(*args, **kwargs):
        parsed.append(args[2] if len(args) > 2 else kwargs.get("read_from"))
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(textual_stylesheet, "parse", counting_parse)
    second = make_app()
    async with second.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert all(a is b for a, b in zip(second.stylesheet.rules, rules, strict=True))  # the very same rule sets
    assert parsed == []


@drive
async def test_the_footer_keeps_its_keys_until_what_they_show_changes() -> None:
    from textual.widgets import DataTable
    from textual.widgets._footer import FooterKey

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = list(app.query(FooterKey))
        assert keys and "view_cell" not in {key.action for key in keys}
        app.screen.refresh_bindings()  # nothing the footer shows changed: the same keys stay
        await pilot.pause()
        await pilot.pause()
        assert list(app.query(FooterKey)) == keys
        table = app.active_area.query(DataTable).first()
        table.focus()  # a table takes v (view the cell): the footer is rebuilt and shows it
        await pilot.pause()
        await pilot.pause()
        assert "view_cell" in {key.action for key in app.query(FooterKey)}
        assert list(app.query(FooterKey)) != keys
