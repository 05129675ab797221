"""SPINACH's LLM tasks (lecture 8 §3.4): the policy step and the pruning of an entity page.

``policy``: the question and the whole thought / action / observation history -> the next thought
and action (never cached: the policy samples at temperature 1; ``sample`` draws another action
after a rollback).  On Wikidata (the built-in world, Wikidata's own endpoint) its prompt is SPINACH's, verbatim
(:data:`POLICY`); on any other graph (:data:`POLICY_ON_GRAPH`) it says what the graph is (``PolicyInput.graph``,
:mod:`engines.spinach.graph`) and offers ``no_answer(reason)``.  ``prune_entry``: an entity page -> the lines that bear on the question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, field_validator

from engines.llm.replies import malformed, validated
from engines.llm.task import Task
from engines.spinach.graph import GraphInfo
from engines.spinach.steps import PolicyAction, PolicyStep

PACKAGE = "engines.spinach"  # its prompts/ folder holds these tasks' templates


@dataclass(frozen=True)
class PolicyInput:
    question: str
    history: tuple[PolicyStep, ...]
    sample: int = 0  # how many rollbacks came before: the sim draws another action for another sample
    # the graph, when it is not Wikidata (a user's RDF files, another endpoint): the prompt says what it is, names
    # the actions for any graph and offers no_answer (POLICY_ON_GRAPH); None: SPINACH's own prompt (POLICY)
    graph: GraphInfo | None = None


@dataclass(frozen=True)
class PruneInput:
    question: str
    entry: str  # the entity page, one fact a line
    graph: str | None = None  # what the graph is when it is not Wikidata (GraphInfo.what); None: SPINACH's prompt


POLICY_ACTIONS = ("search_wikidata", "get_wikidata_entry", "get_property_examples", "execute_sparql", "stop")
#: The actions as the prompt names them on a graph that is not Wikidata, and the agent's action each one is; the
#: sixth, ``no_answer(reason)``, is a stop without an answer (``PolicyAction.no_answer``).
GRAPH_ACTIONS = {
    "search_graph": "search_wikidata",
    "get_entity": "get_wikidata_entry",
    "get_property_examples": "get_property_examples",
    "execute_sparql": "execute_sparql",
    "stop": "stop",
    "no_answer": "stop",
}
_GRAPH_NAMES = {agent: shown for shown, agent in GRAPH_ACTIONS.items() if shown != "no_answer"}
#: SPINACH shows the policy its last 10 steps, and search / entity-page observations only for the last two.
POLICY_STEPS_SHOWN = 10


def policy_steps(history: Sequence[PolicyStep], *, graph: bool = False) -> tuple[list[dict[str, Any]], int]:
    """The steps the policy prompt shows, and how many earlier ones it leaves out.  ``graph``: the actions named as
    the prompt names them on a graph that is not Wikidata (``search_graph``, ``get_entity``)."""
    shown = list(history)[-POLICY_STEPS_SHOWN:]
    steps = []
    for i, step in enumerate(shown):
        bulky = step.action_name in ("get_wikidata_entry", "search_wikidata") and i < len(shown) - 2
        steps.append(
            {
                "thought": step.thought,
                "action_name": _GRAPH_NAMES.get(step.action_name, step.action_name) if graph else step.action_name,
                "action_argument": step.action_argument,
                "observation": step.observation,
                "show_observation": not bulky and step.action_name != "stop",
            }
        )
    return steps, len(history) - len(shown)


class PolicyReply(BaseModel):
    """``policy``: one thought and one action with its argument.  The schema names the five actions;
    the reader also takes ``stop()`` for ``stop`` and says plainly when an action is unknown."""

    thought: str = ""
    # a string for the reader (which names an unknown action plainly); the five actions for the schema
    action_name: str = Field(json_schema_extra={"enum": list(POLICY_ACTIONS)})
    action_argument: str = ""

    @field_validator("thought", mode="before")
    @classmethod
    def _thought(cls, v: Any) -> Any:
        return "" if v is None else str(v)

    @field_validator("action_argument", mode="before")
    @classmethod
    def _argument(cls, v: Any) -> Any:
        if v is None:
            return ""
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


class GraphPolicyReply(PolicyReply):
    """``policy`` on a graph that is not Wikidata: the schema names the six actions its prompt offers."""

    action_name: str = Field(json_schema_extra={"enum": list(GRAPH_ACTIONS)})


class PruneReply(BaseModel):
    """``prune_entry``: the numbers of the lines to keep."""

    keep: list[int]

    @field_validator("keep", mode="before")
    @classmethod
    def _numbers(cls, v: Any) -> Any:
        if not isinstance(v, list):
            return v
        return [int(k) for k in v if isinstance(k, (int, float, str)) and str(k).strip().lstrip("-").isdigit()]


def read_policy_action(text: str, *, graph: bool = False) -> PolicyAction:
    """The reply's action.  ``graph``: read with the names a graph that is not Wikidata's prompt offers
    (``search_graph``, ``get_entity``, ``no_answer(reason)``, …), as the agent's actions; ``no_answer`` is a stop
    with no answer, its reason added to the thought."""
    reply = validated(GraphPolicyReply if graph else PolicyReply, text, "policy")
    name = reply.action_name.strip().removesuffix("()")
    if not name:
        raise malformed("policy", 'has no "action_name"', text)
    if name not in (GRAPH_ACTIONS if graph else POLICY_ACTIONS):
        raise malformed("policy", f"names an unknown action {name!r}", text)
    argument = reply.action_argument
    if graph and name == "no_answer":
        thought, reason = reply.thought.strip(), argument.strip()
        said = " ".join(part for part in (thought, reason if reason not in thought else "") if part)
        return PolicyAction(said, "stop", "", no_answer=True)
    if graph:
        name = GRAPH_ACTIONS[name]
    if name == "execute_sparql" and not argument.strip():
        raise malformed("policy", "asks to execute_sparql with no query", text)
    return PolicyAction(reply.thought.strip(), name, argument.strip())


def read_kept_lines(text: str, count: int) -> tuple[int, ...]:
    """``{"keep": [line numbers]}`` -> the valid numbers, in page order; the first two lines
    (label, description) are always kept."""
    chosen = set(validated(PruneReply, text, "prune_entry").keep)
    chosen |= {0, 1}
    return tuple(sorted(k for k in chosen if 0 <= k < count))


def kept_page(entry: str, keep: Sequence[int]) -> str:
    """The entity page with only the kept lines."""
    lines = entry.splitlines()
    return "\n".join(lines[i] for i in keep if 0 <= i < len(lines))


def _policy_context(i: PolicyInput) -> dict[str, Any]:
    # ``sample`` needs no use here: a real model samples at its default temperature 1.0, so a
    # retry after a rollback draws a new action by itself.
    steps, omitted = policy_steps(i.history, graph=i.graph is not None)
    return {"question": i.question, "steps": steps, "omitted": omitted, "graph": i.graph}


def _sim_policy(b: Any, i: PolicyInput) -> PolicyAction:
    from engines.spinach import sim_policy  # the simulated policy: loaded only when the sim backend runs it

    return sim_policy.decide(i.question, i.history, seed=b.seed, sample=i.sample, params=b.policy_params)


def _sim_prune(b: Any, i: PruneInput) -> tuple[int, ...]:
    from engines.spinach.expert.memory import DEFAULT
    from engines.spinach.expert.prune import kept_lines

    return kept_lines(i.question, i.entry, (b.policy_params or DEFAULT).prune_share)


POLICY: Task[PolicyInput, PolicyAction] = Task(
    name="policy",
    input=PolicyInput,
    output=PolicyAction,
    template="policy",
    package=PACKAGE,
    max_tokens=1500,
    context=_policy_context,
    read=lambda text, _i: read_policy_action(text),
    simulate=_sim_policy,
    reply_model=PolicyReply,
    describe=lambda i: f"step {len(i.history) + 1}: {i.question}",
    show=lambda _i, a: f"{a.action_name}({a.action_argument})",
    evidence=lambda a: (a.thought,) if a.thought else (),
)

#: ``policy`` on a graph that is not Wikidata (``PolicyInput.graph`` set): the same prompt template, which then says
#: what the graph is and offers six actions, ``no_answer`` among them; the reply's schema names those six.
POLICY_ON_GRAPH: Task[PolicyInput, PolicyAction] = Task(
    name="policy",
    input=PolicyInput,
    output=PolicyAction,
    template="policy",
    package=PACKAGE,
    max_tokens=1500,
    context=_policy_context,
    read=lambda text, _i: read_policy_action(text, graph=True),
    simulate=_sim_policy,
    reply_model=GraphPolicyReply,
    describe=lambda i: f"step {len(i.history) + 1}: {i.question}",
    show=lambda _i, a: f"{a.action_name}({a.action_argument})",
    evidence=lambda a: (a.thought,) if a.thought else (),
)


def policy_task(graph: GraphInfo | None) -> Task[PolicyInput, PolicyAction]:
    """The policy's task on ``graph``: SPINACH's own on Wikidata (None), else the one that says what the graph is."""
    return POLICY if graph is None else POLICY_ON_GRAPH


PRUNE_ENTRY: Task[PruneInput, tuple[int, ...]] = Task(
    name="prune_entry",
    input=PruneInput,
    output=tuple,
    template="prune_entry",
    package=PACKAGE,
    max_tokens=512,
    context=lambda i: {"question": i.question, "lines": list(enumerate(i.entry.splitlines())), "graph": i.graph},
    read=lambda text, i: read_kept_lines(text, len(i.entry.splitlines())),
    reply_model=PruneReply,
    simulate=lambda b, i: _sim_prune(b, i),
    sim_latency=0.0,
    describe=lambda i: i.question,
    show=lambda i, keep: f"kept {len(keep)} of {len(i.entry.splitlines())} lines",
)
