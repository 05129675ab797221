"""`cs224v-tui spinach` with a real policy (``--backend openai``, a stub OpenAI-compatible server on 127.0.0.1): the
prompt tells the policy the truth about the graph.  On the built-in world it is SPINACH's, byte for byte what it was;
on a user's RDF files it says what they are, claims no Wikidata, names the actions for any graph and offers
``no_answer(reason)``, and a reply that declines ends the run "declined", with no answer and no rollback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engines.llm.openai_stub import StubServer, ok
from tui.cli import main

BUILTIN = Path(__file__).parent / "engines" / "spinach" / "data" / "policy_prompts_builtin.json"
MOUNTAINS = "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 . } LIMIT 3"
ADA = """\
@prefix ex: <http://example.org/lib/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:ada a foaf:Person ; rdfs:label "Ada Lovelace"@en ; foaf:knows ex:charles ; rdfs:comment "English mathematician." .
ex:charles a foaf:Person ; rdfs:label "Charles Babbage" .
"""
#: What SPINACH's prompt says that is false on a graph that is not Wikidata.
WIKIDATA_CLAIMS = (
    "write a Wikidata SPARQL query",
    "is guaranteed to have an answer in Wikidata",
    "structure of Wikidata",
    "The usual Wikidata prefixes",
    "search_wikidata",
    "get_wikidata_entry",
)


@pytest.fixture
def stub(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "cache"))
    server = StubServer()
    yield server
    server.close()


def script(stub: StubServer, replies: list[dict]) -> None:
    """The server answers the policy's requests with ``replies``, in order."""
    left = list(replies)
    stub.responder = lambda _request: ok(json.dumps(left.pop(0)))


def spinach(capsys, stub: StubServer, question: str, *extra: str) -> tuple[int, dict]:
    argv = ["spinach", question, "--backend", "openai", "--base-url", stub.url, "--model", "M", "--no-cache", "--json"]
    code = main([*argv, *extra])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else {"stderr": out.err}


def prompt(request: dict) -> str:
    return request["messages"][1]["content"]


def test_on_the_built_in_world_the_prompt_is_spinachs_byte_for_byte(capsys, stub):
    script(
        stub,
        [
            {"thought": "Find the class.", "action_name": "search_wikidata", "action_argument": "mountain"},
            {"thought": "Query it.", "action_name": "execute_sparql", "action_argument": MOUNTAINS},
            {"thought": "Done.", "action_name": "stop", "action_argument": ""},
        ],
    )
    code, run = spinach(capsys, stub, "Which mountains are there?")
    assert code == 0 and run["finish"] == "stop"
    before = json.loads(BUILTIN.read_text(encoding="utf-8"))
    assert [prompt(r) for r in stub.requests] == [b["prompt"] for b in before]
    assert [r["response_format"] for r in stub.requests] == [b["response_format"] for b in before]


def test_on_a_users_rdf_file_the_policy_is_told_the_graph_and_may_decline(capsys, stub, tmp_path):
    ttl = tmp_path / "people.ttl"
    ttl.write_text(ADA, encoding="utf-8")
    reason = "The graph has people and whom they know, but nothing about where anyone was born."
    script(
        stub,
        [
            {"thought": "Find her first.", "action_name": "search_graph", "action_argument": "Ada Lovelace"},
            {"thought": "Only foaf:knows and a comment.", "action_name": "no_answer", "action_argument": reason},
        ],
    )
    code, run = spinach(capsys, stub, "Where was Ada Lovelace born?", "--rdf", str(ttl))
    assert code == 0, run
    first, second = (prompt(r) for r in stub.requests)
    for claim in WIKIDATA_CLAIMS:
        assert claim not in first
    assert "your own RDF graph, read from people.ttl (6 statements)" in first and "It is not Wikidata" in first
    assert "ex: <http://example.org/lib/>" in first and "foaf: <http://xmlns.com/foaf/0.1/>" in first
    assert "The question is not guaranteed to have an answer in this graph" in first
    assert "- no_answer(reason): ends the process without an answer" in first and "one of the six actions" in first
    schema = stub.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["action_name"]["enum"] == [
        "search_graph",
        "get_entity",
        "get_property_examples",
        "execute_sparql",
        "stop",
        "no_answer",
    ]
    # the history shows the actions by the names the prompt gave them, with what the search found
    assert "Action: search_graph(Ada Lovelace)" in second and "Ada Lovelace (ex:ada)" in second
    # the decline ends the run: no answer, no rollback, the reason kept with the thought
    assert run["finish"] == "declined" and run["final_sparql"] is None and run["answer"] == []
    assert [s["action"] for s in run["steps"]] == ["search_wikidata", "stop"] and run["meta"]["rollbacks"] == 0
    assert run["steps"][-1]["thought"] == f"Only foaf:knows and a comment. {reason}"
    assert len(stub.requests) == 2


def test_on_a_users_rdf_file_the_page_pruning_prompt_names_the_graph_not_wikidata(capsys, stub, tmp_path):
    """SPINACH prunes each entity page with a second call; on a graph that is not Wikidata its prompt names the graph
    instead of calling the page a Wikidata entry."""
    ttl = tmp_path / "people.ttl"
    ttl.write_text(ADA, encoding="utf-8")
    script(
        stub,
        [
            {"thought": "Read her page.", "action_name": "get_entity", "action_argument": "ex:ada"},
            {"keep": [0, 1, 2]},
            {"thought": "Nothing about birth.", "action_name": "no_answer", "action_argument": "no birthplace"},
        ],
    )
    code, run = spinach(capsys, stub, "Where was Ada Lovelace born?", "--rdf", str(ttl))
    assert code == 0 and run["finish"] == "declined", run
    prune = prompt(stub.requests[1])
    assert prune.startswith("A question is being answered with SPARQL over your own RDF graph, read from people.ttl")
    assert "Wikidata entry" not in prune and "over Wikidata" not in prune
