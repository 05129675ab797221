"""Model replies read through a byte cap (issue 25): no reply of a model server is ever held past
``settings.llm_reply_max_bytes``.

:func:`limit` puts a response's body behind a counting stream before anything reads it: a body
that declares (``content-length``) or turns out to be longer than the cap stops being read at the
first chunk past it, its connection is closed and :class:`ReplyTooLarge` is raised -- whoever reads
it (the backend, or the SDK reading an error body for its exception).  A compressed body
(``gzip``/``deflate``) is decompressed here, with :mod:`zlib` in pieces of at most
:data:`PIECE` bytes, and the cap counts the decompressed bytes too, so a small gzip bomb cannot
grow past the cap either; any other content coding is refused (only those two are asked for).

:func:`async_hooks` / :func:`sync_hooks` are the ``event_hooks`` of an ``httpx`` (or ``httpx2``, the
anthropic SDK's) client that apply it to every response of that client, redirects and error
bodies included.  :func:`reply_limit` raises the cap for the requests made inside it (a Message
Batches results download, which holds many replies).

The overall deadline of a request is the backend's (``asyncio.timeout`` around connect, send and
all reads), not this module's: see :mod:`engines.llm.openai_compat` and :mod:`engines.llm.claude`.
"""

from __future__ import annotations

import contextvars
import importlib
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from engines.errors import LLMError

__all__ = [
    "ACCEPT_ENCODING",
    "PIECE",
    "SETTING",
    "ReplyTooLarge",
    "async_hooks",
    "limit",
    "origin",
    "reply_limit",
    "size",
    "sync_hooks",
]

#: The setting that raises the cap, named in every error.
SETTING = "CS224V_LLM_REPLY_MAX_BYTES"
#: The content codings asked for (and the only ones accepted): those decompressed here, in bounded pieces.
ACCEPT_ENCODING = "gzip, deflate"
#: Most bytes one decompression step produces (so a bomb's expansion is seen before it is held).
PIECE = 64 * 1024

_override: contextvars.ContextVar[int | None] = contextvars.ContextVar("cs224v_reply_limit", default=None)


def size(n: int) -> str:
    """``n`` bytes for a person: ``4 MiB``, ``16 KiB``, ``1,500 bytes``."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor:
            value = n / factor
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n:,} bytes"


class ReplyTooLarge(LLMError):
    """A reply body past its cap: not read further, and not worth asking again (it is not transient)."""

    def __init__(self, who: str, cap: int, seen: int, *, declared: bool = False, what: str = "a reply") -> None:
        self.who, self.cap, self.seen, self.declared = who, cap, seen, declared
        how = (
            f"declared as {seen:,} bytes, so it was not read"
            if declared
            else f"reading stopped at {seen:,} bytes, none of it kept"
        )
        super().__init__(
            f"{who} sent {what} larger than the {size(cap)} cap ({how}); "
            f"raise {SETTING} (now {cap:,}) if its replies are meant to be this large."
        )

    def to(self, function: str) -> ReplyTooLarge:
        """The same error, naming the call it was the reply to."""
        return ReplyTooLarge(self.who, self.cap, self.seen, declared=self.declared, what=f"a reply to {function}()")


@contextmanager
def reply_limit(cap: int) -> Iterator[None]:
    """Inside this block, responses read through :func:`async_hooks` / :func:`sync_hooks` have ``cap``."""
    token = _override.set(cap)
    try:
        yield
    finally:
        _override.reset(token)


class _Body:
    """The counting (and decompressing) side of one response body."""

    def __init__(self, headers: Any, cap: int, who: str) -> None:
        self.cap, self.who = cap, who
        codings = [v.strip().lower() for v in headers.get_list("content-encoding", split_commas=True)]
        codings = [c for c in codings if c and c != "identity"]
        self.coding = codings[0] if len(codings) == 1 else ", ".join(codings) if codings else None
        self.declared: int | None = None
        try:
            declared = int(headers.get("content-length", ""))
        except ValueError:
            declared = -1
        if declared > cap:
            self.declared = declared
        self.wire = 0
        self.decoded = 0
        self._raw_deflate_tried = False
        self._z: Any = None
        if self.coding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.coding == "deflate":
            self._z = zlib.decompressobj()

    def start(self) -> None:
        if self.declared is not None:
            raise ReplyTooLarge(self.who, self.cap, self.declared, declared=True)
        if self.coding is not None and self._z is None:
            raise LLMError(
                f"{self.who} sent a reply in the content coding {self.coding!r}, which was not asked for "
                f"(only {ACCEPT_ENCODING} are read, so that their size can be bounded)."
            )

    def feed(self, raw: bytes) -> list[bytes]:
        self.wire += len(raw)
        if self.wire > self.cap:
            raise ReplyTooLarge(self.who, self.cap, self.wire)
        if self._z is None:
            return [raw] if raw else []
        pieces: list[bytes] = []
        data = raw
        while True:
            try:
                piece = self._z.decompress(data, PIECE)
            except zlib.error as error:
                if self.coding == "deflate" and not self._raw_deflate_tried and self.decoded == 0:
                    # "deflate" is meant zlib-wrapped, but some servers send it raw (as httpx allows)
                    self._raw_deflate_tried = True
                    self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                    data = raw
                    continue
                raise LLMError(f"{self.who} sent a {self.coding} reply that does not decompress: {error}.") from None
            self._raw_deflate_tried = True
            self.decoded += len(piece)
            if self.decoded > self.cap:
                raise ReplyTooLarge(self.who, self.cap, self.decoded)
            if piece:
                pieces.append(piece)
            data = self._z.unconsumed_tail
            if not data and len(piece) < PIECE:
                return pieces

    def finish(self) -> list[bytes]:
        if self._z is None:
            return []
        rest = self._z.flush()
        self.decoded += len(rest)
        if self.decoded > self.cap:
            raise ReplyTooLarge(self.who, self.cap, self.decoded)
        return [rest] if rest else []


_CLASSES: dict[str, tuple[type, type]] = {}


def _stream_classes(module_name: str) -> tuple[type, type]:
    """The bounded (async, sync) stream classes for ``httpx`` or ``httpx2``: a response only reads a
    stream of its own library's ``AsyncByteStream`` / ``SyncByteStream``."""
    found = _CLASSES.get(module_name)
    if found is not None:
        return found
    module = importlib.import_module(module_name)

    class AsyncBounded(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, body: _Body) -> None:
            self.inner, self.body = inner, body

        async def __aiter__(self) -> AsyncIterator[bytes]:
            self.body.start()
            async for raw in self.inner:
                for piece in self.body.feed(raw):
                    yield piece
            for piece in self.body.finish():
                yield piece

        async def aclose(self) -> None:
            await self.inner.aclose()

    class SyncBounded(module.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, body: _Body) -> None:
            self.inner, self.body = inner, body

        def __iter__(self) -> Iterator[bytes]:
            self.body.start()
            for raw in self.inner:
                yield from self.body.feed(raw)
            yield from self.body.finish()

        def close(self) -> None:
            self.inner.close()

    _CLASSES[module_name] = found = (AsyncBounded, SyncBounded)
    return found


Who = str | Callable[[Any], str]


def origin(response: Any) -> str:
    """``scheme://host[:port]`` of the request ``response`` answers."""
    url = response.request.url
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")


def limit(response: Any, cap: int, who: Who) -> None:
    """Put ``response``'s body (an ``httpx`` or ``httpx2`` response not read yet) behind ``cap``
    bytes; ``who`` names the server in the error (``"The OpenAI-compatible server at URL"``), or
    makes that name from the response.  Idempotent; a response already in memory (a test's mock)
    is left as it is."""
    if not isinstance(who, str):
        who = who(response)
    if response.is_stream_consumed or any(isinstance(response.stream, pair) for pair in _CLASSES.values()):
        return
    module_name = type(response).__module__.partition(".")[0]
    async_class, sync_class = _stream_classes(module_name)
    body = _Body(response.headers, cap, who)
    module = importlib.import_module(module_name)
    stream = response.stream
    response.stream = (
        async_class(stream, body) if isinstance(stream, module.AsyncByteStream) else sync_class(stream, body)
    )
    if body.coding is not None:
        del response.headers["content-encoding"]  # decompressed here: the library must not do it again


def _hooks_for(cap: int, who: Who) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    def on_request(request: Any) -> None:
        request.headers["accept-encoding"] = ACCEPT_ENCODING

    def on_response(response: Any) -> None:
        override = _override.get()
        limit(response, cap if override is None else override, who)

    return on_request, on_response


def async_hooks(cap: int, who: Who) -> dict[str, list[Callable[[Any], Any]]]:
    """``event_hooks`` for an async client: every response's body read through ``cap`` bytes."""
    on_request, on_response = _hooks_for(cap, who)

    async def request_hook(request: Any) -> None:
        on_request(request)

    async def response_hook(response: Any) -> None:
        on_response(response)

    return {"request": [request_hook], "response": [response_hook]}


def sync_hooks(cap: int, who: Who) -> dict[str, list[Callable[[Any], Any]]]:
    """``event_hooks`` for a sync client (the Message Batches client): as :func:`async_hooks`."""
    on_request, on_response = _hooks_for(cap, who)
    return {"request": [on_request], "response": [on_response]}
