"""engines.hybridqa.cells: which column holds the passages of a cell, by the world's ``_Info`` rule."""

from __future__ import annotations

from engines.hybridqa.cells import base_column, is_info, linked_column
from worlds.hybridqa import GENERATED_COLUMNS


def test_linked_columns_of_the_generated_tables():
    columns = GENERATED_COLUMNS
    assert linked_column("Flag Bearer", columns) == "Flag Bearer_Info"
    assert linked_column("Event year", columns) == "Event year_Info"
    assert linked_column("Flag Bearer_Info", columns) == "Flag Bearer_Info"  # an _Info column is its own
    assert linked_column("Gender", columns) is None  # no passages for it
    assert linked_column("Name", ("Name", "Other_Info")) is None


def test_info_columns_and_their_base():
    assert is_info("Flag Bearer_Info") and not is_info("Flag Bearer") and not is_info("Info")
    assert base_column("Flag Bearer_Info") == "Flag Bearer" and base_column("Gender") == "Gender"
