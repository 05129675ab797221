"""The schema description of the built-in worlds (what the schema pane shows): the statistics of a user's data,
with the agent's own enumerations; an outline of a world's tables that reads no statistics."""

from __future__ import annotations

import pytest

from engines.data.describe import describe, describe_world, outline, role_of
from engines.sql.sandbox import Sandbox
from worlds import courses, restaurants


@pytest.fixture(scope="module")
def restaurant_world():
    world = restaurants.build().world
    sandbox = Sandbox.create(world.load)
    yield world, sandbox
    sandbox.close()


def test_a_built_in_world_is_described_with_the_agents_enumerations(restaurant_world):
    world, sandbox = restaurant_world
    # a world's pane counts no NULLs (its snapshots stay as they were): the same statistics otherwise
    inferred = describe(sandbox, sandbox.tables(), source="restaurants", count_nulls=False)
    described = describe_world(sandbox, source="restaurants", enum_fields=world.enum_fields)
    assert described.kind == "built-in world"
    (table,) = described.tables
    assert table.rows == 600 and table.described
    by_name = {c.name: c for c in table.columns}
    # what the agent classifies: the world's declared enumerations, with their values
    for name, field in world.enum_fields.items():
        assert by_name[name].role == ("list_enum" if field.is_list else "enum")
        assert by_name[name].values == tuple(sorted(field.values))
    assert set(described.enum_fields) == set(world.enum_fields)
    # a column the statistics alone call an enumeration, which the agent does not classify, is text here
    only_statistics = {
        c.name
        for c in inferred.tables[0].columns
        if c.role in ("enum", "list_enum") and c.name not in world.enum_fields
    }
    assert only_statistics, "the world has no such column any more: the case below tests nothing"
    for name in only_statistics:
        assert by_name[name].role in ("text", "list") and not by_name[name].values
    # everything else is the statistics' own (free text, numbers, types)
    for column in inferred.tables[0].columns:
        if column.role not in ("enum", "list_enum"):
            assert by_name[column.name] == column
    assert by_name["reviews"].role == "list_text"


def test_no_enumerations_when_the_agent_has_none():
    world = courses.build()
    sandbox = Sandbox.create(world.load)
    try:
        described = describe_world(sandbox, source="courses", enum_fields={}, tables=("completed", "courses"))
        assert [t.name for t in described.tables] == ["completed", "courses"]
        assert not described.enum_fields
        status = described.table("completed").column("status")
        assert status.type.startswith("ENUM(") and status.role == "text"  # the type still says ENUM
        assert described.table("courses").column("description").role == "free_text"
        # without enum_fields: the statistics' (and the type's) roles, as for a user's data
        assert (
            describe_world(sandbox, source="courses", tables=("completed",)).table("completed").column("status").role
            == "enum"
        )
    finally:
        sandbox.close()


def test_an_outline_reads_types_only(restaurant_world):
    _, sandbox = restaurant_world
    reads = []

    class Counting:
        def tables(self):
            return sandbox.tables()

        def run_tree(self, tree):
            reads.append(tree)
            return sandbox.run_tree(tree)

    found = outline(Counting(), source="restaurants", kind="built-in world")
    assert not reads  # no statistic read
    (table,) = found.tables
    assert not table.described and table.rows is None
    assert [(c.name, c.type) for c in table.columns] == sandbox.tables()[0][2]
    assert all(c.role == role_of(c.type) and not c.values for c in table.columns)
    assert outline(Counting(), source="r", tables=("no such table",)).tables == ()
