"""``export_screenshots`` drives the app headless and writes the same SVG every time."""

from __future__ import annotations

import difflib
import html
import re
from pathlib import Path

import pytest

from engines.errors import ConfigurationError
from engines.settings import Settings
from tui.screenshots import export_screenshots


def test_export_writes_a_deterministic_svg_per_tab(tmp_path: Path) -> None:
    first = export_screenshots(tmp_path / "a", Settings(backend="sim", sim_latency_s=0.5))
    second = export_screenshots(tmp_path / "b", Settings(backend="sim"))
    assert [p.name for p in first] == ["restaurants.svg", "suql.svg", "hybridqa.svg", "kg.svg", "lab.svg"]
    svg = first[0].read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Palo&#160;Alto" in svg and "0&#160;ms" in svg
    suql = first[1].read_text(encoding="utf-8")
    assert (
        "Mountain&#160;View" in suql and "conjunct&#160;1" in suql and "0.00&#160;s" in suql
    )  # the plan scrolls below conjunct 1
    hybridqa = first[2].read_text(encoding="utf-8")
    assert "Karel&#160;Brask" in hybridqa and "fallback" in hybridqa and "correct" in hybridqa
    kg = first[3].read_text(encoding="utf-8")
    assert "Quintara&#160;Ridge" in kg and "row-F1" in kg
    lab = first[4].read_text(encoding="utf-8")
    assert "retrieve_llm" in lab and "holds" in lab and "l6-classify&#160;(full)" in lab  # the size the tab opens with
    for path in first:  # no run of text starts with spaces a renderer may drop ("cs224v-tui— sim")
        assert not re.search(r'textLength="[0-9.]+"[^>]*>&#160;[^&<]', path.read_text(encoding="utf-8")), path.name
    for a, b in zip(first, second, strict=True):
        svg_a, svg_b = a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")
        if svg_a != svg_b:  # say what differs, in words and places, not as two pages of SVG
            pytest.fail(f"{a.name} differs between two runs:\n{svg_difference(svg_a, svg_b)}")


_RUN = re.compile(r'<text class="[^"]*-(r\d+)" x="([0-9.]+)" y="([0-9.]+)"[^>]*>([^<]*)</text>')


def svg_difference(a: str, b: str) -> str:
    """The text runs (style, x, y, text) that differ between two screenshots, or their styles if only those do."""

    def runs(svg: str) -> list[str]:
        return [f"y={y} x={x} {style} {html.unescape(text)!r}" for style, x, y, text in _RUN.findall(svg)]

    lines = list(difflib.unified_diff(runs(a), runs(b), "first", "second", lineterm="", n=1))
    if not lines:  # the same runs: the stylesheet, the scrollbars or the frame differ
        plain = [re.sub(r"terminal-\d+", "terminal", svg).replace("><", ">\n<").splitlines() for svg in (a, b)]
        lines = list(difflib.unified_diff(*plain, "first", "second", lineterm="", n=0))
    return "\n".join(lines[:80])


def test_export_refuses_a_backend_that_cannot_run(tmp_path: Path) -> None:
    settings = Settings(backend="claude").model_copy(update={"anthropic_api_key": None})
    with pytest.raises(ConfigurationError):
        export_screenshots(tmp_path, settings)
    assert not (tmp_path / "restaurants.svg").exists()
