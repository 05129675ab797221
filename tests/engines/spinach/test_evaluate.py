"""The evaluation of §2.5/§4: SPINACH against the baselines, on a sample of the questions (fast)."""

from __future__ import annotations

import pytest

from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.spinach.baselines import TemplateParser, direct_answer, one_shot, think_on_graph
from engines.spinach.evaluate import evaluate
from worlds import kg as K


def sample(built, per_category: int = 3) -> K.QuestionSets:
    qs = K.questions(*built)
    forum = tuple(q for c in K.CATEGORIES for q in [x for x in qs.forum if x.category == c][:per_category])
    return K.QuestionSets(qs.simple[::4], forum)


def test_spinach_beats_every_baseline_on_forum_questions(built, world, endpoint):
    report = evaluate(endpoint, sample(built), LLM(SimBackend(seed=224)), world=world)
    out = report.to_json()
    forum = out["sets"]["forum"]["f1"]
    assert forum > 50
    for name, b in out["baselines"].items():
        assert b["forum"]["f1"] < forum, name
    assert out["baselines"]["direct"]["forum"]["f1"] == 0.0
    assert out["baselines"]["template"]["simple"]["f1"] > out["baselines"]["template"]["forum"]["f1"]
    assert out["template_parser_synthetic"] == {"right": 45, "total": 45}
    assert set(out["sets"]["forum"]["by_category"]) == set(K.CATEGORIES)
    assert sum(out["actions"].values()) == pytest.approx(100, abs=0.5)
    assert len(report.trajectories) == len(sample(built).all())


def test_baselines_never_see_gold_sparql(built, endpoint):
    q = K.questions(*built).simple[0]
    assert direct_answer(q.question) and all("type" in v for row in direct_answer(q.question) for v in row.values())
    query, rows = one_shot(q.question, endpoint)
    assert query is not None and rows == []  # made-up QIDs find nothing
    assert TemplateParser().parse(q.question, q.entities, {q.entities[0]: "x"}) is not None
    assert think_on_graph(q.question, (), endpoint) == []
