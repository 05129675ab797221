"""The six HybridQA question types of lecture 7 §2.3 as SUQL, on the first generated table.

The queries are written from the table's visible rows (a Games, its host city, a gender), the way
the slides write them; they make the generated world browsable in the SUQL tab.
"""

from __future__ import annotations

from engines.suql.examples import Example
from worlds.hybridqa.model import HybridWorld


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def type_examples(world: HybridWorld) -> tuple[Example, ...]:
    """One SUQL query per HybridQA type over the world's first table."""
    from engines.sql.sim_reader import read

    table = world.tables[0]
    rows = table.records()
    first, second = rows[-1]["Name"] or "", rows[-2]["Name"] or ""  # the generated world names every Games
    city = None
    for row in rows:
        read_out = read(row["Event year_Info"] or "", "where were the games held?")  # None: a question it cannot read
        if read_out is not None and read_out[0].value:
            city = read_out[0].value.split(",")[0].strip()
            break
    held = f"answer(\"Event year_Info\", {_q(f'were the games held in {city}?')}) = 'Yes'" if city else "TRUE"
    born = "answer(\"Flag Bearer_Info\", 'when was this person born?')"
    t = table.name
    source = "lecture 7 §2.3"
    return (
        Example(
            f"I (T→P): when was the flag bearer of the {first} Olympics born?",
            f'SELECT "Name", "Flag Bearer", {born} AS born FROM {t} WHERE "Name" = {_q(first)}',
            source,
        ),
        Example(
            f"II (P→T): which Olympics were held in {city}?",
            f'SELECT "Name", "Event year" FROM {t} WHERE {held}',
            source,
        ),
        Example(
            f"III (P→T→P): when was the flag bearer of the Olympics held in {city} born?",
            f'SELECT "Flag Bearer", {born} AS born FROM {t} WHERE {held}',
            source,
        ),
        Example(
            "IV (T&P→T): which male flag bearer competed in athletics?",
            f'SELECT "Flag Bearer" FROM {t} WHERE "Gender" = \'Male\' AND '
            "answer(\"Flag Bearer_Info\", 'did this person compete in athletics?') = 'Yes'",
            source,
        ),
        Example(
            f"V (compare): who is older, the flag bearer of {first} or of {second}?",
            f'SELECT "Flag Bearer", {born} AS born FROM {t} WHERE "Name" IN ({_q(first)}, {_q(second)}) '
            f"ORDER BY {born}::date ASC LIMIT 1",
            source,
        ),
        Example(
            "VI (superlative): who is the youngest flag bearer?",
            f'SELECT "Flag Bearer", {born} AS born FROM {t} ORDER BY {born}::date DESC LIMIT 1',
            source,
        ),
    )
