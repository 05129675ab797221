"""Issue 26 item 5: on a graph it does not know, the simulated SPINACH policy says so in one step — a stop with no
answer that the agent lets stand — instead of stopping, being rolled back and retrying until its budget is gone
(29 rollbacks before).  It decides from what a real policy sees: the question, the searches' results."""

from __future__ import annotations

import pytest

from engines.kg import Endpoint
from engines.llm.client import llm_from_settings
from engines.settings import Settings
from engines.spinach.agent import NO_ANSWER, SpinachAgent
from engines.spinach.scoring import answer_step

TTL = """\
@prefix ex: <http://example.org/lib/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <http://schema.org/> .
ex:ada a foaf:Person ; rdfs:label "Ada Lovelace"@en ; foaf:knows ex:charles ; rdfs:comment "English mathematician." .
ex:charles a foaf:Person ; rdfs:label "Charles Babbage" ; schema:birthPlace ex:london .
ex:london schema:name "London" .
"""


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.ttl"
    path.write_text(TTL, encoding="utf-8")
    with Endpoint.from_rdf([path], timeout_s=20.0) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def sim():
    return llm_from_settings(Settings(backend="sim", cache_enabled=False))


@pytest.mark.parametrize(
    ("question", "searches", "says"),
    [
        # the search finds the entity, under an ID that is not a QID: a vocabulary the policy does not know
        (
            "Where was Charles Babbage born?",
            ["Charles Babbage"],
            "'Charles Babbage' as ex:charles, which is not a Wikidata ID",
        ),
        ("Who did Ada Lovelace know?", ["Ada Lovelace"], "'Ada Lovelace' as ex:ada, which is not a Wikidata ID"),
        # the search for the thing the question names finds nothing
        ("What is the elevation of Mount Everest?", ["Mount Everest"], "The search for 'Mount Everest' found nothing"),
        # nothing to look up, and a question it cannot read
        ("How many people are there?", [], "I cannot read what this question asks"),
    ],
)
def test_on_a_graph_it_cannot_use_the_policy_says_so_once(graph, sim, question, searches, says):
    run = SpinachAgent(graph, sim).run(question)
    assert [s.argument for s in run.steps if s.action == "search_wikidata"] == searches
    assert [s.action for s in run.steps] == ["search_wikidata"] * len(searches) + ["stop"]
    assert run.rollbacks == 0 and run.finish == "declined"
    assert run.final_sparql is None and run.answer == () and answer_step(run) is None
    stop = run.steps[-1]
    assert says in stop.thought and stop.thought.endswith("I stop without an answer.")
    assert stop.observation == NO_ANSWER and not stop.rolled_back


def test_the_built_in_world_is_never_declined(sim):
    """The built-in world's questions name what its graph holds, under QIDs: the policy never stops there without an
    answer (its trajectories are as before), and an unreadable question is declined in one step there too."""
    from engines.spinach.session import open_spinach

    session = open_spinach(Settings(backend="sim", cache_enabled=False), llm=sim)
    sets = session.questions
    for q in (*sets.simple[:3], *sets.forum[::12]):
        run = session.agent.run(q.question)
        assert run.finish == "stop" and run.final_sparql, q.id
    unreadable = session.agent.run("How many people are there?")
    assert (unreadable.finish, len(unreadable.steps), unreadable.rollbacks) == ("declined", 1, 0)
