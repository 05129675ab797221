"""The engine's own description of a user's tables: types, roles, the schema text and classify()'s enums."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from engines.data.describe import ENUM_SHOWN_VALUES, describe, role_of
from engines.data.source import open_source
from engines.settings import Settings
from engines.sql import sim_tables
from engines.sql.sandbox import Sandbox
from tests.engines.data.conftest import HOSTILE, write_csv, write_jsonl


def roles(source) -> dict[str, str]:
    (table,) = source.schema.tables
    return {c.name: c.role for c in table.columns}


def test_roles_of_a_csv(hotels_csv):
    with open_source(str(hotels_csv), Settings()) as source:
        assert roles(source) == {
            "id": "number",
            "name": "text",  # a different name on every row: not an enumeration
            "city": "enum",  # three values, each repeated
            "price": "number",
            "notes": "free_text",  # long sentences: what answer() reads
        }
        (table,) = source.schema.tables
        assert table.rows == 24
        assert table.column("city").values == ("Berlin", "Paris", "Rome")
        fields = source.schema.enum_fields
        assert set(fields) == {"city"} and fields["city"].values == ("Berlin", "Paris", "Rome")
        assert not fields["city"].is_list and fields["city"].in_schema
        assert source.schema.free_text == [("hotels", "notes")]


def test_list_columns_dates_and_booleans(tmp_path):
    rows = [
        {
            "tags": ["wifi", "pool"] if i % 2 else ["wifi"],
            "comments": [f"Guest {i} wrote a long comment about the stay, the staff and the food."],
            "codes": [f"c{i}"],
            "opened": f"2020-01-{i + 1:02d}",
            "open": i % 2 == 0,
        }
        for i in range(10)
    ]
    path = write_jsonl(tmp_path / "places.jsonl", rows)
    with open_source(str(path), Settings()) as source:
        assert roles(source) == {
            "tags": "list_enum",
            "comments": "list_text",
            "codes": "list",
            "opened": "date",
            "open": "bool",
        }
        assert source.schema.enum_fields["tags"].is_list
        assert source.schema.enum_fields["tags"].values == ("pool", "wifi")


def test_a_large_enumeration_is_described_but_not_listed_in_the_schema(tmp_path):
    cities = [f"City {i:02d}" for i in range(30)]
    path = write_csv(tmp_path / "t.csv", [{"city": cities[i % 30], "n": i} for i in range(90)])
    with open_source(str(path), Settings()) as source:
        field = source.schema.enum_fields["city"]
        assert len(field.values) == 30 > ENUM_SHOWN_VALUES and not field.in_schema
        text = source.schema.render()
        assert "30 values; classify()" in text and "City 07" not in text


def test_duckdb_enum_type_keeps_its_values(tmp_path):
    path = tmp_path / "db.duckdb"
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
    con.execute("CREATE TABLE m (id INTEGER, mood mood)")
    con.execute("INSERT INTO m VALUES (1, 'sad'), (2, 'happy')")
    con.close()
    with open_source(str(path), Settings()) as source:
        col = source.schema.tables[0].column("mood")
        assert col.role == "enum" and set(col.values) == {"sad", "happy"}


def test_the_schema_text_quotes_every_name_and_reads_back(tmp_path):
    """Hostile column names and values survive the schema text: sqlglot reads back the same tables,
    columns, roles and values (the generic sim parser reads exactly this)."""
    odd = 'it\'s "odd", -- really'
    rows = [{HOSTILE: i, "kind": [odd, "plain"][i % 2], "note": "x" * 250} for i in range(6)]
    path = write_csv(tmp_path / "weird.csv", rows)
    with open_source(str(path), Settings()) as source:
        text = source.schema.render(suql=True)
        statements = [s for s in sqlglot.parse(text, read="duckdb") if isinstance(s, exp.Create)]
        assert len(statements) == 1
        (table,) = sim_tables.read_schema(text)
        assert table.name == "weird"
        by_name = {c.name: c for c in table.columns}
        assert set(by_name) == {HOSTILE, "kind", "note"}
        assert by_name["kind"].role == "enum" and set(by_name["kind"].values) == {odd, "plain"}
        assert by_name["note"].role == "free_text" and by_name[HOSTILE].role == "number"
        assert text.startswith(sim_tables.MARKER) and "answer(text, 'question')" in text


def test_a_value_with_a_newline_is_never_an_enumeration(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"k": "a\nb"} if i % 2 else {"k": "c"} for i in range(10)])
    with open_source(str(path), Settings()) as source:
        assert roles(source)["k"] == "text"


def test_role_of_types():
    assert role_of("DECIMAL(10,2)") == "number" and role_of("BIGINT") == "number"
    assert role_of("TIMESTAMP WITH TIME ZONE") == "date" and role_of("DATE") == "date"
    assert role_of("VARCHAR[]") == "list" and role_of("STRUCT(a INTEGER)") == "other"
    assert role_of("BOOLEAN") == "bool" and role_of("VARCHAR") == "text"


def test_describe_works_over_any_gate_and_notes_what_failed():
    """A statistic that fails leaves the column its type's role and says so in the notes."""

    def load(con):
        con.execute("CREATE TABLE t AS SELECT 'a' AS s, 1 AS n")

    sandbox = Sandbox.create(load)
    try:

        class Failing:
            def run_tree(self, tree):
                if any(isinstance(n, exp.Length) for n in tree.find_all(exp.Length)):
                    from engines.sql.sandbox import SqlTimedOut

                    raise SqlTimedOut("too slow")
                return sandbox.run_tree(tree)

        d = describe(Failing(), [(None, "t", [("s", "VARCHAR"), ("n", "INTEGER")])], source="t")
        assert [c.role for c in d.tables[0].columns] == ["text", "number"]
        assert d.tables[0].rows == 1 and any("too slow" in n for n in d.notes)
    finally:
        sandbox.close()


def test_to_json_lists_tables_columns_types_and_roles(hotels_csv):
    with open_source(str(hotels_csv), Settings()) as source:
        data = source.schema.to_json()
        assert data["tables"][0]["name"] == "hotels"
        city = next(c for c in data["tables"][0]["columns"] if c["name"] == "city")
        assert city == {
            "name": "city",
            "type": "VARCHAR",
            "type_from": "inferred",
            "role": "enum",
            "nulls": 0,
            "values": ["Berlin", "Paris", "Rome"],
        }


def test_two_tables_sharing_an_enum_column_give_classify_the_union(tmp_path):
    write_csv(tmp_path / "a.csv", [{"status": s} for s in ["open", "closed"] * 3])
    write_csv(tmp_path / "b.csv", [{"status": s} for s in ["open", "pending"] * 3])
    with open_source(str(tmp_path), Settings()) as source:
        assert source.schema.enum_fields["status"].values == ("closed", "open", "pending")
