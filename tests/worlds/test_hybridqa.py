"""HybridQA worlds: the generated flag-bearer tables (visible data apart from hidden truth) and real tables."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest

from engines.errors import EngineError
from engines.hybridqa.session import open_hybridqa
from engines.settings import Settings
from engines.sql.sandbox import Sandbox
from worlds import hybridqa as W


@pytest.fixture(scope="module")
def built() -> W.Built:
    return W.build()


@pytest.fixture(scope="module")
def world(built) -> W.GeneratedWorld:
    return built.world


@pytest.fixture(scope="module")
def truth(built) -> W.HiddenTruth:
    return built.truth


def test_fifty_tables_of_eight_to_sixteen_rows_six_questions_each(world):
    assert len(world.tables) == 50 and len(world.questions) == 300
    for t in world.tables:
        assert 8 <= len(t.rows) <= 16
        assert [q.qtype for q in t.questions] == list(W.TYPES)
        assert t.columns == ("Name", "Event year", "Event year_Info", "Flag Bearer", "Flag Bearer_Info", "Gender")
        assert t.info_columns == ("Event year_Info", "Flag Bearer_Info")
        assert len({r[3] for r in t.rows}) == len(t.rows)  # one row per bearer


def test_real_games_and_their_host_cities_in_the_linked_passages(world):
    games = {(g[0], str(g[1])): g for g in W.SUMMER_GAMES}
    for t in world.tables:
        for rec in t.records():
            roman, year, city, country = games[(rec["Name"], rec["Event year"])]
            assert city in rec["Event year_Info"] and country in rec["Event year_Info"]
            assert rec["Flag Bearer"] in rec["Flag Bearer_Info"] and "born" in rec["Flag Bearer_Info"]
            assert rec["Gender"] in ("Male", "Female")


def test_deterministic_by_seed(world, truth):
    again = W.build()
    assert again.world.tables == world.tables and again.truth == truth
    assert W.build(seed=8).world.tables != world.tables


def test_golds_as_the_seed_describes_them(world, truth):
    wrong = [q for q in world.questions if truth.of(q.question_id).gold_wrong]
    assert 0.02 <= len(wrong) / 300 <= 0.07  # about 4% of the golds are wrong
    several = [q for q in world.questions if len(truth.of(q.question_id).answers) > 1]
    assert len(several) >= 20  # some questions have several right answers ...
    for q in several:
        t = truth.of(q.question_id)
        if not t.gold_wrong:  # ... and the gold names just one of them
            assert sum(q.gold in a.forms for a in t.answers) == 1
    kinds = Counter(a.kind for q in world.questions for a in truth.of(q.question_id).answers[:1])
    assert set(kinds) == {"date", "place", "games", "person", "event"}


def test_hidden_truth_is_a_separate_object(world, truth):
    visible = {f.name for f in dataclasses.fields(W.HybridQuestion)} | {
        f.name for f in dataclasses.fields(W.HybridTable)
    }
    assert not visible & {"truth", "answers", "suql", "gold_wrong"}
    assert "truth" not in repr(world) and not hasattr(world, "truth")
    assert all(q.question_id in truth.questions for q in world.questions)


def test_loads_into_duckdb_in_row_order(world):
    with Sandbox.create(world.load) as sb:
        t = world.tables[0]
        got = sb.run(f'SELECT "Name", "Flag Bearer_Info" FROM {t.name} ORDER BY rowid').rows
        assert got == tuple((r[0], r[4]) for r in t.rows)
        assert '"Event year_Info" TEXT' in t.schema() and "INSERT" not in t.schema()


# --- real tables ------------------------------------------------------------------------------------

TABLE = {
    "table_id": "Tiny_0",
    "title": "Tiny",
    "section_title": "Results",
    "url": "https://example.org",
    "header": [{"name": "Year", "links": []}, {"name": "Winner", "links": []}, {"name": "Winner", "links": []}],
    "rows": [
        [
            {"text": "2001", "links": []},
            {"text": "Ann", "links": ["/wiki/Ann", "/wiki/Ann_2"]},
            {"text": "x", "links": []},
        ],
        [{"text": "2002", "links": []}, {"text": "Bo", "links": ["/wiki/Missing"]}, {"text": "y", "links": []}],
    ],
    "passages": {"/wiki/Ann": "Ann is a cyclist.", "/wiki/Ann_2": "Ann won in 2001."},
    "questions": [{"question_id": "q1", "question": "Who won in 2001?", "answer-text": "Ann"}],
}


def test_real_table_gains_info_columns_with_the_linked_passages():
    t = W.real_table(TABLE, name="tiny_0")
    assert t.columns == ("Year", "Winner", "Winner_Info", "Winner (2)")
    recs = t.records()
    assert recs[0]["Winner_Info"] == "Ann is a cyclist.\n\nAnn won in 2001."
    assert recs[1]["Winner_Info"] is None  # a link without a passage
    assert [(q.question, q.gold, q.qtype) for q in t.questions] == [("Who won in 2001?", "Ann", None)]
    with Sandbox.create(t.load) as sb:
        assert sb.run('SELECT "Winner_Info" FROM tiny_0 WHERE "Year" = \'2001\'').rows[0][0].startswith("Ann is")


def test_real_tables_refuse_bad_input_with_a_message(tmp_path):
    with pytest.raises(W.HybridDataError, match="row 0 has 2 cells"):
        W.real_table({**TABLE, "rows": [TABLE["rows"][0][:2]]}, name="t")
    with pytest.raises(W.HybridDataError, match="not a folder"):
        W.load_real(tmp_path / "nowhere")
    with pytest.raises(W.HybridDataError, match="no HybridQA tables"):
        W.load_real(tmp_path)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(W.HybridDataError, match="bad.json"):
        W.load_real(tmp_path)
    # the world's error is not an engine's (worlds import nothing from engines); the session raises it again as one
    with pytest.raises(EngineError, match="bad.json") as raised:
        open_hybridqa(Settings(), source="real", directory=tmp_path)
    assert isinstance(raised.value, W.HybridDataError)


def test_the_shared_data_folder_is_the_data_dir_setting(tmp_path, monkeypatch):
    (tmp_path / "hybridqa").mkdir()
    (tmp_path / "hybridqa" / "Tiny_0.json").write_text(json.dumps(TABLE), encoding="utf-8")
    monkeypatch.setenv("CS224V_DATA", str(tmp_path))
    assert Settings().data_dir == tmp_path
    with open_hybridqa(Settings(), source="real") as session:
        assert [t.table_id for t in session.world.tables] == ["Tiny_0"]
    monkeypatch.delenv("CS224V_DATA")
    with open_hybridqa(Settings(data_dir=tmp_path), source="real") as session:
        assert [t.table_id for t in session.world.tables] == ["Tiny_0"]
    with pytest.raises(EngineError, match="No HybridQA data found: expected .*elsewhere"):
        open_hybridqa(Settings(data_dir=tmp_path / "elsewhere"), source="real")


def test_a_folder_without_manifest(tmp_path):
    (tmp_path / "Tiny_0.json").write_text(json.dumps(TABLE), encoding="utf-8")
    world = W.load_real(tmp_path)
    assert [t.table_id for t in world.tables] == ["Tiny_0"] and world.tables[0].name == "tiny_0"


def test_the_shared_hybridqa_tables():
    folder = W.real_data_dir()
    if folder is None:
        pytest.skip("../shared/data/hybridqa is not present")
    world = W.load_real()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert len(world.tables) == manifest["n_tables"] == 14
    assert len(world.questions) == manifest["n_questions"] == 42
    assert len({t.name for t in world.tables}) == 14
    for t, listed in zip(world.tables, manifest["tables"]):
        assert t.table_id == listed["table_id"] and len(t.rows) == listed["n_rows"] and t.info_columns
    with Sandbox.create(world.load) as sb:
        romania = world.table("Romania_1")
        (info,) = sb.run(
            f'SELECT "Development region_Info" FROM {romania.name} WHERE "Development region" = \'Nord-Vest\''
        ).rows[0]
        assert "Nord-Vest" in info or "development region" in info.lower()


def test_real_tables_are_read_within_bounds_and_only_from_their_folder(tmp_path, monkeypatch):
    """Issue 25: a folder of tables (``hybridqa --tables DIR``) is a person's input: a manifest cannot name a file
    outside the folder (or /dev/zero), a FIFO does not hang, a file past the cap is refused from its size, and JSON
    nested too deeply is a message, not a RecursionError."""
    import json
    import os

    from worlds.hybridqa import real

    def manifest(*names):
        (tmp_path / "manifest.json").write_text(json.dumps({"tables": [{"file": n} for n in names]}), encoding="utf-8")

    outside = tmp_path.parent / "outside.json"
    outside.write_text(json.dumps(TABLE), encoding="utf-8")
    for name in ("../outside.json", "/dev/zero", str(outside)):
        manifest(name)
        with pytest.raises(W.HybridDataError, match="must be a file name in"):
            W.load_real(tmp_path)
    manifest("fifo.json")
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(W.HybridDataError, match="fifo.json: not a regular file"):
        W.load_real(tmp_path)
    (tmp_path / "manifest.json").unlink()
    (tmp_path / "fifo.json").unlink()
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(W.HybridDataError, match="deep.json: JSON nested too deeply"):
        W.load_real(tmp_path)
    (tmp_path / "deep.json").unlink()
    (tmp_path / "big.json").write_text(json.dumps(TABLE) + " " * 2048, encoding="utf-8")
    monkeypatch.setattr(real, "MAX_TABLE_FILE_BYTES", 2048)
    with pytest.raises(W.HybridDataError, match=r"big.json is [\d,]+ bytes: larger than the 2,048 bytes"):
        W.load_real(tmp_path)
