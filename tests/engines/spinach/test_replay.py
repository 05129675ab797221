"""SPINACH's own run logs: everything they hold is kept, and ``spinach --replay`` shows it complete.

The log is the head (three states, verbatim) of SPINACH's real QALD-10 run log (see data/README.md)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from engines.spinach.replay import ReplayError, matching, pick, replay_lines, summary
from engines.spinach.scoring import with_answer_rows
from engines.spinach.trajectory import Trajectory, TrajectoryError, load, save
from tui.cli import main

LOG = Path(__file__).parent / "data" / "qald10_head.log"


@pytest.fixture(scope="module")
def states() -> list[dict]:
    return json.loads(LOG.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def trajectories() -> list[Trajectory]:
    return load(LOG)


def test_every_action_is_kept_as_logged(states, trajectories):
    assert len(trajectories) == len(states) == 3
    for state, t in zip(states, trajectories):
        assert t.question == state["question"]
        assert [(s.thought, s.action, s.argument, s.observation) for s in t.steps] == [
            (a["thought"], a["action_name"], a["action_argument"], a["observation"] or "") for a in state["actions"]
        ]
        assert t.meta == {"engine": "gpt-4o", "action_counter": state["action_counter"]}
        assert [dict(g) for g in t.generated_sparqls] == state["generated_sparqls"]
        assert (dict(t.final) if t.final else None) == state.get("final_sparql")


def test_each_query_keeps_its_logged_result_and_feedback(states, trajectories):
    riemann, animal, witcher = trajectories
    (ran,) = [s for s in riemann.steps if s.action == "execute_sparql"]
    assert (ran.feedback, ran.row_count) == ("rows", 1)
    assert ran.logged == states[0]["generated_sparqls"][0]
    assert ran.logged_rows == ({"person": {"type": "uri", "value": "http://www.wikidata.org/entity/Q42299"}},)
    # the final query's logged rows are the answer: SPINACH ran it on Wikidata, nothing re-runs it here
    assert riemann.answer_logged and riemann.columns == ("person",)
    assert riemann.answer == tuple(states[0]["final_sparql"]["execution_result"])
    assert witcher.answer[0]["character"]["value"].endswith("/Q2492923")
    # the budget run: no query, no final query, nothing logged as its answer
    assert animal.final is None and animal.final_sparql is None and not animal.answer and not animal.answer_logged
    assert len(animal.steps) == 15 and animal.steps[-1].observation == ""


def test_feedback_of_each_logged_status(tmp_path):
    def state(status, result, observation):
        q = "SELECT ?x WHERE { ?x ?p ?o }"
        return {
            "question": status,
            "generated_sparqls": [{"sparql": q, "execution_result": result, "execution_status": status}],
            "actions": [
                {"thought": "", "action_name": "execute_sparql", "action_argument": q, "observation": observation}
            ],
        }

    path = tmp_path / "statuses.log"
    path.write_text(
        json.dumps(
            [
                state("ok", [], "Query returned empty result."),
                state("syntax_error", None, "Query had syntax error."),
                state("timed_out", None, "Query execution timed out."),
                state("ok", True, "True"),
            ]
        )
    )
    steps = [t.steps[0] for t in load(path)]
    assert [(s.feedback, s.row_count) for s in steps] == [
        ("empty", 0),
        ("syntax_error", None),
        ("timeout", None),
        ("rows", 1),
    ]
    assert steps[3].logged_rows[0]["ASK"]["value"] == "true"


def test_an_imported_log_saves_and_loads_with_nothing_lost(tmp_path, trajectories):
    for n, t in enumerate(trajectories):
        again = load(save(t, tmp_path / f"{n}.json"))
        assert again == [t]


def test_the_logged_answer_is_not_re_run(trajectories):
    class NoGraph:
        @property
        def endpoint(self):
            raise AssertionError("a logged answer must not be run on this graph")

    # SPINACH ran its final query on Wikidata and logged no rows: the answer is empty, not this graph's rows
    logged_empty = replace(trajectories[0], answer=(), columns=())
    assert logged_empty.answer_logged and logged_empty.final_sparql
    assert with_answer_rows(NoGraph(), logged_empty) is logged_empty


def test_finding_and_picking(trajectories):
    assert matching(trajectories, "WITCHER partners") == [2]
    assert matching(trajectories, "2") == [1]
    assert matching(trajectories, "") == [0, 1, 2]
    assert pick(trajectories, 3) is trajectories[2]
    assert summary(trajectories[0]) == "4 steps · stopped with a final query · 1 row"
    assert summary(trajectories[1]) == "15 steps · no final query logged"
    with pytest.raises(ReplayError, match="no trajectory 4: the file holds 3"):
        pick(trajectories, 4)


def test_replay_text_is_complete(states, trajectories):
    text = "\n".join(replay_lines(trajectories[2], 3, 3))
    for a in states[2]["actions"]:
        assert a["thought"] in text
        for line in (a["observation"] or "").splitlines():
            assert line in text
    assert "Logged result: 1 row (status ok)" in text and "character = Q2492923" in text
    assert "Q4205826 = Yennefer of Vengerberg" in text and "answer: 1 row (as logged: not re-run)" in text


def test_cli_replay_json_holds_the_whole_log(capsys, states):
    assert main(["spinach", "--replay", str(LOG), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == 3 and [t["index"] for t in out["trajectories"]] == [1, 2, 3]
    for state, t in zip(states, out["trajectories"]):
        assert t["question"] == state["question"]
        assert t["generated_sparqls"] == state["generated_sparqls"] and t["final"] == state.get("final_sparql")
        assert [s["observation"] for s in t["steps"]] == [a["observation"] or "" for a in state["actions"]]
    assert main(["spinach", "--replay", str(LOG), "--index", "2", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["trajectories"]
    assert only["index"] == 2 and len(only["steps"]) == 15


def test_cli_replay_text_prints_every_trajectory(capsys, states):
    assert main(["spinach", "--replay", str(LOG)]) == 0
    out = capsys.readouterr().out
    for n, state in enumerate(states, 1):
        assert f"Trajectory {n} of 3: {state['question']}" in out
        assert all(a["thought"] in out for a in state["actions"])


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("[{", "not JSON"),
        ('[{"question": "q", "actions": "none"}]', 'State 1 of the SPINACH log has no "question" and "actions"'),
        ('[{"question": "q", "actions": [{"action_name": "fly"}]}]', "Action 1 of state 1 has an unknown action_name"),
        ('[{"question": "q", "actions": [], "generated_sparqls": {}}]', '"generated_sparqls" is not a list'),
        ('[{"question": "q", "actions": [], "final_sparql": 3}]', "final_sparql of state 1 is not a query record"),
        (  # a null among the generated queries (mypy found it: it was an AttributeError)
            '[{"question": "q", "actions": [{"action_name": "execute_sparql", "action_argument": "ASK {}"}], '
            '"generated_sparqls": [null]}]',
            "Query 1 of generated_sparqls in state 1 is not a query record",
        ),
        (
            '[{"question": "q", "actions": [{"action_name": "stop", "observation": 5}]}]',
            '"observation" is not a string',
        ),
        ('[{"question": "q", "predicted_sparql": "ASK {}", "f1": 1}]', "evaluation output"),
    ],
)
def test_a_malformed_log_gives_a_clear_error(tmp_path, capsys, content, fragment):
    path = tmp_path / "bad.log"
    path.write_text(content)
    with pytest.raises(TrajectoryError, match=fragment):
        load(path)
    assert main(["spinach", "--replay", str(path)]) == 2  # a file that is not a trajectory log: bad input
    err = capsys.readouterr().err
    assert fragment.split('"')[0] in err and "Traceback" not in err


def test_cli_replay_usage_errors(capsys):
    assert main(["spinach", "--index", "1"]) == 2
    assert "--index is for --replay" in capsys.readouterr().err
    assert main(["spinach", "Who?", "--replay", str(LOG)]) == 2
    assert main(["spinach", "--replay", str(LOG), "--index", "7"]) == 1
    assert "no trajectory 7" in capsys.readouterr().err


@pytest.mark.parametrize(
    "doc, fragment",
    [
        ({"final": [1]}, '"final" must be an object'),
        ({"meta": "ab"}, '"meta" must be an object'),
        ({"generated_sparqls": [1]}, '"generated_sparqls" must be a list of objects'),
        ({"answer": [1]}, '"answer" must be a list of objects'),
        (
            {"steps": [{"index": 1, "thought": 5, "action": "stop", "argument": "", "observation": ""}]},
            '"thought" must',
        ),
        (
            {"steps": [{"index": 1, "thought": "", "action": "stop", "argument": "", "observation": "", "logged": 3}]},
            '"logged"',
        ),
        ({"steps": [{"index": "x", "thought": "", "action": "stop", "argument": "", "observation": ""}]}, '"index"'),
    ],
)
def test_a_hostile_trajectory_file_is_refused_with_a_reason(tmp_path, capsys, doc, fragment):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"question": "q", "steps": [], **doc}))
    assert main(["spinach", "--replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
