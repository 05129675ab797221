"""Drive the app headless and write an SVG screenshot of every tab (for the README).

The screens are deterministic: the LLM calls are timed by a clock that always
says 0.0, the answer cache is off (every call really runs), text cursors do not
blink, animations are off and the terminal is 140 × 40.
"""

from __future__ import annotations

import asyncio
import html
import re
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from engines.api import Settings

SIZE = (140, 40)
RESTAURANTS_QUESTION = "Show me a café in Palo Alto"
SUQL_EXAMPLE = "lecture 7 §2.5"
"""The lecture example the SUQL screenshot runs (romantic or a great view in Mountain View, top 3)."""
HYBRIDQA_QUESTION = "veloria_flag_bearers-V"
"""The HybridQA screenshot's question: a type-V comparison the column fallback rescues."""
KG_QUESTION = "c3_3"
"""The knowledge-graph screenshot's question: SPINACH on the highest mountain, two rollbacks, stepped to the answer."""
LAB_EXPERIMENT = "l6-classify"
"""The Lab screenshot's experiment, run at the size the tab opens with (full): classify()'s four methods, a
table, notes and a bar chart."""


FILES = ("restaurants.svg", "suql.svg", "hybridqa.svg", "kg.svg", "lab.svg")
"""What :func:`export_screenshots` writes, in order."""


def zero_clock() -> float:
    """A clock that never moves: every latency shows as 0 ms."""
    return 0.0


def export_screenshots(out_dir: Path, settings: Settings | None = None, *, size: tuple[int, int] = SIZE) -> list[Path]:
    """Write one SVG per tab (``restaurants.svg``, ``suql.svg``, ``hybridqa.svg``, …, ``lab.svg``) into ``out_dir``; returns the files written.

    ``settings`` default to the environment's; the answer cache is always turned off
    and the simulated latency set to 0 so the screens repeat exactly.
    """
    from engines.api import Settings, backend_from_settings
    from tui.commands import output_folder

    settings = (settings or Settings()).model_copy(update={"cache_enabled": False, "sim_latency_s": 0.0})
    backend_from_settings(settings)  # a backend that cannot run fails here, with its own message
    # before the app runs: a missing folder is made when its parent exists; a file in its place,
    # a missing parent or a folder that cannot be written is a BadInput naming it
    out_dir = output_folder(Path(out_dir), FILES)
    return asyncio.run(_export(out_dir, settings, size))


async def _export(out_dir: Path, settings: Settings, size: tuple[int, int] = SIZE) -> list[Path]:
    from tui.app import CS224VApp
    from tui.restaurants import RestaurantsArea
    from tui.suql import SuqlArea

    app = CS224VApp(settings, clock=zero_clock, cursor_blink=False)
    app.animation_level = "none"
    written: list[Path] = []
    async with app.run_test(size=size) as pilot:
        await wait_for_workers(pilot)

        app.action_show_tab("restaurants")
        area = await app.open_area("restaurants")
        await wait_for_workers(pilot)
        assert isinstance(area, RestaurantsArea)
        area.ask(RESTAURANTS_QUESTION)
        await wait_for_workers(pilot)
        written.append(await _save(pilot, out_dir / "restaurants.svg", "cs224v-tui — Restaurants"))

        app.action_show_tab("suql")
        suql = await app.open_area("suql")
        await wait_for_workers(pilot)
        assert isinstance(suql, SuqlArea)
        suql.load_example(suql.example(SUQL_EXAMPLE))
        suql.run_query()
        await wait_for_workers(pilot)
        # the calls table follows the streamed calls; where that scroll had got differed now and then, and at its
        # end its scrollbar's thumb was drawn at one place or the other (both pictures stable): at its start
        app.query_one("#suql-calls").scroll_home(animate=False, immediate=True)
        await pilot.pause()
        written.append(await _save(pilot, out_dir / "suql.svg", "cs224v-tui — SUQL"))

        from tui.hybridqa import HybridArea

        app.action_show_tab("hybridqa")
        hybrid = await app.open_area("hybridqa")
        await wait_for_workers(pilot)
        assert isinstance(hybrid, HybridArea)
        hybrid.choose_question(HYBRIDQA_QUESTION)
        hybrid.run_question()
        await wait_for_workers(pilot)
        written.append(await _save(pilot, out_dir / "hybridqa.svg", "cs224v-tui — HybridQA"))

        from tui.kg import KgArea

        app.action_show_tab("kg")
        kg = await app.open_area("kg")
        await wait_for_workers(pilot)
        assert isinstance(kg, KgArea)
        kg.show_view("stepper")
        kg.run_question(KG_QUESTION)
        await wait_for_workers(pilot)
        written.append(await _save(pilot, out_dir / "kg.svg", "cs224v-tui — Knowledge graph"))

        from tui.lab import LabArea

        app.action_show_tab("lab")
        lab = await app.open_area("lab")
        await wait_for_workers(pilot)
        assert isinstance(lab, LabArea)
        lab.run_experiment(LAB_EXPERIMENT)  # at the size the tab opens with, as a person would run it
        await wait_for_workers(pilot)
        written.append(await _save(pilot, out_dir / "lab.svg", "cs224v-tui — Lab"))
    return written


async def wait_for_workers(pilot: Pilot[Any]) -> None:
    """Wait until no worker runs and the messages they posted are handled.

    A worker that failed or was cancelled is not an error here: the app has shown it.
    Waits again when finishing workers started new ones (a backend switch does), and first lets
    messages already posted start theirs.
    """
    from textual.worker import WorkerCancelled, WorkerFailed

    app = pilot.app
    await pilot.pause()  # messages already posted (a Select's Changed, say) may start workers: let them
    while True:
        running = [worker for worker in app.workers if not worker.is_finished]
        if not running:
            break
        for worker in running:
            try:
                await worker.wait()
            except (WorkerFailed, WorkerCancelled):
                pass
        await pilot.pause()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()  # a scroll that follows streamed rows ends where it is going
    await pilot.pause()


async def _save(pilot: Pilot[Any], path: Path, title: str) -> Path:
    path.write_text(robust_svg(await settled_screenshot(pilot, title)), encoding="utf-8")
    return path


async def settled_screenshot(pilot: Pilot[Any], title: str, *, tries: int = 40) -> str:
    """The screen as an SVG once two exports a moment apart agree.

    An export draws the widgets as they are; a refresh already asked for (a scrollbar whose table grew by a
    row, say) may not have been laid out yet, and on a loaded machine the export caught the calls table's
    scrollbar thumb at its old place now and then.  Waiting until the picture stops changing does not depend
    on which refresh is pending.
    """
    app = pilot.app
    # a layout pass first: a scrollbar keeps the sizes of the last layout, so a table that grew after it could
    # show its thumb where the old sizes put it, picture after picture (the SUQL calls table did, now and then)
    app.screen.refresh(layout=True)
    await pilot.pause()
    shot = app.export_screenshot(title=title)
    for _ in range(tries):
        await pilot.pause(0.05)
        again = app.export_screenshot(title=title)
        if again == shot:
            return shot
        shot = again
    raise RuntimeError(f"the screen kept changing: no two exports of {title!r} agreed in {tries} tries")


_TEXT = re.compile(
    r'(<text class="[^"]*" x=")([0-9.]+)(" y="[0-9.]+" textLength=")([0-9.]+)("[^>]*>)((?:&#160;)+)([^<]+</text>)'
)


def robust_svg(svg: str) -> str:
    """Textual's SVG with no run of text that starts with spaces: the run starts after them instead.

    Textual draws each styled run at its cell with a ``textLength``; a run that starts with
    non-breaking spaces (" rolled back", " — sim") loses them in some renderers (librsvg, which
    turns the README's SVGs into PNGs, draws "2rolled back", "cs224v-tui— sim").  Moving the run's
    start past its leading spaces draws the same cells in every renderer.
    """
    widths = [float(m[4]) / len(html.unescape(m[6] + m[7].removesuffix("</text>"))) for m in _TEXT.finditer(svg)]
    if not widths:
        return svg
    cell = statistics.median(widths)

    def shift(m: re.Match[str]) -> str:
        spaces = m[6].count("&#160;")
        rest = html.unescape(m[7].removesuffix("</text>"))
        if not rest.strip("\xa0"):
            return m[0]
        x = float(m[2]) + spaces * cell
        length = float(m[4]) - spaces * cell
        return f"{m[1]}{x:g}{m[3]}{length:g}{m[5]}{m[7]}"

    return _TEXT.sub(shift, svg)
