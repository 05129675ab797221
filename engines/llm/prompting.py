"""Prompts of the real backends: the jinja2 templates and what they are shown.

Each agent package keeps its tasks' templates in its own ``prompts/`` folder (engines/sql/prompts,
engines/suql/prompts, ...), named by :attr:`engines.llm.task.Task.package`; engines/llm/prompts keeps only
what every call shares (``_system.j2``).  Templates are read through the package's loader
(:class:`jinja2.PackageLoader`, which finds the package as Python imports it), so an installed wheel reads
the copies it ships (pyproject's package-data lists each folder).  This module imports no SDK: an agent
package's tasks use :func:`recent` and :data:`MAX_ROWS_SHOWN` without loading ``anthropic``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import jinja2


#: This package: its ``prompts/`` folder holds the shared templates (the system prompt).
PACKAGE = "engines.llm"

#: How many earlier turns of the dialogue the prompts show (the most recent ones).
MAX_HISTORY_TURNS = 20
#: How many result rows a prompt shows the model, and how long a shown cell may be.
MAX_ROWS_SHOWN = 50
MAX_CELL_CHARS = 300

T = TypeVar("T")

#: Where a template's shared prefix ends: a template writes ``{{ cache_break }}`` on its own line
#: after the part that is the same for many calls (instructions, schema, rules, few-shot
#: examples) and before the part of this call.  :func:`render_parts` splits there, so a real
#: backend can mark the prefix for prompt caching; :func:`render_prompt` joins the two parts.
CACHE_BREAK = "\x1e<cache-break>\x1e"


def recent(history: Sequence[T]) -> list[T]:
    """The turns of a dialogue a prompt shows: the last :data:`MAX_HISTORY_TURNS`."""
    return list(history)[-MAX_HISTORY_TURNS:]


def _to_json(value: Any) -> str:
    """JSON for a prompt: unlike jinja2's ``tojson`` it does not HTML-escape ``<``, ``>``, ``&``, ``'``."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _cell(value: Any) -> Any:
    """A result cell as the model is shown it: JSON-friendly, long strings shortened."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_cell(v) for v in value]
    text = str(value)
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 1].rstrip() + "…"
    return text


def _row_json(columns: Sequence[str], row: Sequence[Any]) -> str:
    """One result row as a JSON object ``{column: value}``."""
    return _to_json({str(c): _cell(v) for c, v in zip(columns, row)})


def _environment(package: str | None = None) -> jinja2.Environment:
    import jinja2  # only a real backend renders prompts: the sim and a cold start never load it

    # a task's own package first; the shared partials (_system.j2) from this package's folder
    packages = [package, PACKAGE] if package is not None and package != PACKAGE else [PACKAGE]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader(p, "prompts") for p in packages]),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # the templates ship with the package: no stat of the file on every call
    )
    env.filters["json"] = _to_json
    env.globals["row_json"] = _row_json
    env.globals["cache_break"] = CACHE_BREAK
    return env


_ENVS: dict[str | None, jinja2.Environment] = {}
_ENVS_LOCK = threading.Lock()


def environment(package: str | None = None) -> jinja2.Environment:
    """The template environment of ``package``'s tasks (made once per package): its ``prompts/`` folder, then
    engines.llm's.  A package without a ``prompts/`` folder raises ValueError (jinja2's PackageLoader)."""
    with _ENVS_LOCK:
        if package not in _ENVS:
            _ENVS[package] = _environment(package)
        return _ENVS[package]


_BLANK_RUNS = re.compile(r"\n{3,}")


def render_prompt(function: str, *, package: str | None = None, **context: Any) -> str:
    """Render the prompt template ``function`` (``route.j2`` ...) of ``package`` (a task's :attr:`package`,
    ``"engines.sql"``) with ``context`` (the shared partials of engines/llm/prompts stay available).

    Undefined variables raise :class:`jinja2.UndefinedError` (the environment is strict), so a
    template and its caller cannot silently drift apart.  Runs of blank lines are collapsed.
    """
    return "\n\n".join(part for part in render_parts(function, package=package, **context) if part)


def render_parts(function: str, *, package: str | None = None, **context: Any) -> tuple[str, str]:
    """The prompt as (shared prefix, the rest), split at the template's ``{{ cache_break }}``;
    a template without one is all rest (``("", prompt)``).  Each part as :func:`render_prompt`
    cleans it (blank-line runs collapsed, stripped)."""
    text = environment(package).get_template(f"{function}.j2").render(**context)
    prefix, _, rest = text.rpartition(CACHE_BREAK)
    if CACHE_BREAK in prefix:
        raise ValueError(f"the template {function}.j2 has more than one cache_break")

    def clean(part: str) -> str:
        return _BLANK_RUNS.sub("\n\n", part).strip()

    return clean(prefix), clean(rest)


def system_prompt() -> str:
    """The system prompt shared by every function."""
    return render_prompt("_system")
