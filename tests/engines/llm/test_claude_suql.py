"""End to end: a SUQL query over the restaurants with the claude backend talking to a stub Messages
API on 127.0.0.1, which returns garbage for one row's text.  That row alone is lost -- it is
reported (a failed call for that row; Unknown, so "to verify") -- the other rows are answered, the
query completes, and the answers got are cached, so a rerun asks only for the bad row again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.errors import LLMError
from engines.events import CallFailed, CallStarted
from engines.llm.cache import AnswerCache
from engines.llm.claude import ClaudeBackend
from engines.llm.client import LLM
from engines.retrieval.bm25 import as_text
from engines.sql.sandbox import Sandbox
from engines.suql.execute import SuqlEngine
from tests.engines.llm.test_claude_faults import Step, StubAPI, claude_at, error_body, ok
from worlds import restaurants as W

QUESTION = "is it good for groups?"
QUERY = (
    "SELECT _id, name FROM restaurants WHERE location = 'Menlo Park' AND price = 'cheap' "
    f"AND answer(reviews, '{QUESTION}') = 'Yes'"
)
TEXT = re.compile(r"<text>\n(.*?)\n</text>", re.DOTALL)


def says_yes(text: str) -> bool:
    """The stub model's verdict: the reviews mention a group or friends."""
    return "group" in text.lower() or "friends" in text.lower()


@pytest.fixture(scope="module")
def world() -> W.RestaurantWorld:
    return W.build().world


@pytest.fixture(scope="module")
def sandbox(world: W.RestaurantWorld) -> Iterator[Sandbox]:
    sb = Sandbox.create(world.load)
    yield sb
    sb.close()


@pytest.fixture
def stub() -> Iterator[StubAPI]:
    api = StubAPI()
    yield api
    api.close()


@pytest.fixture
def claude(stub: StubAPI) -> Iterator[ClaudeBackend]:
    backend = claude_at(stub.url, sleep=[].append)
    yield backend
    backend.close()


def candidates(world: W.RestaurantWorld) -> list[W.Restaurant]:
    return [r for r in world.rows if r.location == "Menlo Park" and r.price == "cheap"]


def model(bad_text: str | None, garbage: Step):
    """The stub's answers: ``garbage`` for the prompt holding ``bad_text``, a verdict otherwise."""

    def respond(request: dict) -> Step:
        prompt = request["messages"][0]["content"]
        found = TEXT.search(prompt)
        text = found.group(1) if found else ""
        if bad_text is not None and text == bad_text:
            return garbage
        return ok(json.dumps({"value": "Yes" if says_yes(text) else "No", "evidence": []}))

    return respond


GARBAGE = [
    pytest.param(
        Step(b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"), "not JSON (text/html)", id="html"
    ),
    pytest.param(
        Step({"id": "msg_x", "type": "message", "content": None}), '"content" that is null', id="content-null"
    ),
    pytest.param(ok("Sure! They are great for groups."), "not the JSON object asked for", id="prose"),
]


@pytest.mark.parametrize(("garbage", "named"), GARBAGE)
@pytest.mark.parametrize(("mode", "pool"), [("C", 1), ("E", 3)])
def test_one_bad_reply_loses_its_own_row_only(
    world, sandbox, stub, claude, tmp_path: Path, garbage: Step, named: str, mode: str, pool: int
) -> None:
    rows = candidates(world)
    yes = [r for r in rows if says_yes(as_text(r.reviews))]
    bad = yes[len(yes) // 2]  # a row that would match
    bad_text = as_text(bad.reviews)
    assert sum(as_text(r.reviews) == bad_text for r in rows) == 1
    stub.responder = model(bad_text, garbage)

    events: list = []
    llm = LLM(claude, cache=AnswerCache(tmp_path))
    engine = SuqlEngine(sandbox, llm, pool=pool)
    result = engine.run(QUERY, mode=mode, emit=events.append)

    # the other rows are answered; the bad row is not among the matches ...
    assert {r[0] for r in result.rows} == {r._id for r in yes} - {bad._id}
    assert len(stub.requests) == len(rows)  # every candidate asked once, the bad one not retried
    # ... it is reported: "to verify", with its answer() Unknown, and a failed call for its row
    assert [rec["_id"] for rec in result.to_verify] == [bad._id]
    assert result.to_verify[0]["unknown"] == [f"answer(reviews, '{QUESTION}') = 'Yes'"]
    started = {e.call_id: e for e in events if isinstance(e, CallStarted)}
    failed = [e for e in events if isinstance(e, CallFailed)]
    assert len(failed) == 1 and named in failed[0].error and "AttributeError" not in failed[0].error
    assert started[failed[0].call_id].row_key.endswith(f" {bad.name}")

    # the answers got are kept: with the model fixed, a rerun asks only for the bad row
    stub.responder = model(None, garbage)
    again = engine.run(QUERY, mode=mode)
    assert len(stub.requests) == len(rows) + 1
    assert {r[0] for r in again.rows} == {r._id for r in yes} and again.to_verify == ()
    assert again.stats.cached_calls == len(rows) - 1


def test_mode_b_loses_the_bad_row_too_and_completes(world, sandbox, stub, claude) -> None:
    """DuckDB runs the query with answer() as a UDF: the bad row's NULL drops it, the rest match."""
    rows = candidates(world)
    yes = [r for r in rows if says_yes(as_text(r.reviews))]
    bad = yes[0]
    stub.responder = model(as_text(bad.reviews), Step(b"", content_type="text/html"))
    events: list = []
    result = SuqlEngine(sandbox, LLM(claude), pool=1).run(QUERY, mode="B", emit=events.append)
    assert {r[0] for r in result.rows} == {r._id for r in yes} - {bad._id}
    failed = [e for e in events if isinstance(e, CallFailed)]
    assert len(failed) == 1 and "whose body is empty" in failed[0].error


def test_a_fault_that_is_not_one_row_s_still_stops_the_query(sandbox, stub, claude) -> None:
    """A rejected key fails every call alike: the query stops with the API's reason, at the first row."""
    stub.script(Step(error_body("authentication_error", "invalid x-api-key"), status=401))
    with pytest.raises(LLMError, match=r"rejected the key \(401\)"):
        SuqlEngine(sandbox, LLM(claude), pool=1).run(QUERY, mode="C")
    assert len(stub.requests) == 1
