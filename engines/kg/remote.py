"""A remote SPARQL 1.1 endpoint (Wikidata's, QLever's, an ``oxigraph serve``, any other) behind the Endpoint interface.

:class:`RemoteEndpoint` answers ``execute(query)`` with the same four feedbacks as the local
:class:`~engines.kg.endpoint.Endpoint`, and offers ``page``, ``search``, ``property_examples``
and ``label`` (:mod:`engines.kg.remote_pages`), so the console, the entity browser and SPINACH run
over it unchanged.

What is sent, and to whom:

* every query is prepared here first (:func:`engines.kg.dialect.prepare`): the Wikidata dialect's
  rewrites (the label service as standard OPTIONALs, named subqueries, hints, …), then rdflib's
  parse and plan, then the check on the plan — so an update, ``LOAD``, ``FROM`` and every
  ``SERVICE`` (including the real endpoint's own ``wikibase:mwapi`` / ``wikibase:around``) are
  refused before anything is sent, exactly as locally.  What is sent is the checked standard
  text, with the dialect's prefixes declared in front (so any SPARQL 1.1 endpoint runs it).  The
  one exception: to Wikidata's own endpoint (query.wikidata.org) ``SERVICE wikibase:label`` is
  sent as written, for Wikidata to run (its built-in, far faster than the emulation; the check on
  the plan allows exactly that service IRI and nothing else);
* it goes by the SPARQL 1.1 protocol (``POST``, ``application/x-www-form-urlencoded``) to the one
  URL given, and nowhere else: redirects are not followed (a redirect is an error that names the
  new address), and the agent's entity search and pages are SPARQL queries to the same URL;
* with a ``User-Agent`` naming this program, its version and a contact URL, as Wikidata's
  User-Agent policy asks;
* under a total deadline (``timeout_s``; a query that outlasts it is the ``timeout`` feedback);
* a ``429 Too Many Requests`` (or ``503`` with ``Retry-After``) is retried after the time the
  server asks for (``Retry-After`` in seconds or as a date; otherwise 1 s, 2 s, 4 s …), at most
  ``retries`` times and never waiting longer than ``max_wait_s`` in all — beyond that the answer
  says when to try again;
* the answer is bounded: at most ``max_response_bytes`` are read, counted after decompression (then
  the query is an error that asks for a LIMIT; only ``gzip`` or no ``Content-Encoding`` is accepted,
  inflated here piece by piece, never more than the cap at once), at most ``row_cap`` rows are kept
  (``truncated``); an answer that is not a SPARQL result (JSON nested thousands deep, a term over
  pyoxigraph's 16 MB) is an error result naming the endpoint, never an exception.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from engines.errors import EngineError
from engines.kg import dialect as _dialect
from engines.kg.dialect import Prepared, SparqlRefused, SparqlSyntaxError
from engines.kg.prefixes import entity_id
from engines.kg.results import Feedback, QueryResult, tighter_bounds
from engines.kg.worker import PrepareFailed, WorkerUnavailable, parse_worker, prepared_from

if TYPE_CHECKING:
    from engines.kg.pages import EntityPage, PropertyExample, SearchHit
    from engines.kg.remote_pages import RemoteBrowser

__all__ = ["RemoteEndpoint", "RemoteError", "user_agent", "WIKIDATA_HOSTS"]

CONTACT_URL = "https://pypi.org/project/cs224v-tui/"
WIKIDATA_HOSTS = ("query.wikidata.org",)
_RESULTS_JSON = "application/sparql-results+json"
_N_TRIPLES = "application/n-triples"


class RemoteError(EngineError):
    """The endpoint could not be used at all (a bad URL)."""


def user_agent() -> str:
    """``cs224v-tui/0.1.0 (https://…) httpx/0.28.1``: name, version and contact, as Wikidata asks."""
    try:
        from importlib.metadata import version

        ours = version("cs224v-tui")
    except Exception:  # pragma: no cover - running from a checkout that is not installed
        ours = "0"
    return f"cs224v-tui/{ours} ({CONTACT_URL}) httpx/{httpx.__version__}"


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _is_internal(var: str) -> bool:
    return var.startswith("__")


class _TooLarge(Exception):
    pass


def _mb(n: int) -> str:
    return f"{n / (1 << 20):g} MB" if n >= 1 << 20 else f"{n:,} bytes"


class _Deadline(Exception):
    pass


class RemoteEndpoint:
    """SPARQL over HTTP to one endpoint URL.  Thread-safe for queries."""

    store = "remote"

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        row_cap: int = 10_000,
        dialect: _dialect.Dialect | None = None,
        max_response_bytes: int = 32 << 20,
        retries: int = 3,
        max_wait_s: float = 30.0,
        cache_size: int = 256,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RemoteError(
                f"{url!r} is not an endpoint URL: give an http:// or https:// address such as "
                "https://query.wikidata.org/sparql"
            )
        if parts.username or parts.password:
            raise RemoteError("the endpoint URL must not hold a user name or password")
        self.url = url
        self.host = parts.hostname.lower()
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        # Wikidata's own endpoint runs its label service natively (much faster than the standard emulation)
        self.dialect = dialect or (_dialect.WIKIDATA_NATIVE if self.host in WIKIDATA_HOSTS else _dialect.WIKIDATA)
        self.max_response_bytes = max_response_bytes
        self.retries = retries
        self.max_wait_s = max_wait_s
        self.cache_size = cache_size
        self.sleep = sleep
        self.clock = clock
        self.source = url
        self.requests = 0  # HTTP requests sent (for tests and the status line)
        self._results: OrderedDict[str, QueryResult] = OrderedDict()
        self._lock = threading.Lock()
        self._browser: RemoteBrowser | None = None
        # the queries are parsed and planned here before they are sent, but in a worker process
        # holding an empty graph: bounded in time and memory, with no network (engines.kg.worker)
        self._parser = parse_worker(self.dialect)
        self._client = httpx.Client(
            transport=transport,
            follow_redirects=False,
            trust_env=False,  # no proxy from the environment: the one address contacted is the one given
            headers={"User-Agent": user_agent(), "Accept-Encoding": "gzip"},
        )

    @property
    def is_wikidata(self) -> bool:
        """The endpoint is Wikidata's own query service."""
        return self.host in WIKIDATA_HOSTS

    @property
    def wikidata(self) -> bool:
        """The graph speaks Wikidata's vocabulary (QIDs, pages with qualifiers): Wikidata's own endpoint does;
        any other is asked once (:meth:`engines.kg.remote_pages.RemoteBrowser.uses_wikidata`)."""
        return self.browser.wikidata

    # --- queries ---------------------------------------------------------------------------

    def prepare(self, query: str) -> Prepared:
        """Dialect handling, parse and plan, in a local worker process under the query timeout
        (rdflib's parser takes minutes over some texts, which must not stall the caller).  Raises
        SparqlRefused, SparqlSyntaxError or PrepareFailed."""
        try:
            answer = self._parser.prepare(query, self.timeout_s)
        except WorkerUnavailable as e:
            raise PrepareFailed(f"Query error: {e}.") from None
        return prepared_from(answer, query, self.timeout_s)

    def execute(self, query: str) -> QueryResult:
        """Run ``query`` on the endpoint; one of the four feedbacks.  Raises SparqlRefused."""
        return self.query(query)

    def query(self, sparql: str, *, timeout_s: float | None = None, row_cap: int | None = None) -> QueryResult:
        """Run ``sparql`` as :meth:`execute` does, under ``timeout_s`` (the whole exchange) and ``row_cap`` when
        given: bounds tighter than the endpoint's own (a looser one is the endpoint's).  Only a query under the
        endpoint's own bounds is kept or answered from the results kept."""
        timeout, cap = tighter_bounds(self.timeout_s, self.row_cap, timeout_s, row_cap)
        kept = self.cache_size and (timeout, cap) == (self.timeout_s, self.row_cap)
        if kept:
            with self._lock:
                hit = self._results.get(sparql)
                if hit is not None:
                    self._results.move_to_end(sparql)
                    return hit
        result = self._execute(sparql, timeout, cap)
        if kept and result.feedback in (Feedback.ROWS, Feedback.EMPTY):
            with self._lock:
                self._results[sparql] = result
                while len(self._results) > self.cache_size:
                    self._results.popitem(last=False)
        return result

    def describe(self) -> str:
        """What the graph is, for people: the endpoint's URL."""
        return f"the endpoint {self.url}"

    def _execute(self, query: str, timeout_s: float, row_cap: int) -> QueryResult:
        try:
            self._parser.start()  # starting the parse worker (about a second, once) is not the query's time
        except WorkerUnavailable as e:
            return QueryResult(query, Feedback.SYNTAX_ERROR, message=f"Query error: {e}.")
        start = self.clock()
        try:
            prepared = self.prepare(query)
        except SparqlSyntaxError as e:
            return QueryResult(query, Feedback.SYNTAX_ERROR, message=str(e), elapsed_s=self.clock() - start)
        except PrepareFailed as e:
            feedback = Feedback.TIMEOUT if e.timed_out else Feedback.SYNTAX_ERROR
            return QueryResult(query, feedback, message=str(e), elapsed_s=self.clock() - start)
        if prepared.unsupported:
            what = prepared.unsupported.split(", which", 1)[0].removeprefix("This query uses ")
            raise SparqlRefused(
                f"This query uses {what}: refused, as every SERVICE in a query is, even on Wikidata's own endpoint."
            )
        return self.send(prepared, query=query, start=start, timeout_s=timeout_s, row_cap=row_cap)

    def wire_text(self, prepared: Prepared) -> str:
        """The text sent: the dialect's prefixes declared, then the checked standard query."""
        declared = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in self.dialect.prefixes)
        return declared + prepared.text

    def send(
        self,
        prepared: Prepared,
        *,
        query: str | None = None,
        start: float | None = None,
        timeout_s: float | None = None,
        row_cap: int | None = None,
    ) -> QueryResult:
        """Send an already prepared (and checked) query, under the endpoint's bounds unless tighter ones are given.
        Internal callers (the pages) use it."""
        timeout_s, row_cap = tighter_bounds(self.timeout_s, self.row_cap, timeout_s, row_cap)
        query = prepared.original if query is None else query
        start = self.clock() if start is None else start
        notes, standard = prepared.notes, prepared.text
        graph_form = prepared.form in ("CONSTRUCT", "DESCRIBE")
        try:
            body = self._post(self.wire_text(prepared), _N_TRIPLES if graph_form else _RESULTS_JSON, start, timeout_s)
        except _Deadline:
            return QueryResult(
                query,
                Feedback.TIMEOUT,
                message=f"Query execution timed out after {timeout_s:g} s.",
                elapsed_s=self.clock() - start,
                notes=notes,
                standard=standard,
            )
        except _TooLarge:
            return QueryResult(
                query,
                Feedback.SYNTAX_ERROR,
                message=f"Query error: the answer of the endpoint {self.url} is larger than "
                f"{_mb(self.max_response_bytes)}; add a LIMIT or select fewer variables.",
                elapsed_s=self.clock() - start,
                notes=notes,
                standard=standard,
            )
        except _Failed as e:
            kind = Feedback.TIMEOUT if e.timeout else Feedback.SYNTAX_ERROR
            return QueryResult(
                query, kind, message=e.message, elapsed_s=self.clock() - start, notes=notes, standard=standard
            )
        elapsed = self.clock() - start
        try:
            if graph_form:
                return self._triples_result(query, body, elapsed, row_cap, notes, standard)
            return self._json_result(query, body, elapsed, row_cap, notes, standard)
        except (ValueError, KeyError, TypeError, SyntaxError, AttributeError) as e:
            detail = str(e)[:200]
        except RecursionError:  # json's decoder at Python's recursion limit: `[[[[…` thousands deep
            detail = "JSON nested more deeply than a SPARQL result is"
        except MemoryError as e:  # pyoxigraph's lexer refuses a term over 16 MB; or no memory left for it
            detail = (
                "a term longer than 16 MB"
                if str(e).startswith("Reached the buffer maximal size")
                else "too large to read in memory"
            )
        return QueryResult(
            query,
            Feedback.SYNTAX_ERROR,
            message=f"Query error: the answer of the endpoint {self.url} is not a SPARQL result ({detail}).",
            elapsed_s=elapsed,
            notes=notes,
            standard=standard,
        )

    def _json_result(
        self, query: str, body: bytes, elapsed: float, row_cap: int, notes: tuple[str, ...], standard: str
    ) -> QueryResult:
        doc = json.loads(body)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        if "boolean" in doc:
            boolean = bool(doc["boolean"])
            cell = {
                "type": "literal",
                "value": str(boolean).lower(),
                "datatype": "http://www.w3.org/2001/XMLSchema#boolean",
            }
            return QueryResult(
                query,
                Feedback.ROWS,
                ("ASK",),
                ({"ASK": cell},),
                elapsed_s=elapsed,
                boolean=boolean,
                notes=notes,
                standard=standard,
            )
        columns = tuple(v for v in doc["head"].get("vars", ()) if isinstance(v, str) and not _is_internal(v))
        rows: list[dict[str, dict[str, str]]] = []
        truncated = False
        for b in doc["results"]["bindings"]:
            if len(rows) >= row_cap:
                truncated = True
                break
            rows.append({k: _cell(v) for k, v in b.items() if k in columns})
        return QueryResult(
            query,
            Feedback.ROWS if rows else Feedback.EMPTY,
            columns,
            tuple(rows),
            truncated=truncated,
            elapsed_s=elapsed,
            notes=notes,
            standard=standard,
        )

    def _triples_result(
        self, query: str, body: bytes, elapsed: float, row_cap: int, notes: tuple[str, ...], standard: str
    ) -> QueryResult:
        import pyoxigraph as ox

        from engines.kg.worker import _ox_json

        rows: list[dict[str, dict[str, str]]] = []
        truncated = False
        for q in ox.parse(body, ox.RdfFormat.N_TRIPLES):
            if len(rows) >= row_cap:
                truncated = True
                break
            rows.append(
                {"subject": _ox_json(q.subject), "predicate": _ox_json(q.predicate), "object": _ox_json(q.object)}
            )
        cols = ("subject", "predicate", "object")
        return QueryResult(
            query,
            Feedback.ROWS if rows else Feedback.EMPTY,
            cols,
            tuple(rows),
            truncated=truncated,
            elapsed_s=elapsed,
            notes=notes,
            standard=standard,
        )

    # --- HTTP ---------------------------------------------------------------------------------

    def _post(self, text: str, accept: str, start: float, timeout_s: float) -> bytes:
        waited = 0.0
        attempt = 0
        while True:
            remaining = timeout_s - (self.clock() - start)
            if remaining <= 0:
                raise _Deadline()
            status, headers, body = self._once(text, accept, start, remaining, timeout_s)
            if status == 200:
                return body
            if status in (429, 503) and (status == 429 or "retry-after" in headers):
                wait = _retry_after(headers.get("retry-after"), time.time())
                wait = float(2**attempt) if wait is None else wait
                if attempt >= self.retries or waited + wait > self.max_wait_s:
                    after = f" (it asks to wait {wait:g} s)" if headers.get("retry-after") else ""
                    raise _Failed(
                        f"Query error: the endpoint is rate-limiting this client (HTTP {status}){after}; "
                        f"gave up after {attempt + 1} attempt{'s' if attempt else ''}. Try again later."
                    )
                self.sleep(wait)
                waited += wait
                attempt += 1
                start += wait  # the wait is not the query's time
                continue
            raise _Failed.from_status(status, headers, body, self.url)

    def _once(
        self, text: str, accept: str, start: float, remaining: float, timeout_s: float
    ) -> tuple[int, Mapping[str, str], bytes]:
        timeout = httpx.Timeout(remaining, connect=min(remaining, 10.0))
        self.requests += 1
        try:
            with self._client.stream(
                "POST",
                self.url,
                data={"query": text},
                headers={"Accept": accept},
                timeout=timeout,
            ) as response:
                chunks: list[bytes] = []
                size = 0
                limit = self.max_response_bytes if response.status_code == 200 else 64 << 10
                for chunk in self._decoded(response, limit):
                    size += len(chunk)
                    if size > limit:
                        if response.status_code == 200:
                            raise _TooLarge()
                        break
                    chunks.append(chunk)
                    if self.clock() - start > timeout_s:
                        raise _Deadline()
                return response.status_code, response.headers, b"".join(chunks)
        except httpx.TimeoutException:
            raise _Deadline() from None
        except httpx.HTTPError as e:
            raise _Failed(
                f"Query error: the endpoint {self.url} cannot be reached ({type(e).__name__}: {e})."
            ) from None

    def _decoded(self, response: httpx.Response, limit: int) -> Iterator[bytes]:
        """The body as sent, decoded here rather than by httpx: httpx inflates each piece of a body
        whole and undoes any chain of encodings (``Content-Encoding: gzip, gzip`` turns 500 bytes into
        hundreds of megabytes before the first byte is counted).  Only ``gzip`` (the one asked for in
        ``Accept-Encoding``) or none; never more than ``limit`` + 1 bytes inflated at a time."""
        if response.is_stream_consumed:  # built whole in memory by a transport (tests' mock ones), not read here
            yield response.content
            return
        coding = ",".join(c.strip().lower() for c in response.headers.get("content-encoding", "").split(","))
        coding = ",".join(c for c in coding.split(",") if c not in ("", "identity"))
        if not coding:
            yield from response.iter_raw()
            return
        if coding not in ("gzip", "x-gzip"):
            raise _Failed(
                f"Query error: the endpoint {self.url} answered with Content-Encoding {coding[:60]!r}; "
                "only gzip (or none) is accepted."
            )
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            for raw in response.iter_raw():
                data = inflate.decompress(raw, limit + 1)
                while True:
                    if data:
                        yield data
                    if not inflate.unconsumed_tail:
                        break
                    data = inflate.decompress(inflate.unconsumed_tail, limit + 1)
            rest = inflate.flush()
            if rest:
                yield rest
        except zlib.error as e:
            raise _Failed(f"Query error: the answer of the endpoint {self.url} is not valid gzip ({e}).") from None

    # --- browsing ---------------------------------------------------------------------------

    @property
    def browser(self) -> RemoteBrowser:
        with self._lock:
            if self._browser is None:
                from engines.kg.remote_pages import RemoteBrowser

                self._browser = RemoteBrowser(self)
            return self._browser

    def page(self, entity: str) -> EntityPage:
        return self.browser.page(entity)

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> tuple[SearchHit, ...]:
        return self.browser.search(text, items=items, properties=properties)

    def property_examples(self, pid: str, n: int = 5) -> tuple[PropertyExample, ...]:
        return self.browser.property_examples(pid, n)

    def label(self, iri_or_id: str) -> str | None:
        return self.browser.label(entity_id(iri_or_id))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RemoteEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cell(value: Any) -> dict[str, str]:
    """One SPARQL JSON term, checked (an endpoint is not trusted to send well-formed cells)."""
    if not isinstance(value, dict) or not isinstance(value.get("value"), str):
        raise ValueError("a binding is not a {type, value} object")
    kind = value.get("type")
    if kind == "typed-literal":  # SPARQL 1.0's JSON, still sent by some endpoints
        kind = "literal"
    if kind not in ("uri", "literal", "bnode"):
        raise ValueError(f"unknown term type {str(kind)[:40]!r}")
    out = {"type": kind, "value": value["value"]}
    if isinstance(value.get("xml:lang"), str):
        out["xml:lang"] = value["xml:lang"]
    elif isinstance(value.get("datatype"), str) and value["datatype"] != "http://www.w3.org/2001/XMLSchema#string":
        out["datatype"] = value["datatype"]
    return out


class _Failed(Exception):
    def __init__(self, message: str, timeout: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.timeout = timeout

    @classmethod
    def from_status(cls, status: int, headers: Mapping[str, str], body: bytes, url: str) -> _Failed:
        text = body.decode("utf-8", "replace")
        if 300 <= status < 400:
            where = headers.get("location", "another address")
            return cls(
                f"Query error: the endpoint redirected (HTTP {status}) to {where[:200]}; redirects are not "
                "followed (only the address given is contacted): give that address instead."
            )
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if status >= 500 and any("timeout" in line.lower() or "timed out" in line.lower() for line in lines[:40]):
            return cls("Query execution timed out (on the endpoint).", timeout=True)
        detail = next((line for line in lines if "ParseException" in line or "rror" in line), lines[0] if lines else "")
        detail = detail[:400]
        if status == 400:
            return cls(f"Syntax error (the endpoint says): {detail or 'bad request'}")
        return cls(f"Query error: the endpoint answered HTTP {status}" + (f": {detail}" if detail else "") + ".")
