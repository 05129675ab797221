"""The hidden truth is returned apart from the visible world: nothing an engine is handed reaches it.

``worlds.restaurants.build()``, ``worlds.hybridqa.build()`` and ``worlds.kg.build()`` return ``Built(world,
truth)``.  The world, and every session built over it (the restaurant tab, the SUQL tab, the Lab's shared world,
HybridQA's pipeline, the knowledge-graph endpoint, its store and the SPINACH agent), must hold no attribute path
to the ``HiddenTruth`` — nor a path through a kept function's closure or a bound method: an engine handed one of
them cannot read the answers it is judged against.
"""

from __future__ import annotations

import dataclasses
import functools
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
    types.BuiltinFunctionType,
)


def _children(obj: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, types.FunctionType):  # what a kept function closes over (never its module's globals)
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=True):
            try:
                yield f"<closure {name}>", cell.cell_contents
            except ValueError:  # an empty cell
                pass
        for i, v in enumerate(obj.__defaults__ or ()):
            yield f"<default {i}>", v
        for k, v in (obj.__kwdefaults__ or {}).items():
            yield f"<default {k}>", v
        return
    if isinstance(obj, types.MethodType):
        yield ".__self__", obj.__self__
        yield ".__func__", obj.__func__
        return
    if isinstance(obj, functools.partial):
        yield ".func", obj.func
        yield ".args", obj.args
        yield ".keywords", obj.keywords
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


def test_the_scan_follows_closures_and_bound_methods():
    built = W.build(n=20)
    truth = built.truth

    class Keeper:
        def __init__(self, t):
            self.t = t

        def read(self):
            return self.t

    assert paths_to(types.SimpleNamespace(read=lambda: truth.features), W.HiddenTruth) == ["root.read<closure truth>"]
    assert paths_to(types.SimpleNamespace(read=Keeper(truth).read), W.HiddenTruth) == ["root.read.__self__.t"]


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


# --- the knowledge graph: the complete facts before the quirks (every city's country, every advisor pair, ...) ---


def test_kg_build_returns_the_world_and_the_truth_apart():
    from worlds import kg as K

    world, truth = K.build()
    assert isinstance(world, K.KGWorld) and isinstance(truth, K.HiddenTruth)
    assert set(truth.city_country) == {e.qid for e in world.kind("city")}
    assert not hasattr(world, "truth") and "truth" not in {f.name for f in dataclasses.fields(world)}
    assert paths_to(world, K.HiddenTruth) == [] and paths_to(K.scaled(world, 2), K.HiddenTruth) == []


def test_no_kg_session_endpoint_store_or_llm_reaches_the_truth():
    from engines.kg import open_kg
    from engines.spinach.session import open_spinach
    from worlds import kg as K

    settings = Settings(cache_enabled=False)
    session = open_spinach(settings)
    with session.endpoint:
        assert session.questions.forum  # the evaluators' question sets were made (with the truth) ...
        q = session.questions.forum[0]
        session.agent.run(q.question)  # ... and a run leaves nothing behind that leads to it
        for part in ("world", "endpoint", "llm", "agent"):  # what the agent and the simulated policy are handed
            assert paths_to(getattr(session, part), K.HiddenTruth) == [], part
        assert paths_to(session, K.HiddenTruth) == []
        assert paths_to(session.endpoint.graph, K.HiddenTruth) == []  # the store itself
    with open_kg(settings) as endpoint:  # the SPARQL console's endpoint (its query worker started)
        assert endpoint.execute("SELECT ?x WHERE { ?x wdt:P31 ?c . } LIMIT 3").has_rows
        assert paths_to(endpoint, K.HiddenTruth) == []


def test_the_lab_keeps_the_kg_truth_for_its_checks_only():
    from contextlib import ExitStack

    from engines.lab.core import RunContext
    from engines.lab.lecture8.common import kg_of
    from worlds import kg as K

    ctx = RunContext(None, {}, "small", lambda *a: None, None, Settings(cache_enabled=False), ExitStack())
    k = kg_of(ctx)
    assert paths_to(k.world, K.HiddenTruth) == [] and paths_to(k.endpoint, K.HiddenTruth) == []
    assert paths_to(k, K.HiddenTruth) == ["root.truth"]  # held apart, for the §1.4 checks
    assert k.sets == K.questions(*K.build())
