"""Trajectories are data: saved, loaded, and SPINACH's own logs imported."""

from __future__ import annotations

import json

import pytest

from engines.kg import Endpoint
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.spinach.agent import SpinachAgent
from engines.spinach.trajectory import Trajectory, TrajectoryError, load, save
from worlds import kg as K


@pytest.fixture(scope="module")
def trajectory():
    world, truth = K.build()
    q = K.questions(world, truth).forum[0]
    return SpinachAgent(Endpoint.from_world(world), LLM(SimBackend(seed=224))).run(q.question)


def test_save_and_load_round_trip(tmp_path, trajectory):
    path = save(trajectory, tmp_path / "t.json")
    (again,) = load(path)
    assert again == trajectory
    assert json.loads(path.read_text())["format"] == "cs224v-spinach-trajectory/1"


def test_several_trajectories_in_one_file(tmp_path, trajectory):
    path = tmp_path / "many.json"
    path.write_text(json.dumps([trajectory.to_json(), trajectory.to_json()]))
    assert len(load(path)) == 2


def test_spinach_log_import(tmp_path):
    log = [
        {
            "question": "Who founded Stanford University?",
            "actions": [
                {
                    "thought": "Find Stanford.",
                    "action_name": "search_wikidata",
                    "action_argument": "Stanford University",
                    "observation": "Stanford University (Q41506): private research university in California",
                },
                {
                    "thought": "Query it.",
                    "action_name": "execute_sparql",
                    "action_argument": "SELECT ?x WHERE { wd:Q41506 wdt:P112 ?x }",
                    "observation": "x\nQ3344\n",
                },
                {"thought": "Done.", "action_name": "stop", "action_argument": "", "observation": None},
            ],
            "final_sparql": {"sparql": "SELECT ?x WHERE { wd:Q41506 wdt:P112 ?x }"},
        }
    ]
    path = tmp_path / "spinach.json"
    path.write_text(json.dumps(log))
    (t,) = load(path)
    assert t.question == "Who founded Stanford University?" and t.finish == "imported"
    assert [s.action for s in t.steps] == ["search_wikidata", "execute_sparql", "stop"]
    assert t.steps[2].observation == "" and t.final_sparql.startswith("SELECT ?x")


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("not json", "not JSON"),
        ('{"hello": 1}', "Not a trajectory"),
        ('[{"question": "q", "actions": [{"action_name": "fly"}]}]', "unknown action_name"),
        ('{"question": "q", "steps": [{"index": 1}]}', "malformed"),
    ],
)
def test_bad_files_say_why(tmp_path, content, fragment):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(TrajectoryError, match=fragment):
        load(path)
    with pytest.raises(TrajectoryError, match="Cannot read"):
        load(tmp_path / "missing.json")


def test_state_excludes_rolled_back_steps(trajectory):
    assert len(trajectory.state) == len(trajectory.steps) - trajectory.rollbacks
    assert isinstance(Trajectory.from_json(trajectory.to_json()), Trajectory)
