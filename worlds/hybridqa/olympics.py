"""What the generated tables are drawn from: the real Summer Olympics (years, host cities and countries), fictional
countries, invented flag bearers and the passages written about them."""

from __future__ import annotations

import random
from dataclasses import dataclass

from worlds.hybridqa.model import N_TABLES

# (Roman numeral of the Olympiad, year, host city, host country) of every Summer Games held.
SUMMER_GAMES: tuple[tuple[str, int, str, str], ...] = (
    ("I", 1896, "Athens", "Greece"),
    ("II", 1900, "Paris", "France"),
    ("III", 1904, "St. Louis", "United States"),
    ("IV", 1908, "London", "United Kingdom"),
    ("V", 1912, "Stockholm", "Sweden"),
    ("VII", 1920, "Antwerp", "Belgium"),
    ("VIII", 1924, "Paris", "France"),
    ("IX", 1928, "Amsterdam", "Netherlands"),
    ("X", 1932, "Los Angeles", "United States"),
    ("XI", 1936, "Berlin", "Germany"),
    ("XIV", 1948, "London", "United Kingdom"),
    ("XV", 1952, "Helsinki", "Finland"),
    ("XVI", 1956, "Melbourne", "Australia"),
    ("XVII", 1960, "Rome", "Italy"),
    ("XVIII", 1964, "Tokyo", "Japan"),
    ("XIX", 1968, "Mexico City", "Mexico"),
    ("XX", 1972, "Munich", "West Germany"),
    ("XXI", 1976, "Montreal", "Canada"),
    ("XXII", 1980, "Moscow", "Soviet Union"),
    ("XXIII", 1984, "Los Angeles", "United States"),
    ("XXIV", 1988, "Seoul", "South Korea"),
    ("XXV", 1992, "Barcelona", "Spain"),
    ("XXVI", 1996, "Atlanta", "United States"),
    ("XXVII", 2000, "Sydney", "Australia"),
    ("XXVIII", 2004, "Athens", "Greece"),
    ("XXIX", 2008, "Beijing", "China"),
    ("XXX", 2012, "London", "United Kingdom"),
    ("XXXI", 2016, "Rio de Janeiro", "Brazil"),
    ("XXXII", 2020, "Tokyo", "Japan"),
    ("XXXIII", 2024, "Paris", "France"),
)

COUNTRIES: tuple[str, ...] = (
    "Veloria",
    "Ostravia",
    "Calmera",
    "Durnholm",
    "Esteria",
    "Falkenmark",
    "Galdoria",
    "Hestria",
    "Istrava",
    "Jorvania",
    "Kaldera",
    "Lunaria",
    "Marovia",
    "Norvalia",
    "Orlenda",
    "Pellaria",
    "Quirinia",
    "Rostavia",
    "Saldana",
    "Tervonia",
    "Ulmaria",
    "Varenland",
    "Westmarch",
    "Xandria",
    "Yselda",
    "Zaravia",
    "Aldmora",
    "Brevania",
    "Corvenia",
    "Delmara",
    "Elvaria",
    "Fennoria",
    "Glenmark",
    "Halvoria",
    "Ithaca Minor",
    "Jessonia",
    "Korvath",
    "Lorwen",
    "Mirenza",
    "Nordhal",
    "Ovaria",
    "Pravonia",
    "Qestra",
    "Rivaldia",
    "Solmara",
    "Tamberia",
    "Umbria Nova",
    "Valtania",
    "Wendmark",
    "Zelmora",
)
assert len(COUNTRIES) == N_TABLES and len(set(COUNTRIES)) == N_TABLES

_GIVEN = {
    "Female": (
        "Lina",
        "Asha",
        "Dana",
        "Mira",
        "Elsa",
        "Nora",
        "Ivana",
        "Tessa",
        "Kaja",
        "Runa",
        "Sela",
        "Vera",
        "Ilka",
        "Maren",
        "Oona",
        "Petra",
        "Zora",
        "Ada",
        "Greta",
        "Hanne",
        "Liv",
        "Selma",
        "Talia",
        "Yara",
    ),
    "Male": (
        "Tomas",
        "Arvid",
        "Emil",
        "Jonas",
        "Karel",
        "Luka",
        "Milan",
        "Oskar",
        "Pavel",
        "Rasmus",
        "Stefan",
        "Viktor",
        "Anton",
        "Bruno",
        "Dorian",
        "Filip",
        "Goran",
        "Henrik",
        "Ivo",
        "Jakob",
        "Lars",
        "Nils",
        "Teo",
        "Aurel",
    ),
}
_SURNAMES = (
    "Varga",
    "Kell",
    "Arden",
    "Novak",
    "Halden",
    "Brask",
    "Corvin",
    "Dalmar",
    "Esker",
    "Frell",
    "Gorski",
    "Holm",
    "Istvan",
    "Jarek",
    "Kovan",
    "Lindqvist",
    "Morava",
    "Nyberg",
    "Orsolya",
    "Petrov",
    "Quist",
    "Rudan",
    "Sarkis",
    "Tolvan",
    "Ulric",
    "Vesna",
    "Wendt",
    "Yarrow",
    "Zelen",
    "Amsel",
    "Bergen",
    "Castel",
    "Doran",
    "Elling",
    "Farkas",
    "Grell",
    "Harker",
    "Ivers",
    "Jessen",
    "Krall",
    "Lorne",
    "Marek",
    "Nolde",
    "Ostrom",
    "Palko",
    "Reske",
    "Solberg",
    "Tarnow",
)
_HOMETOWNS = (
    "Kestrel Bay",
    "Ostmoor",
    "Varna Falls",
    "Greywick",
    "Solvang Hollow",
    "Brindle",
    "Lakemere",
    "Harrowgate",
    "Miren",
    "Tarsk",
    "Eldham",
    "Corrin",
)


@dataclass(frozen=True)
class _Sport:
    sport: str  # what a question names ("judo", "swimming")
    noun: str  # the athlete ("judoka", "swimmer")
    events: tuple[str, ...]  # event names without the "men's"/"women's" prefix


SPORTS: tuple[_Sport, ...] = (
    _Sport("athletics", "hurdler", ("400 m hurdles", "110 m hurdles")),
    _Sport("athletics", "sprinter", ("100 m", "200 m", "400 m")),
    _Sport("athletics", "marathon runner", ("marathon",)),
    _Sport("athletics", "high jumper", ("high jump",)),
    _Sport("swimming", "swimmer", ("200 m freestyle", "100 m backstroke", "100 m butterfly")),
    _Sport("judo", "judoka", ("81 kg", "73 kg", "57 kg", "63 kg")),
    _Sport("rowing", "rower", ("single sculls",)),
    _Sport("fencing", "fencer", ("individual sabre", "individual épée")),
    _Sport("wrestling", "wrestler", ("freestyle 74 kg", "Greco-Roman 87 kg")),
    _Sport("cycling", "cyclist", ("road race", "individual time trial")),
    _Sport("weightlifting", "weightlifter", ("+109 kg", "73 kg")),
    _Sport("sailing", "sailor", ("Laser", "Finn")),
    _Sport("boxing", "boxer", ("middleweight", "flyweight")),
    _Sport("shooting", "sport shooter", ("10 m air rifle", "trap")),
)

_GAMES_PASSAGES = (
    "The {year} Summer Olympics, officially the Games of the {roman} Olympiad, were held in {city}, {country}. "
    "{team} sent {n} athletes to the Games.",
    "The Games of the {roman} Olympiad took place in {city}, {country}, in {year}. Athletes from {m} nations "
    "took part, {team}'s delegation among them.",
    "{city}, {country} hosted the {year} Summer Olympics, the Games of the {roman} Olympiad. {team} won {k} "
    "medals there with a team of {n}.",
)
_BEARER_PASSAGES = (
    "{name} (born on {birth}) is a {demonym} {noun}. {He} competed in the {event} event at the {year} Summer "
    "Olympics. {He} won {his} first national title on {other}.",
    "{name} (born {birth}) is a {demonym} {noun} who took part in the {event} event at the {year} Summer "
    "Olympics. At the national championships held on {other}, {he} set a national record.",
    "{name} is a {demonym} {noun}, born on {birth} in {town}. {He} competed in the {event} event at the {year} "
    "Summer Olympics and carried the flag at the opening ceremony. {He} retired on {other}.",
)

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


@dataclass(frozen=True)
class _Bearer:
    roman: str
    year: int
    city: str
    country: str
    name: str
    gender: str
    sport: _Sport
    event: str  # with the gender prefix: "women's 400 m hurdles"
    birth: str  # YYYY-MM-DD
    other_date: str  # another date in the passage (a reader can take the wrong one)


def demonym(country: str) -> str:
    base = country.split()[0]
    if base.endswith("ia") or base.endswith("a"):
        return base + "n"
    return base + "ian"


def _date(rng: random.Random, year_lo: int, year_hi: int) -> str:
    y = rng.randint(year_lo, year_hi)
    m = rng.randint(1, 12)
    d = rng.randint(1, 28)
    return f"{y:04d}-{m:02d}-{d:02d}"


def _draw_bearers(rng: random.Random, country: str, n: int) -> list[_Bearer]:
    start = rng.randint(0, len(SUMMER_GAMES) - n)
    games = SUMMER_GAMES[start : start + n]
    names: set[str] = set()
    births: set[str] = set()
    out: list[_Bearer] = []
    sports_used: list[tuple[_Sport, str]] = []
    for roman, year, city, host in games:
        gender = rng.choice(("Male", "Female"))
        while True:
            name = f"{rng.choice(_GIVEN[gender])} {rng.choice(_SURNAMES)}"
            if name not in names:
                names.add(name)
                break
        # A shared sport now and then: questions of type IV then have several right answers.
        if sports_used and rng.random() < 0.15:
            sport, base_event = rng.choice(sorted(set(sports_used), key=lambda p: (p[0].noun, p[1])))
        else:
            sport = rng.choice(SPORTS)
            base_event = rng.choice(sport.events)
        sports_used.append((sport, base_event))
        prefix = "women's" if gender == "Female" else "men's"
        event = f"{prefix} {base_event}"
        while True:
            birth = _date(rng, year - 34, year - 19)
            if birth not in births:
                births.add(birth)
                break
        other = _date(rng, year - 6, year - 1)
        out.append(_Bearer(roman, year, city, host, name, gender, sport, event, birth, other))
    return out


def _games_passage(rng: random.Random, b: _Bearer, team: str) -> str:
    template = rng.choice(_GAMES_PASSAGES)
    return template.format(
        year=b.year,
        roman=b.roman,
        city=b.city,
        country=b.country,
        team=team,
        n=rng.randint(4, 60),
        m=rng.randint(12, 206),
        k=rng.randint(0, 9),
    )


def _bearer_passage(rng: random.Random, b: _Bearer, country: str) -> str:
    template = rng.choice(_BEARER_PASSAGES)
    he, his = ("She", "her") if b.gender == "Female" else ("He", "his")
    return template.format(
        name=b.name,
        birth=b.birth,
        demonym=demonym(country),
        noun=b.sport.noun,
        He=he,
        he=he.lower(),
        his=his,
        event=b.event,
        year=b.year,
        other=b.other_date,
        town=rng.choice(_HOMETOWNS),
    )
