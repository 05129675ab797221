"""The schema pane: the tables of the tab's world or data source, their columns, each column's type and role.

The description is the engine's own (``engines.data.describe``), read from the data through the session's
gate: the role says what the agents do with a column — ``classify()`` maps words onto an enumeration's values,
``answer()`` and ``summary()`` read free text.  Over a built-in world (the restaurants, the courses, the
HybridQA tables) it is :func:`~engines.data.describe.describe_world`: the same statistics, with the agent's
own enumerations.  Every name is shown as plain text (a column may be called anything).

A tab that has the pane owns it: its BINDINGS hold :data:`SCHEMA_BINDING` (**Ctrl+T** shows or hides it, from
anywhere in the tab, even while typing; it is never typed), whose action hands the pane what it describes now
(:meth:`SchemaPane.toggle`), and the tab tells the pane when its session, world or table changes
(:meth:`SchemaPane.track`).  The pane keeps whether it shows.  Over a user's own data (``--db``) it shows from
the start; over a built-in world it is hidden until asked for, and nothing is described before it shows: the
description runs
in a thread worker of the pane the first time the pane shows a world (kept for the next time).  A world of
many tables (the 50 HybridQA tables in the SUQL tab) lists its tables and their types at once and describes a
table when its node is expanded; so does a source described lazily (PostgreSQL: its catalogue at once, a table's
statistics when its node is expanded, kept by the source for the session).

A table read from a file says so, and for a CSV or TSV file which fields were read as NULL; each column says
how many of its values are NULL, and a type given with ``--type`` is marked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from sqlglot import exp
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode
from textual.worker import Worker, WorkerState

from tui.widgets import as_text, safe_text

MAX_VALUES_SHOWN = 8  # an enumeration's values listed under its column (the rest counted)
EAGER_TABLES = 12
"""A world of at most this many tables is described whole when the pane shows it; a larger one table by table,
as its nodes are expanded (describing the 50 HybridQA tables takes tens of seconds)."""
SCHEMA_KEY = "ctrl+t"
"""Shows or hides the tab's schema pane (priority: it works while typing and is never typed)."""


@dataclass(frozen=True)
class SchemaSubject:
    """What a tab's schema pane describes now.

    ``key`` names it (the same key: the description made before is shown again); ``gate`` is the session's
    sandbox (``tables()`` and ``run_tree``), read in a worker; ``enum_fields`` the enumerations the tab's agent
    classifies (None: a user's data, whose description infers them); ``tables`` limits it to those tables (the
    HybridQA tab's current table); ``ready`` is a description made already (a user's data, described on opening).
    """

    key: tuple[Any, ...]
    source: str
    kind: str = "built-in world"
    gate: Any = None
    enum_fields: Mapping[str, Any] | None = None
    tables: tuple[str, ...] | None = None
    ready: Any = None  # an engines.data.describe.SchemaDescription
    data: Any = None  # an engines.data.source.DataSource described lazily (its tables when expanded)

    @classmethod
    def described(cls, description: Any) -> SchemaSubject:
        """A description made already (a user's data source)."""
        return cls(
            ("ready", description.source, description.kind), description.source, description.kind, ready=description
        )

    @classmethod
    def of_session(cls, session: Any, world: str, enum_fields: Any) -> SchemaSubject:
        """A tab's session: its data source's description when it has one (``--db``), else the world ``world``'s
        tables read through the session's sandbox, with the enumerations its agent classifies."""
        source = getattr(session, "source", None)
        if source is not None and getattr(source, "lazy", False):
            known = source.schema
            return cls(("lazy", known.source, id(source)), known.source, known.kind, data=source)
        if source is not None:
            return cls.described(source.schema)
        return cls(("world", world), world, gate=session.sandbox, enum_fields=enum_fields)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _how_read(table: Any) -> str:
    """How a table read from a file was read: the file, where its types came from, the fields read as NULL."""
    file = getattr(table, "file", None)
    if file is None:
        return ""
    inferred = any(getattr(c, "type_from", "") == "inferred" for c in table.columns)
    parts = [f"read from {file}" + ("; types inferred from its values" if inferred else "")]
    tokens = getattr(table, "null_tokens", None)
    if tokens is not None:
        said = [t for t in tokens if t]
        parts.append("NULL: " + ", ".join([*said, "empty fields"]))
    return " · ".join(parts)


class SchemaPane(Tree[Any]):
    """A tree: the source, its tables (with their row counts), their columns (type · role)."""

    SCOPED_CSS = False  # the rule for short terminals names the Screen; every rule is about SchemaPane
    DEFAULT_CSS = """
    SchemaPane {
        height: auto;
        max-height: 12;
        border: round $primary 40%;
        border-title-color: $text-accent;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    SchemaPane:focus {
        border: round $accent;
    }
    Screen.-short SchemaPane {
        max-height: 8;  /* under 32 rows the tab's column holds its other panes too; F8 maximises it */
    }
    """

    def __init__(self, *, shown: bool = False, **kwargs: Any) -> None:
        super().__init__(Text("no data source"), **kwargs)
        self.display = shown
        self._wanted: bool | None = None  # what Ctrl+T chose (None: never pressed, the tab's default)
        self._default = False  # whether it shows while Ctrl+T was never pressed
        self.border_title = "Schema · your data"
        self.border_subtitle = "^T hides"
        self.show_root = True
        self.guide_depth = 2
        self.tooltip = (
            "The tables as the engine described them from the data: each column's type and role "
            "(enum: classify() maps words onto its values; free text: what answer() and summary() read). "
            "Ctrl+T shows or hides it."
        )
        self.subject: SchemaSubject | None = None
        self.description: Any = None  # what the tree shows (an outline while a large world is described)
        self._made: dict[tuple[Any, ...], Any] = {}  # subject key -> its description (tables described so far)
        self._describing: set[tuple[tuple[Any, ...], str]] = set()  # (subject key, table) in a worker

    # --- shown or hidden ---------------------------------------------------------------------------

    @property
    def wanted(self) -> bool:
        """Whether the pane shows: as Ctrl+T chose, else the tab's default."""
        return self._default if self._wanted is None else self._wanted

    def track(self, subject: SchemaSubject | None, *, default: bool | None = None) -> None:
        """The tab's session, world or table changed: show or hide the pane, and follow ``subject`` if it shows.
        ``default``: whether it shows while Ctrl+T was never pressed (a user's data: yes)."""
        if default is not None:
            self._default = default
        self.display = self.wanted
        if self.display:
            self.follow(subject)

    def toggle(self, subject: SchemaSubject | None) -> None:
        """Ctrl+T: show the pane (following ``subject``, brought into view in a short terminal's scrolled
        column; the focus stays) or hide it."""
        self._wanted = not self.display
        self.track(subject)
        if self.display:
            self.call_after_refresh(lambda: self.scroll_visible(animate=False, top=True))

    # --- what to show ----------------------------------------------------------------------------

    def follow(self, subject: SchemaSubject | None) -> None:
        """Show ``subject`` (None: the tab's session is not open yet), describing it in a worker if needed."""
        self.subject = subject
        if subject is None:
            self._set_root("opening…", "the world is being opened")
            return
        own = subject.ready is not None or subject.data is not None
        self.border_title = as_text(f"Schema · {'your data' if own else subject.source}", one_line=True)
        if subject.ready is not None:
            self.show(subject.ready)
            return
        if subject.data is not None:  # what the source knows so far; a table is described when expanded
            self._made[subject.key] = subject.data.schema
            self.show(self._made[subject.key])
            return
        made = self._made.get(subject.key)
        if made is not None:
            self.show(made)
            return
        self._set_root("describing…", f"{subject.source}: reading each column's statistics")
        self.run_worker(lambda: self._outline_work(subject), thread=True, group="schema", exit_on_error=False)

    def _set_root(self, label: str, why: str) -> None:
        self.clear()
        self.description = None
        self.root.set_label(Text(f"{label} — {why}"))

    def show(self, description: Any) -> None:
        """Fill the tree from an ``engines.data.describe.SchemaDescription`` (None: empty)."""
        self.clear()
        self.description = description
        if description is None:
            self.root.set_label(Text("no data source"))
            return
        kind = f" ({description.kind})" if description.kind else ""
        count = f" — {_plural(len(description.tables), 'table')}" if len(description.tables) != 1 else ""
        self.root.set_label(Text(f"{description.source}{kind}{count}"))
        few = len(description.tables) <= EAGER_TABLES
        for table in description.tables:
            node = self.root.add(Text(table.qualified), data=table.qualified, expand=few and table.described)
            self._fill(node, table)
        self.root.expand()

    def _fill(self, node: TreeNode[Any], table: Any) -> None:
        node.remove_children()
        label = Text(table.qualified)
        if table.rows is not None:
            estimate = "about " if not table.described else ""
            label.append(f" — {estimate}{_plural(table.rows, 'row')}")
        if not table.described:
            label.append(" — types only; expand it to describe its columns", style="dim")
        node.set_label(label)
        read = _how_read(table)
        if read:
            node.add_leaf(Text(read, style="dim"))
        for column in table.columns:
            text = Text(column.name, style="bold")
            # an ENUM type's values are listed under it: ENUM('cheap', 'moderate', …) would push the role off
            shown = "ENUM" if column.values and column.type.upper().startswith("ENUM(") else column.type
            text.append(f"  {shown}", style="dim")
            if getattr(column, "type_from", "") == "given":
                text.append(" (--type)", style="dim")
            text.append(f"  {column.role_words}" if table.described else "")
            if getattr(column, "nulls", None):
                text.append(f"  {column.nulls:,} NULL", style="dim")
            if column.values:
                child = node.add(text, expand=False)
                for value in column.values[:MAX_VALUES_SHOWN]:
                    child.add_leaf(Text(value))
                if len(column.values) > MAX_VALUES_SHOWN:
                    child.add_leaf(Text(f"… {len(column.values) - MAX_VALUES_SHOWN} more", style="dim"))
            else:
                node.add_leaf(text)

    def process_label(self, label: Any) -> Text:
        """Labels are plain text (never markup): a column may be called ``[bold]``; a name's or a value's control
        characters, C1 and bidi controls show escaped, line feeds and tabs too (a label is one line)."""
        text = safe_text(label if isinstance(label, Text) else Text(str(label)), keep="")
        return text.split()[0] if text.plain else text

    # --- describing (thread workers of the pane) --------------------------------------------------

    def _outline_work(self, subject: SchemaSubject) -> tuple[str, SchemaSubject, Any]:
        from engines.api import describe_world, outline

        found = outline(subject.gate, source=subject.source, kind=subject.kind, tables=subject.tables)
        if len(found.tables) > EAGER_TABLES:
            return "whole", subject, found
        return (
            "whole",
            subject,
            describe_world(
                subject.gate,
                source=subject.source,
                kind=subject.kind,
                enum_fields=subject.enum_fields,
                tables=subject.tables,
            ),
        )

    def _table_work(self, subject: SchemaSubject, table: str) -> tuple[str, SchemaSubject, Any]:
        from dataclasses import replace

        from engines.api import describe_world

        if subject.data is not None:  # the source describes it (once for the session) and keeps it
            whole = subject.data.described([table])
            found = whole.table(table)
            return "table", subject, replace(whole, tables=(found,) if found is not None else (), notes=())

        one = describe_world(
            subject.gate, source=subject.source, kind=subject.kind, enum_fields=subject.enum_fields, tables=(table,)
        )
        return "table", subject, one

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Any]) -> None:
        event.stop()
        subject, description, name = self.subject, self.description, event.node.data
        if subject is None or description is None or subject.ready is not None or not isinstance(name, str):
            return
        table = description.table(name)
        if table is None or table.described or (subject.key, name) in self._describing:
            return
        self._describing.add((subject.key, name))
        label = Text(name)
        label.append(" — describing…", style="dim")
        event.node.set_label(label)
        self.run_worker(lambda: self._table_work(subject, name), thread=True, group="schema", exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "schema":
            return
        event.stop()
        if event.state == WorkerState.ERROR:
            from tui.area import describe_error

            error = event.worker.error
            assert error is not None
            self._set_root("could not describe it", describe_error(error))
            return
        if event.state != WorkerState.SUCCESS:
            return
        result: tuple[str, SchemaSubject, Any] | None = event.worker.result  # _outline_work's or _table_work's
        if result is None:
            return
        what, subject, made = result
        if what == "table":
            if subject.key in self._made and made.tables:
                self._merge(subject, made)
            return
        self._made[subject.key] = made
        if self.subject is not None and self.subject.key == subject.key:
            self.show(made)

    def _merge(self, subject: SchemaSubject, one: Any) -> None:
        """A table of a large world described: into the kept description, and into its node if it shows."""
        from dataclasses import replace

        table = one.tables[0]
        self._describing.discard((subject.key, table.qualified))
        kept = self._made[subject.key]
        tables = tuple(table if t.qualified == table.qualified else t for t in kept.tables)
        self._made[subject.key] = replace(kept, tables=tables, notes=kept.notes + one.notes)
        if self.subject is None or self.subject.key != subject.key:
            return
        self.description = self._made[subject.key]
        node = next((n for n in self.root.children if n.data == table.qualified), None)
        if node is not None:
            self._fill(node, table)
            node.expand()


SCHEMA_BINDING = Binding(
    SCHEMA_KEY,
    "toggle_schema",
    "Schema",
    key_display="^T",
    priority=True,
    show=False,  # 80 columns hold the tab's keys first: the help and the pane's border say ^T
    tooltip="Show or hide the schema: the tables, their columns, types and roles.",
)


def first_table_sql(description: Any) -> str:
    """A first query for the SQL editor: the first table's first rows (its name quoted by sqlglot)."""
    table = description.tables[0]
    return exp.select("*").from_(table.ref()).limit(10).sql(dialect="postgres", pretty=True)
