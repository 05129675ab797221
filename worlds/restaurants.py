"""The restaurant world of lectures 6 and 7: 600 fictional Yelp-style restaurants.

``build(seed)`` returns a :class:`Built` pair of two separate objects:

* ``world`` — a :class:`RestaurantWorld`, what a database (and so any model) can see:
  the SUQL paper's columns.  This is the only object an engine is handed, and it holds
  no reference to the truth.
* ``truth`` — a :class:`HiddenTruth`, the hidden features each restaurant really has
  (family-friendly, great view, spicy, romantic, good for groups, outdoor seating, easy
  parking).  They appear in the visible data only as review wording, each in several
  phrasings.  Only evaluators are given ``truth``; engines and the simulated LLM never are.

Everything is drawn from ``random.Random(seed)``: the same seed gives the same world.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import duckdb

TABLE = "restaurants"
DEFAULT_SEED = 4
LARGE = 5000  # restaurants in the larger world of SUQL mode G's figures (``build(n=LARGE)``: the same vocabulary)

LOCATIONS: tuple[str, ...] = (
    "Palo Alto",
    "Mountain View",
    "Menlo Park",
    "Sunnyvale",
    "Bernal Heights",
    "Mission District",
)

PRICES: tuple[str, ...] = ("cheap", "moderate", "expensive", "luxury")
RATING_SCALE = "stars, 1 to 5 (Yelp's scale: 4 good, 5 great)"
"""What a rating is, as the schema the parser is shown says it: Yelp's stars (every rating is drawn in half stars from
2.5 to 5; Yelp's legend calls 4 stars "good" and 5 "great")."""

# The 50-value cuisine enum (Yelp-style category names, exact spellings matter).
CUISINES: tuple[str, ...] = (
    "american (traditional)",
    "american (new)",
    "italian",
    "pizza",
    "mexican",
    "latin american",
    "chinese",
    "szechuan",
    "cantonese",
    "dim sum",
    "japanese",
    "sushi bars",
    "ramen",
    "korean",
    "thai",
    "vietnamese",
    "indian",
    "coffee & tea",
    "cafe",
    "bakeries",
    "breakfast & brunch",
    "desserts",
    "burgers",
    "barbeque",
    "seafood",
    "steakhouses",
    "vegan",
    "vegetarian",
    "mediterranean",
    "greek",
    "middle eastern",
    "french",
    "spanish",
    "tapas bars",
    "ethiopian",
    "peruvian",
    "brazilian",
    "southern",
    "soul food",
    "hawaiian",
    "poke",
    "noodles",
    "salad",
    "sandwiches",
    "wine bars",
    "champagne bars",
    "modern european",
    "singaporean",
    "taiwanese",
    "bubble tea",
)
assert len(CUISINES) == 50 and len(set(CUISINES)) == 50

FEATURES: tuple[str, ...] = (
    "family_friendly",
    "great_view",
    "spicy",
    "romantic",
    "good_for_groups",
    "outdoor_seating",
    "easy_parking",
)

# --- cuisine families: primary cuisine, companions, dishes, hours, spice ----


@dataclass(frozen=True)
class _Family:
    cuisines: tuple[str, ...]  # the first is primary; up to two companions are drawn from the rest
    weight: float
    dishes: tuple[str, ...]
    hours: tuple[str, ...]
    spicy: float = 0.08  # chance the place is really spicy
    name_words: tuple[str, ...] = ()


_DINNER = ("11am-9pm", "11:30am-10pm", "5pm-10pm", "5pm-11pm", "11am-10pm", "12pm-9:30pm")
_LATE = ("5pm-11pm", "6pm-12am", "5pm-1am", "4pm-11pm")
_DAY = ("7am-3pm", "6:30am-2pm", "7am-6pm", "8am-4pm", "6am-8pm")

_FAMILIES: tuple[_Family, ...] = (
    _Family(
        ("italian", "pizza", "wine bars"),
        9,
        (
            "cacio e pepe",
            "margherita pizza",
            "lasagna",
            "tiramisu",
            "burrata",
            "spaghetti carbonara",
            "risotto ai funghi",
        ),
        _DINNER,
        0.03,
        ("Trattoria", "Osteria", "Nonna's", "Vespa"),
    ),
    _Family(
        ("pizza", "italian", "salad"),
        5,
        ("pepperoni pizza", "garlic knots", "white pie", "calzone", "caesar salad"),
        _DINNER,
        0.05,
        ("Slice", "Pie", "Oven"),
    ),
    _Family(
        ("mexican", "latin american"),
        8,
        ("al pastor tacos", "carne asada burrito", "mole poblano", "chile relleno", "guacamole", "churros"),
        _DINNER,
        0.35,
        ("Cantina", "Taqueria", "Casa"),
    ),
    _Family(
        ("latin american", "peruvian", "brazilian"),
        3,
        ("lomo saltado", "ceviche", "pao de queijo", "arepas", "empanadas"),
        _DINNER,
        0.15,
        ("Sol", "Pampa"),
    ),
    _Family(
        ("chinese", "cantonese", "dim sum"),
        8,
        ("har gow", "siu mai", "char siu bao", "beef chow fun", "wonton soup", "peking duck"),
        _DINNER,
        0.15,
        ("Jade", "Golden Dragon", "Lotus"),
    ),
    _Family(
        ("szechuan", "chinese", "noodles"),
        5,
        ("mapo tofu", "dan dan noodles", "kung pao chicken", "chongqing chicken", "dry-fried green beans"),
        _DINNER,
        0.75,
        ("Red Pepper", "Chili House", "Spice Road"),
    ),
    _Family(
        ("japanese", "sushi bars", "ramen"),
        8,
        ("omakase", "spicy tuna roll", "salmon nigiri", "tonkotsu ramen", "chicken karaage", "miso soup"),
        _DINNER,
        0.05,
        ("Sakura", "Daigo", "Kaze"),
    ),
    _Family(
        ("ramen", "japanese", "noodles"),
        3,
        ("tonkotsu ramen", "shoyu ramen", "gyoza", "chashu bowl"),
        _DINNER,
        0.2,
        ("Menya", "Ramen Ya"),
    ),
    _Family(
        ("korean", "barbeque"),
        5,
        ("bibimbap", "kimchi jjigae", "bulgogi", "tteokbokki", "korean fried chicken"),
        _DINNER,
        0.45,
        ("Seoul", "Bowl House", "Han"),
    ),
    _Family(
        ("thai", "noodles"),
        6,
        ("pad thai", "green curry", "tom yum soup", "khao soi", "papaya salad", "mango sticky rice"),
        _DINNER,
        0.55,
        ("Bangkok", "Siam", "Lemongrass"),
    ),
    _Family(
        ("vietnamese", "noodles", "sandwiches"),
        5,
        ("pho", "banh mi", "bun bo hue", "spring rolls", "com tam"),
        _DINNER,
        0.25,
        ("Saigon", "Pho", "Little Hanoi"),
    ),
    _Family(
        ("indian",),
        6,
        ("chicken tikka masala", "lamb vindaloo", "saag paneer", "garlic naan", "chana masala", "biryani"),
        _DINNER,
        0.6,
        ("Tandoor", "Masala", "Bombay"),
    ),
    _Family(
        ("coffee & tea", "cafe", "bakeries"),
        7,
        ("cappuccino", "cold brew", "almond croissant", "avocado toast", "chai latte"),
        _DAY,
        0.0,
        ("Bean", "Roastery", "Grind"),
    ),
    _Family(
        ("cafe", "breakfast & brunch", "sandwiches"),
        5,
        ("eggs benedict", "buttermilk pancakes", "turkey club", "granola bowl", "latte"),
        _DAY,
        0.02,
        ("Corner Cafe", "Morning", "Sunny Side"),
    ),
    _Family(
        ("bakeries", "desserts", "coffee & tea"),
        3,
        ("morning bun", "fruit tart", "macarons", "sourdough loaf", "cinnamon roll"),
        _DAY,
        0.0,
        ("Crumb", "Flour", "Sugar"),
    ),
    _Family(
        ("american (traditional)", "burgers", "southern"),
        7,
        ("cheeseburger", "buttermilk fried chicken", "mac and cheese", "meatloaf", "apple pie"),
        _DINNER,
        0.05,
        ("Diner", "Grill", "Tavern"),
    ),
    _Family(
        ("american (new)", "wine bars", "modern european"),
        5,
        ("roasted half chicken", "beet salad", "hanger steak", "seasonal crudo", "duck confit"),
        _LATE,
        0.03,
        ("Table", "Kitchen", "Commons"),
    ),
    _Family(
        ("burgers", "american (traditional)"),
        4,
        ("double smash burger", "truffle fries", "milkshake", "onion rings"),
        _DINNER,
        0.05,
        ("Patty", "Burger Joint"),
    ),
    _Family(
        ("barbeque", "southern", "soul food"),
        3,
        ("brisket", "pulled pork", "baby back ribs", "collard greens", "cornbread"),
        _DINNER,
        0.2,
        ("Smokehouse", "Pit"),
    ),
    _Family(
        ("seafood", "american (new)"),
        4,
        ("cioppino", "oysters", "clam chowder", "grilled branzino", "lobster roll"),
        _DINNER,
        0.05,
        ("Harbor", "Oyster Bar", "Pier"),
    ),
    _Family(
        ("steakhouses", "american (traditional)", "wine bars"),
        3,
        ("dry-aged ribeye", "filet mignon", "creamed spinach", "wedge salad"),
        _LATE,
        0.02,
        ("Chophouse", "Prime"),
    ),
    _Family(
        ("vegan", "vegetarian", "salad"),
        4,
        ("jackfruit tacos", "cauliflower steak", "grain bowl", "vegan mac and cheese"),
        _DINNER,
        0.08,
        ("Sprout", "Green Leaf", "Root"),
    ),
    _Family(
        ("mediterranean", "greek", "middle eastern"),
        6,
        ("falafel plate", "chicken shawarma", "hummus", "spanakopita", "lamb gyro", "baklava"),
        _DINNER,
        0.08,
        ("Olive", "Aegean", "Cedar"),
    ),
    _Family(
        ("french", "wine bars", "champagne bars"),
        3,
        ("steak frites", "coq au vin", "french onion soup", "creme brulee", "escargots"),
        _LATE,
        0.0,
        ("Bistro", "Maison", "Petit"),
    ),
    _Family(
        ("spanish", "tapas bars", "wine bars"),
        3,
        ("paella", "patatas bravas", "jamon iberico", "gambas al ajillo"),
        _LATE,
        0.1,
        ("Tapas", "Barcelona"),
    ),
    _Family(
        ("ethiopian", "vegetarian"),
        2,
        ("doro wat", "injera", "misir wat", "kitfo"),
        _DINNER,
        0.5,
        ("Addis", "Lalibela"),
    ),
    _Family(
        ("hawaiian", "poke", "seafood"),
        3,
        ("ahi poke bowl", "loco moco", "spam musubi", "kalua pork"),
        _DINNER,
        0.05,
        ("Aloha", "Poke Bar"),
    ),
    _Family(
        ("taiwanese", "bubble tea", "noodles"),
        3,
        ("beef noodle soup", "popcorn chicken", "brown sugar boba", "scallion pancake"),
        _DINNER,
        0.2,
        ("Formosa", "Boba"),
    ),
    _Family(
        ("singaporean", "noodles", "seafood"),
        2,
        ("hainanese chicken rice", "laksa", "chili crab", "char kway teow"),
        _DINNER,
        0.45,
        ("Lion City", "Hawker"),
    ),
)

_FEATURE_RATE: Mapping[str, float] = {
    "family_friendly": 0.25,
    "great_view": 0.12,
    "romantic": 0.15,
    "good_for_groups": 0.25,
    "outdoor_seating": 0.20,
    "easy_parking": 0.15,
}

# --- review text ---------------------------------------------------------------
# Each hidden feature appears only as wording, in several phrasings.

_POSITIVE: Mapping[str, tuple[str, ...]] = {
    "family_friendly": (
        "Very family-friendly.",
        "Our children loved it.",
        "They have a kids menu and crayons for the table.",
        "A great place to bring the little ones.",
        "The staff were so patient with our toddler, and high chairs were ready.",
        "We brought the whole family, grandparents and kids included, and everyone was happy.",
    ),
    "great_view": (
        "The view is stunning.",
        "Gorgeous views of the bay from the window tables.",
        "We watched the sunset over the hills from our table.",
        "The rooftop overlooks the whole city.",
        "Ask for a seat by the window, the view is beautiful.",
    ),
    "spicy": (
        "Really spicy, in the best way.",
        "The chili oil will make you sweat.",
        "They do not hold back on the heat.",
        "Bring water, the food is fiery.",
        "Hot enough to make my eyes water.",
        "Order it mild unless you love spicy food.",
    ),
    "romantic": (
        "Perfect for a date night.",
        "Very romantic, with candlelit tables.",
        "I took my girlfriend here for our anniversary.",
        "Intimate and cozy, great for couples.",
        "This is where I proposed to my wife.",
    ),
    "good_for_groups": (
        "Great for large groups.",
        "We had a party of twelve and they handled it well.",
        "Big communal tables, good for a crowd.",
        "They seated our office team of fifteen without a reservation.",
        "Perfect for birthday gatherings with lots of friends.",
    ),
    "outdoor_seating": (
        "Lovely patio.",
        "We sat outside on the terrace.",
        "Outdoor seating with heaters for cooler evenings.",
        "The garden seating in the back is charming.",
        "The sidewalk tables are great in the summer.",
    ),
    "easy_parking": (
        "Parking is easy.",
        "Plenty of parking in the back lot.",
        "Free parking right out front.",
        "Never had trouble finding a spot.",
        "They validate parking in the garage next door.",
    ),
}

# Wording that touches a feature's topic and says the opposite.
_NEGATIVE: Mapping[str, tuple[str, ...]] = {
    "family_friendly": ("Not a place for kids.", "Too loud and cramped to bring children."),
    "great_view": ("There is no view to speak of, it faces a parking lot.",),
    "spicy": ("Nothing here is spicy, the flavors are mild.", "Pretty bland if you like heat."),
    "romantic": ("Too noisy for a date.", "Not the most romantic spot."),
    "good_for_groups": ("The room is tiny, so don't come with a big group.",),
    "outdoor_seating": ("There is no outdoor seating.",),
    "easy_parking": ("Parking can be tricky.", "Finding parking nearby is a nightmare."),
}

_OPENERS = (
    "Came here for {meal} on a {day}.",
    "My second visit this month.",
    "Stopped by after work with a coworker.",
    "Finally tried this place after hearing about it for months.",
    "We ordered takeout and ate in.",
    "Came in on a rainy {day}.",
    "A solid neighborhood spot.",
    "Visited with my sister last weekend.",
)
_DISH_PRAISE = (
    "The {dish} was excellent.",
    "Loved the {dish}.",
    "You have to try the {dish}.",
    "The {dish} is the best I have had in a while.",
    "Their {dish} is worth the trip.",
)
_DISH_MEH = (
    "The {dish} was a bit underwhelming.",
    "The {dish} was fine but nothing special.",
    "I expected more from the {dish}.",
)
_SERVICE = (
    "Service was friendly and quick.",
    "Our server was attentive.",
    "Service was slow on a busy night.",
    "The staff were welcoming.",
    "Prices are fair for the portions.",
    "A little pricey for what you get.",
    "The wait was about twenty minutes.",
    "Clean and bright inside.",
)
_CLOSERS = ("Will be back.", "Recommended.", "Three stars from me.", "Would come again.", "Worth a visit.", "")

_STREETS: Mapping[str, tuple[str, str]] = {
    "Palo Alto": ("University Ave,California Ave,El Camino Real,Emerson St,Ramona St,Middlefield Rd", "(650)"),
    "Mountain View": ("Castro St,El Camino Real,Villa St,Dana St,Shoreline Blvd,Rengstorff Ave", "(650)"),
    "Menlo Park": ("Santa Cruz Ave,El Camino Real,Oak Grove Ave,Willow Rd,Menlo Ave", "(650)"),
    "Sunnyvale": ("Murphy Ave,Mathilda Ave,El Camino Real,Washington Ave,Evelyn Ave", "(408)"),
    "Bernal Heights": ("Cortland Ave,Mission St,Precita Ave,Folsom St,Courtland Ave", "(415)"),
    "Mission District": ("Valencia St,Mission St,24th St,16th St,Guerrero St,Folsom St", "(415)"),
}
_NAME_FIRST = (
    "Old",
    "Little",
    "Golden",
    "Blue",
    "Red",
    "Lucky",
    "Happy",
    "Silver",
    "Green",
    "Royal",
    "Copper",
    "Sunny",
    "Hidden",
    "Urban",
    "Rustic",
    "Twin",
    "Wild",
    "Iron",
    "Velvet",
    "Salty",
    "Maple",
    "Cedar",
    "Harbor",
    "North",
    "South",
    "East",
    "West",
    "Corner",
    "Fig",
    "Olive",
    "Amber",
    "Brass",
    "Crimson",
    "Dusty",
    "Elm",
    "Foggy",
    "Honey",
    "Ivory",
    "Juniper",
    "Lantern",
)
_NAME_LAST = (
    "House",
    "Kitchen",
    "Table",
    "Grill",
    "Room",
    "Place",
    "Bar",
    "Cafe",
    "Garden",
    "Spot",
    "Eatery",
    "Bistro",
    "Bowl House",
    "Hall",
    "Counter",
    "Canteen",
    "Corner",
    "Lounge",
)


@dataclass(frozen=True)
class Restaurant:
    """One row of the visible table."""

    _id: int
    name: str
    cuisines: tuple[str, ...]
    price: str
    rating: float
    num_reviews: int
    address: str
    phone_number: str
    opening_hours: str
    location: str
    reviews: tuple[str, ...]
    popular_dishes: tuple[str, ...]

    def as_record(self) -> dict[str, Any]:
        return {
            "_id": self._id,
            "name": self.name,
            "cuisines": list(self.cuisines),
            "price": self.price,
            "rating": self.rating,
            "num_reviews": self.num_reviews,
            "address": self.address,
            "phone_number": self.phone_number,
            "opening_hours": self.opening_hours,
            "location": self.location,
            "reviews": list(self.reviews),
            "popular_dishes": list(self.popular_dishes),
        }


@dataclass(frozen=True)
class HiddenTruth:
    """What each restaurant really is.  Read by evaluators only."""

    features: Mapping[int, frozenset[str]]

    def has(self, restaurant_id: int, feature: str) -> bool:
        return feature in self.features[restaurant_id]

    def ids_with(self, feature: str) -> frozenset[int]:
        return frozenset(i for i, fs in self.features.items() if feature in fs)


@dataclass(frozen=True)
class EnumField:
    """A text column whose values come from a fixed set; ``classify()`` maps user words onto it."""

    column: str
    values: tuple[str, ...]
    is_list: bool
    in_schema: bool  # small enums are written into the schema the parser sees


@dataclass(frozen=True)
class RestaurantWorld:
    seed: int
    rows: tuple[Restaurant, ...]

    table: str = TABLE

    @property
    def enum_fields(self) -> dict[str, EnumField]:
        return {
            "cuisines": EnumField("cuisines", CUISINES, is_list=True, in_schema=False),
            "price": EnumField("price", PRICES, is_list=False, in_schema=True),
            "location": EnumField("location", LOCATIONS, is_list=False, in_schema=False),
        }

    def schema(self) -> str:
        """The table's signature as the parser is shown it (lecture 6 §3.1), with what a reader of the table
        is told about it: what a row is, what the cuisines are, what a rating means (Yelp's scale)."""
        prices = ", ".join(f"'{p}'" for p in PRICES)
        return (
            f"CREATE TABLE {self.table} (\n"
            "    _id INTEGER PRIMARY KEY,\n"
            "    name TEXT,\n"
            "    cuisines TEXT[],  -- kinds of food\n"
            f"    price ENUM ({prices}),\n"
            f"    rating NUMERIC(2,1),  -- {RATING_SCALE}\n"
            "    num_reviews INTEGER,\n"
            "    address TEXT,\n"
            "    phone_number TEXT,\n"
            "    opening_hours TEXT,\n"
            "    location TEXT,\n"
            "    reviews TEXT[],\n"
            "    popular_dishes TEXT[]\n"
            ");  -- a row: a restaurant, a place to eat"
        )

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create and fill the ``restaurants`` table on a DuckDB connection."""
        con.execute(
            f"""CREATE TABLE {self.table} (
                _id INTEGER PRIMARY KEY, name VARCHAR, cuisines VARCHAR[],
                price ENUM ('cheap', 'moderate', 'expensive', 'luxury'),
                rating DECIMAL(2,1), num_reviews INTEGER, address VARCHAR, phone_number VARCHAR,
                opening_hours VARCHAR, location VARCHAR, reviews VARCHAR[], popular_dishes VARCHAR[])"""
        )
        # One statement: the rows travel as a single list-of-structs parameter.
        con.execute(
            f"INSERT INTO {self.table} SELECT UNNEST($rows, recursive := true)",
            {"rows": [r.as_record() for r in self.rows]},
        )

    def by_id(self, restaurant_id: int) -> Restaurant:
        return self.rows[restaurant_id - 1]


class Built(NamedTuple):
    """What :func:`build` returns: the visible world and, apart from it, the hidden truth."""

    world: RestaurantWorld
    truth: HiddenTruth


# --- generation ----------------------------------------------------------------------


REVIEW_STYLES = ("default", "realistic")


def build(seed: int = DEFAULT_SEED, n: int = 600, *, reviews: str = "default") -> Built:
    """Generate the world and its hidden truth.  Deterministic in ``seed``.

    ``reviews="realistic"`` (lecture 7 §5's Yelp-style evaluation) writes reviews more like real ones: a feature a
    place has is stated outright only sometimes (:data:`_REALISTIC_STATED`), else only hinted in words no reader's
    lexicon lists (:data:`_HINTS`) or not said at all, and a review mentions a dish only sometimes
    (:data:`_REALISTIC_DISH`).  The same generator otherwise (families, rates, names), though its draws after the
    first review differ from the default's; ``"default"`` is what the app, the snapshots and the other experiments
    use, unchanged.

    Hand ``.world`` to engines; only evaluators take ``.truth``."""
    if reviews not in REVIEW_STYLES:
        raise ValueError(f"reviews must be one of {', '.join(REVIEW_STYLES)}, not {reviews!r}")
    write = _write_reviews if reviews == "default" else _write_realistic_reviews
    rng = random.Random(seed)
    names = _unique_names(rng, n)
    rows: list[Restaurant] = []
    features: dict[int, frozenset[str]] = {}
    weights = [f.weight for f in _FAMILIES]
    for i in range(n):
        rid = i + 1
        fam = rng.choices(_FAMILIES, weights=weights)[0]
        location = LOCATIONS[rng.choices(range(6), weights=(1.1, 1.0, 1.0, 1.0, 0.85, 1.05))[0]]
        extra = rng.choice((0, 1, 1, 2)) if len(fam.cuisines) > 1 else 0
        cuisines = (fam.cuisines[0], *rng.sample(fam.cuisines[1:], min(extra, len(fam.cuisines) - 1)))
        price = _draw_price(rng, fam)
        feats = _draw_features(rng, fam, price)
        features[rid] = feats
        rating = _draw_rating(rng)
        streets, area = _STREETS[location]
        address = f"{rng.randint(10, 2999)} {rng.choice(streets.split(','))}, {_city(location)}"
        phone = f"{area} {rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"
        dishes = tuple(rng.sample(fam.dishes, min(len(fam.dishes), rng.randint(3, 4))))
        rows.append(
            Restaurant(
                _id=rid,
                name=names[i] if not fam.name_words or rng.random() < 0.55 else _themed_name(rng, fam, names[i]),
                cuisines=cuisines,
                price=price,
                rating=rating,
                num_reviews=max(5, min(4000, int(rng.lognormvariate(5.0, 1.0)))),
                address=address,
                phone_number=phone,
                opening_hours=rng.choice(fam.hours),
                location=location,
                reviews=write(rng, fam, dishes, feats),
                popular_dishes=dishes,
            )
        )
    rows = _dedupe_names(rows)
    return Built(RestaurantWorld(seed=seed, rows=tuple(rows)), HiddenTruth(features))


def _unique_names(rng: random.Random, n: int) -> list[str]:
    """``n`` names; past the pool's size names repeat, and :func:`_dedupe_names` numbers the repeats ("… II")."""
    pool = [f"{a} {b}" for a in _NAME_FIRST for b in _NAME_LAST]
    rng.shuffle(pool)
    return (pool * -(-n // len(pool)))[:n] if n > len(pool) else pool[:n]


def _themed_name(rng: random.Random, fam: _Family, fallback: str) -> str:
    word = rng.choice(fam.name_words)
    return f"{fallback.split()[0]} {word}"


def _dedupe_names(rows: list[Restaurant]) -> list[Restaurant]:
    seen: dict[str, int] = {}
    out = []
    for r in rows:
        count = seen.get(r.name, 0)
        seen[r.name] = count + 1
        if count:
            r = Restaurant(**{**r.__dict__, "name": f"{r.name} {_ROMAN[count] if count < len(_ROMAN) else count + 1}"})
        out.append(r)
    return out


_ROMAN = ("", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


def _city(location: str) -> str:
    return "San Francisco" if location in ("Bernal Heights", "Mission District") else location


def _draw_price(rng: random.Random, fam: _Family) -> str:
    upscale = fam.cuisines[0] in ("steakhouses", "french", "american (new)", "seafood", "sushi bars", "japanese")
    cheap_first = fam.hours is _DAY or fam.cuisines[0] in ("burgers", "pizza", "vietnamese", "taiwanese", "mexican")
    if upscale:
        w = (0.1, 0.35, 0.35, 0.2)
    elif cheap_first:
        w = (0.55, 0.38, 0.06, 0.01)
    else:
        w = (0.33, 0.45, 0.17, 0.05)
    return rng.choices(PRICES, weights=w)[0]


def _draw_rating(rng: random.Random) -> float:
    x = rng.gauss(3.9, 0.45)
    return min(5.0, max(2.5, round(x * 2) / 2))


def _draw_features(rng: random.Random, fam: _Family, price: str) -> frozenset[str]:
    out = set()
    for feat, rate in _FEATURE_RATE.items():
        if feat == "romantic" and price in ("expensive", "luxury"):
            rate *= 2.2
        if feat == "family_friendly" and price == "luxury":
            rate *= 0.3
        if rng.random() < rate:
            out.add(feat)
    if rng.random() < fam.spicy:
        out.add("spicy")
    return frozenset(out)


def _write_reviews(rng: random.Random, fam: _Family, dishes: tuple[str, ...], feats: frozenset[str]) -> tuple[str, ...]:
    """Three reviews.  Every feature the place has is said at least once, in some phrasing."""
    reviews: list[list[str]] = [[], [], []]
    for r in reviews:
        r.append(
            rng.choice(_OPENERS).format(
                meal=rng.choice(("lunch", "dinner", "brunch")),
                day=rng.choice(("Tuesday", "Friday", "Sunday", "Saturday")),
            )
        )
        tmpl = rng.choice(_DISH_PRAISE) if rng.random() < 0.75 else rng.choice(_DISH_MEH)
        r.append(tmpl.format(dish=rng.choice(dishes)))
    for feat in sorted(feats):
        for _ in range(1 if rng.random() < 0.7 else 2):
            rng.choice(reviews).append(rng.choice(_POSITIVE[feat]))
    for feat in FEATURES:
        if feat in feats:
            continue
        chance = 0.35 if feat == "easy_parking" else 0.06
        if rng.random() < chance:
            rng.choice(reviews).append(rng.choice(_NEGATIVE[feat]))
    for r in reviews:
        if rng.random() < 0.7:
            r.append(rng.choice(_SERVICE))
        closer = rng.choice(_CLOSERS)
        if closer:
            r.append(closer)
    out = []
    for r in reviews:
        head, body = r[0], r[1:]
        rng.shuffle(body)
        out.append(" ".join([head, *body]))
    return tuple(out)


# Realistic reviews (lecture 7 §5): how often a feature a place has is stated, hinted or unsaid, and how often a
# review mentions a dish.
_REALISTIC_STATED = 0.6  # stated outright in a known phrasing; else hinted (_REALISTIC_HINTED of the rest) or unsaid
_REALISTIC_HINTED = 0.5
_REALISTIC_DISH = 0.45  # a review names one of the dishes
# Hints: what a reviewer writes that implies the feature without the words a lexicon lists.
_HINTS: Mapping[str, tuple[str, ...]] = {
    "family_friendly": (
        "Our two boys finished everything on their plates.",
        "The staff brought a booster seat without us asking.",
    ),
    "great_view": (
        "Ask for the table by the glass wall at sunset.",
        "You can see all the way to the bay from upstairs.",
    ),
    "spicy": ("I was reaching for my water the whole meal.", "My mouth was tingling for an hour."),
    "romantic": ("We celebrated ten years together here.", "Soft lighting and quiet corners, just the two of us."),
    "good_for_groups": (
        "Twelve of us came for a birthday and nobody waited.",
        "They pushed four tables together for us.",
    ),
    "outdoor_seating": ("We ate under the string lights in the back.", "Sunny tables on the sidewalk at lunch."),
    "easy_parking": ("There is a big lot behind the building.", "We pulled right up to the door."),
}


def _write_realistic_reviews(
    rng: random.Random, fam: _Family, dishes: tuple[str, ...], feats: frozenset[str]
) -> tuple[str, ...]:
    """Three reviews as real ones read: a feature stated, hinted or not said; a dish only sometimes."""
    reviews: list[list[str]] = [[], [], []]
    for r in reviews:
        r.append(
            rng.choice(_OPENERS).format(
                meal=rng.choice(("lunch", "dinner", "brunch")),
                day=rng.choice(("Tuesday", "Friday", "Sunday", "Saturday")),
            )
        )
        if rng.random() < _REALISTIC_DISH:
            tmpl = rng.choice(_DISH_PRAISE) if rng.random() < 0.75 else rng.choice(_DISH_MEH)
            r.append(tmpl.format(dish=rng.choice(dishes)))
    for feat in sorted(feats):
        u = rng.random()
        if u < _REALISTIC_STATED:
            rng.choice(reviews).append(rng.choice(_POSITIVE[feat]))
        elif u < _REALISTIC_STATED + (1 - _REALISTIC_STATED) * _REALISTIC_HINTED and feat in _HINTS:
            rng.choice(reviews).append(rng.choice(_HINTS[feat]))
    for feat in FEATURES:
        if feat in feats:
            continue
        chance = 0.35 if feat == "easy_parking" else 0.06
        if rng.random() < chance:
            rng.choice(reviews).append(rng.choice(_NEGATIVE[feat]))
    for r in reviews:
        if rng.random() < 0.7:
            r.append(rng.choice(_SERVICE))
        closer = rng.choice(_CLOSERS)
        if closer:
            r.append(closer)
    out = []
    for r in reviews:
        head, body = r[0], r[1:]
        rng.shuffle(body)
        out.append(" ".join([head, *body]))
    return tuple(out)


# --- evaluator data ------------------------------------------------------------------

# Lecture 6 §3.3: 28 colloquial ways to name a cuisine, with the values a person who
# knows the enum would pick ("what the user really wants").  Evaluator data: the
# simulated LLM never reads it.
CUISINE_PHRASINGS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (phrase, frozenset(gold))
    for phrase, gold in (
        ("café", {"cafe", "coffee & tea"}),
        ("coffee shop", {"coffee & tea", "cafe"}),
        ("coffee", {"coffee & tea", "cafe"}),
        ("sushi", {"sushi bars"}),
        ("bbq", {"barbeque"}),
        ("barbecue", {"barbeque"}),
        ("sichuan", {"szechuan"}),
        ("curry", {"indian", "thai"}),
        ("noodle", {"noodles", "ramen"}),
        ("latin", {"latin american"}),
        ("boba", {"bubble tea"}),
        ("tea", {"coffee & tea", "bubble tea"}),
        ("burger", {"burgers"}),
        ("steak", {"steakhouses"}),
        ("brunch", {"breakfast & brunch"}),
        ("tapas", {"tapas bars"}),
        ("pastry", {"bakeries", "desserts"}),
        ("bakery", {"bakeries"}),
        ("veggie", {"vegetarian", "vegan"}),
        ("plant-based", {"vegan"}),
        ("dumplings", {"dim sum"}),
        ("fish", {"seafood"}),
        ("sandwich", {"sandwiches"}),
        ("wine", {"wine bars"}),
        ("middle-eastern", {"middle eastern"}),
        ("cajun soul food", {"soul food", "southern"}),
        ("hawaiian poke", {"poke", "hawaiian"}),
        ("korean bbq", {"korean", "barbeque"}),
    )
)


def records(world: RestaurantWorld) -> Iterable[dict[str, Any]]:
    return (r.as_record() for r in world.rows)
