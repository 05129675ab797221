"""Entity pages pruned to the question, as SPINACH's get_wikidata_entry shows them (a separate LLM call), also with
the simulated backend: the simulated policy sees only what a real model would see on the pruned page."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engines.eval.metrics import row_f1
from engines.kg import Endpoint
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.spinach.agent import SpinachAgent
from engines.spinach.expert.prune import kept_lines
from engines.spinach.sim_policy import DEFAULT
from engines.spinach.tasks import PRUNE_ENTRY, PruneInput, kept_page


@pytest.fixture(scope="module")
def endpoint(world):
    """A memory store with a cache (overrides the Oxigraph one of conftest.py)."""
    return Endpoint.from_world(world, store="memory", cache_size=1 << 14)


def _film_page(built, endpoint):
    film = next(e for e in built.world.entities.values() if e.kind == "film")
    return endpoint.page(film.qid).render()


def test_the_pruner_keeps_the_header_the_modelling_claims_and_what_the_question_names(built, endpoint):
    page = _film_page(built, endpoint)
    lines = page.splitlines()
    director = next(line for line in lines if line.startswith("P57 ("))
    name = director.split(": ", 1)[1].rsplit(" (", 1)[0]
    question = f"Which films did {name} direct?"
    keep = kept_lines(question, page)
    kept = [lines[i] for i in keep]
    assert kept[:2] == lines[:2]  # label and description
    assert any(line.startswith("P31 (") for line in kept) and director in kept
    claims = [line for line in lines if line.startswith("P")]
    assert len([line for line in kept if line.startswith("P")]) < len(claims)  # a film's page is pruned
    # the simulated backend answers the prune task with the same lines; a share of 1 keeps the page whole
    assert SimBackend().run(PRUNE_ENTRY, PruneInput(question, page)).value == keep
    whole = SimBackend(policy_params=replace(DEFAULT, prune_share=1.0)).run(PRUNE_ENTRY, PruneInput(question, page))
    assert whole.value == tuple(range(len(lines)))


def test_the_simulated_policy_is_shown_the_pruned_page(endpoint, qsets):
    """Every page the simulated agent reads is the pruned one: the observation is what the pruner kept of the page,
    and on the long pages (films) lines are gone."""
    agent = SpinachAgent(endpoint, LLM(SimBackend(seed=224)))
    shorter = 0
    for q in [q for q in qsets.forum if q.category == "C6"]:
        for step in agent.run(q.question).steps:
            if step.action != "get_wikidata_entry" or "\n" not in (step.observation or ""):
                continue
            full = endpoint.page(step.argument).render()
            assert step.observation == kept_page(full, kept_lines(q.question, full))
            shorter += len(step.observation.splitlines()) < len(full.splitlines())
    assert shorter > 0


def test_pruned_pages_reveal_less_than_whole_ones(endpoint, qsets):
    """What pages contribute comes from the mechanism: the pruner drops lines the question does not seem to be about
    (a film's second location, a mountain's other properties), so pruned pages fix fewer clauses than whole ones."""
    questions = [q for q in qsets.forum if q.category in ("C3", "C6")]
    gold = {q.id: list(endpoint.execute(q.gold_sparql).bindings) for q in questions}

    def f1(params) -> float:
        total = 0.0
        for seed in (224, 225):
            agent = SpinachAgent(endpoint, LLM(SimBackend(seed=seed, policy_params=params)))
            total += sum(row_f1(list(agent.run(q.question).answer), gold[q.id]) for q in questions)
        return total / (2 * len(questions))

    assert f1(replace(DEFAULT, prune_share=1.0)) > f1(DEFAULT) + 0.05
