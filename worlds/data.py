"""Where the real data sets are: the ``CS224V_DATA`` setting, else the user data folder, else ``../shared/data``
beside a source checkout.

The data (HybridQA tables, the SPINACH dev set and metric cases, the SUQL paper's queries) is not part of the
package.  Each data set is looked for in order:

1. the folder of the ``data_dir`` setting (``CS224V_DATA``) when it is set — then only there: a folder one
   names is where the data is, and a typo says so rather than falling back to another copy;
2. the user data folder (``platformdirs``: ``~/.local/share/cs224v-tui`` on Linux, honouring
   ``XDG_DATA_HOME``), where ``cs224v-tui data fetch`` puts them;
3. ``shared/data`` in or beside a source checkout (or beside the working directory) — unless
   ``CS224V_NO_CHECKOUT_DATA=1``, which makes a checkout behave like an installed wheel.

A data set missing everywhere is said so with :func:`missing_message`: where it was looked for, and how to get it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_dir

APP_NAME = "cs224v-tui"
NO_CHECKOUT_ENV = "CS224V_NO_CHECKOUT_DATA"
FETCH_HINT = "run `cs224v-tui data fetch` (downloads it into {user}) or set CS224V_DATA to a folder that holds it"


@dataclass(frozen=True)
class DataSet:
    """One data set: its name, what it is, and the path (file or folder) under a data folder."""

    name: str
    title: str
    path: str  # relative to a data folder, "/"-separated
    used_by: str


DATASETS: tuple[DataSet, ...] = (
    DataSet(
        "hybridqa",
        "14 real HybridQA dev tables with their linked passages and 42 questions",
        "hybridqa",
        "the HybridQA tab's real tables, `hybridqa --real`",
    ),
    DataSet(
        "spinach-dev",
        "the 155 questions of the SPINACH dev set with their gold SPARQL",
        "spinach/dev.json",
        "the lab's §5.1 dataset complexity (and `sparql --check-dialect` given its path)",
    ),
    DataSet(
        "spinach-row-f1",
        "SPINACH's 14 row-wise F1 test cases",
        "spinach/row_f1_cases.json",
        "the lab's row-F1 check against SPINACH's own tests",
    ),
    DataSet(
        "suql-paper",
        "the 100 real user questions of the SUQL paper and the SUQL its parser wrote",
        "suql_paper/restaurants_single_turn_SUQL.csv",
        "the SUQL tab's paper queries (restaurant world)",
    ),
)


def dataset(name_or_path: str) -> DataSet | None:
    """The data set with this name, or whose path is (or holds) this path."""
    key = name_or_path.strip("/")
    for d in DATASETS:
        if key == d.name or key == d.path or key.startswith(d.path + "/"):
            return d
    return None


def user_data_folder() -> Path:
    """The user data folder, where ``data fetch`` writes (platformdirs; ``XDG_DATA_HOME`` on Linux)."""
    return Path(user_data_dir(APP_NAME, appauthor=False))


def checkout_data_dir() -> Path | None:
    """``shared/data`` in the checkout or beside it (or beside the working directory), if present;
    None under ``CS224V_NO_CHECKOUT_DATA=1``."""
    if os.environ.get(NO_CHECKOUT_ENV, "").strip() not in ("", "0"):
        return None
    here = Path(__file__).resolve()
    candidates = [p / "shared" / "data" for p in here.parents[1:3]]
    candidates.append(Path.cwd().parent / "shared" / "data")
    return next((c for c in candidates if c.is_dir()), None)


def search_roots(explicit: Path | None = None) -> list[tuple[str, Path]]:
    """The folders looked in, in order, each with how it was chosen: the setting alone when it is given,
    else the user data folder and the checkout's ``shared/data`` (when there is one)."""
    if explicit is not None:
        return [("CS224V_DATA", Path(explicit))]
    roots = [("user data folder", user_data_folder())]
    checkout = checkout_data_dir()
    if checkout is not None:
        roots.append(("source checkout", checkout))
    return roots


def locate(roots: Sequence[tuple[str, Path]], *parts: str) -> Path | None:
    """The first ``root/parts`` that exists (with no parts: the first root that exists), or None."""
    for _, root in roots:
        path = root.joinpath(*parts)
        if path.exists():
            return path
    return None


def default_data_dir() -> Path | None:
    """The default of the ``data_dir`` setting: the user data folder when it holds a data set, else the
    checkout's ``shared/data``, else None."""
    for _, root in search_roots():
        if any((root / d.path).exists() for d in DATASETS):
            return root
    return None


def missing_message(path: str, roots: Sequence[tuple[str, Path]] | None = None) -> str:
    """What to say when ``path`` (a data set's path, or a file in one) is found nowhere: which data set it is,
    where it was looked for, and how to get it."""
    roots = search_roots() if roots is None else roots
    d = dataset(path)
    what = f"The {d.name} data set ({d.title})" if d is not None else f"The data file {path}"
    looked = "; ".join(f"{root / path} ({how})" for how, root in roots) or "no data folder"
    return f"{what} is not here: looked in {looked}. To get it: " + FETCH_HINT.format(user=user_data_folder()) + "."


__all__ = [
    "APP_NAME",
    "DATASETS",
    "FETCH_HINT",
    "NO_CHECKOUT_ENV",
    "DataSet",
    "checkout_data_dir",
    "dataset",
    "default_data_dir",
    "locate",
    "missing_message",
    "search_roots",
    "user_data_folder",
]
