"""A user's RDF files: read, checked and described before they become a graph.

:func:`read_rdf` takes Turtle, N-Triples, N-Quads, TriG or RDF/XML files (the format from the
extension: ``.ttl``, ``.nt``, ``.nq``, ``.trig``, ``.rdf`` / ``.owl`` / ``.xml``) and returns an
:class:`RdfSource`: each file's bytes with its media type (what the store bulk-loads), the
prefixes the files declare, the number of statements, and whether the graph uses Wikidata's
vocabulary (entities under ``http://www.wikidata.org/entity/`` or properties under
``http://www.wikidata.org/prop/``) — the one case in which the Wikidata dialect is switched on.

Every byte of a file is bounded where it arrives (:class:`RdfLimits`, from the settings):

* here, in the app's process, only the reading: a regular file only (a FIFO or ``/dev/zero`` is
  refused, never read), at most ``rdf_max_mb`` for all the files together (refused from its size
  before it is read, and never more than that read if it grows);
* the parse that checks the files runs in a SPARQL worker process (:mod:`engines.kg.worker`: its
  memory cap, no network, no files), which gets the bytes streamed in chunks and parses them with
  pyoxigraph as they come (:class:`RdfScan`), under a deadline (``rdf_load_timeout_s``; killed at
  it).  It refuses, naming the file and, where there is one, the line: an RDF/XML file with a
  ``DOCTYPE`` (entity declarations: a 779-byte "billion laughs" file expands to gigabytes) or that
  is not well-formed XML — decided by expat on every byte before pyoxigraph sees it, anywhere in the
  file, since pyoxigraph's RDF/XML parser honours a DOCTYPE even in the middle of a document —, more
  than ``rdf_max_statements`` statements in all, a literal longer than ``rdf_max_literal_bytes``
  (UTF-8), a syntax error, a file that is not UTF-8.

:class:`RdfFileError` is the one error; quads in named graphs are read as part of one graph
(queries see the union).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.errors import EngineError
from engines.jsonable import Jsonable
from engines.kg.rdf_scan import (
    CHUNK_BYTES,
    WIKIDATA_NAMESPACES,
    RdfScan,
    shown,
    size_text,
    uses_wikidata,
)

if TYPE_CHECKING:
    from engines.kg.dialect import Dialect
    from engines.settings import Settings

__all__ = [
    "RdfFileError",
    "RdfLimits",
    "RdfScan",
    "RdfSource",
    "read_rdf",
    "FORMATS",
    "WIKIDATA_NAMESPACES",
    "uses_wikidata",
]

# extension -> (media type, name shown to people)
FORMATS: Mapping[str, tuple[str, str]] = {
    ".ttl": ("text/turtle", "Turtle"),
    ".turtle": ("text/turtle", "Turtle"),
    ".nt": ("application/n-triples", "N-Triples"),
    ".ntriples": ("application/n-triples", "N-Triples"),
    ".nq": ("application/n-quads", "N-Quads"),
    ".nquads": ("application/n-quads", "N-Quads"),
    ".trig": ("application/trig", "TriG"),
    ".rdf": ("application/rdf+xml", "RDF/XML"),
    ".owl": ("application/rdf+xml", "RDF/XML"),
    ".xml": ("application/rdf+xml", "RDF/XML"),
}


class RdfFileError(EngineError):
    """An RDF file cannot be used; the message names the file and, if known, the line and column."""

    def __init__(self, message: str, path: str = "", line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column


@dataclass(frozen=True)
class RdfLimits(Jsonable):
    """What reading, checking and loading a user's RDF files may take (the ``rdf_*`` settings and
    the SPARQL worker's ``sparql_memory_limit_mb``)."""

    max_bytes: int = 2048 << 20  # all the files together
    max_statements: int = 10_000_000  # all the files together
    max_literal_bytes: int = 10 << 20  # one literal's lexical form, UTF-8
    timeout_s: float = 300.0  # checking the files; loading them into a query worker, again
    memory_limit_mb: int = 2048  # the worker process that checks them

    @classmethod
    def from_settings(cls, settings: Settings) -> RdfLimits:
        return cls(
            max_bytes=int(settings.rdf_max_mb) << 20,
            max_statements=int(settings.rdf_max_statements),
            max_literal_bytes=int(settings.rdf_max_literal_bytes),
            timeout_s=float(settings.rdf_load_timeout_s),
            memory_limit_mb=int(settings.sparql_memory_limit_mb),
        )


@dataclass(frozen=True)
class RdfSource:
    """What :func:`read_rdf` found: the documents to load and what they declare."""

    paths: tuple[str, ...]
    documents: tuple[tuple[bytes, str], ...] = field(repr=False)  # (content, media type)
    prefixes: Mapping[str, str]
    statements: int
    wikidata: bool
    limits: RdfLimits = field(default_factory=RdfLimits, repr=False, compare=False)

    def dialect(self) -> Dialect:
        """The SPARQL dialect for this graph: Wikidata's if it uses Wikidata's vocabulary, else
        standard SPARQL with the files' prefixes."""
        from engines.kg.dialect import Dialect

        return Dialect.wikidata_with(self.prefixes) if self.wikidata else Dialect.standard(self.prefixes)

    def describe(self) -> str:
        names = ", ".join(os.path.basename(p) for p in self.paths)
        kind = "Wikidata's vocabulary (Wikidata dialect on)" if self.wikidata else "standard SPARQL"
        return f"{names}: {self.statements:,} statements, {len(self.prefixes)} prefixes, {kind}"


def media_type(path: str | Path) -> str:
    """The media type of an RDF file, from its extension.  Raises RdfFileError."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        names: dict[str, list[str]] = {}
        for ext, (_m, name) in FORMATS.items():
            names.setdefault(name, []).append(ext)
        known = ", ".join(f"{name} ({' '.join(exts)})" for name, exts in names.items())
        raise RdfFileError(
            f"{shown(str(path))}: unknown RDF format {suffix or '(no extension)'!r}; use one of {known}.", str(path)
        )
    return FORMATS[suffix][0]


def _read(path: str, budget: int, limits: RdfLimits, first: bool) -> bytes:
    """The bytes of one file, at most ``budget`` of them (what the files before it left of
    ``limits.max_bytes``).  A regular file only: opened without blocking (a FIFO with no writer
    would hang ``open``), refused from its size before it is read, and never read past the budget."""
    where = shown(path)

    def too_large(size: str) -> RdfFileError:
        cap = size_text(limits.max_bytes)
        if first:
            return RdfFileError(
                f"{where} is {size}: more than the {cap} the RDF files may have (settings: rdf_max_mb)", path
            )
        return RdfFileError(
            f"{where} ({size}) takes the RDF files past the {cap} they may have together (settings: rdf_max_mb)", path
        )

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RdfFileError(f"{where}: no such file", path) from None
    except IsADirectoryError:
        raise RdfFileError(f"{where} is a directory; give the RDF files in it", path) from None
    except PermissionError:
        raise RdfFileError(f"{where}: permission denied", path) from None
    except OSError as e:
        raise RdfFileError(f"{where}: cannot be read ({e.strerror or e})", path) from None
    try:
        try:
            info = os.fstat(fd)
        except OSError as e:
            raise RdfFileError(f"{where}: cannot be read ({e.strerror or e})", path) from None
        if stat.S_ISDIR(info.st_mode):
            raise RdfFileError(f"{where} is a directory; give the RDF files in it", path)
        if not stat.S_ISREG(info.st_mode):
            raise RdfFileError(f"{where} is not a regular file (a device, pipe or socket): not read", path)
        if info.st_size > budget:
            raise too_large(f"{info.st_size:,} bytes")
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb", buffering=0, closefd=True) as f:
        try:
            chunks: list[bytes] = []
            got = 0
            while got <= budget:  # one byte past the budget says the file grew beyond it
                chunk = f.read(min(CHUNK_BYTES * 8, budget + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError as e:
            raise RdfFileError(f"{where}: cannot be read ({e.strerror or e})", path) from None
        except MemoryError:
            raise RdfFileError(f"{where}: not enough memory to read it", path) from None
    if got > budget:
        raise too_large(f"more than {got - 1:,} bytes, as it grew while it was read")
    return b"".join(chunks)


def read_rdf(paths: Iterable[str | Path], limits: RdfLimits | None = None) -> RdfSource:
    """Read and check RDF files.  Raises RdfFileError (never a traceback's worth of detail).

    ``limits``: :meth:`RdfLimits.from_settings` of the caller's settings; none given, the defaults of the settings'
    fields (``rdf_*``, ``sparql_memory_limit_mb``)."""
    limits = limits or RdfLimits()
    names = [str(p) for p in paths]
    if not names:
        raise RdfFileError("no RDF file given")
    documents: list[tuple[bytes, str]] = []
    total = 0
    for n, path in enumerate(names):
        kind = media_type(path)
        content = _read(path, limits.max_bytes - total, limits, first=n == 0)
        total += len(content)
        documents.append((content, kind))
    found = _check(names, documents, limits)
    return RdfSource(
        tuple(names),
        tuple(documents),
        found["prefixes"],
        found["statements"],
        found["wikidata"],
        limits,
    )


def _check(paths: list[str], documents: list[tuple[bytes, str]], limits: RdfLimits) -> dict[str, Any]:
    """:class:`RdfScan` over the documents in a SPARQL worker process; its summary, or RdfFileError."""
    from engines.kg.worker import WorkerUnavailable, rdf_checker

    names = ", ".join(shown(p) for p in paths)
    try:
        answer = rdf_checker(limits.memory_limit_mb).scan_rdf(
            [(path, kind, content) for path, (content, kind) in zip(paths, documents)], limits
        )
    except WorkerUnavailable as e:
        raise RdfFileError(f"{names}: cannot be checked: {e}") from None
    kind = answer.get("kind")
    if kind == "scanned":
        return answer
    if kind == "refused":
        path = answer.get("path") or ""
        raise RdfFileError(answer["message"], path, answer.get("line"), answer.get("column"))
    if kind == "timeout":
        raise RdfFileError(
            f"{names}: checking the RDF took longer than {limits.timeout_s:g} s (settings: rdf_load_timeout_s); "
            "the check was stopped"
        )
    if kind == "memory":
        raise RdfFileError(
            f"{names}: checking the RDF needs more than the {limits.memory_limit_mb} MB the SPARQL worker may use "
            "(settings: sparql_memory_limit_mb)"
        )
    detail = answer.get("message") or "it stopped"
    memory = any(word in detail for word in ("MemoryError", "memory allocation", "memory limit"))
    hint = (
        f"; perhaps over the {limits.memory_limit_mb} MB it may use (settings: sparql_memory_limit_mb)"
        if memory
        else ""
    )
    raise RdfFileError(f"{names}: the process checking the RDF stopped ({detail}){hint}")
