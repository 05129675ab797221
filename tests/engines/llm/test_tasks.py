"""The task layer (issue 12 part 1): one narrow call, tasks owned by agent packages, settings given
at construction."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from engines.errors import ConfigurationError, ReplyError
from engines.events import CallFailed, CallFinished, CallStarted
from engines.hybridqa.sim_hybrid import DEFAULT_RATES
from engines.llm.cache import AnswerCache
from engines.llm.client import LLM, backend_from_settings, llm_from_settings
from engines.llm.protocol import backend_id
from engines.llm.replies import extract_json_object
from engines.llm.sim import SimBackend
from engines.llm.task import Task
from engines.settings import Settings
from tests.engines.llm.test_claude import FakeAPI, message
from tests.engines.llm.test_claude import backend as claude_backend

LLM_DIR = Path(__file__).resolve().parents[3] / "engines" / "llm"
AGENTS = (
    "engines.sql",
    "engines.suql",
    "engines.hybridqa",
    "engines.spinach",
    "engines.courses",
    "engines.eval",
    "engines.lab",
    "engines.kg",
    "engines.retrieval",
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_llm_layer_imports_no_agent_package():
    for path in sorted(LLM_DIR.glob("*.py")):
        for name in _imports(path):
            agent = next((a for a in AGENTS if name == a or name.startswith(a + ".")), None)
            assert agent is None, f"{path.name} imports {name}"


# --- a task defined outside engines/llm: one package, its own template ------------------------


@dataclass(frozen=True)
class Shout:
    text: str


def _read_loud(reply: str, _input: Shout) -> str:
    loud = extract_json_object(reply, "shout").get("loud")
    if not isinstance(loud, str):
        raise ReplyError("no loud text")
    return loud


def shout_task(package: str) -> Task:
    return Task(
        name="shout",
        input=Shout,
        output=str,
        template="shout",
        package=package,
        role="row",
        context=lambda i: {"text": i.text},
        read=_read_loud,
        simulate=lambda b, i: f"{i.text.upper()}!{b.seed}",
        describe=lambda i: f"shout {i.text}",
        show=lambda i, v: f"{i.text} -> {v}",
        cache_key=lambda i: (i.text, "shout()"),
        encode=lambda v: {"value": v},
        decode=lambda d: d["value"],
        fallback=lambda i: i.text,
        max_tokens=77,
    )


@pytest.fixture
def shout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Task:
    # a package of its own (importable from tmp_path), its template in its prompts/ folder
    package = "shout_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / package / "prompts").mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "prompts" / "shout.j2").write_text(
        '{% include "_system.j2" %}\nSay this loudly: {{ text | json }}\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return shout_task(package)


def test_a_new_task_runs_on_the_sim_with_events_counts_and_cache(shout: Task, tmp_path: Path):
    events: list = []
    llm = LLM(SimBackend(seed=5), cache=AnswerCache(tmp_path / "cache"), emit=events.append)
    assert llm.run(shout, Shout("hi"), row_key="r1") == "HI!5"
    assert llm.run(shout, Shout("hi")) == "HI!5"  # from the cache
    started, finished, _again, cached = events
    assert isinstance(started, CallStarted) and (started.function, started.prompt, started.row_key) == (
        "shout",
        "shout hi",
        "r1",
    )
    assert isinstance(finished, CallFinished) and finished.verdict == "hi -> HI!5" and not finished.cached
    assert cached.cached and llm.counter.counts == {"shout": 2} and llm.counter.cached == 1


def test_a_new_task_runs_on_claude_with_its_own_template_role_and_budget(shout: Task):
    api = FakeAPI(message('{"loud": "HI!"}', input_tokens=30, output_tokens=4))
    backend = claude_backend(api, claude_row_model="row-model")
    events: list = []
    assert LLM(backend, emit=events.append).run(shout, Shout("hi")) == "HI!"
    sent = api.requests[0]
    assert sent["model"] == "row-model" and sent["max_tokens"] == 77
    assert 'Say this loudly: "hi"' in sent["messages"][0]["content"]
    assert (events[-1].input_tokens, events[-1].output_tokens) == (30, 4)


def test_an_unusable_reply_gives_the_fallback_and_is_reported_failed(shout: Task):
    api = FakeAPI(message('{"quiet": 1}'))
    events: list = []
    llm = LLM(claude_backend(api), emit=events.append)
    assert llm.run(shout, Shout("hi")) == "hi"
    assert isinstance(events[-1], CallFailed) and events[-1].function == "shout"


# --- settings are given at construction, and change the backend id when they change answers ------


def test_simulation_parameters_are_constructor_arguments_and_part_of_the_key():
    from engines.spinach.sim_policy import PolicyParams

    base = SimBackend()
    rates = SimBackend(hybrid_params=DEFAULT_RATES.__class__(format_rate=0.0))
    policy = SimBackend(policy_params=PolicyParams(p_verify=0.0))
    assert len({backend_id(base), backend_id(rates), backend_id(policy)}) == 3
    assert backend_id(SimBackend(hybrid_params=None)) == backend_id(base)  # a default adds nothing to the key
    copy = policy.configured(seed=9)
    assert (copy.seed, copy.policy_params, policy.seed) == (9, policy.policy_params, 224)
    with pytest.raises(TypeError, match="no parameter"):
        base.configured(temperature=1.0)


def test_the_settings_build_a_configured_sim_and_a_real_backend_refuses_sim_parameters():
    rates = DEFAULT_RATES.__class__(format_rate=0.0)
    sim = backend_from_settings(Settings(backend="sim", seed=3), hybrid_params=rates)
    assert isinstance(sim, SimBackend) and (sim.seed, sim.hybrid_params) == (3, rates)
    with pytest.raises(ConfigurationError, match="hybrid_params is a parameter of the simulated LLM"):
        llm_from_settings(
            Settings(backend="claude", ANTHROPIC_API_KEY="sk-test", cache_enabled=False), hybrid_params=rates
        )


def test_the_format_rate_reaches_the_simulated_short_answer():
    from engines.hybridqa.tasks import SHORT_ANSWER, ShortAnswerInput
    from engines.llm.protocol import Results

    rows = Results("", ("date",), (("1994-08-09",),), 1)
    plain = LLM(SimBackend(hybrid_params=DEFAULT_RATES.__class__(format_rate=0.0)))
    always = LLM(SimBackend(hybrid_params=DEFAULT_RATES.__class__(format_rate=1.0)))
    assert plain.run(SHORT_ANSWER, ShortAnswerInput("q", rows)) == "1994-08-09"
    assert always.run(SHORT_ANSWER, ShortAnswerInput("q", rows)) != "1994-08-09"
