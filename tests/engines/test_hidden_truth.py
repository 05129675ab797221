"""The hidden truth is returned apart from the visible world: nothing an engine is handed reaches it.

``worlds.restaurants.build()`` and ``worlds.hybridqa.build()`` return ``Built(world, truth)``.  The world, and
every session built over it (the restaurant tab, the SUQL tab, the Lab's shared world, HybridQA's pipeline), must
hold no attribute path to the ``HiddenTruth``: an engine handed one of them cannot read the answers it is judged
against.  (The KG world's truth, worlds/kg.py, is not covered here yet.)
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator
from typing import Any

from engines.settings import Settings
from worlds import restaurants as W

_LEAVES = (
    str,
    bytes,
    int,
    float,
    bool,
    complex,
    type(None),
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)


def _children(obj: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"[{k!r}]", v
            if not isinstance(k, _LEAVES):
                yield f"<key {k!r}>", k
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield f"[{i}]", v
        return
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield f".{f.name}", getattr(obj, f.name, None)
    for name, v in getattr(obj, "__dict__", {}).items():
        yield f".{name}", v
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(obj, name):
                yield f".{name}", getattr(obj, name)


def paths_to(root: Any, target: type, *, max_nodes: int = 200_000) -> list[str]:
    """Every attribute/item path from ``root`` to an instance of ``target`` (breadth first, cycles cut)."""
    found, seen, queue, visited = [], {id(root)}, [("root", root)], 0
    while queue and visited < max_nodes:
        path, obj = queue.pop(0)
        visited += 1
        if isinstance(obj, target):
            found.append(path)
            continue
        if isinstance(obj, _LEAVES):
            continue
        for step, child in _children(obj):
            if id(child) not in seen and not isinstance(child, _LEAVES):
                seen.add(id(child))
                queue.append((path + step, child))
    assert visited < max_nodes, "the object graph is larger than the scan allows: raise max_nodes"
    return found


def test_the_scan_finds_a_truth_where_there_is_one():
    # The scan itself must be able to fail: a truth hidden two levels down is found.
    built = W.build(n=20)
    holder = types.SimpleNamespace(inner={"x": [built.world, (1, built.truth)]})
    assert paths_to(holder, W.HiddenTruth) == ["root.inner['x'][1][1]"]


def test_build_returns_the_world_and_the_truth_apart():
    built = W.build(n=50)
    world, truth = built
    assert isinstance(world, W.RestaurantWorld) and isinstance(truth, W.HiddenTruth)
    assert set(truth.features) == {r._id for r in world.rows}
    assert not hasattr(world, "truth")
    assert "truth" not in {f.name for f in dataclasses.fields(world)}
    assert paths_to(world, W.HiddenTruth) == []


def test_no_session_an_engine_is_handed_reaches_the_truth():
    from engines.compose import open_restaurants, open_suql

    settings = Settings(cache_enabled=False)
    sessions = [open_restaurants(settings), open_restaurants(settings, suql=True), open_suql(settings)]
    try:
        for s in sessions:
            assert not hasattr(s, "truth") and not hasattr(s.world, "truth")
            assert paths_to(s, W.HiddenTruth) == [], type(s).__name__
    finally:
        for s in sessions:
            s.close()


def test_the_lab_hands_experiments_the_world_and_gives_evaluators_the_truth_apart():
    from engines.lab.resources import restaurant_truth, restaurant_world

    world = restaurant_world()
    assert paths_to(world, W.HiddenTruth) == []
    truth = restaurant_truth(world.seed)
    assert truth is restaurant_truth() and set(truth.features) == {r._id for r in world.rows}


# --- HybridQA: the generated tables' correct answers, needed columns and expert queries ----------------------


def test_hybridqa_build_returns_the_world_and_the_truth_apart():
    from worlds import hybridqa as H

    world, truth = H.build(n_tables=3)
    assert isinstance(world, H.GeneratedWorld) and isinstance(truth, H.HiddenTruth)
    assert set(truth.questions) == {q.question_id for q in world.questions}
    assert not hasattr(world, "truth") and "truth" not in {f.name for f in dataclasses.fields(world)}
    assert paths_to(world, H.HiddenTruth) == []


def test_the_hybridqa_pipeline_and_its_llm_cannot_reach_the_truth_only_the_evaluators_path_does():
    from engines.compose import open_suql
    from engines.hybridqa.session import open_hybridqa
    from worlds import hybridqa as H

    settings = Settings(cache_enabled=False)
    with open_hybridqa(settings, n_tables=3) as session:
        for part in ("world", "sandbox", "llm", "pipeline"):  # what the pipeline and the simulated LLM are handed
            assert paths_to(getattr(session, part), H.HiddenTruth) == [], part
        assert paths_to(session, H.HiddenTruth) == ["root.truth"]  # held apart, for the evaluators alone
        q = session.world.questions[0]
        answer = session.pipeline.ask(q.table, q.question)
        assert session.grade(q, answer).judged is not None  # ... and they still judge with it
    suql = open_suql(settings, world="hybridqa")  # the SUQL tab's HybridQA world
    try:
        assert paths_to(suql, H.HiddenTruth) == []
    finally:
        suql.close()
