"""Reading a real model's reply: the JSON object in it, and the errors for a reply that cannot be used.

Each task's ``read`` (in its agent package) turns the object into its value with these helpers; a
reply that cannot be used is a :class:`~engines.errors.ReplyError` naming the model that replied
(the backend sets it around its ``task.read`` with :func:`speaking`: "Claude", "The
OpenAI-compatible model M"; "The model" when none did), the function, and an excerpt of the reply.
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from engines.errors import ReplyError

M = TypeVar("M", bound=BaseModel)

#: Longest excerpt of a malformed reply quoted in an error message.
EXCERPT_CHARS = 160

#: Words a model writes for "the text does not say".
UNKNOWN_WORDS = frozenset({"", "unknown", "null", "none given", "not stated", "n/a"})

#: Who wrote the reply being read (set by the backend that got it: the tasks' ``read`` cannot know).
_speaker: contextvars.ContextVar[str] = contextvars.ContextVar("cs224v_reply_speaker", default="The model")


@contextmanager
def speaking(who: str) -> Iterator[None]:
    """The replies read in this block are ``who``'s ("Claude", "The OpenAI-compatible model M")."""
    token = _speaker.set(who)
    try:
        yield
    finally:
        _speaker.reset(token)


def whose(function: str) -> str:
    """``Claude's parse() reply``: the reply being read, named after the model that wrote it."""
    return f"{_speaker.get()}'s {function}() reply"


_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


#: Longest explanation of a server's (its error body's ``message``) quoted in an error message.
DETAIL_CHARS = 400


def brief(text: str) -> str:
    """A server's own explanation as one line of at most :data:`DETAIL_CHARS` characters (an error
    body may be megabytes long, and an error message is one line)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= DETAIL_CHARS else flat[: DETAIL_CHARS - 1] + "…"


def excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…")


def extract_json_object(text: str, function: str) -> dict[str, Any]:
    """The JSON object in a model reply.

    Accepts a bare object, an object in a fenced code block (```json ... ```), or an object with
    prose around it.  Anything else raises :class:`ReplyError` naming ``function`` and quoting an
    excerpt of the reply.
    """
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(stripped)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    # An object somewhere inside prose: try each opening brace in turn.
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _end = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ReplyError(f"{whose(function)} is not the JSON object asked for: {excerpt(text)}")


def validated(model: type[M], text: str, function: str) -> M:
    """The reply's JSON object validated with the task's reply model (the model whose JSON schema
    the request asked for).  Lenient about the wrapping, as :func:`extract_json_object` is; strict
    about the content: a missing or ill-typed field is a :class:`ReplyError` naming the field."""
    obj = extract_json_object(text, function)
    try:
        return model.model_validate(obj)
    except ValidationError as error:
        raise malformed(function, _problem(error), text) from None


def _problem(error: ValidationError) -> str:
    """What is wrong with a reply, from pydantic's first error: ``has no "sql"``, ``has a "x" that ...``."""
    first = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first.get("loc", ()) if not isinstance(part, int)) or "object"
    if first.get("type") == "missing":
        return f'has no "{field}"'
    return f'has a "{field}" that is not valid ({first.get("msg", "invalid")})'


def malformed(function: str, problem: str, text: str) -> ReplyError:
    return ReplyError(f"{whose(function)} {problem}: {excerpt(text)}")


_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def normalise_for_match(text: str) -> str:
    """Case, whitespace and quote-style insensitive form, to check evidence is verbatim."""
    text = text.translate(_QUOTES)
    return " ".join(text.split()).casefold()


def read_text(function: str, text: str) -> str:
    """A plain-text reply (a summary, a reply to the user)."""
    stripped = text.strip()
    if not stripped:
        raise ReplyError(f"{whose(function)} is empty.")
    return stripped
