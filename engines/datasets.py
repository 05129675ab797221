"""The real data sets: what each file is, its SHA-256, where to download it, and where it was found.

    where(settings)                      # [Found(dataset, path, how, files_ok, files_bad, missing)] in catalogue order
    fetch(settings, progress=print_it)   # download every data set into the user data folder, checked
    fetch(settings, names=["spinach-dev"], to=Path("elsewhere"))

Every file has the SHA-256 of the copy in the course's shared data folder.  A file is downloaded from
the mirror ``data_url`` (``CS224V_DATA_URL``: any HTTP(S) folder laid out like the shared data folder)
when one is set, else from its public source upstream, pinned to a commit; a file that upstream holds
only in another form is rebuilt from it (the SUQL paper's CSV without its Prolific ID column).  The
HybridQA sample and the row-F1 cases are derived files (a selection of tables joined with their passages
and questions; values read out of a Python test) with no public copy of their bytes: only a mirror has
them, and without one ``fetch`` says so and how to get them.

Downloads are resumable and atomic: bytes go to ``FILE.part`` (a later ``fetch`` continues it with an
HTTP Range request), the whole file is checked against its SHA-256, and only then renamed into place.
A checksum mismatch deletes the part file and raises :class:`ChecksumMismatch`; a network failure raises
:class:`FetchFailed` naming the URL — the part file stays, for the next try.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from engines.errors import EngineError
from worlds.data import DATASETS, DataSet, missing_message, user_data_folder

if TYPE_CHECKING:
    from engines.settings import Settings

CHUNK = 64 * 1024
TIMEOUT_S = 30.0
USER_AGENT = "cs224v-tui data fetch (https://github.com/stanford-oval; course tool)"

_SPINACH = "https://raw.githubusercontent.com/stanford-oval/spinach/2142ebce539146c688b4f0f927fa42641fa11572"
_SUQL = "https://raw.githubusercontent.com/stanford-oval/suql/98631933ec1bf77990dd011d9be54b09017c6510"


class DataError(EngineError):
    """A data set cannot be fetched."""


class FetchFailed(DataError):
    """The download itself failed (network, HTTP status)."""


class ChecksumMismatch(DataError):
    """The bytes downloaded are not the file the catalogue names."""


class NoSource(DataError):
    """No source is known for a data set (a derived file, and no mirror set)."""


@dataclass(frozen=True)
class DataFile:
    path: str  # "/"-separated, under the data folder
    sha256: str
    size: int
    upstream: str | None = None  # a public URL of these bytes, or of what they are rebuilt from
    rebuild: str | None = None  # how: "drop-prolific-id"


@dataclass(frozen=True)
class Entry:
    dataset: DataSet
    files: tuple[DataFile, ...]
    source: str  # where the data comes from, for people
    licence: str


def _hybridqa(name: str, sha: str, size: int) -> DataFile:
    return DataFile(f"hybridqa/{name}", sha, size)


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
        "tables_tok/ and request_tok/ (each file's `source` names its commits); derived, so only a mirror has it",
        "MIT (questions); CC BY-SA (Wikipedia tables and passages)",
    ),
    Entry(
        DATASETS[1],
        (
            DataFile(
                "spinach/dev.json",
                "e4a590e05b0fc00e7dddc1ac0a6253f134d8eb52d9ab5930ad4add3096e2ef86",
                138246,
                f"{_SPINACH}/spinach_dataset/dev.json",
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
        "values read from stanford-oval/spinach tests/test_eval.py; derived, so only a mirror has it",
        "Apache-2.0",
    ),
    Entry(
        DATASETS[3],
        (
            DataFile(
                "suql_paper/restaurants_single_turn_SUQL.csv",
                "551cf2eb868d4cc37a7c7778fb086b0f9e87626b2512d28a80d1a576cb0cb9a6",
                92512,
                f"{_SUQL}/paper_data/restaurants_single_turn_SUQL.csv",
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
    """What ``fetch`` reports: a file started, bytes came, a file was done (or was already there)."""

    path: str
    done: int
    total: int
    state: str  # "start" | "bytes" | "done" | "present"
    url: str = ""


@dataclass
class Fetched:
    target: Path
    downloaded: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)  # data sets with no source (derived, and no mirror)
    note: str = ""  # what to do about them


def file_url(f: DataFile, mirror: str | None) -> tuple[str, str | None]:
    """(URL, rebuild step) of one file: the mirror's copy as is, else its public source upstream."""
    if mirror:
        return f"{mirror.rstrip('/')}/{quote(f.path)}", None
    if f.upstream is None:
        raise NoSource("no source")
    return f.upstream, f.rebuild


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


def _download(client, url: str, part: Path, on_bytes: Callable[[int, int], None]) -> None:
    """Stream ``url`` into ``part``, continuing what is there with a Range request when the server allows it."""
    import httpx

    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": USER_AGENT}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        with client.stream("GET", url, headers=headers) as r:
            if r.status_code == 416 and have:  # the part file is already whole (or longer): check it as is
                return
            if r.status_code not in (200, 206):
                raise FetchFailed(f"Could not download {url}: HTTP {r.status_code} {r.reason_phrase}.")
            mode = "ab" if r.status_code == 206 and have else "wb"
            done = have if mode == "ab" else 0
            length = r.headers.get("Content-Length")
            total = done + int(length) if length and length.isdigit() else 0
            with part.open(mode) as out:
                for chunk in r.iter_bytes(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    on_bytes(done, total)
    except httpx.HTTPError as e:
        raise FetchFailed(
            f"Could not download {url}: {type(e).__name__}: {e or 'no reply'}. "
            "Check the network (or CS224V_DATA_URL) and run `cs224v-tui data fetch` again: it continues."
        ) from None


def fetch(
    settings: Settings,
    names: Iterable[str] | None = None,
    *,
    to: Path | None = None,
    mirror: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    transport=None,
) -> Fetched:
    """Download the data sets ``names`` (default: all) into ``to`` (default: the user data folder).

    Files already there with the right checksum are kept.  ``mirror`` (default: the ``data_url`` setting)
    is a base URL laid out like the shared data folder.  A data set with no source (derived, and no mirror)
    is left out and named in ``unavailable`` with a ``note`` saying how to get it.  Raises
    :class:`FetchFailed` and :class:`ChecksumMismatch` (the files fetched before stay, each one whole).
    """
    import httpx

    target = Path(to) if to is not None else user_data_folder()
    mirror = mirror if mirror is not None else settings.data_url
    entries = [entry(n) for n in names] if names else list(CATALOGUE)
    report = progress or (lambda _p: None)
    plan: list[tuple[DataFile, str, str | None]] = []
    unavailable: list[Entry] = []
    for e in entries:
        try:
            plan.extend((f, *file_url(f, mirror)) for f in e.files)
        except NoSource:
            unavailable.append(e)
    result = Fetched(target)
    if unavailable:
        result.unavailable = [e.dataset.name for e in unavailable]
        result.note = _no_source_message(unavailable, target)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"Cannot create the data folder {target}: {e.strerror or e}.") from None
    with httpx.Client(timeout=TIMEOUT_S, follow_redirects=True, transport=transport) as client:
        for f, url, how in plan:
            dest = target / f.path
            if dest.is_file() and dest.stat().st_size == f.size and sha256_of(dest) == f.sha256:
                result.present.append(f.path)
                report(Progress(f.path, f.size, f.size, "present", url))
                continue
            _fetch_one(client, f, url, how, dest, report)
            result.downloaded.append(f.path)
    return result


def _fetch_one(client, f: DataFile, url: str, how: str | None, dest: Path, report: Callable[[Progress], None]) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"Cannot create {dest.parent}: {e.strerror or e}.") from None
    part = dest.with_name(dest.name + ".part")
    report(Progress(f.path, 0, f.size, "start", url))
    _download(client, url, part, lambda done, total: report(Progress(f.path, done, total or f.size, "bytes", url)))
    data = _rebuilt(part.read_bytes(), how)
    got = hashlib.sha256(data).hexdigest()
    if got != f.sha256:
        part.unlink(missing_ok=True)
        raise ChecksumMismatch(
            f"{f.path} from {url} does not match its checksum: expected SHA-256 {f.sha256}, got {got} "
            f"({len(data):,} bytes, expected {f.size:,}). Nothing was written; the source may have changed "
            "or the download was damaged — try again, or use a mirror of the shared data (CS224V_DATA_URL)."
        )
    if how is not None:
        part.write_bytes(data)
    os.replace(part, dest)
    report(Progress(f.path, f.size, f.size, "done", url))


def _no_source_message(unavailable: Sequence[Entry], target: Path) -> str:
    names = ", ".join(e.dataset.name for e in unavailable)
    lines = [
        f"No public copy of {names} is known: "
        + "; ".join(f"{e.dataset.name} is {e.source}" for e in unavailable)
        + ".",
        "To get them: set CS224V_DATA_URL (or --from URL) to a mirror of the course's shared data folder "
        f"and run `cs224v-tui data fetch` again, or copy that folder's {', '.join(e.dataset.path for e in unavailable)} "
        f"into {target} (or point CS224V_DATA at a copy of the folder).",
    ]
    return " ".join(lines)


__all__ = [
    "CATALOGUE",
    "ChecksumMismatch",
    "DataError",
    "DataFile",
    "Entry",
    "FetchFailed",
    "Fetched",
    "Found",
    "NoSource",
    "Progress",
    "entry",
    "fetch",
    "file_url",
    "sha256_of",
    "where",
]
