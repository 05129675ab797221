"""Issue 26, item 3: a user's files read as a data tool reads them.

* ``NA``, ``N/A``, ``NaN``, ``null``, ``NULL`` and empty fields of a CSV or TSV file are NULL, so numeric and date
  columns keep their types (MAX and ORDER BY are right); ``--null`` replaces the tokens, ``--type COLUMN=TYPE``
  gives a column its type; a value that cannot be read as its column's type is a one-line error naming the file,
  column, value and line, and the file keeps its bytes;
* the description says where each type came from and how many values are NULL;
* one naming rule for the tables files become (``seattle-weather.csv`` is ``seattle_weather``, ``2024.csv``
  ``t_2024``, ``a-b.csv`` beside ``a_b.csv`` ``a_b_2``);
* identifiers, e-mail addresses, URLs and "Name <email>" are text; prose is free text.

Real public files where there are some (palmerpenguins' penguins.csv writes missing values as NA; vega_datasets'
seattle-weather.csv has a dash in its name), installed with the test extra.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import importlib.metadata
import json
from pathlib import Path

import pytest

from engines.data.source import DataSourceError, open_source, table_name
from engines.settings import Settings
from tui.cli import main


def package_file(dist: str, name: str) -> Path:
    try:
        path = Path(str(importlib.metadata.distribution(dist).locate_file(name)))
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{dist} is not installed (pip install -e '.[test]')")
    assert path.is_file(), path
    return path


def penguins_csv() -> Path:
    return package_file("palmerpenguins", "palmerpenguins/data/penguins.csv")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def column(source, table: str, name: str):
    found = source.schema.table(table).column(name)
    assert found is not None, name
    return found


# --- NULL fields: numeric and date columns keep their types ----------------------------------------------------


def test_penguins_with_na_keep_their_numeric_columns():
    """penguins.csv writes its missing measurements and sexes as NA: the measurements are numbers, MAX and
    ORDER BY read them as numbers, and the description counts the NULLs (checked against Python's csv reader)."""
    path = penguins_csv()
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    na = {name: sum(1 for r in rows if r[name] == "NA") for name in rows[0]}
    assert na["bill_length_mm"] == 2 and na["sex"] == 11  # the file as its package ships it
    heaviest = max(int(r["body_mass_g"]) for r in rows if r["body_mass_g"] != "NA")
    with open_source(str(path), Settings()) as source:
        assert column(source, "penguins", "bill_length_mm").type == "DOUBLE"
        assert column(source, "penguins", "body_mass_g").type == "BIGINT"
        assert column(source, "penguins", "body_mass_g").role == "number"
        run = source.sandbox.run
        assert run("SELECT max(bill_length_mm), min(bill_length_mm) FROM penguins").rows == ((59.6, 32.1),)
        top = run("SELECT body_mass_g FROM penguins ORDER BY body_mass_g DESC NULLS LAST LIMIT 1").rows
        assert top == ((heaviest,),)
        assert run("SELECT count(*) FROM penguins WHERE sex IS NULL").rows == ((na["sex"],),)
        table = source.schema.table("penguins")
        assert {c.name: c.nulls for c in table.columns} == na
        assert table.file == "penguins.csv" and table.null_tokens == ("NA", "N/A", "NaN", "null", "NULL", "")
        assert {c.type_from for c in table.columns} == {"inferred"}


def test_every_null_token_in_numeric_and_date_columns(tmp_path):
    tokens = ["NA", "N/A", "NaN", "null", "NULL", ""]
    lines = ["id,delay,day,note"]
    lines += [f"{i},{(i * 37) % 90 - 10},2024-03-{i % 28 + 1:02d},n{i}" for i in range(1, 41)]
    lines += [f"{100 + i},{t},{t},{t}" for i, t in enumerate(tokens)]
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        path = tmp_path / f"flights.{fmt}"
        path.write_text("\n".join(line.replace(",", sep) for line in lines) + "\n")
        with open_source(str(path), Settings()) as source:
            assert column(source, "flights", "delay").type == "BIGINT"
            assert column(source, "flights", "day").type == "DATE"
            assert column(source, "flights", "delay").nulls == len(tokens)
            assert column(source, "flights", "day").nulls == len(tokens)
            run = source.sandbox.run
            assert run("SELECT max(delay), max(day) FROM flights").rows[0][0] == 79
            assert str(run("SELECT max(day) FROM flights").rows[0][0]) == "2024-03-28"
            delays = sorted(((i * 37) % 90 - 10 for i in range(1, 41)), reverse=True)
            first = run("SELECT delay FROM flights ORDER BY delay DESC NULLS LAST LIMIT 3").rows
            assert [r[0] for r in first] == delays[:3]  # as numbers (as text, "9" would lead "79")
            assert run("SELECT min(delay) FROM flights").rows == ((delays[-1],),)


def test_null_replaces_the_default_tokens(tmp_path):
    """Namibia's code is NA: with --null the user says which fields are missing, and NA stays a value."""
    path = tmp_path / "countries.csv"
    path.write_text("code,name,people\nNA,Namibia,2604000\nFR,France,-\nDE,Germany,84000000\n,Nowhere,\n")
    with open_source(str(path), Settings()) as source:  # the defaults: NA is NULL
        assert source.sandbox.run("SELECT count(*) FROM countries WHERE code IS NULL").rows == ((2,),)
        assert column(source, "countries", "people").type == "VARCHAR"  # "-" is text
    with open_source(str(path), Settings(db_nulls=("-",))) as source:
        run = source.sandbox.run
        assert run("SELECT name FROM countries WHERE code = 'NA'").rows == (("Namibia",),)
        assert column(source, "countries", "people").type == "BIGINT"
        assert run("SELECT max(people) FROM countries").rows == ((84000000,),)
        assert source.schema.table("countries").null_tokens == ("-", "")  # an empty field is always NULL
        assert column(source, "countries", "people").nulls == 2


# --- types given to columns -------------------------------------------------------------------------------------


def test_type_gives_a_column_its_type(tmp_path):
    path = tmp_path / "shops.csv"
    path.write_text("code,opened,name\n7,2024-01-05 09:30:00,North\n30,NA,Midtown\n12,2023-12-31 18:00:00,Docks\n")
    with open_source(str(path), Settings()) as source:  # inferred: the product codes are numbers
        assert column(source, "shops", "code").type == "BIGINT"
        assert column(source, "shops", "opened").type == "TIMESTAMP"
    with open_source(str(path), Settings(db_types=("code=VARCHAR", "shops.opened=DATE"))) as source:
        assert column(source, "shops", "code").type == "VARCHAR"
        assert column(source, "shops", "code").type_from == "given"
        assert column(source, "shops", "opened").type == "DATE"
        assert column(source, "shops", "name").type_from == "inferred"
        rows = source.sandbox.run("SELECT code, CAST(opened AS VARCHAR) FROM shops ORDER BY code").rows
        assert rows == (("12", "2023-12-31"), ("30", None), ("7", "2024-01-05"))  # codes as text, in text order


def test_type_on_a_compressed_file_and_in_a_folder(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "shops.csv.gz").write_bytes(gzip.compress(b"zip,city\n02134,Boston\n00501,Holtsville\n"))
    (folder / "people.csv").write_text("name,zip\nAnn,02134\nBo,00501\n")
    (folder / "counts.csv").write_text("city,n\nBoston,1\n")
    with open_source(str(folder), Settings(db_types=("zip=VARCHAR",))) as source:  # every table with a zip
        run = source.sandbox.run
        assert run("SELECT zip FROM shops ORDER BY zip").rows == (("00501",), ("02134",))
        assert run("SELECT p.name FROM people p JOIN shops s ON s.zip = p.zip ORDER BY 1").rows == (("Ann",), ("Bo",))
        assert column(source, "counts", "n").type_from == "inferred"


def test_a_value_that_cannot_be_typed_names_the_column_value_and_line(tmp_path):
    path = tmp_path / "visits.csv"
    path.write_text("id,when,who\n1,2024-01-05,Ann\n2,tomorrow,Bo\n3,NA,Cy\n4,2024-13-01,Di\n")
    before = digest(path)
    with pytest.raises(DataSourceError) as e:
        open_source(str(path), Settings(db_types=("when=DATE",)))
    message = str(e.value)
    assert "visits.csv" in message and '"when"' in message and "DATE" in message and "--type" in message
    assert '"tomorrow"' in message and "line 3" in message and "1 more line" in message
    assert "\n" not in message and "nothing was loaded" in message.lower()
    assert digest(path) == before


def test_a_stray_value_past_the_sniffed_lines_names_the_column_and_value(tmp_path):
    """DuckDB infers a type from the first 20,480 lines; a later value it cannot hold is named, with its line."""
    path = tmp_path / "big.csv"
    lines = ["id,x"] + [f"{i},{i * 1.5}" for i in range(25_000)] + ["25000,n/a", "25001,2.5"]
    path.write_text("\n".join(lines) + "\n")
    before = digest(path)
    with pytest.raises(DataSourceError) as e:
        open_source(str(path), Settings())
    message = str(e.value)
    assert '"x"' in message and '"n/a"' in message and "line 25,002" in message and "DOUBLE" in message
    assert "--null" in message and "--type x=VARCHAR" in message and "\n" not in message
    assert digest(path) == before
    with open_source(str(path), Settings(db_nulls=("n/a",))) as source:  # the remedy the message names
        assert source.sandbox.run("SELECT count(x), max(x) FROM big").rows == ((25_001, 37498.5),)


@pytest.mark.parametrize(
    "types, words",
    [
        (("zip",), "COLUMN=TYPE"),
        (("zip=int; DROP TABLE x",), "is not a DuckDB type"),
        (("zip=INTEGER)--",), "is not a DuckDB type"),
        (("zip=mytype",), "is not a DuckDB type"),
        (("nosuch=DATE",), 'has no column "nosuch"'),
        (("x.zip=DATE",), 'has no column "x.zip"'),
    ],
)
def test_bad_type_specs_are_clear_errors(tmp_path, types, words):
    path = tmp_path / "shops.csv"
    path.write_text("zip,city\n02134,Boston\n")
    with pytest.raises(DataSourceError) as e:
        open_source(str(path), Settings(db_types=types))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_null_and_type_are_for_csv_and_tsv_files(tmp_path, hotels_duckdb):
    from tests.engines.data.conftest import hotel_rows, write_parquet

    parquet = write_parquet(tmp_path / "h.parquet", hotel_rows(3))
    for spec, settings in (
        (parquet, Settings(db_types=("id=VARCHAR",))),
        (hotels_duckdb, Settings(db_nulls=("-",))),
    ):
        with pytest.raises(DataSourceError) as e:
            open_source(str(spec), settings)
        assert "CSV and TSV" in str(e.value)
    with pytest.raises(DataSourceError) as e:
        open_source(str(tmp_path / "h.parquet"), Settings(db_nulls=tuple(str(i) for i in range(101))))
    assert "CSV and TSV" in str(e.value)


def test_too_many_tokens_or_specs_are_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a\n1\n")
    for settings, words in (
        (Settings(db_nulls=tuple(str(i) for i in range(101))), "at most 100"),
        (Settings(db_nulls=("x" * 101,)), "at most 100 characters"),
        (Settings(db_types=tuple(f"c{i}=INT" for i in range(501))), "at most 500"),
    ):
        with pytest.raises(DataSourceError) as e:
            open_source(str(path), settings)
        assert words in str(e.value)


def test_the_cli_takes_null_and_type_for_every_db_command(capsys, tmp_path):
    path = tmp_path / "shops.csv"
    path.write_text("zip,sales\n02134,-\n00501,7\n")
    code = main(["sql", "SELECT zip, sales FROM shops ORDER BY zip", "--db", str(path), "--json",
                 "--type", "zip=VARCHAR", "--null", "-"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["rows"] == [{"zip": "00501", "sales": 7}, {"zip": "02134", "sales": None}]
    code = main(["describe", "--db", str(path), "--type", "zip=VARCHAR", "--null", "-", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (table,) = json.loads(out)["tables"]
    assert table["file"] == "shops.csv" and table["null_tokens"] == ["-", ""]
    assert table["columns"] == [
        {"name": "zip", "type": "VARCHAR", "type_from": "given", "role": "text", "nulls": 0},
        {"name": "sales", "type": "BIGINT", "type_from": "inferred", "role": "number", "nulls": 1},
    ]
    code = main(["ask", "how many shops?", "--db", str(path), "--type", "zip=DATE", "--json"])
    out, _ = capsys.readouterr()
    assert code == 2 and '"zip"' in json.loads(out)["error"] and '"02134"' in json.loads(out)["error"]
    code = main(["sql", "SELECT 1", "--type", "zip=VARCHAR"])  # no --db: nothing it could apply to
    _, err = capsys.readouterr()
    assert code == 2 and "--db" in err


# --- one naming rule ----------------------------------------------------------------------------------------------


def test_seattle_weather_becomes_seattle_weather():
    path = package_file("vega_datasets", "vega_datasets/_data/seattle-weather.csv")
    with open_source(str(path), Settings()) as source:
        (table,) = source.schema.tables
        assert table.name == "seattle_weather" and table.file == "seattle-weather.csv"
        assert source.sandbox.run("SELECT count(*) FROM seattle_weather").rows == ((1461,),)


def test_the_naming_rule():
    names = {
        "seattle-weather.csv": "seattle_weather",
        "sales.2024.csv": "sales_2024",
        "2024.csv": "t_2024",
        "my data (v2).tsv.gz": "my_data__v2_",
        "café-menu.parquet": "café_menu",
        "-.csv": "_",
        "x*.csv": "x_",
    }
    assert {name: table_name(name) for name in names} == names


def test_a_clash_gets_a_suffix_and_a_name_as_written_keeps_it(tmp_path):
    for name in ("a-b.csv", "a_b.csv", "2024.csv", "t_2024.jsonl"):
        path = tmp_path / name
        path.write_text(json.dumps({"f": name}) + "\n" if name.endswith(".jsonl") else f"f\n{name}\n")
    with open_source(str(tmp_path), Settings()) as source:
        files = {t.name: t.file for t in source.schema.tables}
        assert files == {"a_b": "a_b.csv", "a_b_2": "a-b.csv", "t_2024": "t_2024.jsonl", "t_2024_2": "2024.csv"}
        assert source.sandbox.run("SELECT a_b.f, a_b_2.f FROM a_b, a_b_2").rows == (("a_b.csv", "a-b.csv"),)


# --- roles: text is not free text ---------------------------------------------------------------------------------

PEOPLE = [
    ("Alexandra Montgomery-Smith", "alexandra.montgomery"),
    ("Bartholomew Richardson", "b.richardson"),
    ("Cornelia Vanderbilt-Hughes", "cornelia.vh"),
    ("Dimitri Alexandropoulos", "dimitri.alex"),
]
REVIEWS = [
    "A lovely stay with a quiet garden and friendly staff. The breakfast was fresh and the beds were soft.",
    "Noisy street at night, but the rooms were clean and the lift worked. We would come back in the spring.",
    "Great pool on the roof and a view of the old town. Parking is expensive, so take the tram from the station.",
    "The owners were kind, the coffee was strong, and the walk to the beach took five minutes along the river.",
]


def test_addresses_links_and_ids_are_text_and_prose_is_free_text(tmp_path):
    rows = []
    for i in range(40):
        name, user = PEOPLE[i % 4]
        rows.append(
            {
                "maintainer": f"{name} <{user}{i}@university-of-example.edu>",
                "email": f"{user}.{i}@long-example-domain.org",
                "homepage": f"https://github.com/{user}/project-number-{i}/blob/main/README.md",
                "sha": hashlib.sha256(str(i).encode()).hexdigest(),
                "review": REVIEWS[i % 4],
            }
        )
    path = tmp_path / "packages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with open_source(str(path), Settings()) as source:
        roles = {c.name: c.role for c in source.schema.tables[0].columns}
        lengths = {c.name: c.avg_length for c in source.schema.tables[0].columns}
    assert all(v >= 40 for v in lengths.values()), lengths  # long values: length alone would call them free text
    assert roles == {"maintainer": "text", "email": "text", "homepage": "text", "sha": "text", "review": "free_text"}
