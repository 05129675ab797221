"""The schema browser of a user's own data: tables, their columns, each column's type and role.

Shown in the Restaurants (agent) tab and the SUQL tab when the app opens ``--db SOURCE``. The
description is the engine's own (``engines.data.describe``): the role says what the agents do with a
column — ``classify()`` maps words onto an enumeration's values, ``answer()`` and ``summary()`` read
free text.  Every name is shown as plain text (a column may be called anything).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from sqlglot import exp
from textual.widgets import Tree

MAX_VALUES_SHOWN = 8  # an enumeration's values listed under its column (the rest counted)


class SchemaPane(Tree[Any]):
    """A tree: the source, its tables (with their row counts), their columns (type · role)."""

    DEFAULT_CSS = """
    SchemaPane {
        height: auto;
        max-height: 12;
        border: round $primary 40%;
        border-title-color: $text-accent;
        border-title-style: bold;
        background: $surface;
        padding: 0 1;
    }
    SchemaPane:focus {
        border: round $accent;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Text("no data source"), **kwargs)
        self.border_title = "Schema · your data"
        self.show_root = True
        self.guide_depth = 2
        self.tooltip = (
            "The tables of your data as the engine described them: each column's type and role "
            "(enum: classify() maps words onto its values; free text: what answer() and summary() read)."
        )

    def show(self, description: Any) -> None:
        """Fill the tree from an ``engines.data.describe.SchemaDescription`` (None: empty)."""
        self.clear()
        if description is None:
            self.root.set_label(Text("no data source"))
            return
        kind = f" ({description.kind})" if description.kind else ""
        self.root.set_label(Text(f"{description.source}{kind}"))
        for table in description.tables:
            rows = "" if table.rows is None else f" — {table.rows:,} row{'s' if table.rows != 1 else ''}"
            node = self.root.add(Text(f"{table.qualified}{rows}"), expand=True)
            for column in table.columns:
                label = Text(column.name, style="bold")
                label.append(f"  {column.type}", style="dim")
                label.append(f"  {column.role_words}")
                if column.values:
                    child = node.add(label, expand=False)
                    for value in column.values[:MAX_VALUES_SHOWN]:
                        child.add_leaf(Text(value))
                    if len(column.values) > MAX_VALUES_SHOWN:
                        child.add_leaf(Text(f"… {len(column.values) - MAX_VALUES_SHOWN} more", style="dim"))
                else:
                    node.add_leaf(label)
        self.root.expand()

    def process_label(self, label: Any) -> Text:
        """Labels are plain text (never markup): a column may be called ``[bold]``."""
        text = label if isinstance(label, Text) else Text(str(label))
        return text.split()[0] if text.plain else text


def first_table_sql(description: Any) -> str:
    """A first query for the SQL editor: the first table's first rows (its name quoted by sqlglot)."""
    table = description.tables[0]
    return exp.select("*").from_(table.ref()).limit(10).sql(dialect="postgres", pretty=True)
