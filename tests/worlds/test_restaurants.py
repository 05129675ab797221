"""The restaurant world: shape, determinism, hidden truth kept apart, review wording."""

from __future__ import annotations

from collections import Counter

import duckdb
import pytest

from worlds import restaurants as W


@pytest.fixture(scope="module")
def built() -> W.Built:
    return W.build()


@pytest.fixture(scope="module")
def world(built) -> W.RestaurantWorld:
    return built.world


@pytest.fixture(scope="module")
def truth(built) -> W.HiddenTruth:
    return built.truth


def test_600_restaurants_with_the_papers_columns(world):
    assert len(world.rows) == 600
    rec = world.rows[0].as_record()
    assert list(rec) == [
        "_id",
        "name",
        "cuisines",
        "price",
        "rating",
        "num_reviews",
        "address",
        "phone_number",
        "opening_hours",
        "location",
        "reviews",
        "popular_dishes",
    ]
    assert len({r.name for r in world.rows}) == 600


def test_values_come_from_the_enums(world):
    assert len(W.CUISINES) == 50
    for must in (
        "coffee & tea",
        "cafe",
        "sushi bars",
        "szechuan",
        "american (traditional)",
        "italian",
        "mexican",
        "chinese",
    ):
        assert must in W.CUISINES
    for r in world.rows:
        assert set(r.cuisines) <= set(W.CUISINES) and r.cuisines
        assert r.price in W.PRICES
        assert r.location in W.LOCATIONS
        assert 1.0 <= r.rating <= 5.0
        assert len(r.reviews) == 3 and r.popular_dishes
        assert "-" in r.opening_hours and ("am" in r.opening_hours or "pm" in r.opening_hours)
    assert set(Counter(r.location for r in world.rows)) == set(W.LOCATIONS)
    assert set(Counter(r.price for r in world.rows)) == set(W.PRICES)


def test_deterministic_by_seed():
    assert W.build(3) == W.build(3)
    assert W.build(3).world.rows != W.build(4).world.rows


def test_hidden_truth_is_a_separate_object_not_in_the_rows(world, truth):
    rec = world.rows[0].as_record()
    assert not set(rec) & set(W.FEATURES)
    assert set(truth.features) == {r._id for r in world.rows}
    counts = Counter(f for fs in truth.features.values() for f in fs)
    assert set(counts) == set(W.FEATURES)
    assert 0.10 <= counts["easy_parking"] / 600 <= 0.20  # lecture 7 §0.4: 15%


def test_every_feature_appears_in_review_wording_in_several_phrasings(world, truth):
    for feature in W.FEATURES:
        phrasings_seen = set()
        for rid in truth.ids_with(feature):
            text = " ".join(world.by_id(rid).reviews)
            said = [p for p in W._POSITIVE[feature] if p in text]
            assert said, f"restaurant {rid} has {feature} but its reviews never say so"
            phrasings_seen.update(said)
        assert len(phrasings_seen) >= 4, feature


def test_parking_chatter_of_lecture_7(world, truth):
    tricky = [r for r in world.rows if any("Parking can be tricky." in t for t in r.reviews)]
    assert len(tricky) > 50
    assert all(not truth.has(r._id, "easy_parking") for r in tricky)


def test_loads_into_duckdb(world):
    con = duckdb.connect()
    world.load(con)
    assert con.execute("SELECT count(*) FROM restaurants").fetchone() == (600,)
    row = con.execute("SELECT cuisines, reviews, price FROM restaurants WHERE _id = 1").fetchone()
    assert row[0] == list(world.rows[0].cuisines) and row[1] == list(world.rows[0].reviews)


def test_exercise_1_cheap_korean_in_sunnyvale(world):
    con = duckdb.connect()
    world.load(con)
    rows = con.execute(
        "SELECT name, phone_number, num_reviews FROM restaurants WHERE location = 'Sunnyvale' "
        "AND 'korean' = ANY(cuisines) AND price = 'cheap' ORDER BY num_reviews DESC"
    ).fetchall()
    assert len(rows) == 3  # as in the notes: three candidates, so "most popular" has to choose


def test_colloquial_phrasings_are_evaluator_data_over_real_values():
    assert len(W.CUISINE_PHRASINGS) == 28
    for phrase, gold in W.CUISINE_PHRASINGS:
        assert gold <= set(W.CUISINES), phrase


def test_a_world_larger_than_the_name_pool_numbers_its_repeated_names():
    """More restaurants than first x last names (the benchmark's --rows 1000): names repeat as "… II", all distinct."""
    from worlds.restaurants import build

    names = [r.name for r in build(n=2000).world.rows]
    assert len(names) == 2000 and len(set(names)) == 2000
