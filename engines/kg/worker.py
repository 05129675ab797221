"""The process that runs SPARQL queries, so that no query can outlast its timeout or take the app down.

rdflib evaluates in pure Python (a catastrophic ``REGEX`` inside ``re`` cannot be interrupted) and
Oxigraph can abort the whole process on a query (a Rust panic) or keep its threads busy after the
caller gave up.  So every query runs in a separate worker process that the endpoint kills at the
deadline.  :class:`QueryWorker` is the endpoint's side:

* the worker is a fresh interpreter (``python -I``, the endpoint's ``sys.path``; no
  ``multiprocessing`` start method, so no main module is re-imported and no threads are forked),
  started on the first query; it loads the graph once and is reused until it is killed;
* each query gets ``timeout_s`` plus a short grace: the worker stops itself at the deadline where
  it can (the memory store checks it on every triple lookup, the Oxigraph loop between
  solutions); otherwise the endpoint kills it — the next query starts a new one;
* a worker that dies (a crash, the memory cap) becomes an error result naming what happened;
* the worker answers every message with plain data (the SPARQL JSON bindings), never objects,
  and the endpoint reads it as plain data only (:class:`_PlainUnpickler`: a pickle naming any class
  or function is refused and the worker killed), over a channel of its own (:class:`_Channel`).

Inside the worker (:func:`_confine`), before the graph is loaded:

* its address space is capped (``RLIMIT_AS``, ``settings.sparql_memory_limit_mb``), and it cannot
  write files larger than 1 MB (``RLIMIT_FSIZE``);
* on Linux it enters a network namespace of its own (no interfaces but a down loopback), when the
  kernel allows unprivileged user namespaces: even a ``SERVICE`` the dialect's check missed
  cannot reach any address — Oxigraph offers no switch for its HTTP client;
* rdflib's own remote access is off: ``SPARQL_LOAD_GRAPHS = False`` (``FROM`` never loads), a
  custom evaluation refuses every ``SERVICE`` it is asked to evaluate, and an audit hook refuses
  sockets, URL requests, process launches and opening any file outside Python's own code;
* its CPU time is capped per query (``RLIMIT_CPU``, twice the timeout plus 10 s), so a query
  stops even if the endpoint that sent it is gone; an idle worker exits when its socket closes;
* it runs in its own session (Ctrl-C at the terminal does not reach it) and its stderr goes to a
  private temporary file whose last lines become part of a crash message.

The worker prepares each query itself (:func:`engines.kg.dialect.prepare`: rewrite, parse, plan,
and the check on the plan), so parsing — most of a query's cost — happens once, and inside the
bounds.  A query that is only to be checked, not run (:meth:`QueryWorker.prepare`: a remote
endpoint's queries before they are sent, ``check-dialect``), is parsed and planned there too: rdflib
takes minutes over some texts (thousands of FILTERs), and no hostile text may stall the caller.
"""

from __future__ import annotations

import atexit
import io
import logging
import math
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from engines.errors import EngineError

if TYPE_CHECKING:
    from rdflib.term import Node

    from engines.kg.dialect import Prepared

Triple = tuple["Node", "Node", "Node"]
"""One statement, as rdflib terms."""

__all__ = ["PrepareFailed", "QueryWorker", "evaluate", "parse_worker", "prepare_only", "prepared_from", "rdf_checker"]

_GRACE_S = 0.75  # beyond the query's timeout before the worker is killed
_START_TIMEOUT_S = 300.0  # loading a large graph takes a while
_FSIZE_LIMIT = 1 << 20


# --- the channel between the two processes -------------------------------------------------------


class _BadReply(Exception):
    """The worker sent something that is not a plain-data pickle (internal; the worker is killed)."""


class _PlainUnpickler(pickle.Unpickler):
    """Reads plain data only (dicts, lists, tuples, strings, numbers, booleans, None): a pickle that
    names any class or function is refused, so not even a worker taken over by a query could run code
    in the app by what it sends back."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"the SPARQL worker sent {module}.{name}, not plain data")


class _Channel:
    """Length-prefixed pickles over one end of a socket pair, one message at a time each way.

    What ``multiprocessing.connection.Connection`` did here, without its costs per message (a
    selector built for every poll, a ForkingPickler for every send, two reads for every receive):
    a query's round trip is most of the worker's overhead on a small graph.  ``plain``: what
    arrives is read by :class:`_PlainUnpickler` (the endpoint's side; the worker trusts the endpoint),
    and a message longer than ``max_bytes`` (the worker's memory cap: it cannot have built more) is
    refused before anything is allocated for it."""

    _HEADER = struct.Struct("!Q")
    _CHUNK = 1 << 16

    def __init__(self, sock: socket.socket, *, plain: bool, max_bytes: int | None = None) -> None:
        sock.setblocking(True)
        self._sock = sock
        self._plain = plain
        self._max_bytes = max_bytes
        self._pending = bytearray()  # received beyond the message read last (never, one message at a time)
        self._poller: Any = None

    def fileno(self) -> int:
        return self._sock.fileno()

    def send(self, obj: Any, timeout_s: float | None = None) -> None:
        """Send one message; with ``timeout_s``, TimeoutError if the other side has not taken it by then
        (it reads slower than it should: a worker stuck parsing)."""
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        header = self._HEADER.pack(len(data))
        if timeout_s is not None:
            if timeout_s <= 0:
                raise TimeoutError("no time left to send")
            self._sock.settimeout(timeout_s)  # sendall's whole duration (Python 3.5+)
        try:
            if len(data) <= self._CHUNK:
                self._sock.sendall(header + data)
            else:  # a graph: no copy of its megabytes to prepend eight bytes
                self._sock.sendall(header)
                self._sock.sendall(data)
        finally:
            if timeout_s is not None:
                self._sock.setblocking(True)

    def poll(self, timeout_s: float) -> bool:
        """Whether a message (or the end of the stream) can be read within ``timeout_s``."""
        if self._pending:
            return True
        if self._poller is None:
            if not hasattr(select, "poll"):  # pragma: no cover - every POSIX system the worker runs on has it
                return bool(select.select([self._sock], [], [], max(0.0, timeout_s))[0])
            self._poller = select.poll()
            self._poller.register(self._sock.fileno(), select.POLLIN)
        return bool(self._poller.poll(max(0, math.ceil(timeout_s * 1000))))

    def recv(self) -> Any:
        """The next message; EOFError when the other side has closed (or died)."""
        header = self._read(self._HEADER.size)
        size = self._HEADER.unpack(header)[0]
        if self._max_bytes is not None and size > self._max_bytes:
            raise _BadReply(f"a message of {size} bytes, more than the worker's {self._max_bytes}")
        data = self._read(size)
        if not self._plain:
            return pickle.loads(data)
        try:
            return _PlainUnpickler(io.BytesIO(data)).load()
        except MemoryError:
            raise
        except Exception as e:
            raise _BadReply(str(e) or type(e).__name__) from None

    def _read(self, n: int) -> bytes | bytearray:
        pending = self._pending
        if n - len(pending) > self._CHUNK:  # a large message: straight into a buffer of its size
            buf = bytearray(n)
            got = len(pending)
            buf[:got] = pending
            pending.clear()
            view = memoryview(buf)
            while got < n:
                k = self._sock.recv_into(view[got:])
                if not k:
                    raise EOFError("the other side closed the channel")
                got += k
            return buf
        while len(pending) < n:
            chunk = self._sock.recv(max(self._CHUNK, n - len(pending)))
            if not chunk:
                raise EOFError("the other side closed the channel")
            if not pending and len(chunk) == n:
                return chunk
            pending += chunk
        out = pending[:n]
        del pending[:n]
        return out

    def close(self) -> None:
        self._sock.close()


# --- inside the worker -------------------------------------------------------------------------


class _Blocked(PermissionError):
    pass


def _is_internal(var: str) -> bool:
    return var.startswith("__")  # helper variables of the label-service emulation


_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd", ".pth", ".typed")


def _allowed_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(directories whose files may be read, directories whose code files may be read)."""
    import site
    import sysconfig

    whole = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sysconfig.get_paths().values()}
    try:
        whole.update(site.getsitepackages())
        whole.add(site.getusersitepackages())
    except Exception:  # pragma: no cover - virtualenv variants
        pass
    code = {entry for entry in sys.path if entry and os.path.isdir(entry)}
    # this project's own code, wherever it is imported from: an editable install finds it through an import hook, not
    # through sys.path, and a module the worker imports lazily (engines.kg.agreement …) must still load
    engines_dir = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    code.update({engines_dir, os.path.join(os.path.dirname(engines_dir), "worlds")})

    def clean(paths: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted({os.path.realpath(p) for p in paths if p} - {os.path.realpath("/")}))

    return clean(whole), clean(code)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def _install_audit_hook() -> None:
    """Refuse network, URL requests, subprocesses and reading anything but Python's own code."""
    whole, code = _allowed_roots()
    blocked_events = {
        "socket.connect",
        "socket.bind",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.sendto",
        "urllib.Request",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "ctypes.dlopen",
        "shutil.copyfile",
        "os.remove",
        "os.rename",
    }

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in blocked_events:
            raise _Blocked(f"the SPARQL worker does not allow {event}")
        if event == "open" and args:
            path, mode, flags = (tuple(args) + (None, None))[:3]
            if isinstance(path, int):
                return
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND)
            )
            try:
                real = os.path.realpath(os.fsdecode(path))
            except Exception:
                raise _Blocked("the SPARQL worker does not open files") from None
            readable = _under(real, whole) or (_under(real, code) and real.endswith(_CODE_SUFFIXES))
            if writing or not readable:
                raise _Blocked(f"the SPARQL worker does not open files ({real})")

    sys.addaudithook(hook)


def _new_network_namespace() -> bool:
    """Enter an empty network namespace (Linux; needs root or unprivileged user namespaces)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        clone_newuser, clone_newnet = 0x10000000, 0x40000000
        if libc.unshare(clone_newuser | clone_newnet) == 0:
            return True
        return bool(libc.unshare(clone_newnet) == 0)
    except Exception:
        return False


def _confine(memory_limit_mb: int | None, isolate_network: bool) -> dict[str, bool]:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.disable(logging.CRITICAL)
    netns = _new_network_namespace() if isolate_network else False  # before any thread starts
    try:
        import resource

        if memory_limit_mb:
            limit = int(memory_limit_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_FSIZE, (_FSIZE_LIMIT, _FSIZE_LIMIT))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    _switch_off_rdflib_remote_access()
    from engines.kg import rdflib_fixes  # imported before the audit hook closes the file system

    rdflib_fixes.install()
    from engines.kg import sparql

    sparql.tree_tools()  # tree-sitter's parser is loaded before the file system closes
    _install_audit_hook()
    return {"network_namespace": netns}


_CPU_LIMIT: dict[str, Any] = {}  # the hard RLIMIT_CPU (read once) and the soft limit set last


def _bound_cpu(seconds: float) -> None:
    """Let this process use at most ``seconds`` more CPU time (SIGXCPU ends it): a query stops
    even if the endpoint that sent it is gone.  The limit is whole seconds, so most queries find it
    already where it must be and make no system call to set it."""
    try:
        import resource

        if "hard" not in _CPU_LIMIT:
            _CPU_LIMIT["hard"] = resource.getrlimit(resource.RLIMIT_CPU)[1]  # only ever lowered, never by us
        hard = _CPU_LIMIT["hard"]
        soft = int(time.process_time() + seconds) + 1  # this process's CPU time, all its threads
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        if soft != _CPU_LIMIT.get("soft"):
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            _CPU_LIMIT["soft"] = soft
    except (ImportError, ValueError, OSError):
        pass


def _switch_off_rdflib_remote_access() -> None:
    import rdflib.plugins.sparql as rdflib_sparql

    rdflib_sparql.SPARQL_LOAD_GRAPHS = False  # FROM / FROM NAMED never load data

    def no_service(ctx: Any, part: Any) -> Any:
        if getattr(part, "name", None) == "ServiceGraphPattern":
            raise _Blocked("SERVICE is never evaluated by this endpoint")
        raise NotImplementedError  # rdflib's CUSTOM_EVALS protocol: "not mine", rdflib evaluates the part itself

    rdflib_sparql.CUSTOM_EVALS["cs224v_no_service"] = no_service


Encoded = tuple[str, ...]
"""An rdflib term as plain data (its kind "l", "b" or "u", then its lexical parts; "" for a literal's missing language
or datatype): what the worker is sent."""


def _encode(term: Any) -> Encoded:
    """An rdflib term as plain data, the lexical form of a literal exactly as stored."""
    from rdflib import BNode, Literal

    if isinstance(term, Literal):
        return ("l", str(term), term.language or "", str(term.datatype) if term.datatype is not None else "")
    if isinstance(term, BNode):
        return ("b", str(term))
    return ("u", str(term))


def _decoder() -> Callable[[Encoded], Any]:
    from rdflib import BNode, Literal, URIRef

    cache: dict[Encoded, Any] = {}

    def decode(item: Encoded) -> Any:
        term = cache.get(item)
        if term is None:
            if item[0] == "l":
                term = Literal(
                    item[1], lang=item[2] or None, datatype=URIRef(item[3]) if item[3] else None, normalize=False
                )
            elif item[0] == "b":
                term = BNode(item[1])
            else:
                term = URIRef(item[1])
            cache[item] = term
        return term

    return decode


def _ox_decoder() -> Callable[[Encoded], Any]:
    import pyoxigraph as ox

    cache: dict[Encoded, Any] = {}

    def decode(item: Encoded) -> Any:
        term = cache.get(item)
        if term is None:
            if item[0] == "l":
                if item[2]:
                    term = ox.Literal(item[1], language=item[2])
                elif item[3]:
                    term = ox.Literal(item[1], datatype=ox.NamedNode(item[3]))
                else:
                    term = ox.Literal(item[1])
            elif item[0] == "b":
                term = ox.BlankNode(item[1])
            else:
                term = ox.NamedNode(item[1])
            if len(cache) < 1_000_000:
                cache[item] = term
        return term

    return decode


def _term_json(term: Any) -> dict[str, str]:
    from engines.kg.results import term_json

    return term_json(term)


def _ox_json(term: Any) -> dict[str, str]:
    import pyoxigraph as ox

    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype is not None and term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
            out["datatype"] = term.datatype.value
        return out
    return {"type": "literal", "value": str(term)}


_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_OX_CONVERTERS: dict[type, Callable[[Any], dict[str, str]]] = {}


def _ox_converters() -> dict[type, Callable[[Any], dict[str, str]]]:
    """:func:`_ox_json` split by the term's exact type (pyoxigraph's term types cannot be
    subclassed): a query's rows are converted without the chain of isinstance checks per term.
    A type not here (an RDF-star triple) takes :func:`_ox_json` itself."""
    if not _OX_CONVERTERS:
        import pyoxigraph as ox

        def literal(term: Any) -> dict[str, str]:
            language = term.language
            if language:
                return {"type": "literal", "value": term.value, "xml:lang": language}
            datatype = term.datatype
            if datatype is not None:
                iri = datatype.value
                if iri != _XSD_STRING:
                    return {"type": "literal", "value": term.value, "datatype": iri}
            return {"type": "literal", "value": term.value}

        _OX_CONVERTERS[ox.Literal] = literal
        _OX_CONVERTERS[ox.NamedNode] = lambda term: {"type": "uri", "value": term.value}
        _OX_CONVERTERS[ox.BlankNode] = lambda term: {"type": "bnode", "value": term.value}
    return _OX_CONVERTERS


class _QueryPath:
    """What every query needs, looked up once (on the first query: the worker imports the stores only
    after confining itself) instead of by import statements in every call."""

    ready = False
    ox: Any = None
    dialect: Any = None
    QueryTimeout: Any = None
    oxigraph_store: Any = None
    last: tuple[Any, dict[str, str]] = (None, {})  # the dialect queried last and its namespaces

    @classmethod
    def load(cls) -> type[_QueryPath]:
        if not cls.ready:
            import pyoxigraph as ox

            from engines.kg import dialect
            from engines.kg.store import QueryTimeout, oxigraph_store

            cls.ox, cls.dialect, cls.QueryTimeout, cls.oxigraph_store = ox, dialect, QueryTimeout, oxigraph_store
            cls.ready = True
        return cls

    @classmethod
    def namespaces_of(cls, language: Any) -> dict[str, str]:
        """``language.namespaces`` (a new dict per call) kept for the dialect queried last: a worker has one."""
        last = cls.last
        if last[0] is not language:
            last = cls.last = (language, language.namespaces)
        return last[1]


def evaluate(
    graph: Any, store: str, query: str, timeout_s: float, row_cap: int, language: Any = None
) -> dict[str, Any]:
    """Prepare and run one query on ``graph``; a plain-data answer (what the worker sends back).

    Both stores answer alike (:mod:`engines.kg.agreement`): a function the store does not implement is
    an error naming it (rdflib would leave its value unbound), Oxigraph gets the zero-length paths from a
    constant rewritten, and ``SELECT *``'s columns come in order of first appearance.
    ``language``: the :class:`~engines.kg.dialect.Dialect` (default Wikidata's).
    ``{"kind": "refused" | "syntax" | "timeout" | "error" | "ok", …}``.  Runs in the worker."""
    path = _QueryPath.load()
    QueryTimeout = path.QueryTimeout

    language = language or path.dialect.WIKIDATA
    began = time.monotonic()
    if store == "oxigraph":
        fast = _evaluate_fast(graph, query, timeout_s, row_cap, language, began)
        if fast is not None:
            return fast
    prepared = _prepared_or_error(query, language)
    if isinstance(prepared, dict):
        return prepared
    if prepared.unsupported:
        return {"kind": "refused", "message": prepared.unsupported}
    text = prepared.text
    if store == "oxigraph":  # (the fast path's text has this rewrite already)
        from engines.kg.agreement import for_oxigraph

        text = for_oxigraph(text)
    meta = {"notes": prepared.notes, "standard": text}
    missing = _missing_function(prepared, store, language)
    if missing:  # the same report on both stores (rdflib would leave the value unbound, Oxigraph fail)
        return {"kind": "error", "message": missing, **meta}
    timeout_s -= time.monotonic() - began  # the deadline counts from the query's arrival
    try:
        if timeout_s <= 0:
            raise QueryTimeout()
        if store == "oxigraph":
            value = _run_oxigraph(graph, text, timeout_s, row_cap, path.namespaces_of(language))
        else:
            value = _run_rdflib(graph, prepared, timeout_s, row_cap)
    except QueryTimeout:
        return {"kind": "timeout", **meta}
    except MemoryError:
        return {
            "kind": "error",
            "message": "Query error: the query needs more memory than the SPARQL worker may use.",
            **meta,
        }
    except RecursionError:
        return {"kind": "error", "message": "Query error: the query is nested too deeply to evaluate.", **meta}
    except SyntaxError as e:  # Oxigraph's parser
        return {"kind": "error", "message": f"Syntax error: {e}", **meta}
    except Exception as e:  # the stores' evaluation errors (type errors, unknown functions …)
        return {"kind": "error", "message": f"Query error: {str(e).strip() or type(e).__name__}", **meta}
    columns, bindings, truncated, boolean = value
    columns = _star_order(columns, prepared.star)
    return {"kind": "ok", "columns": columns, "bindings": bindings, "truncated": truncated, "boolean": boolean, **meta}


def _star_order(columns: tuple[str, ...], star: tuple[str, ...] | None) -> tuple[str, ...]:
    """A ``SELECT *``'s columns in order of first appearance in the query (``star``), whatever order the
    store gave (rdflib's follows the hash seed, Oxigraph's is alphabetical); others as given."""
    if not star:
        return columns
    rank = {name: i for i, name in enumerate(star)}
    return tuple(sorted(columns, key=lambda c: (rank.get(c, len(rank)), c)))


def _missing_function(prepared: Any, store: str, language: Any) -> str | None:
    """The error for a function the plan calls that ``store`` does not implement, or None."""
    from engines.kg.agreement import unsupported_function
    from engines.kg.dialect import _nodes

    algebra = getattr(prepared.algebra, "algebra", None)
    if algebra is None:
        return None
    iris = dict.fromkeys(str(node.iri) for node in _nodes(algebra) if node.name == "Function" and node.get("iri"))
    return unsupported_function(tuple(iris), store, language) if iris else None


def _evaluate_fast(
    graph: Any, query: str, timeout_s: float, row_cap: int, language: Any, began: float
) -> dict[str, Any] | None:
    """Oxigraph straight on the rewritten text when its syntax tree clears it
    (:func:`engines.kg.dialect.fast_prepare`); None when the full path must decide."""
    path = _QueryPath.load()
    QueryTimeout = path.QueryTimeout
    try:
        prepared = path.dialect.fast_prepare(query, language)
    except MemoryError:
        return None
    if prepared is None:
        return None
    meta = {"notes": prepared.notes, "standard": prepared.text}
    timeout_s -= time.monotonic() - began
    try:
        if timeout_s <= 0:
            raise QueryTimeout()
        columns, bindings, truncated, boolean = _run_oxigraph(
            graph, prepared.text, timeout_s, row_cap, path.namespaces_of(language)
        )
    except QueryTimeout:
        return {"kind": "timeout", **meta}
    except (SyntaxError, ValueError, OSError, RuntimeError, MemoryError, RecursionError):
        return None  # rdflib's parse explains it (a syntax error, an unknown prefix …), or the full path runs it
    columns = _star_order(columns, prepared.star)
    return {"kind": "ok", "columns": columns, "bindings": bindings, "truncated": truncated, "boolean": boolean, **meta}


def _prepared_or_error(query: str, language: Any) -> Any:
    """:func:`engines.kg.dialect.prepare`'s Prepared, or the worker's answer for why there is none."""
    from engines.kg import dialect

    try:
        return dialect.prepare(query, language)
    except dialect.SparqlRefused as e:
        return {"kind": "refused", "message": str(e)}
    except dialect.SparqlSyntaxError as e:
        return {"kind": "syntax", "message": str(e)}
    except MemoryError:
        return {
            "kind": "error",
            "message": "Query error: the query needs more memory than the SPARQL worker may use to plan.",
        }


def prepare_only(query: str, language: Any = None) -> dict[str, Any]:
    """Dialect handling, parse and plan of ``query`` without running it; a plain-data answer.

    ``{"kind": "prepared", "text", "form", "notes", "unsupported", "projected"}`` (``projected``: the
    SELECT's variable names), or ``refused`` / ``syntax`` / ``error`` with a ``message``.  Runs in the
    worker, so a text whose parse or plan would take minutes (thousands of FILTERs) is bounded by the
    worker's deadline like any query."""
    from engines.kg import dialect

    prepared = _prepared_or_error(query, language or dialect.WIKIDATA)
    if isinstance(prepared, dict):
        return prepared
    algebra = getattr(prepared.algebra, "algebra", None)
    projected = [str(v) for v in (algebra.get("PV", ()) if algebra is not None else ())]
    return {
        "kind": "prepared",
        "text": prepared.text,
        "form": prepared.form,
        "notes": list(prepared.notes),
        "unsupported": prepared.unsupported,
        "projected": projected,
    }


RunAnswer = tuple[tuple[str, ...], tuple[dict[str, dict[str, str]], ...], bool, bool | None]
"""What a query gave: its columns, its rows (SPARQL JSON bindings), whether the row cap cut them, an ASK's answer."""


def _run_rdflib(graph: Any, prepared: Any, timeout_s: float, row_cap: int) -> RunAnswer:
    from rdflib.plugins.sparql.evaluate import evalQuery

    from engines.kg import rdflib_fixes
    from engines.kg.store import deadline

    rdflib_fixes.install()
    with deadline(timeout_s):
        if prepared.form == "SELECT":  # solutions straight from evalQuery: rdflib's Result drops those binding nothing
            answer = evalQuery(graph, prepared.algebra, {})
            names = [v for v in (answer.get("vars_") or ()) if not _is_internal(str(v))]
            rows: list[dict[str, dict[str, str]]] = []
            for solution in answer["bindings"]:
                rows.append({str(v): _term_json(solution[v]) for v in names if solution.get(v) is not None})
                if len(rows) >= row_cap:
                    return tuple(str(v) for v in names), tuple(rows), True, None
            return tuple(str(v) for v in names), tuple(rows), False, None
        result = graph.query(prepared.algebra)
        if result.type == "ASK":
            return (), (), False, bool(result.askAnswer)
        if result.type in ("CONSTRUCT", "DESCRIBE"):
            cols = ("subject", "predicate", "object")
            rows = []
            for s, p, o in result.graph:
                rows.append({"subject": _term_json(s), "predicate": _term_json(p), "object": _term_json(o)})
                if len(rows) >= row_cap:
                    return cols, tuple(rows), True, None
            return cols, tuple(rows), False, None
        columns = tuple(str(v) for v in (result.vars or ()) if not _is_internal(str(v)))
        out: list[dict[str, dict[str, str]]] = []
        truncated = False
        for row in result:
            out.append(
                {str(v): _term_json(t) for v, t in row.asdict().items() if t is not None and not _is_internal(str(v))}
            )
            if len(out) >= row_cap:
                truncated = True
                break
        return columns, tuple(out), truncated, None


def _run_oxigraph(graph: Any, text: str, timeout_s: float, row_cap: int, prefixes: dict[str, str]) -> RunAnswer:
    path = _QueryPath.load()
    ox, QueryTimeout, oxigraph_store = path.ox, path.QueryTimeout, path.oxigraph_store

    limit = time.monotonic() + timeout_s
    res = oxigraph_store(graph).query(text, prefixes=prefixes, use_default_graph_as_union=True)
    if isinstance(res, ox.QueryBoolean):
        return (), (), False, bool(res)
    if isinstance(res, ox.QueryTriples):
        rows = []
        for t in res:
            rows.append(
                {"subject": _ox_json(t.subject), "predicate": _ox_json(t.predicate), "object": _ox_json(t.object)}
            )
            if len(rows) >= row_cap:
                break
            if time.monotonic() > limit:
                raise QueryTimeout()
        return ("subject", "predicate", "object"), tuple(rows), len(rows) >= row_cap, None
    names = [v.value for v in res.variables]
    keep = [(i, n) for i, n in enumerate(names) if not _is_internal(n)]
    convert = _ox_converters().get
    clock = time.monotonic
    out: list[dict[str, dict[str, str]]] = []
    truncated = False
    for sol in res:  # what _ox_json gives for each bound term, by the term's type
        out.append({n: convert(type(t), _ox_json)(t) for i, n in keep if (t := sol[i]) is not None})
        if len(out) >= row_cap:
            truncated = True
            break
        if clock() > limit:
            raise QueryTimeout()
    if clock() > limit:
        raise QueryTimeout()
    return tuple(n for _i, n in keep), tuple(out), truncated, None


_WARM_UP = (
    'SELECT ?x ?xLabel WHERE { ?x ?p ?o . FILTER(REGEX(STR(?o), "a")) '
    'SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } } ORDER BY ?x LIMIT 1'
)
_WARM_UP_STANDARD = 'SELECT ?x WHERE { ?x ?p ?o . FILTER(REGEX(STR(?o), "a")) } ORDER BY ?x LIMIT 1'


def _serve(conn: Any, store: str, memory_limit_mb: int | None, isolate_network: bool) -> None:
    """The worker's loop: load the graph, then answer ``(query, timeout_s, row_cap)`` until EOF.

    The first message is ``{"triples": [encoded …] | "rdf": [(bytes, media type) …], "dialect": …,
    "load_timeout_s": …, "warm": …}``: a user's RDF files come as their bytes (the worker opens no
    file; :func:`engines.kg.rdf_files.read_rdf` checked them) and are bulk-loaded, the CPU time of
    the load bounded by its deadline (the endpoint kills the worker at the deadline itself);
    ``warm`` False: no warm-up (a worker that only checks RDF files, :func:`rdf_checker`).  Besides
    queries, the loop answers ``{"scan_rdf": …}`` (:meth:`QueryWorker.scan_rdf`)."""
    failure = ""
    first: Any = None
    reserve: bytearray | None = None
    try:
        info = _confine(memory_limit_mb, isolate_network)
        reserve = bytearray(8 << 20)  # given back when memory runs out, so that the answer saying so can be made
        first = conn.recv()
        from engines.kg.dialect import Dialect
        from engines.kg.store import graph_from_rdf, make_graph

        _bound_cpu(2 * float(first.get("load_timeout_s") or _START_TIMEOUT_S) + 10)
        language = Dialect.from_json(first["dialect"]) if first.get("dialect") else None
        warm_up = first.get("warm", True)
        if first.get("rdf") is not None:
            graph = graph_from_rdf(first["rdf"], store)
        elif store == "oxigraph":  # straight into Oxigraph's terms, bulk-loaded
            import pyoxigraph as ox

            from engines.kg.store import OxigraphGraph

            graph = OxigraphGraph()
            term = _ox_decoder()
            graph.oxigraph.bulk_extend(ox.Quad(term(s), term(p), term(o)) for s, p, o in first["triples"])
        else:
            decode = _decoder()
            graph = make_graph(((decode(s), decode(p), decode(o)) for s, p, o in first["triples"]), store)
            del decode
        del first
    except MemoryError:
        reserve = None
        failure = (
            f"the graph does not fit in the {memory_limit_mb} MB the SPARQL worker may use "
            "(settings: sparql_memory_limit_mb)"
        )
    except Exception as e:
        failure = f"the SPARQL worker could not load the graph: {e}"
    del reserve
    if failure:  # out of the except block: its traceback, and the half-built graph its frames hold, are gone
        first = None  # noqa: F841 - the first message's megabytes go too, before the answer is built
        conn.send({"kind": "fatal", "message": failure})
        return
    if warm_up:
        _warm_up(store, language)
    conn.send({"kind": "ready", **info})
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message == _PING:  # the round trip alone (benchmarks/kg_latency.py)
            try:
                conn.send(_PONG)
            except (EOFError, OSError):
                return
            continue
        if isinstance(message, dict) and "scan_rdf" in message:  # a user's RDF files, streamed: checked, not kept
            if not _answer_scan(conn, message):
                return
            continue
        if isinstance(message, dict):  # {"prepare": query, "timeout_s": …}: parse and plan only
            query, timeout_s, row_cap = message["prepare"], message["timeout_s"], None
        else:
            query, timeout_s, row_cap = message
        _bound_cpu(2 * timeout_s + 10)
        try:
            if row_cap is None:
                answer = prepare_only(query, language)
            else:
                answer = evaluate(graph, store, query, timeout_s, row_cap, language)
        except MemoryError:
            answer = {
                "kind": "error",
                "message": "Query error: the query needs more memory than the SPARQL worker may use.",
            }
        try:
            conn.send(answer)
        except (EOFError, OSError):
            return
        except MemoryError:
            conn.send(
                {
                    "kind": "error",
                    "message": "Query error: the result needs more memory than the SPARQL worker may use.",
                }
            )


_PING, _PONG = {"ping": True}, {"kind": "pong"}


def _warm_up(store: str, language: Any) -> None:
    """Warm up before saying ready: the first parse builds rdflib's grammar and the first evaluation loads
    the store's query code (about 0.15 s each), which must not count against the first query's deadline.
    On an empty graph of the same store: over the user's graph the warm-up query's cost is the data's
    (the label service's joins took the memory store its whole 30 s over one subject with 20,000 labels)."""
    from engines.kg.store import make_graph

    standard = language is not None and not language.wikidata
    warm = _WARM_UP_STANDARD if standard else _WARM_UP
    if store == "oxigraph":  # its queries mostly take the fast path: build rdflib's grammar for the others
        from engines.kg import dialect

        try:
            dialect.prepare(warm, language or dialect.WIKIDATA)
        except Exception:
            pass
    evaluate(make_graph((), store), store, warm, 30.0, 1, language)


def _answer_scan(conn: Any, message: dict[str, Any]) -> bool:
    """Check a user's RDF documents as they arrive (:func:`engines.kg.rdf_scan.scan_stream`) and send
    the answer; False when the endpoint is gone."""
    from engines.kg.rdf_scan import scan_stream

    _bound_cpu(2 * float(message.get("timeout_s") or _START_TIMEOUT_S) + 10)
    try:
        answer = scan_stream(message["scan_rdf"], conn.recv)
    except (EOFError, OSError):
        return False
    except MemoryError:
        answer = {"kind": "memory"}
    try:
        conn.send(answer)
    except (EOFError, OSError):
        return False
    return True


def _child_main(argv: list[str]) -> None:
    """Entry point of the worker process: ``fd store memory_limit_mb isolate_network``."""
    fd, store, limit, isolate = int(argv[0]), argv[1], int(argv[2]), argv[3] == "1"
    _serve(_Channel(socket.socket(fileno=fd), plain=False), store, limit or None, isolate)


# --- the endpoint's side ---------------------------------------------------------------------------


class WorkerUnavailable(Exception):
    """The worker could not start (internal; becomes an error result)."""


class PrepareFailed(EngineError):
    """Parsing and planning a query in the worker did not finish: it outlasted its deadline
    (``timed_out``), ran out of the worker's memory, or the worker stopped."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def prepared_from(answer: dict[str, Any], query: str, timeout_s: float) -> Prepared:
    """The :class:`~engines.kg.dialect.Prepared` of a :meth:`QueryWorker.prepare` answer (its
    ``algebra`` stays in the worker: None), or the error it reports: SparqlRefused,
    SparqlSyntaxError, or :class:`PrepareFailed`."""
    from engines.kg import dialect

    kind = answer.get("kind")
    if kind == "prepared":
        return dialect.Prepared(
            query, answer["text"], answer["form"], tuple(answer["notes"]), answer["unsupported"], None
        )
    if kind == "refused":
        raise dialect.SparqlRefused(answer["message"])
    if kind == "syntax":
        raise dialect.SparqlSyntaxError(answer["message"])
    if kind == "timeout":
        raise PrepareFailed(
            f"Timeout: parsing and planning the query took longer than {timeout_s:g} s "
            "(the query was not run); simplify it, e.g. fewer FILTERs or UNION branches.",
            timed_out=True,
        )
    detail = answer.get("message") or "the SPARQL worker stopped"
    raise PrepareFailed(detail if kind == "error" else f"Query error: the SPARQL worker stopped ({detail}).")


def _answer(reply: Any) -> dict[str, Any]:
    """The worker's reply, which is always a dict (``kind`` and what it reports); _BadReply if it is not."""
    if not isinstance(reply, dict):
        raise _BadReply(f"a {type(reply).__name__}, not a dict")
    return reply


class QueryWorker:
    """One worker process holding the graph, started on first use and replaced when killed."""

    def __init__(
        self,
        triples: Callable[[], Iterable[Triple]],
        store: str,
        *,
        memory_limit_mb: int | None = 2048,
        isolate_network: bool = True,
        grace_s: float = _GRACE_S,
        language: Any = None,
        rdf: Callable[[], list[tuple[bytes, str]]] | None = None,
        load_timeout_s: float | None = None,
        warm: bool = True,
    ) -> None:
        """``language``: the Dialect; ``rdf``: gives RDF documents (bytes, media type) to
        bulk-load instead of ``triples``; ``load_timeout_s``: the deadline of loading the graph (none or 0: 300 s; the
        worker is killed at it); ``warm`` False: no warm-up query (a worker that only checks files)."""
        self._triples = triples
        self.load_timeout_s = load_timeout_s or _START_TIMEOUT_S
        self.warm = warm
        self.language = language
        self._rdf = rdf
        self.store = store
        self.memory_limit_mb = memory_limit_mb
        self.isolate_network = isolate_network
        self.grace_s = grace_s
        self._process: Any = None
        self._conn: Any = None
        self._stderr: Any = None
        self._lock = threading.Lock()
        self.info: dict[str, Any] = {}
        self.started = 0  # workers started so far (for tests and the lab)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def run(self, query: str, timeout_s: float, row_cap: int) -> dict[str, Any]:
        """Send one query; its answer, ``{"kind": "timeout"}`` after ``timeout_s`` + grace, or
        ``{"kind": "crash", …}`` when the worker died."""
        return self._ask((query, float(timeout_s), int(row_cap)), timeout_s)

    def ping(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """A message the worker answers at once (``{"kind": "pong"}``): what the round trip alone costs."""
        return self._ask(_PING, timeout_s)

    def prepare(self, query: str, timeout_s: float) -> dict[str, Any]:
        """Parse and plan ``query`` in the worker without running it (:func:`prepare_only`'s answer),
        under the same deadline as a query: ``{"kind": "timeout"}`` after ``timeout_s`` + grace."""
        return self._ask({"prepare": query, "timeout_s": float(timeout_s)}, timeout_s)

    def _ask(self, message: Any, timeout_s: float) -> dict[str, Any]:
        with self._lock:
            self._ensure_started()
            try:
                self._conn.send(message)
            except (OSError, EOFError):
                return self._crashed()
            if not self._conn.poll(timeout_s + self.grace_s):
                self._kill()
                return {"kind": "timeout", "killed": True}
            try:
                return _answer(self._conn.recv())
            except (OSError, EOFError):
                return self._crashed()
            except _BadReply as e:
                self._kill()
                return {"kind": "crash", "message": f"sent a reply that is not plain data ({e})"}

    def scan_rdf(self, documents: list[tuple[str, str, bytes]], limits: Any) -> dict[str, Any]:
        """Check a user's RDF documents ``(path, media type, bytes)`` in the worker
        (:func:`engines.kg.rdf_scan.scan_stream`): their bytes are streamed in pieces, parsed as they
        arrive, never kept.  Under ``limits.timeout_s`` in all, sending included (a worker stuck on a
        piece stops taking the next): ``{"kind": "timeout"}`` then, the worker killed; otherwise the
        scan's answer (``scanned`` / ``refused`` / ``memory``) or ``{"kind": "crash", …}``."""
        from engines.kg.rdf_scan import CHUNK_BYTES

        timeout_s = float(limits.timeout_s)
        with self._lock:
            self._ensure_started()
            deadline = time.monotonic() + timeout_s
            header = {"documents": [(path, kind) for path, kind, _content in documents], "limits": limits.to_json()}
            try:
                self._conn.send({"scan_rdf": header, "timeout_s": timeout_s}, timeout_s)
                for _path, _kind, content in documents:
                    view = memoryview(content)
                    for at in range(0, len(view), CHUNK_BYTES):
                        self._conn.send(bytes(view[at : at + CHUNK_BYTES]), deadline - time.monotonic())
                    self._conn.send(b"", deadline - time.monotonic())
            except TimeoutError:
                self._kill()
                return {"kind": "timeout", "killed": True}
            except (OSError, EOFError):
                return self._crashed()
            if not self._conn.poll(max(0.0, deadline - time.monotonic()) + self.grace_s):
                self._kill()
                return {"kind": "timeout", "killed": True}
            try:
                return _answer(self._conn.recv())
            except (OSError, EOFError):
                return self._crashed()
            except _BadReply as e:
                self._kill()
                return {"kind": "crash", "message": f"sent a reply that is not plain data ({e})"}

    def start(self) -> None:
        """Start the worker now if none is running (raises WorkerUnavailable)."""
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        self._kill()
        ours, theirs = socket.socketpair()
        self._stderr = tempfile.TemporaryFile(prefix="cs224v-sparql-")
        code = (
            "import sys; sys.path[:] = "
            + repr(list(sys.path))
            + "; from engines.kg.worker import _child_main; _child_main(sys.argv[1:])"
        )
        try:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-c",
                    code,
                    str(theirs.fileno()),
                    self.store,
                    str(int(self.memory_limit_mb or 0)),
                    "1" if self.isolate_network else "0",
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                start_new_session=True,
                close_fds=True,
                env={**os.environ, "RUST_BACKTRACE": "0"},
            )
        except OSError as e:
            ours.close()
            raise WorkerUnavailable(f"the SPARQL worker could not start: {e}") from None
        finally:
            theirs.close()
        cap = self.memory_limit_mb * 1024 * 1024 if self.memory_limit_mb else None
        self._process, self._conn = process, _Channel(ours, plain=True, max_bytes=cap)
        self.started += 1
        try:
            first: dict[str, Any] = {
                "dialect": self.language.to_json() if self.language is not None else None,
                "load_timeout_s": self.load_timeout_s,
                "warm": self.warm,
            }
            if self._rdf is not None:
                first["rdf"] = self._rdf()
            else:
                first["triples"] = [(_encode(s), _encode(p), _encode(o)) for s, p, o in self._triples()]
            deadline = time.monotonic() + self.load_timeout_s
            self._conn.send(first, timeout_s=self.load_timeout_s)
            del first
            if not self._conn.poll(deadline - time.monotonic()):
                raise TimeoutError
            reply = self._conn.recv()
        except TimeoutError:
            reply = {
                "kind": "fatal",
                "message": f"the SPARQL worker did not load the graph within {self.load_timeout_s:g} s (it was stopped)",
            }
        except (OSError, EOFError, _BadReply):
            how = self._exit_text() or "stopped"
            memory = any(word in how for word in ("MemoryError", "memory allocation", "memory limit"))
            hint = (
                f"; the graph may not fit in the {self.memory_limit_mb} MB the SPARQL worker may use "
                "(settings: sparql_memory_limit_mb)"
                if memory and self.memory_limit_mb
                else ""
            )
            reply = {"kind": "fatal", "message": f"the SPARQL worker stopped while loading the graph (it {how}){hint}"}
        except WorkerUnavailable as e:
            reply = {"kind": "fatal", "message": str(e)}
        if reply.get("kind") != "ready":
            self._kill()
            raise WorkerUnavailable(reply.get("message") or "the SPARQL worker could not start")
        self.info = reply

    def _crashed(self) -> dict[str, Any]:
        detail = self._exit_text()
        self._kill()
        return {"kind": "crash", "message": detail}

    def _exit_text(self) -> str:
        process = self._process
        if process is None:
            return ""
        try:
            code = process.wait(2.0)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            how = "stopped answering"
        elif code < 0:
            try:
                how = f"was ended by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was ended by signal {-code}"
        else:
            how = f"exited with code {code}"
        if code in (134, -signal.SIGABRT):
            how += ", an abort in the store"
        elif code in (137, -signal.SIGKILL):
            how += ", perhaps over its memory limit"
        elif code in (-signal.SIGXCPU, 152):
            how += ", over its CPU time"
        tail = self._stderr_tail()
        return how + (f": {tail}" if tail else "")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            f = self._stderr
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 2000))
            text = f.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith(("note: ", "  "))]
        lines = [
            line for line in lines if not (line.startswith("thread '") and " panicked at " in line)
        ]  # Rust's location
        return " ".join(lines[-2:])[:400]

    def _kill(self) -> None:
        process, conn, err = self._process, self._conn, self._stderr
        self._process = self._conn = self._stderr = None
        if process is not None:
            if process.poll() is None:
                process.kill()
            try:
                process.wait(10.0)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
                pass
        if conn is not None:
            conn.close()
        if err is not None:
            err.close()

    def close(self) -> None:
        """Stop the worker (a new one starts if another query comes).  Never waits for a query in flight
        (quitting the app closes it): its process is killed now, and that query answers that the worker stopped."""
        if not self._lock.acquire(blocking=False):
            process = self._process
            if process is not None and process.poll() is None:
                process.kill()
            return
        try:
            if self._conn is not None:
                try:
                    self._conn.send(None)
                except (OSError, EOFError):
                    pass
            self._kill()
        finally:
            self._lock.release()


_PARSERS: dict[str, QueryWorker] = {}
_PARSERS_LOCK = threading.Lock()


def parse_worker(language: Any = None) -> QueryWorker:
    """A worker holding an empty graph, for :meth:`QueryWorker.prepare` of queries that run
    elsewhere (a remote endpoint's, ``check-dialect``'s): one per dialect and process, started on
    first use (about a second) and stopped at exit."""
    from engines.kg import dialect

    language = language or dialect.WIKIDATA
    key = repr(language.to_json())
    with _PARSERS_LOCK:
        worker = _PARSERS.get(key)
        if worker is None:
            if not _PARSERS:
                atexit.register(_close_parsers)
            worker = _PARSERS[key] = QueryWorker(lambda: (), "memory", language=language)
        return worker


def rdf_checker(memory_limit_mb: int | None = None) -> QueryWorker:
    """A worker holding an empty graph and no warm-up, for :meth:`QueryWorker.scan_rdf` (the check of a
    user's RDF files, :func:`engines.kg.rdf_files.read_rdf`): one per memory cap and process, started
    on first use and stopped at exit, like :func:`parse_worker`'s."""
    key = f"rdf-check:{memory_limit_mb}"
    with _PARSERS_LOCK:
        worker = _PARSERS.get(key)
        if worker is None:
            if not _PARSERS:
                atexit.register(_close_parsers)
            worker = _PARSERS[key] = QueryWorker(lambda: (), "memory", memory_limit_mb=memory_limit_mb, warm=False)
        return worker


def _close_parsers() -> None:
    with _PARSERS_LOCK:
        workers = list(_PARSERS.values())
    for worker in workers:
        worker.close()
