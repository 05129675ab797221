"""Prompts of the real backends: the jinja2 templates and what they are shown.

Templates live in ``engines/llm/prompts/`` (a task may keep its own in its package, see
:attr:`engines.llm.task.Task.prompts_dir`).  This module imports no SDK: an agent package's tasks
use :func:`recent`, :data:`MAX_ROWS_SHOWN` and :data:`MAX_TOKENS` without loading ``anthropic``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import jinja2


PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

#: ``max_tokens`` of the request of each built-in task (a task's ``max_tokens`` reads it).
MAX_TOKENS: Mapping[str, int] = {
    "route": 256,
    "parse": 1024,
    "classify": 1024,
    "answer": 1024,
    "summary": 600,
    "respond": 1024,
    "policy": 1500,
    "hybrid_parse": 1024,
    "short_answer": 256,
    "prune_entry": 512,
}

#: The built-in tasks, whose templates are in engines/llm/prompts.
FUNCTIONS: tuple[str, ...] = tuple(MAX_TOKENS)

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


def _environment(directory: Path | None = None) -> jinja2.Environment:
    import jinja2  # only a real backend renders prompts: the sim and a cold start never load it

    # a task's own folder first; the shared partials (_system.j2, _dialogue.j2) from PROMPTS_DIR
    dirs = [directory, PROMPTS_DIR] if directory is not None and directory != PROMPTS_DIR else [PROMPTS_DIR]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
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


_ENVS: dict[Path | None, jinja2.Environment] = {}
_ENVS_LOCK = threading.Lock()


def _environment_for(directory: Path | None) -> jinja2.Environment:
    with _ENVS_LOCK:
        if directory not in _ENVS:
            _ENVS[directory] = _environment(directory)
        return _ENVS[directory]


_BLANK_RUNS = re.compile(r"\n{3,}")


def render_prompt(function: str, *, directory: Path | None = None, **context: Any) -> str:
    """Render the prompt template ``function`` (``route.j2`` ...) with ``context``; ``directory`` is a
    task's own prompts folder (the shared partials of engines/llm/prompts stay available).

    Undefined variables raise :class:`jinja2.UndefinedError` (the environment is strict), so a
    template and its caller cannot silently drift apart.  Runs of blank lines are collapsed.
    """
    return "\n\n".join(part for part in render_parts(function, directory=directory, **context) if part)


def render_parts(function: str, *, directory: Path | None = None, **context: Any) -> tuple[str, str]:
    """The prompt as (shared prefix, the rest), split at the template's ``{{ cache_break }}``;
    a template without one is all rest (``("", prompt)``).  Each part as :func:`render_prompt`
    cleans it (blank-line runs collapsed, stripped)."""
    text = _environment_for(directory).get_template(f"{function}.j2").render(**context)
    prefix, _, rest = text.rpartition(CACHE_BREAK)
    if CACHE_BREAK in prefix:
        raise ValueError(f"the template {function}.j2 has more than one cache_break")

    def clean(part: str) -> str:
        return _BLANK_RUNS.sub("\n\n", part).strip()

    return clean(prefix), clean(rest)


def system_prompt() -> str:
    """The system prompt shared by every function."""
    return render_prompt("_system")
