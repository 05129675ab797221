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

import collections
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engines.errors import EngineError

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
RDF_XML = "application/rdf+xml"
_ONE_STATEMENT_A_LINE = ("application/n-triples", "application/n-quads")

WIKIDATA_NAMESPACES = ("http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/")

CHUNK_BYTES = 1 << 20  # the bytes of a file go to the checking worker in pieces of this size
PARSER_TOKEN_BYTES = 16 << 20  # pyoxigraph's Turtle/N-Triples lexer refuses a longer token (a MemoryError)
MAX_PREFIXES = 1000  # the files' prefixes the queries get (by name; every query's dialect holds them)


class RdfFileError(EngineError):
    """An RDF file cannot be used; the message names the file and, if known, the line and column."""

    def __init__(self, message: str, path: str = "", line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column


@dataclass(frozen=True)
class RdfLimits:
    """What reading, checking and loading a user's RDF files may take (the ``rdf_*`` settings and
    the SPARQL worker's ``sparql_memory_limit_mb``)."""

    max_bytes: int = 2048 << 20  # all the files together
    max_statements: int = 10_000_000  # all the files together
    max_literal_bytes: int = 10 << 20  # one literal's lexical form, UTF-8
    timeout_s: float = 300.0  # checking the files; loading them into a query worker, again
    memory_limit_mb: int = 2048  # the worker process that checks them

    @classmethod
    def from_settings(cls, settings: Any = None) -> RdfLimits:
        if settings is None:
            from engines.settings import Settings

            settings = Settings()
        return cls(
            max_bytes=int(settings.rdf_max_mb) << 20,
            max_statements=int(settings.rdf_max_statements),
            max_literal_bytes=int(settings.rdf_max_literal_bytes),
            timeout_s=float(settings.rdf_load_timeout_s),
            memory_limit_mb=int(settings.sparql_memory_limit_mb),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RdfSource:
    """What :func:`read_rdf` found: the documents to load and what they declare."""

    paths: tuple[str, ...]
    documents: tuple[tuple[bytes, str], ...] = field(repr=False)  # (content, media type)
    prefixes: Mapping[str, str]
    statements: int
    wikidata: bool
    limits: RdfLimits = field(default_factory=RdfLimits, repr=False, compare=False)

    def dialect(self):
        """The SPARQL dialect for this graph: Wikidata's if it uses Wikidata's vocabulary, else
        standard SPARQL with the files' prefixes."""
        from engines.kg.dialect import Dialect

        return Dialect.wikidata_with(self.prefixes) if self.wikidata else Dialect.standard(self.prefixes)

    def describe(self) -> str:
        names = ", ".join(os.path.basename(p) for p in self.paths)
        kind = "Wikidata's vocabulary (Wikidata dialect on)" if self.wikidata else "standard SPARQL"
        return f"{names}: {self.statements:,} statements, {len(self.prefixes)} prefixes, {kind}"


def _shown(path: str) -> str:
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _size(n: int) -> str:
    """``1.5 GB``, ``12 MB``, ``3.1 KB``, ``800 bytes``: a size for people."""
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.1f} {unit}" if value < 10 and value != int(value) else f"{value:.0f} {unit}"
    return f"{n} bytes"


def media_type(path: str | Path) -> str:
    """The media type of an RDF file, from its extension.  Raises RdfFileError."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        names: dict[str, list[str]] = {}
        for ext, (_m, name) in FORMATS.items():
            names.setdefault(name, []).append(ext)
        known = ", ".join(f"{name} ({' '.join(exts)})" for name, exts in names.items())
        raise RdfFileError(
            f"{_shown(str(path))}: unknown RDF format {suffix or '(no extension)'!r}; use one of {known}.", str(path)
        )
    return FORMATS[suffix][0]


def uses_wikidata(iri: str) -> bool:
    return iri.startswith(WIKIDATA_NAMESPACES)


def _syntax_error(path: str, e: SyntaxError) -> RdfFileError:
    where = _shown(path)
    message = (getattr(e, "msg", None) or str(e)).strip()
    line, column = getattr(e, "lineno", None), getattr(e, "offset", None)
    if line:
        at = f"line {line}" + (f", column {column}" if column else "")
        if (
            message.startswith("Parser error") and ": " in message
        ):  # pyoxigraph's own "… between line 4 column 18 and …: "
            message = message.split(": ", 1)[1]
        return RdfFileError(f"{where}: syntax error at {at}: {message}", path, line, column)
    return RdfFileError(f"{where}: syntax error: {message}", path)


def _read(path: str, budget: int, limits: RdfLimits, first: bool) -> bytes:
    """The bytes of one file, at most ``budget`` of them (what the files before it left of
    ``limits.max_bytes``).  A regular file only: opened without blocking (a FIFO with no writer
    would hang ``open``), refused from its size before it is read, and never read past the budget."""
    where = _shown(path)

    def too_large(size: str) -> RdfFileError:
        cap = _size(limits.max_bytes)
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

    ``limits``: default from the settings (and so from ``CS224V_RDF_*`` in the environment)."""
    limits = limits or RdfLimits.from_settings()
    paths = [str(p) for p in paths]
    if not paths:
        raise RdfFileError("no RDF file given")
    documents: list[tuple[bytes, str]] = []
    total = 0
    for n, path in enumerate(paths):
        kind = media_type(path)
        content = _read(path, limits.max_bytes - total, limits, first=n == 0)
        total += len(content)
        documents.append((content, kind))
    found = _check(paths, documents, limits)
    return RdfSource(
        tuple(paths),
        tuple(documents),
        found["prefixes"],
        found["statements"],
        found["wikidata"],
        limits,
    )


def _check(paths: list[str], documents: list[tuple[bytes, str]], limits: RdfLimits) -> dict[str, Any]:
    """:class:`RdfScan` over the documents in a SPARQL worker process; its summary, or RdfFileError."""
    from engines.kg.worker import WorkerUnavailable, rdf_checker

    names = ", ".join(_shown(p) for p in paths)
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


# --- the check itself: runs in a SPARQL worker process ----------------------------------------------


class _Refused(Exception):
    """A document is refused (internal): ``answer`` is what the worker sends back."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["message"])
        self.answer = answer


class _XmlCheck:
    """Expat over every byte of an RDF/XML document before pyoxigraph gets it: a DOCTYPE (the only
    place entities are declared) or XML that is not well-formed is refused.  Expat stops at the
    declaration's start and never expands or fetches anything; the check keeps no more than expat's
    current token."""

    def __init__(self, path: str) -> None:
        from xml.parsers import expat

        self._expat = expat
        self.path = path
        parser = expat.ParserCreate()
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = self._doctype
        parser.EntityDeclHandler = self._entity
        self._parser = parser

    def _refuse(self, what: str) -> None:
        line = self._parser.CurrentLineNumber
        raise _Refused(
            {
                "kind": "refused",
                "path": self.path,
                "line": line,
                "message": f"{_shown(self.path)}: line {line}: {what} is not accepted in RDF/XML here "
                "(entity declarations can expand a small file to gigabytes); "
                "remove it, or convert the file to Turtle or N-Triples",
            }
        )

    def _doctype(self, name: str, *_ids: Any) -> None:
        self._refuse(f"a DOCTYPE declaration (<!DOCTYPE {name[:60]} …>)")

    def _entity(self, name: str, *_rest: Any) -> None:  # only inside a DOCTYPE, refused first: belt and braces
        self._refuse(f"an ENTITY declaration ({name[:60]})")

    def feed(self, data: bytes, final: bool = False) -> None:
        try:
            self._parser.Parse(data, final)
        except self._expat.ExpatError as e:
            line, column = e.lineno, e.offset + 1
            raise _Refused(
                {
                    "kind": "refused",
                    "path": self.path,
                    "line": line,
                    "column": column,
                    "message": f"{_shown(self.path)}: syntax error at line {line}, column {column}: "
                    f"not well-formed XML ({self._expat.ErrorString(e.code)})",
                }
            ) from None


class _Feed(io.RawIOBase):
    """The bytes of one document for pyoxigraph's parser, from ``pieces`` (an iterator of bytes),
    at most ``step`` at a time, each seen first by ``tap`` (the XML check).  It remembers where the
    last few handed out start (offset, line), so that a position becomes a line number."""

    def __init__(self, pieces: Iterator[bytes], step: int, tap: _XmlCheck | None = None) -> None:
        super().__init__()
        self._pieces = pieces
        self._step = step
        self._tap = tap
        self._current = memoryview(b"")
        self.offset = 0  # bytes handed to the parser
        self._newlines = 0  # ... and the newlines among them
        self._recent: collections.deque[tuple[int, int, bytes]] = collections.deque()
        self._recent_bytes = 0
        self._ended = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        while not self._current:
            if self._ended:
                return b""
            piece = next(self._pieces, None)
            if piece is None:
                self._ended = True
                if self._tap is not None:
                    self._tap.feed(b"", final=True)
                return b""
            if self._tap is not None:
                self._tap.feed(piece)
            self._current = memoryview(piece)
        size = self._step if n is None or n < 0 else max(1, min(n, self._step))
        out = bytes(self._current[:size])
        self._current = self._current[size:]
        self._recent.append((self.offset, self._newlines, out))
        self._recent_bytes += len(out)
        while self._recent_bytes - len(self._recent[0][2]) >= 4 * self._step:
            self._recent_bytes -= len(self._recent.popleft()[2])
        self.offset += len(out)
        self._newlines += out.count(b"\n")
        return out

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def line_at(self, position: int) -> int | None:
        """The line (from 1) of byte ``position``, if it is among the last bytes handed out."""
        for start, newlines, data in self._recent:
            if start <= position < start + len(data):
                return newlines + data.count(b"\n", 0, position - start) + 1
        return None


class RdfScan:
    """The check of a graph's documents, one after the other (in the worker): statements counted
    against ``max_statements`` in all, every literal against ``max_literal_bytes``, the prefixes
    declared and whether Wikidata's vocabulary is used.  :meth:`document` raises nothing: it returns
    the refusal (plain data) or None."""

    def __init__(self, limits: Mapping[str, Any]) -> None:
        self.max_statements = int(limits["max_statements"])
        self.max_literal = int(limits["max_literal_bytes"])
        self.statements = 0
        self.prefixes: dict[str, str] = {}
        self.wikidata = False
        # a literal's closing quote is at most two reads before the parser yields its statement, and a
        # literal over the cap spans more than four: so the byte 2 steps + 1 back lies inside it
        self._step = max(64, min(1 << 16, self.max_literal // 4))

    def summary(self) -> dict[str, Any]:
        return {"kind": "scanned", "statements": self.statements, "prefixes": self.prefixes, "wikidata": self.wikidata}

    def document(self, path: str, kind: str, pieces: Iterator[bytes]) -> dict[str, Any] | None:
        try:
            return self._document(path, kind, pieces)
        except _Refused as e:
            return e.answer

    def _document(self, path: str, kind: str, pieces: Iterator[bytes]) -> dict[str, Any] | None:
        import pyoxigraph as ox

        where = _shown(path)
        feed = _Feed(pieces, self._step, _XmlCheck(path) if kind == RDF_XML else None)
        exact = kind in _ONE_STATEMENT_A_LINE
        Literal, NamedNode = ox.Literal, ox.NamedNode
        max_literal, quick = self.max_literal, self.max_literal // 4  # a UTF-8 character is 1 to 4 bytes
        room = self.max_statements - self.statements
        wikidata = self.wikidata
        n = 0

        def refuse(message: str, line: int | None = None) -> dict[str, Any]:
            return {"kind": "refused", "path": path, "line": line, "message": message}

        def at(line: int | None) -> str:
            if line is None:
                return ""
            return f"line {line}: " if exact else f"near line {line}: "

        parser = ox.parse(feed, ox.RdfFormat.from_media_type(kind))
        try:
            for quad in parser:
                n += 1
                if n > room:
                    return refuse(
                        f"{where}: more than the {self.max_statements:,} statements the RDF files may have "
                        f"{'' if self.statements == 0 else 'together '}(settings: rdf_max_statements)"
                    )
                obj = quad.object
                if type(obj) is Literal:
                    value = obj.value
                    if len(value) > quick and (
                        len(value) > max_literal or len(value.encode("utf-8", "surrogatepass")) > max_literal
                    ):
                        line = feed.line_at(feed.offset - 2 * self._step - 1)
                        size = len(value.encode("utf-8", "surrogatepass"))
                        return refuse(
                            f"{where}: {at(line)}a literal of {size:,} bytes, more than the {_size(max_literal)} "
                            "a literal may have (settings: rdf_max_literal_bytes)",
                            line,
                        )
                if not wikidata and (
                    uses_wikidata(quad.predicate.value)
                    or (type(quad.subject) is NamedNode and uses_wikidata(quad.subject.value))
                ):
                    wikidata = True
        except _Refused:
            raise
        except SyntaxError as e:
            error = _syntax_error(path, e)
            return refuse(str(error), error.line) | {"column": error.column}
        except MemoryError as e:
            if str(e).startswith("Reached the buffer maximal size"):  # pyoxigraph's lexer: one token > 16 MB
                line = feed.line_at(feed.offset - 1)
                return refuse(
                    f"{where}: {at(line)}a literal or IRI longer than {_size(PARSER_TOKEN_BYTES)} "
                    f"(a literal may have {_size(max_literal)}; settings: rdf_max_literal_bytes)",
                    line,
                )
            return {"kind": "memory", "path": path}
        except UnicodeDecodeError:
            return refuse(f"{where}: not UTF-8 text")
        except RecursionError:
            return refuse(f"{where}: nested too deeply to be read")
        except (ValueError, OSError) as e:
            return refuse(f"{where}: {str(e).strip() or type(e).__name__}")
        self.statements += n
        self.wikidata = wikidata
        for name, iri in sorted((getattr(parser, "prefixes", None) or {}).items()):  # pyoxigraph's are unordered
            if len(self.prefixes) >= MAX_PREFIXES:  # the rest are left out of the dialect (they still parsed)
                break
            if name not in self.prefixes and len(name) <= 200 and len(iri) <= 4096:  # the first file's wins
                self.prefixes[name] = iri
        return None


def scan_stream(header: Mapping[str, Any], receive: Callable[[], Any]) -> dict[str, Any]:
    """The worker's side of :meth:`engines.kg.worker.QueryWorker.scan_rdf`: ``header["documents"]``
    names the documents (path, media type), ``receive()`` gives each one's bytes piece by piece, an
    empty piece ending it.  Every piece is read even after a refusal (so the sender never blocks)."""
    scan = RdfScan(header["limits"])
    answer: dict[str, Any] | None = None
    for path, kind in header["documents"]:
        pieces = _pieces(receive)
        if answer is None:
            answer = scan.document(path, kind, pieces)
        for _ in pieces:  # what the parser left unread
            pass
    return answer or scan.summary()


def _pieces(receive: Callable[[], Any]) -> Iterator[bytes]:
    while True:
        piece = receive()
        if not isinstance(piece, bytes | bytearray) or not piece:
            return
        yield bytes(piece) if isinstance(piece, bytearray) else piece
