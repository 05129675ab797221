"""Issue 25, the command line's part: no internal error on input, ``--out`` never replaces a file the command
reads, replay logs are read within a cap and say "none logged" where SPINACH logged nothing, and control
characters of the data never reach the terminal raw (while ``--json`` and ``--out`` keep them as they are).

In-process (``main(argv)``) except what needs a process of its own: reading ``/dev/zero`` (its peak RSS is
measured) and a FIFO nobody writes to (which would hang the test on the old code).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.cli import main

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "engines" / "spinach" / "data" / "qald10_head.log"
"""The head of SPINACH's real QALD-10 run log: state 2 logged no final query (its 15-action budget ran out)."""
PEOPLE = ROOT / "tests" / "tui" / "fixtures" / "people.ttl"

RAW = "\x1b]0;PWNED\x07 \x1b[2J \x9b31m \u202eexe.txt \x7f"
"""Retitle the terminal, clear it, a C1 CSI, a right-to-left override, DEL."""
ESCAPED = "\\x1b]0;PWNED\\x07 \\x1b[2J \\x9b31m \\u202eexe.txt \\x7f"
DANGEROUS = ("\x1b", "\x07", "\x9b", "\u202e", "\x7f")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in err, err
    return code, out, err


def cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, str, int]:
    """``cs224v-tui ARGV`` in a process of its own (at most 1.5 GB of address space): (exit code, stderr, peak
    RSS in bytes), the RSS read by a launcher whose only child is the command."""
    launcher = (
        "import resource, subprocess, sys\n"
        "def cap():\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))\n"
        "p = subprocess.run([sys.executable, '-m', 'tui.cli', *sys.argv[1:]], preexec_fn=cap,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "sys.stderr.write(p.stderr)\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    )
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.Popen(
        [sys.executable, "-c", launcher, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        cwd=ROOT,
        start_new_session=True,  # its own process group: a hung command is stopped with the launcher
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the group this test started, by its id
        proc.communicate()
        raise AssertionError(f"cs224v-tui {' '.join(argv)} ran longer than {timeout:g} s") from None
    code, rss = out.split()
    return int(code), err, int(rss)


# --- replay logs: a cap, deep JSON, "none logged" ---------------------------------------------------------


def _deep_action_field(depth: int) -> str:
    """The real log's first state with an action field nested ``depth`` levels (json reads it; walking it later
    recursed past Python's limit: exit 70)."""
    state = json.loads(LOG.read_text(encoding="utf-8"))[0]
    state["actions"][0]["observation_markdown"] = json.loads("[" * depth + "]" * depth)
    return json.dumps([state])


@pytest.mark.parametrize(
    "content, as_json",
    [("[" * 100_000 + "]" * 100_000, False), (_deep_action_field(600), True)],
    ids=["100k-levels", "600-levels-in-an-action"],
)
def test_a_replay_log_nested_too_deeply_is_a_clear_message(capsys, tmp_path, content, as_json):
    path = tmp_path / "deep.log"
    path.write_text(content, encoding="utf-8")
    code, out, err = run(capsys, "spinach", "--replay", str(path), *(["--json"] if as_json else []))
    message = json.loads(out)["error"] if as_json else err
    assert code == 2 and str(path) in message and "more than 100 levels deep" in message


def test_a_replay_log_is_read_up_to_its_cap(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CS224V_INPUT_FILE_MAX_MB", "1")
    text = LOG.read_text(encoding="utf-8")
    at_cap = tmp_path / "at-cap.log"
    at_cap.write_text(text + " " * ((1 << 20) - len(text.encode())), encoding="utf-8")
    code, out, _ = run(capsys, "spinach", "--replay", str(at_cap), "--json")
    assert code == 0 and json.loads(out)["count"] == 3  # exactly the cap still loads
    past = tmp_path / "past-cap.log"
    past.write_bytes(at_cap.read_bytes() + b" ")
    code, _, err = run(capsys, "spinach", "--replay", str(past))
    assert code == 2 and str(past) in err and "1 MiB" in err and "CS224V_INPUT_FILE_MAX_MB" in err


@pytest.mark.parametrize(
    "argv", [["spinach", "--replay", "/dev/zero"], ["score", "/dev/zero", str(LOG)]], ids=["replay", "score"]
)
def test_dev_zero_stops_at_the_cap(argv):
    """``--replay /dev/zero`` grew without bound (MemoryError, exit 70): now it stops at the cap."""
    code, err, rss = cli(*argv, env={"CS224V_INPUT_FILE_MAX_MB": "8"})
    assert code == 2 and "/dev/zero" in err and "gives more than 8 MiB" in err, err
    assert rss < 400 << 20, f"peak RSS {rss / 2**20:.0f} MiB"


def test_a_fifo_nobody_writes_to_does_not_hang(tmp_path):
    fifo = tmp_path / "run.log"
    os.mkfifo(fifo)
    code, err, _ = cli("spinach", "--replay", str(fifo), timeout=30)
    assert code == 2 and f"{fifo} is not JSON" in err, err


def test_the_budget_run_of_the_real_log_says_none_logged(capsys):
    code, out, _ = run(capsys, "spinach", "--replay", str(LOG), "--index", "2")
    assert code == 0 and "final SPARQL: none logged" in out and "answer: none logged" in out
    assert "answer: no rows" not in out and "final SPARQL: none\n" not in out
    code, out, _ = run(capsys, "spinach", "--replay", str(LOG), "--index", "2", "--json")
    (only,) = json.loads(out)["trajectories"]
    assert only["final_sparql"] is None and only["final_logged"] is False and only["answer"] == []


def test_a_state_that_ran_queries_but_logged_no_final_one(capsys, tmp_path):
    """The 27 QALD-10 states without final_sparql: the last query run is not shown as the final SPARQL."""
    states = json.loads(LOG.read_text(encoding="utf-8"))
    riemann = {k: v for k, v in states[0].items() if k != "final_sparql"}
    (ran,) = [a for a in riemann["actions"] if a["action_name"] == "execute_sparql"]
    path = tmp_path / "no-final.log"
    path.write_text(json.dumps([riemann, states[2]]), encoding="utf-8")
    code, out, _ = run(capsys, "spinach", "--replay", str(path), "--index", "1")
    tail = out.split("generated queries:")[1]
    assert code == 0 and "final SPARQL: none logged" in tail and "answer: none logged" in tail
    assert ran["action_argument"].splitlines()[0] not in tail  # shown as the step it was, not as the answer
    code, out, _ = run(capsys, "spinach", "--replay", str(path), "--json")
    first, witcher = json.loads(out)["trajectories"]
    assert first["final_sparql"] is None and first["final_logged"] is False
    assert witcher["final_logged"] is True and witcher["final_sparql"] == states[2]["final_sparql"]["sparql"]


# --- --out and --save: never a file the command reads; a name too long is a message -------------------------


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.csv"
    path.write_text("name,n\nada,1\nbob,2\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink", "in-the-folder"])
def test_out_onto_the_db_file_is_refused_and_the_file_keeps_its_bytes(capsys, tmp_path, data, kind):
    before = data.read_bytes()
    db, out, table = str(data), data, "data"
    if kind == "symlink":
        out = tmp_path / "link.csv"
        out.symlink_to(data)
    elif kind == "hardlink":
        out = tmp_path / "hard.csv"
        os.link(data, out)
    elif kind == "in-the-folder":
        db = str(tmp_path)
    code, stdout, err = run(capsys, "sql", f"SELECT n FROM {table}", "--db", db, "--out", str(out))
    assert code == 2 and stdout == "" and "is a file this command reads (--db)" in err and "replace" in err
    assert data.read_bytes() == before and out.read_bytes() == before


def test_suql_out_onto_its_db_file_is_refused(capsys, data):
    before = data.read_bytes()
    code, _, err = run(capsys, "suql", "SELECT name FROM data", "--db", str(data), "--out", str(data))
    assert code == 2 and "--out" in err and data.read_bytes() == before


def test_out_symlinked_onto_an_rdf_source_is_refused(capsys, tmp_path):
    graph = tmp_path / "people.ttl"
    graph.write_bytes(PEOPLE.read_bytes())
    link = tmp_path / "rows.csv"
    link.symlink_to(graph)
    code, _, err = run(capsys, "sparql", "SELECT ?s WHERE { ?s ?p ?o }", "--rdf", str(graph), "--out", str(link))
    assert code == 2 and "(--rdf)" in err and f"the same file as {graph}" in err
    assert graph.read_bytes() == PEOPLE.read_bytes() and link.is_symlink()


def test_spinach_save_onto_its_rdf_file_is_refused(capsys, tmp_path):
    graph = tmp_path / "people.ttl"
    graph.write_bytes(PEOPLE.read_bytes())
    code, out, err = run(capsys, "spinach", "Who knows Ada?", "--rdf", str(graph), "--save", str(graph))
    assert code == 2 and out == "" and "--save" in err and "(--rdf)" in err
    assert graph.read_bytes() == PEOPLE.read_bytes()


def test_an_out_name_too_long_is_refused_before_any_work(capsys, tmp_path):
    name = tmp_path / ("r" * 296 + ".csv")
    code, out, err = run(capsys, "sql", "SELECT 1 AS one", "--out", str(name))
    assert code == 2 and out == "" and "the file name is too long (300 bytes" in err and "at most 255" in err
    assert list(tmp_path.iterdir()) == []
    code, _, err = run(capsys, "screenshots", "--out", str(tmp_path / ("d" * 300)))
    assert code == 2 and "the file name is too long" in err


def test_a_long_name_the_file_system_takes_is_written(capsys, tmp_path):
    """A 250-byte name is valid: it was refused after the work (the temporary name beside it was too long)."""
    name = tmp_path / ("r" * 246 + ".csv")
    code, _, err = run(capsys, "sql", "SELECT 1 AS one", "--out", str(name))
    assert code == 0 and "wrote 1 row" in err
    assert name.read_text(encoding="utf-8").splitlines() == ["one", "1"]
    assert [p.name for p in tmp_path.iterdir()] == [name.name]


# --- control characters: escaped on the terminal, kept in --json and --out ------------------------------------

HOSTILE_SQL = (
    "SELECT 'a' || chr(27) || ']0;PWNED' || chr(7) || ' ' || chr(27) || '[2J ' || chr(155) || '31m ' "
    "|| chr(8238) || 'exe.txt ' || chr(127) AS cell"
)


def test_cell_values_are_escaped_on_the_terminal_and_kept_in_json_and_out(capsys, tmp_path):
    code, out, _ = run(capsys, "sql", HOSTILE_SQL)
    assert code == 0 and "a" + ESCAPED in out
    assert not any(ch in out for ch in DANGEROUS), repr(out)
    code, out, _ = run(capsys, "sql", HOSTILE_SQL, "--json", "--out", str(tmp_path / "rows.jsonl"))
    assert json.loads(out)["rows"] == [{"cell": "a" + RAW}]  # --json keeps the value as it is
    assert json.loads((tmp_path / "rows.jsonl").read_text(encoding="utf-8")) == {"cell": "a" + RAW}
    code, _, _ = run(capsys, "sql", HOSTILE_SQL, "--out", str(tmp_path / "rows.csv"))
    with (tmp_path / "rows.csv").open(newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["cell"], ["a" + RAW]]


def test_a_replay_log_cannot_retitle_the_terminal(capsys, tmp_path):
    states = json.loads(LOG.read_text(encoding="utf-8"))
    states[0]["actions"][0]["thought"] = "think " + RAW
    states[0]["actions"][0]["observation"] = "line one\nline two " + RAW + "\r overwritten"
    states[0]["question"] = "q\udcff " + RAW  # a lone surrogate, which a UTF-8 terminal cannot be sent
    path = tmp_path / "hostile.log"
    path.write_text(json.dumps(states), encoding="utf-8")
    code, out, _ = run(capsys, "spinach", "--replay", str(path), "--index", "1")
    assert code == 0 and "think " + ESCAPED in out and "line two " + ESCAPED in out
    assert "q\\udcff " in out and "│ line one\n" in out  # line breaks of a multi-line view stay
    assert not any(ch in out for ch in (*DANGEROUS, "\r", "\udcff")), repr(out)
    code, out, _ = run(capsys, "spinach", "--replay", str(path), "--index", "1", "--json")
    (t,) = json.loads(out)["trajectories"]
    assert t["steps"][0]["thought"] == "think " + RAW  # --json keeps the log's text as it is
    assert t["question"] == "q\udcff " + RAW  # the surrogate as the JSON escape \udcff, read back the same


def test_messages_naming_a_hostile_file_name_are_escaped(capsys, tmp_path):
    name = tmp_path / ("log" + RAW + ".json")
    code, _, err = run(capsys, "spinach", "--replay", str(name))
    assert code == 2 and "log" + ESCAPED + ".json" in err and not any(ch in err for ch in DANGEROUS)


@pytest.mark.parametrize("kind", ["name-too-long", "deep-json"])
def test_hybridqa_tables_of_a_bad_folder_are_a_clear_message(capsys, tmp_path, kind):
    folder = tmp_path / ("t" * 300)
    if kind == "deep-json":
        folder = tmp_path / "tables"
        folder.mkdir()
        (folder / "t.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, _, err = run(capsys, "hybridqa", "--tables", str(folder))
    expected = "t.json: JSON nested too deeply" if kind == "deep-json" else "cannot read the HybridQA tables of"
    assert code == 2 and expected in err and "Traceback" not in err


def test_export_rows_names_a_name_too_long_and_never_replaces_a_fifo(tmp_path):
    """The app's export prompt writes through export_rows: a name too long raised OSError (the app crashed)."""
    from engines.export import ExportError, export_rows

    with pytest.raises(ExportError, match="File name too long"):
        export_rows(tmp_path / ("r" * 300 + ".csv"), ["a"], [[1]], overwrite=True)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(ExportError, match="not a regular file"):
        export_rows(fifo, ["a"], [[1]], overwrite=True)
    assert fifo.is_fifo() and [p.name for p in tmp_path.iterdir()] == ["pipe.csv"]


def test_suql_file_is_read_once_so_a_pipe_works():
    """`suql --file` reads the person's file once, within its cap: a pipe (`--file /dev/stdin`) gave its queries to
    the capped check and then read as empty ("holds no queries")."""
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "suql", "--file", "/dev/stdin", "--json"],
        input="SELECT name FROM restaurants LIMIT 1\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (only,) = json.loads(done.stdout)
    assert only["status"] == "ok" and len(only["rows"]) == 1
