"""Simulators beside their agents (issue 27 item 5): engines/llm keeps the simulated backend (seed, rates, latency,
the model id of the cache keys) and dispatches by task (``Task.simulate``); each agent package keeps the simulated
implementations of its tasks; the course assistant runs its own tasks (the Text-to-SQL agent's prompts and readers,
its own simulator) rather than the simulator guessing the world from the schema; and no simulator reads what a
model would not be shown."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engines.courses.tasks import COURSE_TASKS
from engines.llm.protocol import Routed
from engines.llm.sim import SimBackend
from engines.settings import Settings
from engines.sql.tasks import SQL_TASKS, Dialogue, RespondInput
from engines.suql.agent import suql_schema
from tests.engines.llm.test_claude import FakeAPI, backend, message

ENGINES = Path(__file__).resolve().parents[2] / "engines"

# Every simulator module, by the package of the agent whose tasks it simulates.  A simulator two agents use lives in
# the lowest package both import: engines/sql's serve the Text-to-SQL and SUQL agents (sim.py reads texts for
# answer() and summary() with the lexicon the reply writer uses), and HybridQA reads passages with sim_reader.
SIMULATORS = {
    "engines/llm/sim.py": "the simulated backend itself: seed, rates, latency, model id",
    "engines/sql/sim.py": "classify(), respond; SUQL's answer() and summary()",
    "engines/sql/sim_parser.py": "route and parse over the restaurants (SQL and SUQL)",
    "engines/sql/sim_tables.py": "route, parse and respond over a user's own tables",
    "engines/sql/sim_reader.py": "answer() on a passage (dates, places, events); HybridQA's reading",
    "engines/hybridqa/sim_hybrid.py": "hybrid_parse, short_answer",
    "engines/courses/sim_courses.py": "the course assistant's route, parse and respond",
    "engines/spinach/sim_policy.py": "policy",
}


def _simulator_files() -> set[str]:
    found = set(ENGINES.rglob("sim.py")) | set(ENGINES.rglob("sim_*.py"))
    return {str(p.relative_to(ENGINES.parent)) for p in found}


def test_every_simulator_is_beside_its_agent_and_engines_llm_keeps_only_the_backend():
    assert _simulator_files() == set(SIMULATORS)
    assert {p.name for p in (ENGINES / "llm").glob("sim*.py")} == {"sim.py"}
    tree = ast.parse((ENGINES / "llm" / "sim.py").read_text())
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    assert defined == {"SimBackend", "PROMPT_VERSION", "MISREAD_RATE"}


def _check_reads_no_truth(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "worlds" for a in node.names), path
        elif isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] != "worlds", path
        name = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "arg", None)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            name = node.name
        assert "truth" not in (name or "").lower(), f"{path}: {name}"


@pytest.mark.parametrize("path", sorted(SIMULATORS))
def test_no_simulator_imports_a_world_or_names_a_truth(path: str):
    """A simulator is shown what a model is shown: it imports no world (where the hidden truth is built) and no name
    in its code (a variable, attribute, argument, function) speaks of a truth (tests/engines/test_hidden_truth.py
    checks the same at run time, on everything a session's LLM can reach)."""
    _check_reads_no_truth(ENGINES.parent / path)


@pytest.mark.parametrize(
    "source",
    [
        "from worlds.restaurants import HiddenTruth\n",
        "import worlds.kg\n",
        "def read(world):\n    return world.truth\n",
    ],
)
def test_the_truth_check_fails_on_a_simulator_that_reads_one(tmp_path: Path, source: str):
    """The check above can fail: a module that imports a world, or reads a truth, is caught."""
    bad = tmp_path / "sim_bad.py"
    bad.write_text(source)
    with pytest.raises(AssertionError):
        _check_reads_no_truth(bad)


COURSE_SCHEMA = suql_schema(
    "CREATE TABLE courses (id TEXT, title TEXT, credits INT);\nCREATE TABLE offerings (id INT, course_id TEXT, "
    "term TEXT, schedule_complete BOOLEAN);\nCREATE TABLE meetings (offering_id INT, day TEXT, start_min INT, "
    "end_min INT);\nCREATE TABLE busy (day TEXT, start_min INT, end_min INT);"
)


def test_the_course_tasks_are_the_sql_tasks_with_the_course_simulator():
    """The same names, prompts, readers and roles (a real backend, the events and the cache see no difference);
    only the simulated implementation is the course world's."""
    for course, sql in zip(
        (COURSE_TASKS.route, COURSE_TASKS.parse, COURSE_TASKS.respond),
        (SQL_TASKS.route, SQL_TASKS.parse, SQL_TASKS.respond),
    ):
        for attribute in ("name", "template", "package", "input", "output", "context", "read", "reply_model"):
            assert getattr(course, attribute) is getattr(sql, attribute), (course.name, attribute)
        assert (course.role, course.max_tokens, course.sim_latency) == (sql.role, sql.max_tokens, sql.sim_latency)
        assert course.simulate is not sql.simulate
        assert course.simulate.__module__ == "engines.courses.tasks"


def test_the_sim_answers_the_task_it_is_handed_not_a_guess_from_the_schema():
    sim = SimBackend(seed=224)
    turn = Dialogue("Which autumn courses fit my schedule?", (), COURSE_SCHEMA)
    assert sim.run(COURSE_TASKS.route, turn).value == Routed(
        True, "mentions autumn, courses, schedule: a course lookup"
    )
    parsed = sim.run(COURSE_TASKS.parse, turn).value
    assert "o.term = 'autumn' AND NOT EXISTS (SELECT 1 FROM meetings AS m JOIN busy AS b" in parsed
    # the restaurant parser, handed the same schema through the Text-to-SQL tasks, is not the course reader
    assert sim.run(SQL_TASKS.route, turn).value.needs_database is False
    assert "NOT EXISTS" not in sim.run(SQL_TASKS.parse, turn).value
    hello = RespondInput("hello", (), None, COURSE_SCHEMA)
    assert "courses fit your schedule" in sim.run(COURSE_TASKS.respond, hello).value
    assert "restaurants" in sim.run(SQL_TASKS.respond, hello).value


def test_a_real_backend_is_sent_the_same_request_for_the_course_tasks():
    api = FakeAPI(message('{"needs_database": true, "reason": "a course lookup"}'))
    claude = backend(api)
    turn = Dialogue("Which autumn courses fit my schedule?", (), COURSE_SCHEMA)
    assert claude.run(COURSE_TASKS.route, turn).value == claude.run(SQL_TASKS.route, turn).value
    assert api.requests[0] == api.requests[1]


def test_the_course_assistant_runs_the_course_tasks():
    from engines.courses import open_courses_agent

    session = open_courses_agent(Settings(backend="sim", sim_latency_s=0.0, cache_enabled=False))
    try:
        assert session.agent.tasks is COURSE_TASKS
        turn = session.agent.ask("How many courses have reviews?")
        assert turn.rows == ((6,),) and "each course counted once" in turn.reply
    finally:
        session.close()


def test_the_suql_session_s_agent_over_the_course_world_runs_the_course_tasks():
    """``open_suql(world="courses").agent()`` (the Python API's SUQL dialogue over the course world) is answered by the
    course simulator, as it was when the sim picked its reader from the schema; over the restaurants, by the SQL
    tasks' restaurant parser."""
    from engines.compose import open_suql

    settings = Settings(backend="sim", sim_latency_s=0.0, cache_enabled=False)
    courses, restaurants = open_suql(settings, world="courses"), open_suql(settings, world="restaurants")
    try:
        agent = courses.agent()
        assert agent.tasks is COURSE_TASKS and restaurants.agent().tasks is SQL_TASKS
        turn = agent.ask("Which autumn courses fit my schedule and are practical?")
        assert "NOT EXISTS" in (turn.sql or "") and {row[0] for row in turn.rows} == {"C1", "C3"}
    finally:
        courses.close()
        restaurants.close()


def test_the_restaurant_and_own_data_agents_run_the_sql_tasks(tmp_path: Path):
    from engines.compose import open_restaurants, open_source_agent
    from tests.engines.data.conftest import hotel_rows, write_csv

    settings = Settings(backend="sim", sim_latency_s=0.0, cache_enabled=False)
    csv = write_csv(tmp_path / "hotels.csv", hotel_rows())
    for session in (open_restaurants(settings), open_source_agent(str(csv), settings, suql=True)):
        try:
            assert session.agent.tasks is SQL_TASKS
        finally:
            session.close()
