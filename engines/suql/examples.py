"""Example SUQL queries: the lecture's, and the SUQL paper's 100 real ones (../shared/data)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engines.settings import Settings


@dataclass(frozen=True)
class Example:
    title: str
    sql: str
    source: str  # "lecture 7 §2.1", "SUQL paper #12", ...


LECTURE: tuple[Example, ...] = (
    Example(
        "family-friendly in Palo Alto (answer() written first)",
        "SELECT name, summary(reviews) FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' AND location = 'Palo Alto' LIMIT 1",
        "lecture 7 §3.3",
    ),
    Example(
        "romantic or a great view in Mountain View, top 3 by rating",
        "SELECT name, rating FROM restaurants WHERE location = 'Mountain View' AND (answer(reviews, 'is it romantic?') = 'Yes' OR answer(reviews, 'does it have a great view?') = 'Yes') ORDER BY rating DESC LIMIT 3",
        "lecture 7 §2.5",
    ),
    Example(
        "a first date, sushi in Palo Alto",
        "SELECT *, summary(reviews) FROM restaurants WHERE 'sushi bars' = ANY (cuisines) AND location = 'Palo Alto' AND rating >= 4.0 AND answer(reviews, 'is this restaurant good for a first date?') = 'Yes' ORDER BY num_reviews DESC LIMIT 1",
        "lecture 7 §2.2",
    ),
    Example(
        "pasta in Palo Alto: LIKE finds nothing",
        "SELECT name, popular_dishes FROM restaurants WHERE location = 'Palo Alto' AND array_to_string(popular_dishes, ' ') LIKE '%pasta%'",
        "lecture 7 §2.4",
    ),
    Example(
        "pasta in Palo Alto: answer() knows cacio e pepe is pasta",
        "SELECT name, popular_dishes FROM restaurants WHERE location = 'Palo Alto' AND answer(popular_dishes, 'does this restaurant serve pasta?') = 'Yes'",
        "lecture 7 §2.4",
    ),
    Example(
        "easy parking: similarity is not satisfaction",
        "SELECT name FROM restaurants WHERE answer(reviews, 'is parking easy?') = 'Yes'",
        "lecture 7 §3.5",
    ),
    Example(
        "good for a date and easy parking, best rated in Palo Alto",
        "SELECT name, rating FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it good for a date?') = 'Yes' AND answer(reviews, 'is parking easy?') = 'Yes' ORDER BY rating DESC LIMIT 1",
        "lecture 7 exercise 1",
    ),
    Example(
        "open late? a parse error, read back faithfully",
        "SELECT name, opening_hours FROM restaurants WHERE location = 'Mountain View' AND 'chinese' = ANY (cuisines) AND opening_hours > '10pm' LIMIT 3",
        "lecture 7 §4.2",
    ),
    Example(
        "not spicy: unknown stays unknown",
        "SELECT name FROM restaurants WHERE location = 'Sunnyvale' AND 'thai' = ANY (cuisines) AND NOT (answer(reviews, 'is the food spicy?') = 'Yes')",
        "note 002",
    ),
    Example(
        "how many family-friendly places per location",
        "SELECT location, COUNT(*) AS n FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' GROUP BY location ORDER BY n DESC",
        "lecture 7 §2.1",
    ),
    Example(
        "a summary of the best Korean place in Sunnyvale (CTE)",
        "WITH korean AS (SELECT * FROM restaurants WHERE 'korean' = ANY (cuisines) AND location = 'Sunnyvale') SELECT name, summary(reviews) FROM korean ORDER BY rating DESC, num_reviews DESC LIMIT 1",
        "lecture 7 §3.6",
    ),
)


PAPER_QUERIES = ("suql_paper", "restaurants_single_turn_SUQL.csv")
"""Where the SUQL paper's queries are in a data folder (``Settings.shared_data``: ``CS224V_DATA``, else the user
data folder, else ``../shared/data`` beside the repository)."""


def paper_queries(settings: Settings) -> list[Example]:
    """The "Predicted SUQL" of the SUQL paper's 100 real user questions, from the data folder ``settings``
    names (none when no data folder holds them)."""
    path = settings.shared_data(*PAPER_QUERIES)
    return read_paper_queries(path) if path is not None else []


def read_paper_queries(path: Path) -> list[Example]:
    """The "Predicted SUQL" column of the paper's CSV at ``path`` (none when it is not a file)."""
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return [
            Example(row["Utterance"].strip(), row["Predicted SUQL"].strip(), f"SUQL paper #{row['Unique ID']}")
            for row in csv.DictReader(f)
            if row.get("Predicted SUQL", "").strip()
        ]


def read_query_file(path: Path, text: str | None = None) -> list[str]:
    """One query per line, or the "Predicted SUQL" column of a CSV.  ``text``: the file's text, already read (within
    its bound: the command line reads a person's file once, capped); else ``path`` is read."""
    if text is None:
        text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if reader.fieldnames and "Predicted SUQL" in reader.fieldnames:
            return [r["Predicted SUQL"].strip() for r in reader if r["Predicted SUQL"].strip()]
        raise ValueError(f"{path} has no 'Predicted SUQL' column")
    lines = text.splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("--")]
