"""engines.suql.unknowns: the question a row to verify is unknown on, read off the parsed predicate."""

from __future__ import annotations

import pytest

from engines.suql.unknowns import unknown_question


@pytest.mark.parametrize(
    "predicate, question",
    [
        ("answer(reviews, 'is it romantic?') = 'Yes'", "is it romantic?"),
        ("answer(r.reviews, 'is it ''cosy''?') = 'Yes'", "is it 'cosy'?"),  # a quote in the question
        ("answer(\"Flag Bearer_Info\", 'when, and where?') = 'Yes'", "when, and where?"),  # a comma, a quoted column
    ],
)
def test_a_yes_test_gives_its_question(predicate, question):
    assert unknown_question(predicate) == question


@pytest.mark.parametrize(
    "predicate",
    [
        "answer(reviews, 'is it romantic?') = 'No'",
        "summary(reviews) = 'Yes'",
        "rating > 4",
        "answer(reviews) = 'Yes'",  # malformed call
        "answer(reviews, 'q') = 'Yes' AND rating > 4",
        "((",  # not SQL
        "",
    ],
)
def test_anything_else_is_none(predicate):
    assert unknown_question(predicate) is None
