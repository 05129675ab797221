"""``cs224v-tui lab``: list, run one, run all; JSON and the human table."""

from __future__ import annotations

import json

import pytest

from engines import lab
from engines.lab.core import Experiment
from tui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lab_list_json(capsys):
    code, out, _ = run(capsys, "lab", "list", "--json")
    data = json.loads(out)
    assert code == 0 and data and all(set(d) == {"name", "lecture", "title"} for d in data)
    assert {d["lecture"] for d in data} >= {6, 7}
    code, out, _ = run(capsys, "lab", "list")
    assert code == 0 and "lecture 6" in out and "l6-classify" in out


def test_lab_run_one_json_and_human(capsys):
    code, out, err = run(capsys, "lab", "run", "l6-classify", "--json", "--small")
    data = json.loads(out)
    assert code == 0 and set(data) >= {"name", "columns", "rows", "notes"} and data["name"] == "l6-classify"
    assert data["columns"][0] == "method" and len(data["rows"]) == 4
    assert err == ""  # no progress line when stderr is not a terminal
    code, out, _ = run(capsys, "lab", "run", "l6-query-space", "--small")
    assert code == 0 and "l6-query-space" in out and "─" in out and "• holds" in out


def test_lab_run_unknown_or_ambiguous(capsys):
    code, _, err = run(capsys, "lab", "run", "nope")
    assert code == 2 and "No experiment named" in err and "Traceback" not in err
    code, _, err = run(capsys, "lab", "run")
    assert code == 2 and "NAME or --all" in err
    code, _, _ = run(capsys, "lab")
    assert code == 2


def test_lab_run_all_prints_a_list(capsys, monkeypatch):
    def tiny(ctx):
        return ctx.table(("x",), [(ctx["x"],)])

    fake = [
        Experiment("a", 6, "A", "§1", "Measured: x.", tiny, full={"x": 1}),
        Experiment("b", 7, "B", "§2", "Measured: x.", tiny, full={"x": 2}, small={"x": 3}),
    ]
    monkeypatch.setattr(
        lab, "experiments", lambda lecture=None: [e for e in fake if lecture is None or e.lecture == lecture]
    )
    code, out, _ = run(capsys, "lab", "run", "--all", "--json", "--small")
    data = json.loads(out)
    assert code == 0 and [d["name"] for d in data] == ["a", "b"] and data[1]["rows"] == [[3]]
    code, out, _ = run(capsys, "lab", "run", "--all", "--lecture", "7", "--json")
    assert [d["rows"] for d in json.loads(out)] == [[[2]]]


@pytest.mark.parametrize(
    "value,text", [(0.5, "0.5"), (4.0, "4"), (38411066925, "38,411,066,925"), (True, "yes"), (None, "")]
)
def test_cells(value, text):
    from tui.commands.lab import format_cell

    assert format_cell(value) == text
