"""The claude backend's HybridQA prompts and replies (offline)."""

from __future__ import annotations

import pytest

from engines.errors import LLMError
from engines.hybridqa.tasks import PACKAGE
from engines.hybridqa.tasks import read_short_answer as _parse_short_answer
from engines.llm.claude import render_prompt
from engines.llm.protocol import Results


def test_parse_prompt_shows_the_schema_and_the_failed_attempts():
    schema = 'CREATE TABLE "t" ("Name" TEXT, "Name_Info" TEXT)'
    first = render_prompt("hybrid_parse", package=PACKAGE, question="Who?", schema=schema, failed=[])
    assert schema in first and '"Who?"' in first and "_Info" in first and "tried already" not in first
    retry = render_prompt("hybrid_parse", package=PACKAGE, question="Who?", schema=schema, failed=["SELECT 1"])
    assert "tried already" in retry and "SELECT 1" in retry


def test_short_answer_prompt_and_reply():
    results = Results("I searched.", ("c0",), (("Rio de Janeiro, Brazil",),), 1)
    prompt = render_prompt("short_answer", package=PACKAGE, question="Where?", results=results, rows=results.rows)
    assert "Rio de Janeiro, Brazil" in prompt and '"answer"' in prompt
    assert _parse_short_answer('{"answer": "Rio de Janeiro"}') == "Rio de Janeiro"
    assert _parse_short_answer('{"answer": null}') == ""
    with pytest.raises(LLMError):
        _parse_short_answer('{"value": 1}')
