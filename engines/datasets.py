"""The real data sets: what each file is, its SHA-256, where to download it, and where it was found.

    where(settings)                      # [Found(dataset, path, how, files_ok, files_bad, missing)] in catalogue order
    fetch(settings, progress=print_it)   # download every data set into the user data folder, checked
    fetch(settings, names=["spinach-dev"], to=Path("elsewhere"))

Every file has the SHA-256 of the copy in the course's shared data folder.  A file is downloaded from the mirror
``data_url`` (``CS224V_DATA_URL``: any HTTP(S) folder laid out like the shared data folder) when one is set, else
from its public source upstream, pinned to a commit (``data_upstream_url``, ``CS224V_DATA_UPSTREAM_URL``, is where
those repositories are served: raw.githubusercontent.com).  A file that upstream holds only in another form is rebuilt
from it (the SUQL paper's CSV without its Prolific ID column).  The HybridQA sample and the row-F1 cases are derived
(:mod:`engines.derive`): their upstream files are downloaded into ``.upstream/`` in the target folder, the data set
is built from them, and each built file must match its SHA-256 before anything is written.

Every download is bounded and checked while it arrives: the bytes are hashed as they are written to ``FILE.part``;
a ``Content-Length`` above the file's size is refused before reading, and the download stops as soon as more bytes
come than the catalogue's size (:class:`TooLarge`; the part file is deleted, nothing is written in place).  Each
file has one overall deadline (``data_fetch_deadline_s``), not a per-read timeout, so a server that trickles bytes
ends too.  Redirects are followed only within the same origin (scheme, host, port), and no proxy, ``.netrc`` or other
setting is taken from the environment.

Downloads are resumable and atomic: a later ``fetch`` hashes what ``FILE.part`` holds and continues it with an HTTP
Range request; only a whole file with the right SHA-256 is renamed into place.  A checksum mismatch deletes the part
file and raises :class:`ChecksumMismatch`; a network failure or the deadline raises :class:`FetchFailed` naming the
URL, and the part file stays for the next try.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from engines.derive import TableSource, hybridqa_sample, row_f1_cases
from engines.errors import EngineError
from worlds.data import DATASETS, DataSet, missing_message, user_data_folder

if TYPE_CHECKING:
    import httpx

    from engines.settings import Settings

CHUNK = 64 * 1024
IDLE_TIMEOUT_S = 30.0  # connecting, or waiting for the next bytes; a whole file has the data_fetch_deadline_s setting
MAX_REDIRECTS = 5  # within one origin
UPSTREAM_URL = "https://raw.githubusercontent.com"  # the default of the data_upstream_url setting
STAGING = ".upstream"  # in the target folder: the upstream files a derived data set is being built from
USER_AGENT = "cs224v-tui data fetch (https://github.com/stanford-oval; course tool)"

SPINACH_COMMIT = "8bb2d9cfa7f54b7b63ba5e6acd8264fdb7f8ecf9"
SUQL_COMMIT = "98631933ec1bf77990dd011d9be54b09017c6510"
HYBRIDQA_COMMIT = "db22fda8c5951438fade3c69d75b350335ba93b3"
_WIKITABLES_COMMITS = {
    "6ae7a6da": "6ae7a6daa733a93f96d4c86c3a7247717ba6efb6",
    "6b7ee8de": "6b7ee8de965b897a08d8309dd7d2bded74f561ac",
}


class DataError(EngineError):
    """A data set cannot be fetched."""


class FetchFailed(DataError):
    """The download itself failed (network, HTTP status, a redirect elsewhere, the deadline)."""


class ChecksumMismatch(DataError):
    """The bytes downloaded (or built) are not the file the catalogue names."""


class TooLarge(DataError):
    """A server sends (or announces) more bytes than the file can have."""


@dataclass(frozen=True)
class Upstream:
    """One file of a public repository at a pinned commit, served like raw.githubusercontent.com serves it."""

    repo: str  # "owner/name"
    commit: str
    path: str
    size: int  # its bytes at that commit
    sha256: str | None = None  # None: not compared with the pinned URL (the files derived from it are checked)

    @property
    def name(self) -> str:
        return f"{self.repo}/{self.path}"

    @property
    def cap(self) -> int:
        """The most bytes accepted: the size when the SHA-256 is known, else a little more (the derived files'
        checksums decide)."""
        return self.size if self.sha256 else self.size + max(1024, self.size // 16)

    def url(self, base: str = UPSTREAM_URL) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{quote(self.path)}"


@dataclass(frozen=True)
class DataFile:
    path: str  # "/"-separated, under the data folder
    sha256: str
    size: int
    upstream: Upstream | None = None  # the public file of these bytes, or of what they are rebuilt from
    rebuild: str | None = None  # how: "drop-prolific-id"


@dataclass(frozen=True)
class Build:
    """How a derived data set is built: its upstream files, and the function that makes its files from them."""

    inputs: tuple[Upstream, ...]
    derive: Callable[[Mapping[Upstream, bytes]], dict[str, bytes]]


@dataclass(frozen=True)
class Entry:
    dataset: DataSet
    files: tuple[DataFile, ...]
    source: str  # where the data comes from, for people
    licence: str
    build: Build | None = None  # a derived data set: built from upstream when no mirror is set


def _hybridqa(name: str, sha: str, size: int) -> DataFile:
    return DataFile(f"hybridqa/{name}", sha, size)


# The HybridQA sample's 14 tables in its manifest's order, each with its WikiTables-WithLinks files:
# (table id, tables_tok commit, bytes, SHA-256, request_tok commit, bytes, SHA-256).  A SHA-256 is None where the
# course's copy of the upstream file was regenerated from its parsed content rather than copied (see
# ../shared/upstream/README.md): the built files' own checksums are exact and decide.
_HYBRIDQA_TABLES: tuple[tuple[str, str, int, str | None, str, int, str | None], ...] = (
    (
        "List_of_Places_of_Scenic_Beauty_of_Japan_(Mie)_0",
        "6ae7a6da",
        3967,
        "5cf9252c4f0c92f47dc26149dbb3d6c331fdcd424215a66e6156e74639b0589b",
        "6ae7a6da",
        3985,
        "bf5c851a3b6855252e80918d2fe4c99ef62bf66e68f49d7e6326ad84f8f9b39e",
    ),
    (
        "Alo_(Wallis_and_Futuna)_0",
        "6b7ee8de",
        3204,
        "298e2cdfd1759b9b497f81e466b93c2518681761b1badd8324c2a059af2c733b",
        "6b7ee8de",
        6131,
        "c0bdbb3a8080b602bd7a90a2f5905e400a20b6320a7fd1736029f9d9ac132988",
    ),
    (
        "List_of_Living_National_Treasures_of_Japan_(performing_arts)_0",
        "6ae7a6da",
        4471,
        "b41d751eb96d658b93efa42d420579efbc3ec0bac1453f473947cd11fe0a99d9",
        "6b7ee8de",
        7712,
        "62df5837147a50cb162b2b60ab3fd1c67120d6b750091d1f3f9ff4f4f9b1a640",
    ),
    (
        "Romania_1",
        "6b7ee8de",
        4884,
        "819c8cd1e520bab4d76269e7bd4588348a32a0932535bb00c890ac644c2baa80",
        "6b7ee8de",
        9644,
        "2e6d9d563294b2732f9992ca75bc475ac0e2a832729f4fa98b11c8e23a95cbdf",
    ),
    ("UCI_Mountain_Bike_World_Cup_6", "6b7ee8de", 7152, None, "6b7ee8de", 9760, None),
    ("List_of_craters_on_Mercury_5", "6b7ee8de", 3226, None, "6b7ee8de", 11010, None),
    ("Indian_Television_Academy_Awards_0", "6b7ee8de", 3836, None, "6b7ee8de", 12019, None),
    ("List_of_fictional_pachyderms_3", "6b7ee8de", 4180, None, "6b7ee8de", 12326, None),
    ("Jason_Segel_1", "6b7ee8de", 3296, None, "6b7ee8de", 12635, None),
    ("Eastern_Kentucky_Coalfield_1", "6b7ee8de", 4139, None, "6b7ee8de", 13704, None),
    ("Ronde_van_Drenthe_1", "6ae7a6da", 5644, None, "6b7ee8de", 14322, None),
    ("Ohio_House_of_Representatives,_127th_General_Assembly_0", "6b7ee8de", 9053, None, "6b7ee8de", 16184, None),
    ("2007_European_Women's_Artistic_Gymnastics_Championships_11", "6ae7a6da", 2859, None, "6b7ee8de", 18130, None),
    ("Indian_Television_Academy_Awards_1", "6b7ee8de", 5556, None, "6b7ee8de", 18588, None),
)
_TRACED = Upstream(
    "wenhuchen/HybridQA",
    HYBRIDQA_COMMIT,
    "released_data/dev.traced.json",
    2741563,
    "2fe4ca01e23d4e589ee6a79f46d7eeeddefd1d33a581c7ceb8955902da3f19c1",
)
_TABLE_INPUTS: tuple[tuple[str, Upstream, Upstream], ...] = tuple(
    (
        table_id,
        Upstream("wenhuchen/WikiTables-WithLinks", _WIKITABLES_COMMITS[tc], f"tables_tok/{table_id}.json", ts, th),
        Upstream("wenhuchen/WikiTables-WithLinks", _WIKITABLES_COMMITS[pc], f"request_tok/{table_id}.json", ps, ph),
    )
    for table_id, tc, ts, th, pc, ps, ph in _HYBRIDQA_TABLES
)
_TEST_EVAL = Upstream(
    "stanford-oval/spinach",
    SPINACH_COMMIT,
    "tests/test_eval.py",
    7081,
    "6b21350fa102a1e8917f67472d4fb958081fe41d6e560219e02e539bb53477dd",
)


def _derive_hybridqa(got: Mapping[Upstream, bytes]) -> dict[str, bytes]:
    tables = [TableSource(tid, got[t], t.commit, got[p], p.commit) for tid, t, p in _TABLE_INPUTS]
    return hybridqa_sample(got[_TRACED], tables, HYBRIDQA_COMMIT)


def _derive_row_f1(got: Mapping[Upstream, bytes]) -> dict[str, bytes]:
    return {"spinach/row_f1_cases.json": row_f1_cases(got[_TEST_EVAL])}


CATALOGUE: tuple[Entry, ...] = (
    Entry(
        DATASETS[0],
        (
            _hybridqa("manifest.json", "b7120528e1b0052a06527035daa3d05956df60902cb5a13da214ebd538a361d4", 3950),
            _hybridqa(
                "2007_European_Women's_Artistic_Gymnastics_Championships_11.json",
                "413f9f4a0ac9d7716a6f34c15bbdc578b71008a78b01e27458e70d622615ab5e",
                22972,
            ),
            _hybridqa(
                "Alo_(Wallis_and_Futuna)_0.json",
                "d5b8bd4f810af3903e1201996f8c4ae20be73e9e81add3de8e6c2cb3ec8c1019",
                12531,
            ),
            _hybridqa(
                "Eastern_Kentucky_Coalfield_1.json",
                "85bca844e4521078a74f903c678fd22ab4921bf338f5231ae9d0e0122545a277",
                19873,
            ),
            _hybridqa(
                "Indian_Television_Academy_Awards_0.json",
                "99a5773e28cae290d0d1755add00f59b0e717f69a9de26ecdfa3138dad68ca4b",
                18663,
            ),
            _hybridqa(
                "Indian_Television_Academy_Awards_1.json",
                "db9052b21b80049b5160beb225fdad0660707cb16a0631c9b6ab1048dc2436f3",
                26208,
            ),
            _hybridqa("Jason_Segel_1.json", "949f635c3c11bb5701095facab8ef095575c78ff30927fe3969991c583a87120", 18008),
            _hybridqa(
                "List_of_Living_National_Treasures_of_Japan_(performing_arts)_0.json",
                "5c0e330d8114e49a4e8bbb67b4584d07db3810a44bf9c8238a70bee76b9efcdf",
                14195,
            ),
            _hybridqa(
                "List_of_Places_of_Scenic_Beauty_of_Japan_(Mie)_0.json",
                "1dcbb40d14b4d8bbfbfa7427e3c157cb29686410d46cce2a653589baac2cf39a",
                9694,
            ),
            _hybridqa(
                "List_of_craters_on_Mercury_5.json",
                "cce17b69005b25caa52d066cd875be5f5eba2bfbf549c53bfe37d2b4b08defc9",
                15616,
            ),
            _hybridqa(
                "List_of_fictional_pachyderms_3.json",
                "ddc710753f79ebacacbe711134af8580435d4b647795f42553937dd9acdc459a",
                19511,
            ),
            _hybridqa(
                "Ohio_House_of_Representatives,_127th_General_Assembly_0.json",
                "2e4984389ecc061448ae9a615105d2ca028dcfc211bd1e899e0e124212018c7f",
                27766,
            ),
            _hybridqa("Romania_1.json", "2f4e7f10ac5ff9efacd91eec9aa70435970cfea8558d3f29e069524d54ab8e14", 16164),
            _hybridqa(
                "Ronde_van_Drenthe_1.json", "0e3a330e1a6319e2070271e2bf6d15e44a745496589345cd7e06afdffbe54180", 24854
            ),
            _hybridqa(
                "UCI_Mountain_Bike_World_Cup_6.json",
                "9931b7f5a41ba12465492f6c57ae22f8be096c701900dba1dce68fdac3ec4506",
                19677,
            ),
        ),
        "a sample of wenhuchen/HybridQA released_data/dev.traced.json joined with wenhuchen/WikiTables-WithLinks "
        "tables_tok/ and request_tok/ (each file's `source` names its commits), built from those files upstream",
        "MIT (questions); CC BY-SA (Wikipedia tables and passages)",
        Build((_TRACED, *(u for _tid, t, p in _TABLE_INPUTS for u in (t, p))), _derive_hybridqa),
    ),
    Entry(
        DATASETS[1],
        (
            DataFile(
                "spinach/dev.json",
                "e4a590e05b0fc00e7dddc1ac0a6253f134d8eb52d9ab5930ad4add3096e2ef86",
                138246,
                Upstream(
                    "stanford-oval/spinach",
                    SPINACH_COMMIT,
                    "spinach_dataset/dev.json",
                    138246,
                    "e4a590e05b0fc00e7dddc1ac0a6253f134d8eb52d9ab5930ad4add3096e2ef86",
                ),
            ),
        ),
        "stanford-oval/spinach spinach_dataset/dev.json",
        "Apache-2.0",
    ),
    Entry(
        DATASETS[2],
        (
            DataFile(
                "spinach/row_f1_cases.json", "5fd8708084999ff43708cb1f7901d7cb8ab5ba8334d85d92bab8035389ab7552", 9260
            ),
        ),
        "values read from stanford-oval/spinach tests/test_eval.py (parsed, never run), built from that file upstream",
        "Apache-2.0",
        Build((_TEST_EVAL,), _derive_row_f1),
    ),
    Entry(
        DATASETS[3],
        (
            DataFile(
                "suql_paper/restaurants_single_turn_SUQL.csv",
                "551cf2eb868d4cc37a7c7778fb086b0f9e87626b2512d28a80d1a576cb0cb9a6",
                92512,
                # upstream's form, with the Prolific ID column: 94,922 bytes at this commit
                Upstream("stanford-oval/suql", SUQL_COMMIT, "paper_data/restaurants_single_turn_SUQL.csv", 94922),
                "drop-prolific-id",
            ),
        ),
        "stanford-oval/suql paper_data/restaurants_single_turn_SUQL.csv, without its Prolific ID column",
        "Apache-2.0",
    ),
)


def entry(name: str) -> Entry:
    for e in CATALOGUE:
        if e.dataset.name == name:
            return e
    names = ", ".join(e.dataset.name for e in CATALOGUE)
    raise DataError(f"No data set is called {name!r}: the data sets are {names}.")


# --- where ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """Where one data set was found (``path`` None: nowhere), and how its files compare with the catalogue."""

    entry: Entry
    path: Path | None
    how: str  # "CS224V_DATA" | "user data folder" | "source checkout" | ""
    ok: int = 0  # files with the catalogue's checksum
    differ: tuple[str, ...] = ()  # files present with other bytes (a user's own copy, or a damaged one)
    missing: tuple[str, ...] = ()  # files of the data set not there
    message: str = ""  # for a data set found nowhere: where it was looked for and how to get it

    # Hand-written: the data set's name, title, users and source come from its catalogue entry, and "found" is
    # computed; empty strings are written as null.
    def to_json(self) -> dict[str, object]:
        return {
            "name": self.entry.dataset.name,
            "title": self.entry.dataset.title,
            "found": self.path is not None,
            "path": str(self.path) if self.path is not None else None,
            "how": self.how or None,
            "files_ok": self.ok,
            "files_differ": list(self.differ),
            "files_missing": list(self.missing),
            "used_by": self.entry.dataset.used_by,
            "source": self.entry.source,
            "message": self.message or None,
        }


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def where(settings: Settings) -> list[Found]:
    """Each data set: the first data folder that holds it (see ``Settings.data_roots``), checked file by file."""
    roots = settings.data_roots()
    out: list[Found] = []
    for e in CATALOGUE:
        d = e.dataset
        hit = next(((how, root) for how, root in roots if (root / d.path).exists()), None)
        if hit is None:
            out.append(Found(e, None, "", message=missing_message(d.path, roots)))
            continue
        how, root = hit
        ok, differ, missing = 0, [], []
        for f in e.files:
            p = root / f.path
            if not p.is_file():
                missing.append(f.path)
            elif p.stat().st_size == f.size and sha256_of(p) == f.sha256:
                ok += 1
            else:
                differ.append(f.path)
        out.append(Found(e, root / d.path, how, ok, tuple(differ), tuple(missing)))
    return out


# --- fetch ---------------------------------------------------------------------------------------------


@dataclass
class Progress:
    """What ``fetch`` reports: a file started, bytes came, a file was done (or was already there); for a derived
    data set, an upstream file was downloaded (``input``) and a file was built from them (``built``)."""

    path: str  # a data file's path, or an upstream file's owner/repo/path
    done: int
    total: int
    state: str  # "start" "bytes" "done" "present" "input" "built" "kept" (path: the old file renamed)
    url: str = ""
    checked: bool = True  # "input": whether its own SHA-256 was checked (else only the built files' are)


@dataclass
class Fetched:
    target: Path
    downloaded: list[str] = field(default_factory=list)
    built: list[str] = field(default_factory=list)  # files of derived data sets, built from upstream files
    present: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # a file that was there with other bytes, renamed: its new name


def _rebuilt(data: bytes, how: str | None) -> bytes:
    if how is None:
        return data
    if how == "drop-prolific-id":
        try:
            rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        except (UnicodeDecodeError, csv.Error) as e:
            raise ChecksumMismatch(f"the downloaded CSV cannot be read ({e})") from None
        if not rows or "Prolific ID" not in rows[0]:
            return data  # not the upstream form: the checksum decides
        drop = rows[0].index("Prolific ID")
        out = io.StringIO(newline="")
        csv.writer(out, lineterminator="\r\n").writerows([r[:drop] + r[drop + 1 :] for r in rows])
        return out.getvalue().encode("utf-8")
    raise DataError(f"unknown rebuild step {how!r}")


def _intact(path: Path, size: int, sha256: str) -> bool:
    return path.is_file() and path.stat().st_size == size and sha256_of(path) == sha256


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


def _range_start(content_range: str | None) -> int | None:
    """The first byte of ``Content-Range: bytes START-END/TOTAL``, or None."""
    unit, _, spec = (content_range or "").strip().partition(" ")
    start = spec.partition("-")[0].strip()
    return int(start) if unit == "bytes" and start.isdigit() else None


def _mkdir(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"Cannot create the folder {folder}: {e.strerror or e}.") from None


def _write(dest: Path, data: bytes | None) -> Path | None:
    """Put ``data`` (None: what ``dest``'s part file holds) at ``dest`` atomically: written beside it, then renamed.

    Whatever was at ``dest`` (a user's own copy, or a damaged one: callers write only where the catalogue's bytes are
    not) is never lost: it is renamed to the first free ``NAME.before-fetch[.N]`` first, and that path returned."""
    part = dest.with_name(dest.name + ".part")
    kept = None
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if data is not None:
            part.write_bytes(data)
        if os.path.lexists(dest):
            kept = _free_name(dest, ".before-fetch")
            os.rename(dest, kept)
        os.replace(part, dest)
    except OSError as e:
        raise DataError(f"Cannot write {dest}: {e.strerror or e}.") from None
    return kept


def _free_name(path: Path, suffix: str) -> Path:
    for n in range(1, 1000):
        candidate = path.with_name(path.name + suffix + (f".{n}" if n > 1 else ""))
        if not os.path.lexists(candidate):
            return candidate
    raise DataError(f"Cannot keep the old {path}: {path.name}{suffix}.1 to .999 are all taken; move them away.")


def fetch(
    settings: Settings,
    names: Iterable[str] | None = None,
    *,
    to: Path | None = None,
    mirror: str | None = None,
    upstream: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Fetched:
    """Download the data sets ``names`` (default: all) into ``to`` (default: the user data folder).

    Files already there with the right checksum are kept.  ``mirror`` (default: the ``data_url`` setting) is a
    base URL laid out like the shared data folder; without one each file comes from upstream (``upstream``, default
    the ``data_upstream_url`` setting, serves the pinned repositories as raw.githubusercontent.com does), and the
    derived data sets are built from their upstream files.  Raises :class:`FetchFailed`, :class:`TooLarge` and
    :class:`ChecksumMismatch` (the files fetched before stay, each one whole).  Runs its own event loop: call it
    from synchronous code.
    """
    target = Path(to) if to is not None else user_data_folder()
    entries = [entry(n) for n in names] if names else list(CATALOGUE)
    _mkdir(target)
    run = _Fetch(
        target,
        mirror if mirror is not None else settings.data_url,
        upstream if upstream is not None else settings.data_upstream_url,
        settings.data_fetch_deadline_s,
        progress or (lambda _p: None),
    )
    return asyncio.run(run.all(entries, transport))


class _Fetch:
    """One ``fetch``: its HTTP client, target folder, bounds and report."""

    def __init__(
        self, target: Path, mirror: str | None, upstream: str, deadline_s: float, report: Callable[[Progress], None]
    ) -> None:
        self.target = target
        self.mirror = mirror.rstrip("/") if mirror else None
        self.upstream = upstream
        self.deadline_s = deadline_s
        self.report = report
        self.result = Fetched(target)
        self.client: httpx.AsyncClient

    async def all(self, entries: list[Entry], transport: httpx.AsyncBaseTransport | None) -> Fetched:
        import httpx

        # trust_env=False: no proxy, .netrc or certificate settings from the environment; redirects: see _open
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(IDLE_TIMEOUT_S), follow_redirects=False, trust_env=False, transport=transport
        ) as self.client:
            for e in entries:
                if self.mirror is None and e.build is not None:
                    await self._build(e, e.build)
                    continue
                for f in e.files:
                    if self.mirror is not None:
                        await self._file(f, f"{self.mirror}/{quote(f.path)}", f.size, None)
                    elif f.upstream is not None:
                        await self._file(f, f.upstream.url(self.upstream), f.upstream.cap, f.rebuild)
                    else:  # pragma: no cover - every catalogue file has an upstream source or a build
                        raise DataError(f"{f.path} has no upstream source: set CS224V_DATA_URL to a mirror.")
        return self.result

    # --- one file as it is (or rebuilt from upstream's form) --------------------------------------------------

    async def _file(self, f: DataFile, url: str, limit: int, how: str | None) -> None:
        dest = self.target / f.path
        if _intact(dest, f.size, f.sha256):
            self.result.present.append(f.path)
            self.report(Progress(f.path, f.size, f.size, "present", url))
            return
        _mkdir(dest.parent)
        part = dest.with_name(dest.name + ".part")
        self.report(Progress(f.path, 0, f.size, "start", url))
        got = await self._download(
            f.path, url, part, limit, lambda done, total: self.report(Progress(f.path, done, total, "bytes", url))
        )
        data = None
        if how is not None:
            data = _rebuilt(part.read_bytes(), how)  # at most `limit` bytes
            got = hashlib.sha256(data).hexdigest()
        if got != f.sha256:
            part.unlink(missing_ok=True)
            raise ChecksumMismatch(
                f"{f.path} from {url} does not match its checksum: expected SHA-256 {f.sha256}, got {got} "
                f"(expected {f.size:,} bytes). Nothing was written; the source may have changed "
                "or the download was damaged — try again, or use a mirror of the shared data (CS224V_DATA_URL)."
            )
        self._kept(_write(dest, data))
        self.result.downloaded.append(f.path)
        self.report(Progress(f.path, f.size, f.size, "done", url))

    # --- a derived data set, built from its upstream files ----------------------------------------------------

    async def _build(self, e: Entry, build: Build) -> None:
        todo = []
        for f in e.files:
            if _intact(self.target / f.path, f.size, f.sha256):
                self.result.present.append(f.path)
                self.report(Progress(f.path, f.size, f.size, "present", "built from upstream"))
            else:
                todo.append(f)
        if not todo:
            return
        staged = [self.target / STAGING / u.repo / u.commit / u.path for u in build.inputs]
        got = {u: await self._input(u, path) for u, path in zip(build.inputs, staged)}
        try:
            derived = build.derive(got)
            digests = {path: hashlib.sha256(data).hexdigest() for path, data in derived.items()}
            bad = [(f, digests.get(f.path, "nothing (not built)")) for f in todo if digests.get(f.path) != f.sha256]
            if bad:
                what = "; ".join(f"{f.path}: expected SHA-256 {f.sha256}, got {sha}" for f, sha in bad)
                raise ChecksumMismatch(
                    f"The {e.dataset.name} data set built from its upstream files ({self.upstream}) does not match "
                    f"its checksums: {what}. Nothing was written; an upstream file may have changed — use a mirror "
                    "of the shared data (CS224V_DATA_URL) instead."
                )
        except Exception:
            self._unstage(staged)  # a wrong upstream file is downloaded again next time
            raise
        for f in todo:
            self._kept(_write(self.target / f.path, derived[f.path]))
            self.result.built.append(f.path)
            self.report(Progress(f.path, f.size, f.size, "built", "built from upstream"))
        self._unstage(staged)

    def _kept(self, old: Path | None) -> None:
        if old is not None:
            shown = str(old.relative_to(self.target)) if old.is_relative_to(self.target) else str(old)
            self.result.kept.append(shown)
            self.report(Progress(shown, 0, 0, "kept", ""))

    async def _input(self, u: Upstream, path: Path) -> bytes:
        """One upstream file of a build: downloaded into ``path`` (resumable), checked, and read (at most its cap)."""
        url = u.url(self.upstream)
        if path.is_file() and path.stat().st_size <= u.cap and (u.sha256 is None or sha256_of(path) == u.sha256):
            return path.read_bytes()  # downloaded by an earlier fetch whose build did not finish
        _mkdir(path.parent)
        part = path.with_name(path.name + ".part")
        self.report(Progress(u.name, 0, u.size, "start", url))
        got = await self._download(
            u.name, url, part, u.cap, lambda done, total: self.report(Progress(u.name, done, total, "bytes", url))
        )
        if u.sha256 is not None and got != u.sha256:
            part.unlink(missing_ok=True)
            raise ChecksumMismatch(
                f"The upstream file {url} does not match its checksum: expected SHA-256 {u.sha256}, got {got}. "
                "Nothing was written; try again, or use a mirror of the shared data (CS224V_DATA_URL)."
            )
        _write(path, None)
        data = path.read_bytes()
        self.report(Progress(u.name, len(data), u.size, "input", url, checked=u.sha256 is not None))
        return data

    def _unstage(self, staged: list[Path]) -> None:
        for path in staged:
            path.unlink(missing_ok=True)
            path.with_name(path.name + ".part").unlink(missing_ok=True)
        root = self.target / STAGING
        for folder in sorted(
            {p for path in staged for p in path.parents if root in p.parents or p == root}, reverse=True
        ):
            try:
                folder.rmdir()  # only when empty
            except OSError:
                pass

    # --- HTTP -------------------------------------------------------------------------------------------------

    async def _open(self, url: str, headers: dict[str, str]) -> httpx.Response:
        """GET ``url``, following redirects within its origin only."""
        request = self.client.build_request("GET", url, headers=headers)
        for _hop in range(MAX_REDIRECTS + 1):
            response = await self.client.send(request, stream=True)
            if not response.has_redirect_location or response.next_request is None:
                return response
            following = response.next_request
            await response.aclose()
            if _origin(following.url) != _origin(request.url):
                raise FetchFailed(
                    f"Could not download {url}: {request.url} redirects to {following.url}, another origin; "
                    f"redirects are followed only within {request.url.scheme}://{request.url.netloc.decode()}."
                )
            request = following
        raise FetchFailed(f"Could not download {url}: more than {MAX_REDIRECTS} redirects.")

    async def _download(self, what: str, url: str, part: Path, limit: int, on_bytes: Callable[[int, int], None]) -> str:
        """Stream ``url`` into ``part`` (continuing what is there with a Range request when the server allows it),
        at most ``limit`` bytes in all, within the deadline; the SHA-256 of the part file when done."""
        import httpx

        have = part.stat().st_size if part.is_file() else 0
        if have > limit:
            part.unlink()
            have = 0
        h = hashlib.sha256()
        if have:
            with part.open("rb") as f:
                for chunk in iter(lambda: f.read(CHUNK), b""):
                    h.update(chunk)
            if have == limit:
                return h.hexdigest()  # as long as the file can be: check it as it is
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if have:
            headers["Range"] = f"bytes={have}-"
        done = have
        deadline = asyncio.timeout(self.deadline_s)
        try:
            async with deadline:
                response = await self._open(url, headers)
                try:
                    if response.status_code == 416 and have:  # the part file is already whole: check it as is
                        return h.hexdigest()
                    if response.status_code not in (200, 206):
                        raise FetchFailed(
                            f"Could not download {url}: HTTP {response.status_code} {response.reason_phrase}."
                        )
                    if response.status_code == 206 and (
                        not have or _range_start(response.headers.get("Content-Range")) != have
                    ):
                        part.unlink(missing_ok=True)
                        raise FetchFailed(
                            f"Could not download {url}: asked for the bytes from {have:,} on, it sent "
                            f"{response.headers.get('Content-Range')!r}. The partial download was dropped; run "
                            "`cs224v-tui data fetch` again."
                        )
                    if response.status_code == 200 and have:  # the whole file again
                        h, done = hashlib.sha256(), 0
                    coding = response.headers.get("Content-Encoding", "identity").strip().lower()
                    if coding not in ("", "identity"):  # asked for identity: a compressed body could be a bomb
                        raise FetchFailed(
                            f"Could not download {url}: it sends Content-Encoding {coding!r}, not the file's bytes "
                            "as asked (identity)."
                        )
                    length = response.headers.get("Content-Length", "").strip()
                    if length.isdigit() and done + int(length) > limit:
                        part.unlink(missing_ok=True)
                        raise TooLarge(
                            f"{what} from {url}: the server announces {done + int(length):,} bytes, more than the "
                            f"{limit:,} this file can have. Nothing was downloaded or written."
                        )
                    total = done + int(length) if length.isdigit() else limit
                    with part.open("ab" if done else "wb") as out:
                        async for chunk in response.aiter_bytes():  # as they come (one read: at most 64 KiB)
                            if done + len(chunk) > limit:
                                out.close()
                                part.unlink(missing_ok=True)
                                raise TooLarge(
                                    f"{what} from {url}: the server sends more than the {limit:,} bytes this file "
                                    f"can have (stopped after {done + len(chunk):,}). Nothing was written."
                                )
                            out.write(chunk)
                            h.update(chunk)
                            done += len(chunk)
                            on_bytes(done, total)
                finally:
                    await response.aclose()
        except httpx.HTTPError as e:
            raise FetchFailed(
                f"Could not download {url}: {type(e).__name__}: {e or 'no reply'}. "
                "Check the network (or CS224V_DATA_URL) and run `cs224v-tui data fetch` again: it continues."
            ) from None
        except TimeoutError:
            if not deadline.expired():
                raise FetchFailed(f"Could not download {url}: timed out. Run `cs224v-tui data fetch` again.") from None
            raise FetchFailed(
                f"Could not download {url} within the {self.deadline_s:g} s deadline for one file "
                f"(CS224V_DATA_FETCH_DEADLINE_S): {done:,} bytes came. Run `cs224v-tui data fetch` again: it continues."
            ) from None
        except OSError as e:
            raise DataError(f"Cannot write {part}: {e.strerror or e}.") from None
        return h.hexdigest()


__all__ = [
    "CATALOGUE",
    "Build",
    "ChecksumMismatch",
    "DataError",
    "DataFile",
    "Entry",
    "FetchFailed",
    "Fetched",
    "Found",
    "Progress",
    "TooLarge",
    "Upstream",
    "entry",
    "fetch",
    "sha256_of",
    "where",
]
