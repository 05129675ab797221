"""Issue 10 item 5: every command answers bad input with a clear message and exit 2, never a traceback.

In-process (``main(argv)``) except the few runs that need a real command line (argv bytes that are not UTF-8).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.cli import EXIT_INTERNAL, main

ROOT = Path(__file__).resolve().parents[1]
OK_ROWS = json.dumps([{"a": {"type": "uri", "value": "x"}}])


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def refused(capsys, *argv: str) -> str:
    """Run ``argv``; it must exit 2 with one message on stderr. Returns the message."""
    code, out, err = run(capsys, *argv)
    assert code == 2, (argv, code, out, err)
    assert err.strip(), argv
    return err


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# --- score and sparql --check-dialect: the files they read ------------------------------------------

BAD_JSON_FILES = {
    "not_utf8": (b'[{"a": {"type": "uri", "value": "\xff"}}]', "is not UTF-8 text (byte 0xff at offset 33)"),
    "binary": (b"\x00\xff\xfe\x01", "is not UTF-8 text (byte 0xff at offset 1)"),
    "deep": ("[" * 100_000 + "]" * 100_000, "nests arrays or objects too deeply to read"),
    "empty": ("", "is empty (expected JSON)"),
    "blank": ("  \n", "is empty (expected JSON)"),
    "broken": ('[{"a": ', "is not JSON: Expecting value at line 1, column 8"),
    "long_int": ("[" + "9" * 5000 + "]", "a number is too long to read"),
}


@pytest.mark.parametrize("name", sorted(BAD_JSON_FILES))
def test_unreadable_json_files(capsys, tmp_path, name):
    content, message = BAD_JSON_FILES[name]
    bad = write(tmp_path / f"{name}.json", content)
    ok = write(tmp_path / "ok.json", OK_ROWS)
    for argv in (["score", str(bad), str(ok)], ["score", str(ok), str(bad)], ["sparql", "--check-dialect", str(bad)]):
        err = refused(capsys, *argv)
        assert str(bad) in err and message in err, err


def test_missing_file_a_folder_and_a_nul_in_the_name(capsys, tmp_path):
    ok = write(tmp_path / "ok.json", OK_ROWS)
    err = refused(capsys, "score", str(tmp_path / "nope.json"), str(ok))
    assert f"cannot read {tmp_path / 'nope.json'}: No such file or directory" in err
    err = refused(capsys, "score", str(ok), str(tmp_path))
    assert f"cannot read {tmp_path}: it is a folder, not a file" in err
    err = refused(capsys, "sparql", "--check-dialect", str(tmp_path))
    assert "it is a folder, not a file" in err
    err = refused(capsys, "score", str(tmp_path / "a\x00b"), str(ok))
    assert "holds a NUL byte" in err


u = {"type": "uri", "value": "x"}
BAD_SCORE_DOCS = {
    "results_is_a_number": ({"results": 7}, '"results" must be an object holding "bindings"'),
    "results_is_a_list": ({"results": [u]}, '"results" must be an object holding "bindings"'),
    "bindings_not_a_list": ({"results": {"bindings": 5}}, "expected a list of SPARQL JSON bindings"),
    "a_number": (7, "expected a list of SPARQL JSON bindings"),
    "row_not_an_object": ([[u]], "row 1 is not an object"),
    "cell_not_an_object": (
        [{"a": u}, {"a": 1}],
        'row 2, variable ?a: expected a {"type", "value"} object, got a number',
    ),
    "list_valued_cell": (
        [{"a": {"type": "uri", "value": ["x", "y"]}}],
        'row 1, variable ?a: "value" must be a string, got a list',
    ),
    "object_valued_cell": ([{"a": {"type": "uri", "value": {"x": 1}}}], '"value" must be a string, got an object'),
    "huge_number_cell": ([{"a": {"type": "literal", "value": 1e308 * 10}}], '"value" must be a string, got a number'),
    "list_in_another_field": (
        [{"a": {"type": "literal", "value": "1", "datatype": [1]}}],
        '"datatype" must be a string, got a list',
    ),
    "unknown_field": ([{"a": {"type": "uri", "value": "x", "extra": [1]}}], 'unknown field "extra"'),
    "no_type": ([{"a": {"value": "x"}}], 'the term has no "type"'),
    "boolean_not_a_bool": ({"boolean": [1]}, '"boolean" must be true or false'),
}


@pytest.mark.parametrize("name", sorted(BAD_SCORE_DOCS))
def test_score_refuses_what_is_not_a_sparql_result(capsys, tmp_path, name):
    doc, message = BAD_SCORE_DOCS[name]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")
    ok = write(tmp_path / "ok.json", OK_ROWS)
    for argv in (["score", str(bad), str(ok)], ["score", str(ok), str(bad), "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2
        said = json.loads(out)["error"] if "--json" in argv else err
        assert str(bad) in said and message in said, said


def test_score_still_scores_well_formed_files(capsys, tmp_path):
    pred = write(tmp_path / "p.json", json.dumps([{"a": {"type": "literal", "value": "1", "datatype": "xsd:int"}}]))
    gold = write(
        tmp_path / "g.json",
        json.dumps(
            {"head": {}, "results": {"bindings": [{"b": {"type": "literal", "value": "1", "datatype": "xsd:int"}}]}}
        ),
    )
    code, out, _ = run(capsys, "score", str(pred), str(gold), "--json")
    assert code == 0 and json.loads(out) == {"em": 1.0, "f1": 1.0, "set_f1": 1.0}
    yes = write(tmp_path / "yes.json", '{"boolean": true}')
    code, out, _ = run(capsys, "score", str(yes), str(yes), "--json")
    assert code == 0 and json.loads(out)["em"] == 1.0


def _rows(n: int, offset: int = 0) -> str:
    return json.dumps(
        [
            {"x": {"type": "uri", "value": f"e{i + offset}"}, "y": {"type": "literal", "value": str(i % 7)}}
            for i in range(n)
        ]
    )


def test_score_3000_rows_within_10_seconds(capsys, tmp_path):
    import time

    pred, gold = write(tmp_path / "p.json", _rows(3000)), write(tmp_path / "g.json", _rows(3000, offset=1500))
    started = time.monotonic()
    code, out, _ = run(capsys, "score", str(pred), str(gold), "--json")
    assert code == 0 and time.monotonic() - started < 10
    data = json.loads(out)
    assert data["em"] == 0 and 0.5 < data["f1"] < 1


def test_score_refuses_tables_beyond_the_bound_and_says_why(capsys, tmp_path):
    pred, gold = write(tmp_path / "p.json", _rows(5001)), write(tmp_path / "g.json", _rows(5001))
    err = refused(capsys, "score", str(pred), str(gold))
    assert "Hungarian matching, cubic time" in err and "5,001 × 5,001" in err and "25,000,000" in err


def test_check_dialect_without_queries_is_refused(capsys, tmp_path):
    for doc in ({"results": 7}, [[]], [{"id": 1}], {"data": 3}):
        f = write(tmp_path / "d.json", json.dumps(doc))
        err = refused(capsys, "sparql", "--check-dialect", str(f))
        assert str(f) in err and ("holds no queries" in err or 'expected a JSON list of {"id", "sparql"}' in err), err
    mixed = write(
        tmp_path / "m.json", json.dumps([{"id": "a", "sparql": "SELECT ?x WHERE { ?x ?p ?o }"}, 5, {"id": [1]}])
    )
    code, out, _ = run(capsys, "sparql", "--check-dialect", str(mixed), "--json")
    assert code == 0 and json.loads(out) == {"total": 1, "accepted": 1, "failures": [], "skipped": 2}


# --- where output goes: spinach --save, screenshots --out -----------------------------------------------


def test_spinach_save_to_a_folder_a_missing_folder_or_under_a_file(capsys, tmp_path):
    (tmp_path / "afile").write_text("keep me")
    err = refused(capsys, "spinach", "Who directed Night Ferry?", "--save", str(tmp_path))
    assert f"cannot save to {tmp_path}: it is a folder; give a file name" in err
    err = refused(capsys, "spinach", "Who directed Night Ferry?", "--save", str(tmp_path / "missing" / "t.json"))
    assert f"the folder {tmp_path / 'missing'} does not exist" in err
    err = refused(capsys, "spinach", "Who directed Night Ferry?", "--save", str(tmp_path / "afile" / "t.json"))
    assert f"{tmp_path / 'afile'} is a file, not a folder" in err
    assert (tmp_path / "afile").read_text() == "keep me"


def test_spinach_save_is_checked_before_the_run(capsys, tmp_path, monkeypatch):
    from engines.spinach.agent import SpinachAgent

    def never(*_a, **_k):
        raise AssertionError("the agent ran although the trajectory could not be saved")

    monkeypatch.setattr(SpinachAgent, "run", never)
    refused(capsys, "spinach", "Who directed Night Ferry?", "--save", str(tmp_path / "missing" / "t.json"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_spinach_save_into_a_read_only_folder(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        err = refused(capsys, "spinach", "Who directed Night Ferry?", "--save", str(ro / "t.json"))
        assert f"cannot write into the folder {ro}" in err
    finally:
        ro.chmod(0o700)


def test_spinach_save_failing_at_the_end_still_prints_the_trajectory(capsys, tmp_path, monkeypatch):
    import engines.spinach.trajectory as trajectory

    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(trajectory, "save", full)
    code, out, err = run(capsys, "spinach", "Who directed Night Ferry?", "--json", "--save", str(tmp_path / "t.json"))
    assert code == 1 and json.loads(out)["steps"]
    assert f"could not save the trajectory to {tmp_path / 't.json'}: No space left on device" in err


def test_screenshots_out_a_file_or_a_missing_parent(capsys, tmp_path, monkeypatch):
    import tui.screenshots as shots

    async def never(*_a, **_k):
        raise AssertionError("the app ran although the screenshots could not be written")

    monkeypatch.setattr(shots, "_export", never)
    (tmp_path / "afile").write_text("keep me")
    err = refused(capsys, "screenshots", "--out", str(tmp_path / "afile"))
    assert f"cannot write into {tmp_path / 'afile'}: it is a file, not a folder" in err
    err = refused(capsys, "screenshots", "--out", str(tmp_path / "missing" / "deeper"))
    assert f"cannot create the folder {tmp_path / 'missing' / 'deeper'}: {tmp_path / 'missing'} does not exist" in err
    assert not (tmp_path / "missing").exists()
    (tmp_path / "shots" / "kg.svg").mkdir(parents=True)
    err = refused(capsys, "screenshots", "--out", str(tmp_path / "shots"))
    assert f"cannot write {tmp_path / 'shots' / 'kg.svg'}: something other than a file is in the way" in err
    assert (tmp_path / "afile").read_text() == "keep me"


def test_screenshots_out_creates_a_new_folder_whose_parent_exists(capsys, tmp_path, monkeypatch):
    import tui.screenshots as shots

    async def fake(out_dir, _settings, _size=shots.SIZE):
        return [out_dir / name for name in shots.FILES]

    monkeypatch.setattr(shots, "_export", fake)
    code, out, _ = run(capsys, "screenshots", "--out", str(tmp_path / "new"))
    assert (
        code == 0 and (tmp_path / "new").is_dir() and out.splitlines()[0] == str(tmp_path / "new" / "restaurants.svg")
    )
    assert list((tmp_path / "new").iterdir()) == []  # the write test left nothing behind


# --- arguments ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sql", "SELECT '\udcff'"], "argument SQL: it is not valid UTF-8 (the byte 0xff)"),
        (["ask", "fine", "caf\udce9"], "argument QUESTION: it is not valid UTF-8 (the byte 0xe9)"),
        (["suql", "SELECT name FROM restaurants WHERE name = '\udcff'"], "argument QUERY: it is not valid UTF-8"),
        (["sparql", "SELECT * WHERE { ?s ?p '\udcff' }"], "argument QUERY: it is not valid UTF-8"),
        (["spinach", "\udcc3\udc28"], "argument QUESTION: it is not valid UTF-8 (the byte 0xc3)"),
        (["hybridqa", "--ask", "x\udc80y", "--table", "t"], "argument --ask: it is not valid UTF-8 (the byte 0x80)"),
        (["suql", "--world", "\udcff", "SELECT 1"], "argument --world: it is not valid UTF-8"),
        (["lab", "run", "\udcff"], "argument NAME: it is not valid UTF-8"),
        (["sql", "SELECT '\ud800'"], "argument SQL: it holds a lone surrogate (U+D800)"),
    ],
)
def test_text_arguments_that_are_not_utf8(capsys, argv, message):
    assert message in refused(capsys, *argv)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["ask", ""], "the question is empty"),
        (["ask", "Show me cafés", "   "], "the question is empty"),
        (["ask", "x" * 1_000_000], "the question is 1,000,000 characters long; the most accepted is 100,000"),
        (["spinach", ""], "the question is empty"),
        (["spinach", "x" * 1_000_000], "the question is 1,000,000 characters long"),
        (["hybridqa", "--ask", "", "--table", ""], "the question of --ask is empty"),
        (["hybridqa", "--ask", "x" * 1_000_000, "--table", "t"], "1,000,000 characters long"),
        (["suql", "--workload", "--queries", "-5"], "argument --queries: must be at least 1, got -5"),
        (["suql", "--workload", "--queries", "0"], "argument --queries: must be at least 1, got 0"),
        (
            ["suql", "--workload", "--queries", "100000000"],
            "argument --queries: must be at most 1,000, got 100,000,000",
        ),
        (["suql", "--workload", "--queries", "lots"], "argument --queries: expected a whole number, got 'lots'"),
        (
            ["suql", "--world", "atlantis", "SELECT 1"],
            "unknown world 'atlantis' for --world: choose one of restaurants",
        ),
        (["suql", "--world", "", "SELECT 1"], "unknown world '' for --world"),
        (["courses", "--top-k", "0"], "argument --top-k: must be at least 1, got 0"),
        (["courses", "--top-k", "-1"], "argument --top-k: must be at least 1, got -1"),
        (["courses", "--credit-cap", "-5"], "argument --credit-cap: must be at least 0, got -5"),
        (["courses", "--credit-cap", "99999999999"], "argument --credit-cap: must be at most 1,000"),
        (["courses", "--c2-start", "xx"], "argument --c2-start: expected a time as HH:MM (e.g. 16:00), got 'xx'"),
        (
            ["courses", "--c2-start", "25:99"],
            "argument --c2-start: expected a time of day from 00:00 to 23:59, got '25:99'",
        ),
        (["courses", "--c2-start", ""], "argument --c2-start: expected a time as HH:MM"),
        (["courses", "--c2-start", "10:"], "argument --c2-start: expected a time as HH:MM"),
        (["courses", "--c2-start=-1:30"], "argument --c2-start: expected a time of day from 00:00 to 23:59"),
        (["spinach", "--eval", "--limit", "0"], "argument --limit: must be at least 1, got 0"),
        (["spinach", "--eval", "--limit", "-1"], "argument --limit: must be at least 1, got -1"),
        (["hybridqa", "--eval", "--limit", "0"], "argument --limit: must be at least 1, got 0"),
        (["--seed", "abc", "sql", "SELECT 1"], "argument --seed: invalid int value: 'abc'"),
        (["--latency", "nan", "sql", "SELECT 1"], "invalid setting sim_latency_s"),
        (["sql", "SELECT 1", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments(capsys, argv, message):
    assert message in refused(capsys, *argv)


def test_courses_clock_times_that_are_fine(capsys):
    code, out, _ = run(capsys, "courses", "--c2-start", "16:30", "--json")
    assert code == 0 and {"confirmed", "to_verify", "excluded"} <= set(json.loads(out))
    code, _, _ = run(capsys, "courses", "--c2-start", "9", "--top-k", "2")
    assert code == 0


def test_hybridqa_limit_beyond_the_tables_means_all_of_them(capsys, monkeypatch):
    import engines.hybridqa.session as session
    from engines.errors import EngineError

    seen = {}

    def spy(settings, **kw):
        seen.update(kw)
        raise EngineError("stop here")

    monkeypatch.setattr(session, "open_hybridqa", spy)
    code, _, err = run(capsys, "hybridqa", "--eval", "--limit", "999999999")
    assert code == 1 and "stop here" in err and seen["n_tables"] == 50  # not a world of a billion tables


def test_suql_file_problems(capsys, tmp_path):
    err = refused(capsys, "suql", "--file", str(tmp_path / "nope.sql"))
    assert f"cannot read {tmp_path / 'nope.sql'}: No such file or directory" in err
    err = refused(capsys, "suql", "--file", str(tmp_path))
    assert "it is a folder, not a file" in err
    binary = write(tmp_path / "b.sql", b"SELECT \xff\x00")
    assert "is not UTF-8 text (byte 0xff at offset 7)" in refused(capsys, "suql", "--file", str(binary))
    bad_column = write(tmp_path / "bad.csv", "foo,bar\n1,2\n")
    assert f"{bad_column} has no 'Predicted SUQL' column" in refused(capsys, "suql", "--file", str(bad_column))
    huge_field = write(tmp_path / "huge.csv", 'Predicted SUQL\n"' + "x" * 200_000 + '"\n')
    assert "is not a readable CSV: field larger than field limit" in refused(capsys, "suql", "--file", str(huge_field))
    empty = write(tmp_path / "e.sql", "-- only a comment\n\n")
    assert "holds no queries" in refused(capsys, "suql", "--file", str(empty))
    code, out, _ = run(capsys, "suql", "--file", str(empty), "--json")
    assert code == 2 and "holds no queries" in json.loads(out)["error"]


def test_hybridqa_bad_folder_is_bad_input(capsys, tmp_path):
    (tmp_path / "t.json").write_text("[" + "9" * 5000 + "]")
    code, _, err = run(capsys, "hybridqa", "--tables", str(tmp_path))
    assert code == 2 and "t.json: not readable JSON" in err


def test_an_unexpected_exception_is_one_line_and_exit_70(capsys, monkeypatch):
    import tui.commands.kg as kg

    def boom(settings, args):
        raise KeyError("the thing")

    monkeypatch.setattr(kg, "_sparql", boom)
    code, out, err = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }")
    assert code == EXIT_INTERNAL == 70 and out == ""
    assert err.count("\n") == 1 and err.startswith("cs224v-tui: internal error: KeyError: 'the thing'")
    assert "please report it" in err


def test_help_of_every_command_exits_0(capsys):
    from tui.cli import _parser

    code, out, _ = run(capsys, "--help")
    assert code == 0
    commands = [a for a in _parser()._subparsers._group_actions[0].choices]
    assert {"ask", "sql", "suql", "courses", "sparql", "score", "spinach", "hybridqa", "lab", "screenshots"} <= set(
        commands
    )
    for command in commands:
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and out.startswith(f"usage: cs224v-tui {command}")


# --- a real command line: bytes that are not UTF-8 --------------------------------------------------------


def _cli(*argv: bytes) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": "C.UTF-8", "CS224V_CACHE_ENABLED": "false"}
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"tui.cli", *argv], capture_output=True, env=env, timeout=120, cwd=ROOT
    )


def test_real_argv_bytes_that_are_not_utf8():
    done = _cli(b"sql", b"SELECT '\xff'")
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr == b"cs224v-tui: argument SQL: it is not valid UTF-8 (the byte 0xff)\n"
    done = _cli(b"sparql", b"SELECT * WHERE { ?s ?p 'caf\xe9' }", b"--json")
    assert done.returncode == 2 and json.loads(done.stdout) == {
        "error": "argument QUERY: it is not valid UTF-8 (the byte 0xe9)"
    }


def test_real_argv_file_names_may_hold_any_bytes(tmp_path):
    pred = os.path.join(os.fsencode(tmp_path), b"p\xff.json")
    with open(pred, "w", encoding="utf-8") as f:
        f.write(OK_ROWS)
    done = _cli(b"score", pred, pred, b"--json")
    assert done.returncode == 0 and json.loads(done.stdout)["f1"] == 1.0
    missing = os.path.join(os.fsencode(tmp_path), b"q\xfe.json")
    done = _cli(b"score", missing, pred)
    assert done.returncode == 2 and b"q\\xfe.json: No such file or directory" in done.stderr
    assert b"Traceback" not in done.stderr
