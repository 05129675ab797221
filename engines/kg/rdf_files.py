"""A user's RDF files: read, checked and described before they become a graph.

:func:`read_rdf` takes Turtle, N-Triples, N-Quads, TriG or RDF/XML files (the format from the
extension: ``.ttl``, ``.nt``, ``.nq``, ``.trig``, ``.rdf`` / ``.owl`` / ``.xml``) and returns an
:class:`RdfSource`: each file's bytes with its media type (what the store bulk-loads), the
prefixes the files declare, the number of statements, and whether the graph uses Wikidata's
vocabulary (entities under ``http://www.wikidata.org/entity/`` or properties under
``http://www.wikidata.org/prop/``) — the one case in which the Wikidata dialect is switched on.

Every file is parsed once here, with pyoxigraph's parsers, so that a bad file is refused before
anything is loaded: :class:`RdfFileError` names the file and, where the parser gives them, the line
and column (a missing file, an unknown extension, a syntax error, a file that is not UTF-8).
Quads in named graphs are read as part of one graph (queries see the union).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engines.errors import EngineError

__all__ = ["RdfFileError", "RdfSource", "read_rdf", "FORMATS", "WIKIDATA_NAMESPACES", "uses_wikidata"]

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

WIKIDATA_NAMESPACES = ("http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/")

_MAX_FILE_BYTES = 4 << 30  # a file is held in memory while it loads


class RdfFileError(EngineError):
    """An RDF file cannot be used; the message names the file and, if known, the line and column."""

    def __init__(self, message: str, path: str = "", line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column


@dataclass(frozen=True)
class RdfSource:
    """What :func:`read_rdf` found: the documents to load and what they declare."""

    paths: tuple[str, ...]
    documents: tuple[tuple[bytes, str], ...] = field(repr=False)  # (content, media type)
    prefixes: Mapping[str, str]
    statements: int
    wikidata: bool

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


def read_rdf(paths: Iterable[str | Path]) -> RdfSource:
    """Read and check RDF files.  Raises RdfFileError (never a traceback's worth of detail)."""
    import pyoxigraph as ox

    paths = [str(p) for p in paths]
    if not paths:
        raise RdfFileError("no RDF file given")
    documents: list[tuple[bytes, str]] = []
    prefixes: dict[str, str] = {}
    statements = 0
    wikidata = False
    for path in paths:
        where = _shown(path)
        kind = media_type(path)
        try:
            if os.path.isdir(path):
                raise RdfFileError(f"{where} is a directory; give the RDF files in it", path)
            size = os.path.getsize(path)
            if size > _MAX_FILE_BYTES:
                raise RdfFileError(f"{where} is {size / 2**30:.1f} GB: larger than the 4 GB a file may have here", path)
            with open(path, "rb") as f:
                content = f.read()
        except FileNotFoundError:
            raise RdfFileError(f"{where}: no such file", path) from None
        except PermissionError:
            raise RdfFileError(f"{where}: permission denied", path) from None
        except OSError as e:
            raise RdfFileError(f"{where}: cannot be read ({e.strerror or e})", path) from None
        fmt = ox.RdfFormat.from_media_type(kind)
        parser = ox.parse(content, fmt)
        n = 0
        try:
            for quad in parser:
                n += 1
                if not wikidata and (
                    uses_wikidata(quad.predicate.value)
                    or (isinstance(quad.subject, ox.NamedNode) and uses_wikidata(quad.subject.value))
                ):
                    wikidata = True
        except SyntaxError as e:
            raise _syntax_error(path, e) from None
        except UnicodeDecodeError:
            raise RdfFileError(f"{where}: not UTF-8 text", path) from None
        except (ValueError, OSError) as e:
            raise RdfFileError(f"{where}: {str(e).strip() or type(e).__name__}", path) from None
        for name, iri in (getattr(parser, "prefixes", None) or {}).items():
            if name not in prefixes:  # the first file to declare a prefix wins
                prefixes[name] = iri
        statements += n
        documents.append((content, kind))
    return RdfSource(tuple(paths), tuple(documents), prefixes, statements, wikidata)
