"""The check of a user's RDF documents, run in a SPARQL worker process (:meth:`engines.kg.worker.QueryWorker.scan_rdf`):
each document's bytes arrive in pieces and are parsed as they arrive, never kept; statements are counted, every
literal is measured, RDF/XML is read by expat first (no DOCTYPE, no entity), the prefixes are gathered and whether
Wikidata's vocabulary is used.  :mod:`engines.kg.rdf_files` reads the files and sends them here; this module holds
what both sides share (the sizes, the formats, how a file is named in a message)."""

from __future__ import annotations

import collections
import io
import os
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, cast

__all__ = [
    "CHUNK_BYTES",
    "MAX_PREFIXES",
    "PARSER_TOKEN_BYTES",
    "RDF_XML",
    "WIKIDATA_NAMESPACES",
    "RdfScan",
    "scan_stream",
    "shown",
    "size_text",
    "syntax_error",
    "uses_wikidata",
]

RDF_XML = "application/rdf+xml"
_ONE_STATEMENT_A_LINE = ("application/n-triples", "application/n-quads")

WIKIDATA_NAMESPACES = ("http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/")

CHUNK_BYTES = 1 << 20  # the bytes of a file go to the checking worker in pieces of this size
PARSER_TOKEN_BYTES = 16 << 20  # pyoxigraph's Turtle/N-Triples lexer refuses a longer token (a MemoryError)
MAX_PREFIXES = 1000  # the files' prefixes the queries get (by name; every query's dialect holds them)


def shown(path: str) -> str:
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def size_text(n: int) -> str:
    """``1.5 GB``, ``12 MB``, ``3.1 KB``, ``800 bytes``: a size for people."""
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.1f} {unit}" if value < 10 and value != int(value) else f"{value:.0f} {unit}"
    return f"{n} bytes"


def uses_wikidata(iri: str) -> bool:
    return iri.startswith(WIKIDATA_NAMESPACES)


def syntax_error(path: str, e: SyntaxError) -> tuple[str, int | None, int | None]:
    """pyoxigraph's syntax error in a document, for a person: the message (naming the file), the line, the column."""
    where = shown(path)
    message = (getattr(e, "msg", None) or str(e)).strip()
    line, column = getattr(e, "lineno", None), getattr(e, "offset", None)
    if line:
        at = f"line {line}" + (f", column {column}" if column else "")
        if (
            message.startswith("Parser error") and ": " in message
        ):  # pyoxigraph's own "… between line 4 column 18 and …: "
            message = message.split(": ", 1)[1]
        return f"{where}: syntax error at {at}: {message}", line, column
    return f"{where}: syntax error: {message}", None, None


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
                "message": f"{shown(self.path)}: line {line}: {what} is not accepted in RDF/XML here "
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
                    "message": f"{shown(self.path)}: syntax error at line {line}, column {column}: "
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

        where = shown(path)
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

        # pyoxigraph reads any object with read(); its stubs name IO[bytes], which a RawIOBase is not to typeshed
        parser = ox.parse(cast("IO[bytes]", feed), ox.RdfFormat.from_media_type(kind))
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
                            f"{where}: {at(line)}a literal of {size:,} bytes, more than the {size_text(max_literal)} "
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
            message, line, column = syntax_error(path, e)
            return refuse(message, line) | {"column": column}
        except MemoryError as e:
            if str(e).startswith("Reached the buffer maximal size"):  # pyoxigraph's lexer: one token > 16 MB
                line = feed.line_at(feed.offset - 1)
                return refuse(
                    f"{where}: {at(line)}a literal or IRI longer than {size_text(PARSER_TOKEN_BYTES)} "
                    f"(a literal may have {size_text(max_literal)}; settings: rdf_max_literal_bytes)",
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
