"""The knowledge-graph world of lecture 8 (§0.4): a fictional, Wikidata-like graph.

``build(seed)`` returns a :class:`Built` pair: the visible :class:`KGWorld` and, apart from it, its
:class:`HiddenTruth`.  The world has 6 countries, 12 provinces, 37 cities, 6 universities
(3 with a school of music), 19 instruments in 4 classes, about 200 people of six occupations,
25 companies, 30 mountains, 40 films and 5 awards — about 2,500 statements.  Items have fictional
QIDs from Q1000; properties keep their real Wikidata PIDs and English labels, so what one learns
here carries over to Wikidata.  :func:`rdf_triples` writes Wikidata's RDF model: truthy ``wdt:``
triples and ``p:``/``ps:``/``pq:`` statement nodes (qualifiers such as P585 on P166 live there only).

The graph keeps seven quirks of Wikidata (§1.4), so that the query one writes from the question's
words is legal SPARQL but wrong or incomplete:

1. no fixed schema: which properties an item has depends on the item (musicians have P1303,
   scientists P184, directors nothing special);
2. many similar properties: mountains have P2044 *elevation above sea level*, people P2048 *height*;
   films have P840 *narrative location* and P915 *filming location*; people P27 *country of
   citizenship*, which is not their country of birth;
3. subclass, not instance: instruments are classes (``P279``), two levels below "string instrument";
4. one-sided relations: P184 *doctoral advisor* is on every student, P185 *doctoral student* only
   on a few advisors;
5. qualifiers: the year of an award is a P585 qualifier of the P166 statement, not a truthy triple;
6. the P131 chain: about half the cities have no P17 *country*; one reaches it through the province;
7. ambiguous labels: two cities called Ashford, two called Millbrook, two films called
   Northern Lights, two people called Elena Varga — only the descriptions tell them apart.

:class:`HiddenTruth` holds the complete facts before the quirks were applied (every city's
country, every advisor–student pair, …).  The world holds no reference to it: only evaluators are
handed it, and so the question sets of §5 (``questions(world, truth)``: 40 simple, 56
forum-style in 8 categories, each with gold SPARQL), which are evaluator data too.  Engines and the
simulated policy are handed the world, and see the graph only.
Everything is drawn from ``random.Random(seed)``: the same seed gives the same world.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

DEFAULT_SEED = 8
FIRST_QID = 1000

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P_NS = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PQ = "http://www.wikidata.org/prop/qualifier/"
WDS = "http://www.wikidata.org/entity/statement/"
WIKIBASE = "http://wikiba.se/ontology#"
SCHEMA = "http://schema.org/"
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"

QUIRKS: tuple[str, ...] = (
    "no fixed schema",
    "similar properties",
    "subclass, not instance",
    "one-sided relations",
    "qualifiers",
    "the P131 chain",
    "ambiguous labels",
)

# --- data model ------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """The object of a claim: an item (a QID) or a literal written exactly as Wikidata writes it."""

    kind: str  # item | quantity | time | string
    value: str

    def render(self, labels: Mapping[str, str] | None = None) -> str:
        if self.kind == "item":
            name = (labels or {}).get(self.value)
            return f"{name} ({self.value})" if name else self.value
        return self.value


def item(qid: str) -> Value:
    return Value("item", qid)


def quantity(n: int | float) -> Value:
    return Value("quantity", str(n))


def time(year: int, month: int = 1, day: int = 1) -> Value:
    return Value("time", f"{year:04d}-{month:02d}-{day:02d}T00:00:00Z")


@dataclass(frozen=True)
class Claim:
    """One statement: subject, property, value and its qualifiers."""

    subject: str
    pid: str
    value: Value
    qualifiers: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class Entity:
    qid: str
    label: str
    description: str
    kind: str  # class | country | province | city | university | music school | instrument | person | company | mountain | film | award | occupation
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Property:
    pid: str
    label: str
    description: str
    datatype: str  # item | quantity | time | string
    aliases: tuple[str, ...] = ()


PROPERTIES: tuple[Property, ...] = (
    Property(
        "P31",
        "instance of",
        "that class of which this subject is a particular example and member",
        "item",
        ("is a", "type", "is an instance of"),
    ),
    Property(
        "P279",
        "subclass of",
        "this item is a subclass (subset) of that item; all instances of this item are instances of that item",
        "item",
        ("type of", "kind of", "subtype of"),
    ),
    Property("P17", "country", "sovereign state that this item is in", "item", ("sovereign state", "land", "state")),
    Property(
        "P27",
        "country of citizenship",
        "the object is a country that recognizes the subject as its citizen",
        "item",
        ("citizenship", "nationality", "citizen of"),
    ),
    Property(
        "P131",
        "located in the administrative territorial entity",
        "the item is located on the territory of the following administrative entity",
        "item",
        ("located in", "administrative region", "in", "region"),
    ),
    Property(
        "P36",
        "capital",
        "seat of government of a country, province, state or other type of administrative territorial entity",
        "item",
        ("capital city",),
    ),
    Property(
        "P1082",
        "population",
        "number of people inhabiting the place",
        "quantity",
        ("inhabitants", "number of inhabitants"),
    ),
    Property("P21", "sex or gender", "sex or gender identity of human or animal", "item", ("gender", "sex")),
    Property(
        "P19",
        "place of birth",
        "most specific known birth location of a person",
        "item",
        ("birthplace", "born in", "city of birth", "birth city"),
    ),
    Property(
        "P569", "date of birth", "date on which the subject was born", "time", ("born on", "birth date", "birthday")
    ),
    Property("P106", "occupation", "occupation of a person", "item", ("profession", "job", "work")),
    Property(
        "P1303",
        "instrument",
        "musical instrument that a person plays or teaches",
        "item",
        ("plays", "musical instrument", "instruments played"),
    ),
    Property(
        "P1416",
        "affiliation",
        "organization that a person or organization is affiliated with",
        "item",
        ("affiliated with", "affiliated to", "member of institution"),
    ),
    Property(
        "P69",
        "educated at",
        "educational institution attended by subject",
        "item",
        ("alma mater", "studied at", "education", "graduated from"),
    ),
    Property(
        "P184",
        "doctoral advisor",
        "person who supervised the doctorate or PhD thesis of the subject",
        "item",
        ("PhD advisor", "doctoral supervisor", "supervisor", "advisor"),
    ),
    Property(
        "P185",
        "doctoral student",
        "doctoral student(s) of a professor",
        "item",
        ("PhD student", "students", "doctoral students"),
    ),
    Property(
        "P166",
        "award received",
        "award or recognition received by a person, organization or creative work",
        "item",
        ("award", "prize", "honours", "prize received"),
    ),
    Property(
        "P585",
        "point in time",
        "date something took place, existed or a statement was true",
        "time",
        ("date", "year", "when", "time"),
    ),
    Property(
        "P840",
        "narrative location",
        "the narrative of the work is set in this location",
        "item",
        ("set in", "setting", "takes place in", "location of the story"),
    ),
    Property(
        "P915",
        "filming location",
        "actual place where this scene/film was shot",
        "item",
        ("shot in", "filmed in", "filmed at", "shooting location"),
    ),
    Property("P2048", "height", "vertical length of an entity", "quantity", ("tall", "how tall", "stature")),
    Property(
        "P2044",
        "elevation above sea level",
        "height of the item (geographical object) as measured relative to sea level",
        "quantity",
        ("altitude", "elevation", "height above sea level", "how high"),
    ),
    Property(
        "P57",
        "director",
        "director(s) of film, TV-series, stageplay, video game or similar",
        "item",
        ("directed by", "film director", "filmmaker"),
    ),
    Property(
        "P161", "cast member", "actor in the subject production", "item", ("actor", "starring", "cast", "actress")
    ),
    Property(
        "P577",
        "publication date",
        "date or point in time when a work was first published or released",
        "time",
        ("release date", "released", "premiere", "first released"),
    ),
    Property(
        "P495",
        "country of origin",
        "country of origin of this item (creative work, food, phrase, product, etc.)",
        "item",
        ("origin", "from country"),
    ),
    Property(
        "P2047", "duration", "length of time of an event or process", "quantity", ("length", "runtime", "running time")
    ),
    Property(
        "P112",
        "founded by",
        "founder or co-founder of this organization",
        "item",
        ("founder", "co-founder", "founders"),
    ),
    Property(
        "P159",
        "headquarters location",
        "city, where an organization's headquarters is or has been situated",
        "item",
        ("HQ", "based in", "head office", "headquartered in"),
    ),
    Property(
        "P571",
        "inception",
        "time when an entity begins to exist",
        "time",
        ("founded", "established", "date of foundation", "founding date"),
    ),
    Property(
        "P1128",
        "employees",
        "total number of employees of a company at a given point in time",
        "quantity",
        ("number of employees", "staff", "workforce"),
    ),
    Property(
        "P361", "part of", "object of which the subject is a part", "item", ("belongs to", "component of", "section of")
    ),
)
PROPERTY_BY_ID: Mapping[str, Property] = {p.pid: p for p in PROPERTIES}

# --- names --------------------------------------------------------------------------------

COUNTRIES = ("Kestavia", "Tirenne", "Orundi", "Valmora", "Brevania", "Lusmark")
PROVINCES: Mapping[str, tuple[str, str]] = {
    "Kestavia": ("Pallasca", "Veldran"),
    "Tirenne": ("Corvane", "Essling"),
    "Orundi": ("Mbeza", "Tarro"),
    "Valmora": ("Sorrel", "Quintara"),
    "Brevania": ("Halden", "Ostmark"),
    "Lusmark": ("Fennwick", "Dravo"),
}
CITIES: Mapping[str, tuple[str, ...]] = {
    "Pallasca": ("Harrowgate", "Castellane", "Brindle", "Pell"),
    "Veldran": ("Ashford", "Varnholt", "Lisle"),
    "Corvane": ("Corbin", "Sallow", "Merrin"),
    "Essling": ("Ashford", "Eskar", "Tollin"),
    "Mbeza": ("Zamori", "Kitwa", "Lenshi", "Orrin"),
    "Tarro": ("Millbrook", "Dunmore", "Ulani"),
    "Sorrel": ("Ravella", "Torvik", "Cassio"),
    "Quintara": ("Millbrook", "Quint", "Abaro"),
    "Halden": ("Haldenburg", "Lindqvist", "Rostal"),
    "Ostmark": ("Ostby", "Grell"),
    "Fennwick": ("Fenmouth", "Wickham", "Aldersey"),
    "Dravo": ("Dravik", "Solberg", "Tamsin"),
}
CAPITALS = {
    "Kestavia": "Harrowgate",
    "Tirenne": "Corbin",
    "Orundi": "Zamori",
    "Valmora": "Ravella",
    "Brevania": "Haldenburg",
    "Lusmark": "Fenmouth",
}
# name, city, school of music
UNIVERSITIES = (
    ("Northgate University", "Harrowgate", True),
    ("Kingsley College", "Corbin", True),
    ("University of Zamori", "Zamori", False),
    ("Ravella University", "Ravella", True),
    ("Haldenburg Institute of Technology", "Haldenburg", False),
    ("Fenmouth University", "Fenmouth", False),
)
# the instrument tree: class -> subclass -> instruments (4 classes, 19 instruments)
INSTRUMENT_TREE: Mapping[str, Mapping[str | None, tuple[str, ...]]] = {
    "string instrument": {
        "plucked string instrument": ("sitar", "guitar", "lute", "harp"),
        "bowed string instrument": ("violin", "cello", "viola", "double bass"),
    },
    "wind instrument": {
        "woodwind instrument": ("flute", "clarinet", "oboe"),
        "brass instrument": ("trumpet", "trombone", "horn"),
    },
    "percussion instrument": {None: ("drum kit", "marimba", "timpani")},
    "keyboard instrument": {None: ("piano", "harpsichord")},
}
OCCUPATIONS = ("musician", "physicist", "mathematician", "film director", "actor", "entrepreneur")
HEADCOUNT = {"musician": 50, "physicist": 36, "mathematician": 34, "film director": 20, "actor": 40, "entrepreneur": 24}
# award, country, occupations it goes to, laureates
AWARDS = (
    ("Orund Prize in Physics", "Orundi", ("physicist",), 9),
    ("Kestavian Medal in Mathematics", "Kestavia", ("mathematician",), 8),
    ("Golden Reel Award", "Tirenne", ("film director", "actor"), 10),
    ("Valmora Music Prize", "Valmora", ("musician",), 8),
    ("Brevania Enterprise Award", "Brevania", ("entrepreneur",), 6),
)
GIVEN = (
    "Gaspar",
    "Talia",
    "Bruna",
    "Anselm",
    "Marit",
    "Oskar",
    "Lena",
    "Tomas",
    "Irene",
    "Felix",
    "Nadia",
    "Rafael",
    "Sigrid",
    "Emil",
    "Clara",
    "Dario",
    "Ines",
    "Jonas",
    "Mira",
    "Pavel",
    "Rosa",
    "Stefan",
    "Vera",
    "Yusuf",
    "Alma",
    "Bastian",
    "Celia",
    "Dmitri",
    "Edda",
    "Fabian",
    "Greta",
    "Hugo",
    "Ilse",
    "Jasper",
    "Katya",
    "Lucan",
    "Maren",
    "Nils",
    "Odette",
    "Piet",
    "Quinn",
    "Runa",
    "Silas",
    "Thea",
    "Ugo",
    "Vilja",
    "Wendel",
    "Xenia",
    "Ysolde",
    "Zeno",
    "Amara",
    "Bram",
    "Cosima",
    "Dorian",
    "Esme",
    "Florin",
    "Hedda",
    "Ivo",
    "Juno",
    "Kasimir",
)
MALE = frozenset(
    (
        "Gaspar",
        "Anselm",
        "Oskar",
        "Tomas",
        "Felix",
        "Rafael",
        "Emil",
        "Dario",
        "Jonas",
        "Pavel",
        "Stefan",
        "Yusuf",
        "Bastian",
        "Dmitri",
        "Fabian",
        "Hugo",
        "Jasper",
        "Lucan",
        "Nils",
        "Piet",
        "Quinn",
        "Silas",
        "Ugo",
        "Wendel",
        "Zeno",
        "Bram",
        "Dorian",
        "Florin",
        "Ivo",
        "Kasimir",
    )
)
FAMILY = (
    "Underhill",
    "Grimaldi",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Castell",
    "Brandt",
    "Ferreira",
    "Halvorsen",
    "Ivanova",
    "Kowal",
    "Lambert",
    "Mbeki",
    "Novak",
    "Ortega",
    "Petrov",
    "Quispe",
    "Rasmussen",
    "Sato",
    "Tamm",
    "Ulloa",
    "Vance",
    "Weller",
    "Yilmaz",
    "Zoric",
    "Achterberg",
    "Bellamy",
    "Corrin",
    "Delacroix",
    "Eskola",
    "Falk",
    "Galloway",
    "Haddad",
    "Ingram",
    "Jansen",
    "Kestrel",
    "Lowe",
    "Marchetti",
    "Nyberg",
    "Oduya",
    "Pellerin",
    "Rook",
    "Stavros",
    "Thorne",
    "Urquhart",
    "Voss",
    "Whitlock",
    "Ashby",
    "Brennan",
    "Caddel",
)
FILMS = (
    "The Glass Harbour",
    "Winter in Corbin",
    "Salt and Iron",
    "The Last Cartographer",
    "Northern Lights",
    "Northern Lights",
    "A River of Bells",
    "The Quiet Province",
    "Ember Road",
    "The Sixth Summit",
    "Paper Kings",
    "The Lantern Keeper",
    "Red Meridian",
    "Sallow Fields",
    "The Orchard Thief",
    "Harbourmaster",
    "Blue Hour",
    "The Long Descent",
    "Songs from Ravella",
    "The Iron Orchard",
    "Tidewater",
    "The Cellist",
    "Borderline Saints",
    "A Map of Ashes",
    "The Ninth Bridge",
    "Distant Thunder",
    "The Silver Fox of Eskar",
    "Night Ferry",
    "The Weight of Snow",
    "Copper Sky",
    "The Clockmaker's Daughter",
    "Dry Season",
    "The Wandering Choir",
    "Stone Garden",
    "The Eleventh Hour",
    "Broken Compass",
    "Midnight in Haldenburg",
    "The Falconer",
    "Under the Linden",
    "Harvest Moon",
)
COMPANIES = (
    "Kestrel Dynamics",
    "Brightwater Labs",
    "Orund Minerals",
    "Valcor Systems",
    "Tessellate",
    "Northwind Freight",
    "Halcyon Bio",
    "Ironleaf Foods",
    "Quantara",
    "Meridian Optics",
    "Lumen Grid",
    "Cobalt & Finch",
    "Stratos Air",
    "Verdant Energy",
    "Palisade Software",
    "Ravella Textiles",
    "Grellworks",
    "Solberg Maritime",
    "Ashcombe Media",
    "Tidal Robotics",
    "Fenmouth Ceramics",
    "Ostby Motors",
    "Larkspur Pharma",
    "Zamori Coffee",
    "Aldersey Capital",
)
# mountain -> its province (a mountain named after a city may be recorded in that city: quirk 6)
MOUNTAINS: Mapping[str, str] = {
    "Mount Castellane": "Pallasca",
    "Pallas Peak": "Pallasca",
    "Mount Brindle": "Pallasca",
    "Mount Varn": "Veldran",
    "Lisle Summit": "Veldran",
    "Corvane Spire": "Corvane",
    "Mount Merrin": "Corvane",
    "Mount Essel": "Essling",
    "Mount Tollin": "Essling",
    "Eskar Peak": "Essling",
    "Mbeza Dome": "Mbeza",
    "Mount Kitwa": "Mbeza",
    "Mount Orrin": "Mbeza",
    "Tarro Crag": "Tarro",
    "Mount Ulani": "Tarro",
    "Dunmore Ben": "Tarro",
    "Sorrel Horn": "Sorrel",
    "Mount Cassio": "Sorrel",
    "Mount Torvik": "Sorrel",
    "Quintara Ridge": "Quintara",
    "Mount Abaro": "Quintara",
    "Mount Quint": "Quintara",
    "Halden Tor": "Halden",
    "Mount Rostal": "Halden",
    "Ostmark Needle": "Ostmark",
    "Mount Grell": "Ostmark",
    "Fennwick Fell": "Fennwick",
    "Mount Aldersey": "Fennwick",
    "Dravo Pike": "Dravo",
    "Mount Solberg": "Dravo",
}
INDUSTRY_OF = (
    "aerospace",
    "software",
    "mining",
    "logistics",
    "biotechnology",
    "food",
    "optics",
    "energy",
    "media",
    "finance",
)


# --- the world ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HiddenTruth:
    """The complete facts, before the quirks removed or moved some of them.  Evaluators only."""

    city_country: Mapping[str, str]  # every city's country, including those without P17
    place_country: Mapping[str, str]  # every place (city, province, mountain, university) -> country
    birth_country: Mapping[str, str]  # person -> country of their place of birth
    advisor_pairs: frozenset[tuple[str, str]]  # (student, advisor)
    instrument_class: Mapping[str, str]  # instrument -> top class (string / wind / percussion / keyboard)
    mountain_province: Mapping[str, str]
    awards: Mapping[str, tuple[tuple[str, int], ...]]  # award -> ((person, year), ...)
    affiliation_university: Mapping[str, str]  # musician -> the university they are affiliated with (school or not)


@dataclass(frozen=True)
class KGWorld:
    """The graph an engine is handed: entities, properties, claims (the hidden truth is returned apart, see
    :class:`Built`)."""

    seed: int
    entities: Mapping[str, Entity]
    properties: Mapping[str, Property]
    claims: tuple[Claim, ...]
    classes: Mapping[str, str] = field(default_factory=dict)  # class name -> QID (e.g. "mountain")

    @property
    def statement_count(self) -> int:
        return len(self.claims)

    def label(self, qid: str) -> str:
        e = self.entities.get(qid)
        if e is not None:
            return e.label
        p = self.properties.get(qid)
        return p.label if p is not None else qid

    def by_label(self, label: str) -> list[Entity]:
        return [e for e in self.entities.values() if e.label == label]

    def claims_of(self, qid: str) -> list[Claim]:
        return [c for c in self.claims if c.subject == qid]

    def kind(self, kind: str) -> list[Entity]:
        return [e for e in self.entities.values() if e.kind == kind]


class Built(NamedTuple):
    """What :func:`build` returns: the visible world and, apart from it, the hidden truth."""

    world: KGWorld
    truth: HiddenTruth


class _Builder:
    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.claims: list[Claim] = []
        self._next = FIRST_QID

    def new(self, label: str, description: str, kind: str, aliases: tuple[str, ...] = ()) -> str:
        qid = f"Q{self._next}"
        self._next += 1
        self.entities[qid] = Entity(qid, label, description, kind, aliases)
        return qid

    def claim(self, s: str, pid: str, v: Value, qualifiers: tuple[tuple[str, Value], ...] = ()) -> None:
        self.claims.append(Claim(s, pid, v, qualifiers))


def build(seed: int = DEFAULT_SEED) -> Built:
    """Generate the world and its hidden truth.  Deterministic in ``seed``.
    Hand ``.world`` to engines; only evaluators take ``.truth``."""
    rng = random.Random(seed)
    b = _Builder()
    C: dict[str, str] = {}
    for name, desc in (
        ("human", "common name of Homo sapiens"),
        ("country", "distinct territorial body or political entity"),
        ("province", "first-level administrative division of a country"),
        ("city", "large human settlement"),
        ("university", "academic institution for further education"),
        ("music school", "educational institution specialized in the study of music"),
        ("company", "legal entity representing an association of people with a business purpose"),
        ("mountain", "large natural elevation of the earth's surface"),
        ("film", "sequence of images that give the impression of movement"),
        ("award", "something given in recognition of an excellence in a certain field"),
        ("musical instrument", "device created or adapted to make musical sounds"),
        ("occupation", "label applied to a person based on an activity they participate in"),
    ):
        C[name] = b.new(name, desc, "class")
    for sex in ("male", "female"):
        C[sex] = b.new(sex, f"{sex} human", "gender")
    for occ, desc in (
        ("musician", "person who plays or composes music"),
        ("physicist", "scientist who does research in physics"),
        ("mathematician", "person with an extensive knowledge of mathematics"),
        ("film director", "person who directs the making of a film"),
        ("actor", "person who acts in a dramatic or comic production"),
        ("entrepreneur", "person who organizes and operates a business"),
    ):
        C[occ] = b.new(occ, desc, "occupation", ("film maker",) if occ == "film director" else ())
        b.claim(C[occ], "P31", item(C["occupation"]))
    # instruments: 4 classes, 4 subclasses, 19 instruments; every instrument is a class (P279), never P31
    instrument_class: dict[str, str] = {}
    instruments: list[str] = []
    for top, subs in INSTRUMENT_TREE.items():
        C[top] = b.new(top, "class of musical instruments", "class")
        b.claim(C[top], "P279", item(C["musical instrument"]))
        for sub, names in subs.items():
            parent = C[top]
            if sub is not None:
                C[sub] = b.new(sub, f"{top} family", "class")
                b.claim(C[sub], "P279", item(C[top]))
                parent = C[sub]
            for n in names:
                q = b.new(n, f"{(sub or top)}", "instrument")
                b.claim(q, "P279", item(parent))
                instrument_class[q] = C[top]
                instruments.append(q)

    # places
    country: dict[str, str] = {}
    province: dict[str, str] = {}
    city_province: dict[str, str] = {}
    city_country: dict[str, str] = {}
    place_country: dict[str, str] = {}
    cities_by_name: dict[str, list[str]] = {}
    for cname in COUNTRIES:
        country[cname] = b.new(cname, "fictional country", "country")
        b.claim(country[cname], "P31", item(C["country"]))
    for cname in COUNTRIES:
        for pname in PROVINCES[cname]:
            province[pname] = b.new(pname, f"province of {cname}", "province")
            b.claim(province[pname], "P31", item(C["province"]))
            b.claim(province[pname], "P17", item(country[cname]))
            b.claim(province[pname], "P131", item(country[cname]))
            place_country[province[pname]] = country[cname]
    for cname in COUNTRIES:
        for pname in PROVINCES[cname]:
            for city in CITIES[pname]:
                q = b.new(city, f"city in {pname}, {cname}", "city")
                cities_by_name.setdefault(city, []).append(q)
                city_province[q] = province[pname]
                city_country[q] = country[cname]
                place_country[q] = country[cname]
    city_list = list(city_province)
    # Quirk 6: about half the cities have no P17; the capitals always do.
    without_p17 = set(rng.sample([c for c in city_list if b.entities[c].label not in CAPITALS.values()], 18))
    for q in city_list:
        b.claim(q, "P31", item(C["city"]))
        b.claim(q, "P131", item(city_province[q]))
        if q not in without_p17:
            b.claim(q, "P17", item(city_country[q]))
        b.claim(q, "P1082", quantity(rng.randrange(4_000, 900_000, 10)))
    for cname, cap in CAPITALS.items():
        b.claim(country[cname], "P36", item(next(q for q in cities_by_name[cap] if city_country[q] == country[cname])))

    def city(name: str) -> str:
        return cities_by_name[name][0]

    # universities, schools of music
    universities: dict[str, str] = {}
    school_of: dict[str, str] = {}
    for uname, ucity, has_school in UNIVERSITIES:
        cq = city(ucity)
        cn = b.entities[city_country[cq]].label
        u = b.new(uname, f"university in {ucity}, {cn}", "university")
        universities[uname] = u
        place_country[u] = city_country[cq]
        b.claim(u, "P31", item(C["university"]))
        b.claim(u, "P131", item(cq))
        b.claim(u, "P17", item(city_country[cq]))
        b.claim(u, "P571", time(rng.randrange(1820, 1960)))
        if has_school:
            s = b.new(f"{uname} School of Music", f"school of music of {uname}", "music school")
            school_of[u] = s
            place_country[s] = city_country[cq]
            b.claim(s, "P31", item(C["music school"]))
            b.claim(s, "P361", item(u))
            b.claim(s, "P131", item(cq))

    # awards
    award_q: dict[str, str] = {}
    for aname, acountry, _occs, _n in AWARDS:
        a = b.new(aname, f"award given in {acountry}", "award")
        award_q[aname] = a
        b.claim(a, "P31", item(C["award"]))
        b.claim(a, "P17", item(country[acountry]))

    # people
    names = _person_names(rng, sum(HEADCOUNT.values()))
    people: dict[str, list[str]] = {o: [] for o in OCCUPATIONS}
    born: dict[str, int] = {}
    birth_country: dict[str, str] = {}
    uni_list = list(universities.values())
    affiliation_university: dict[str, str] = {}
    i = 0
    for occ in OCCUPATIONS:
        for _ in range(HEADCOUNT[occ]):
            name = names[i]
            i += 1
            lo, hi = {"physicist": (1925, 1992), "mathematician": (1925, 1992)}.get(occ, (1940, 1998))
            year = rng.randrange(lo, hi)
            bcity = rng.choice(city_list)
            ccountry = city_country[bcity]
            desc = f"{occ} from {b.entities[ccountry].label} (born {year})"
            q = b.new(name, desc, "person")
            people[occ].append(q)
            born[q] = year
            birth_country[q] = ccountry
            b.claim(q, "P31", item(C["human"]))
            b.claim(q, "P21", item(C["male" if name.split()[0] in MALE else "female"]))
            b.claim(q, "P106", item(C[occ]))
            b.claim(q, "P19", item(bcity))
            b.claim(q, "P569", time(year, rng.randrange(1, 13), rng.randrange(1, 29)))
            # Quirk 2: citizenship is not the country of birth for about one person in six
            citizen = ccountry if rng.random() > 0.17 else rng.choice([c for c in country.values() if c != ccountry])
            b.claim(q, "P27", item(citizen))
            if occ in ("physicist", "mathematician", "entrepreneur") or (occ == "musician" and rng.random() < 0.7):
                b.claim(q, "P69", item(rng.choice(uni_list)))
            if occ == "musician":
                for inst in rng.sample(instruments, rng.choice((1, 1, 1, 2))):
                    b.claim(q, "P1303", item(inst))
                if rng.random() < 0.84:
                    u = rng.choice(uni_list)
                    affiliation_university[q] = u
                    # Quirk 2/1: the school of music is a separate item, part of (P361) its university
                    target = school_of[u] if u in school_of and rng.random() < 0.7 else u
                    b.claim(q, "P1416", item(target))
                if rng.random() < 0.3:
                    b.claim(q, "P2048", quantity(rng.randrange(155, 200)))
            if occ == "actor":
                b.claim(q, "P2048", quantity(rng.randrange(155, 200)))
    # the deliberate namesake (quirk 7): an actress who shares a physicist's name
    for namesake in (people["physicist"][3], people["actor"][5]):
        b.entities[namesake] = Entity(namesake, "Elena Varga", b.entities[namesake].description, "person")

    # doctoral advisors (quirk 4): P184 on every student, P185 on the advisor for some pairs only
    advisor_pairs: set[tuple[str, str]] = set()
    for field_ in ("physicist", "mathematician"):
        group = sorted(people[field_], key=lambda q: (born[q], q))
        for n, student in enumerate(group):
            if n < 6:
                continue
            elders = [a for a in group[:n] if born[student] - born[a] >= 14]
            if elders and rng.random() < 0.8:
                # advisors with students already are likelier to take more (deep genealogies)
                weights = [1 + min(2, sum(1 for s, a in advisor_pairs if a == e)) for e in elders]
                adv = rng.choices(elders, weights=weights)[0]
                advisor_pairs.add((student, adv))
    for student, adv in sorted(advisor_pairs):
        b.claim(student, "P184", item(adv))
    for student, adv in sorted(advisor_pairs):
        if rng.random() < 0.4:
            b.claim(adv, "P185", item(student))

    # awards (quirk 5): the year is a P585 qualifier of the P166 statement
    awards: dict[str, list[tuple[str, int]]] = {}
    for aname, _c, occs, n in AWARDS:
        pool = [q for o in occs for q in people[o]]
        for q in sorted(rng.sample(pool, n), key=lambda q: born[q]):
            year = min(2024, born[q] + rng.randrange(32, 60))
            b.claim(q, "P166", item(award_q[aname]), (("P585", time(year)),))
            awards.setdefault(award_q[aname], []).append((q, year))

    # companies
    for cname in COMPANIES:
        hq = rng.choice(city_list)
        q = b.new(cname, f"company based in {b.entities[hq].label}, {b.entities[city_country[hq]].label}", "company")
        place_country[q] = city_country[hq]
        b.claim(q, "P31", item(C["company"]))
        for f in rng.sample(people["entrepreneur"], rng.choice((1, 1, 2))):
            b.claim(q, "P112", item(f))
        b.claim(q, "P159", item(hq))
        b.claim(q, "P17", item(city_country[hq]))
        b.claim(q, "P571", time(rng.randrange(1950, 2021), rng.randrange(1, 13), rng.randrange(1, 29)))
        b.claim(q, "P1128", quantity(rng.randrange(12, 40_000)))

    # mountains: located in a province (P131), or in a city of it; elevation is P2044, never P2048
    mountain_province: dict[str, str] = {}
    elevations = rng.sample(range(800, 6300), len(MOUNTAINS))
    for n, (mname, pname) in enumerate(MOUNTAINS.items()):
        prov = province[pname]
        cn = b.entities[place_country[prov]].label
        q = b.new(mname, f"mountain in {pname}, {cn}", "mountain")
        mountain_province[q] = prov
        place_country[q] = place_country[prov]
        b.claim(q, "P31", item(C["mountain"]))
        town = next((c for c, p in city_province.items() if p == prov and b.entities[c].label in mname), None)
        if town is not None and rng.random() < 0.7:
            b.claim(q, "P131", item(town))
        else:
            b.claim(q, "P131", item(prov))
        if rng.random() < 0.4:
            b.claim(q, "P17", item(place_country[prov]))
        b.claim(q, "P2044", quantity(elevations[n]))

    # films: narrative location (P840) and filming location (P915) differ more often than not
    for n, title in enumerate(FILMS):
        director = rng.choice(people["film director"])
        year = rng.randrange(1965, 2024)
        if title == "Northern Lights":
            year = 1998 if n == FILMS.index("Northern Lights") else 2011
        q = b.new(title, f"{year} film directed by {b.entities[director].label}", "film")
        b.claim(q, "P31", item(C["film"]))
        b.claim(q, "P57", item(director))
        for actor in rng.sample(people["actor"], rng.choice((2, 3, 3, 4))):
            b.claim(q, "P161", item(actor))
        setting = rng.choice(city_list)
        b.claim(q, "P840", item(setting))
        shot = setting if rng.random() < 0.35 else rng.choice(city_list)
        b.claim(q, "P915", item(shot))
        b.claim(q, "P577", time(year, rng.randrange(1, 13), rng.randrange(1, 29)))
        b.claim(q, "P495", item(city_country[shot]))
        b.claim(q, "P2047", quantity(rng.randrange(82, 175)))

    truth = HiddenTruth(
        city_country=dict(city_country),
        place_country=dict(place_country),
        birth_country=birth_country,
        advisor_pairs=frozenset(advisor_pairs),
        instrument_class=instrument_class,
        mountain_province=mountain_province,
        awards={a: tuple(v) for a, v in awards.items()},
        affiliation_university=affiliation_university,
    )
    return Built(KGWorld(seed, dict(b.entities), dict(PROPERTY_BY_ID), tuple(b.claims), dict(C)), truth)


def _person_names(rng: random.Random, n: int) -> list[str]:
    seen: set[str] = {"Gaspar Underhill", "Elena Varga"}
    out = ["Gaspar Underhill"]
    while len(out) < n + 1:
        name = f"{rng.choice(GIVEN)} {rng.choice(FAMILY)}"
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


# --- scaling (for benchmarks) ------------------------------------------------------------------


def scaled(world: KGWorld, factor: int) -> KGWorld:
    """``factor`` copies of the world's instance data, sharing its classes (a bigger graph, same shape).

    Copy 0 is the world itself (same QIDs), so every query over it means the same; copies 1… get
    QIDs offset by multiples of 100,000.
    """
    if factor < 1:
        raise ValueError("factor must be at least 1")
    shared = {q for q, e in world.entities.items() if e.kind in ("class", "occupation", "instrument")}

    def shift(qid: str, k: int) -> str:
        return qid if k == 0 or qid in shared else f"Q{int(qid[1:]) + 100_000 * k}"

    def shift_value(v: Value, k: int) -> Value:
        return Value("item", shift(v.value, k)) if v.kind == "item" else v

    entities: dict[str, Entity] = {}
    claims: list[Claim] = []
    for k in range(factor):
        for q, e in world.entities.items():
            if k == 0 or q not in shared:
                nq = shift(q, k)
                entities[nq] = Entity(nq, e.label, e.description, e.kind, e.aliases)
        for c in world.claims:
            if k > 0 and c.subject in shared:
                continue
            claims.append(
                Claim(
                    shift(c.subject, k),
                    c.pid,
                    shift_value(c.value, k),
                    tuple((p, shift_value(v, k)) for p, v in c.qualifiers),
                )
            )
    return KGWorld(world.seed, entities, world.properties, tuple(claims), world.classes)


# --- RDF: Wikidata's model ------------------------------------------------------------------


def rdf_triples(world: KGWorld) -> Iterator[tuple]:
    """Every triple of the graph as rdflib terms, in Wikidata's RDF model.

    Items and properties get ``rdfs:label``, ``schema:description`` and ``skos:altLabel`` in
    English.  Each claim becomes a truthy ``wdt:`` triple and a statement node
    (``p:`` → node, ``ps:`` → value, ``pq:`` → qualifier values, ``wikibase:rank``).  Literals
    keep Wikidata's lexical forms (dates as ``1959-03-14T00:00:00Z``) and are never normalised.
    """
    from rdflib import Literal, URIRef

    def lit(text: str, *, lang: str | None = None, datatype: str | None = None) -> Literal:
        return Literal(text, lang=lang, datatype=URIRef(datatype) if datatype else None, normalize=False)

    a = URIRef(RDF + "type")
    label, desc, alt = URIRef(RDFS + "label"), URIRef(SCHEMA + "description"), URIRef(SKOS + "altLabel")
    rank, normal = URIRef(WIKIBASE + "rank"), URIRef(WIKIBASE + "NormalRank")
    statement_class = URIRef(WIKIBASE + "Statement")
    kinds = {"item": "WikibaseItem", "quantity": "Quantity", "time": "Time", "string": "String"}

    def value_term(v: Value):
        if v.kind == "item":
            return URIRef(WD + v.value)
        if v.kind == "quantity":
            return lit(v.value, datatype=XSD + "decimal")
        if v.kind == "time":
            return lit(v.value, datatype=XSD + "dateTime")
        return lit(v.value)

    for p in world.properties.values():
        s = URIRef(WD + p.pid)
        yield (s, a, URIRef(WIKIBASE + "Property"))
        yield (s, label, lit(p.label, lang="en"))
        yield (s, desc, lit(p.description, lang="en"))
        for al in p.aliases:
            yield (s, alt, lit(al, lang="en"))
        yield (s, URIRef(WIKIBASE + "propertyType"), URIRef(WIKIBASE + kinds[p.datatype]))
        yield (s, URIRef(WIKIBASE + "directClaim"), URIRef(WDT + p.pid))
        yield (s, URIRef(WIKIBASE + "claim"), URIRef(P_NS + p.pid))
        yield (s, URIRef(WIKIBASE + "statementProperty"), URIRef(PS + p.pid))
        yield (s, URIRef(WIKIBASE + "qualifier"), URIRef(PQ + p.pid))
    for e in world.entities.values():
        s = URIRef(WD + e.qid)
        yield (s, label, lit(e.label, lang="en"))
        yield (s, desc, lit(e.description, lang="en"))
        for al in e.aliases:
            yield (s, alt, lit(al, lang="en"))
    for n, c in enumerate(world.claims):
        s = URIRef(WD + c.subject)
        o = value_term(c.value)
        yield (s, URIRef(WDT + c.pid), o)
        node = URIRef(WDS + f"{c.subject}-{_statement_id(c, n)}")
        yield (s, URIRef(P_NS + c.pid), node)
        yield (node, a, statement_class)
        yield (node, URIRef(PS + c.pid), o)
        yield (node, rank, normal)
        for qp, qv in c.qualifiers:
            yield (node, URIRef(PQ + qp), value_term(qv))


def _statement_id(c: Claim, n: int) -> str:
    h = hashlib.blake2b(f"{n}|{c.subject}|{c.pid}|{c.value.value}".encode(), digest_size=8).hexdigest().upper()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}"


# --- the question sets of §5 (evaluator data) ------------------------------------------------


@dataclass(frozen=True)
class KGQuestion:
    """A question with its gold SPARQL.  ``entities`` are the QIDs it mentions (oracle entity
    linking for the baselines that the paper gave them); the SPINACH agent never sees them."""

    id: str
    set: str  # simple | forum
    category: str  # "simple" or C1…C8
    question: str
    gold_sparql: str
    entities: tuple[str, ...] = ()


CATEGORIES: Mapping[str, str] = {
    "C1": "subclass, not instance (instrument classes)",
    "C2": "country of birth (the P131 chain; citizenship is not birth)",
    "C3": "superlatives (elevation, not height; ranking)",
    "C4": "academic genealogy (advisor recorded on the student)",
    "C5": "qualifiers (the year of an award)",
    "C6": "narrative vs filming location",
    "C7": "affiliation through a school of music",
    "C8": "ambiguous labels",
}


@dataclass(frozen=True)
class QuestionSets:
    simple: tuple[KGQuestion, ...]
    forum: tuple[KGQuestion, ...]

    def all(self) -> tuple[KGQuestion, ...]:
        return self.simple + self.forum

    def by_id(self, qid: str) -> KGQuestion:
        for q in self.all():
            if q.id == qid:
                return q
        raise KeyError(qid)


def questions(world: KGWorld, truth: HiddenTruth, seed: int | None = None) -> QuestionSets:
    """The simple (40) and forum-style (56, 7 per category) questions with gold SPARQL.

    Evaluator data: the hidden ``truth`` (of the same build as ``world``) picks questions the quirks make hard."""
    rng = random.Random(world.seed if seed is None else seed)
    E, C, T = world.entities, world.classes, truth
    lab = world.label
    claims_by: dict[str, list[Claim]] = {}
    for c in world.claims:
        claims_by.setdefault(c.subject, []).append(c)

    def values(q: str, pid: str) -> list[str]:
        return [c.value.value for c in claims_by.get(q, ()) if c.pid == pid]

    def of_kind(kind: str) -> list[str]:
        return [q for q, e in E.items() if e.kind == kind]

    unique = {q for q, e in E.items() if sum(1 for x in E.values() if x.label == e.label) == 1}
    people = [q for q in of_kind("person") if q in unique]
    occ_of = {q: values(q, "P106")[0] for q in of_kind("person")}

    def with_occ(occ: str) -> list[str]:
        return [q for q in people if occ_of[q] == C[occ]]

    simple: list[KGQuestion] = []

    def add_simple(text: str, sparql: str, ents: tuple[str, ...]) -> None:
        simple.append(KGQuestion(f"simple_{len(simple) + 1:02d}", "simple", "simple", text, sparql, ents))

    for q in rng.sample(people, 7):
        add_simple(f"Where was {lab(q)} born?", f"SELECT ?place WHERE {{ wd:{q} wdt:P19 ?place . }}", (q,))
    for q in rng.sample(with_occ("musician"), 5):
        add_simple(
            f"Which instrument does {lab(q)} play?",
            f"SELECT ?instrument WHERE {{ wd:{q} wdt:P1303 ?instrument . }}",
            (q,),
        )
    films = [q for q in of_kind("film") if q in unique]
    for q in rng.sample(films, 5):
        add_simple(f"Who directed {lab(q)}?", f"SELECT ?director WHERE {{ wd:{q} wdt:P57 ?director . }}", (q,))
    companies = of_kind("company")
    for q in rng.sample(companies, 4):
        add_simple(f"Who founded {lab(q)}?", f"SELECT ?founder WHERE {{ wd:{q} wdt:P112 ?founder . }}", (q,))
    for q in rng.sample(companies, 4):
        add_simple(
            f"In which city is the headquarters of {lab(q)}?", f"SELECT ?city WHERE {{ wd:{q} wdt:P159 ?city . }}", (q,)
        )
    for q in rng.sample(of_kind("mountain"), 4):
        add_simple(
            f"What is the elevation above sea level of {lab(q)}?",
            f"SELECT ?elevation WHERE {{ wd:{q} wdt:P2044 ?elevation . }}",
            (q,),
        )
    for q in rng.sample(films, 4):
        add_simple(f"When was {lab(q)} released?", f"SELECT ?date WHERE {{ wd:{q} wdt:P577 ?date . }}", (q,))
    educated = [q for q in people if values(q, "P69")]
    for q in rng.sample(educated, 4):
        add_simple(f"Where was {lab(q)} educated?", f"SELECT ?school WHERE {{ wd:{q} wdt:P69 ?school . }}", (q,))
    for q in rng.sample(people, 3):
        add_simple(
            f"What is the occupation of {lab(q)}?",
            f"SELECT ?occupation WHERE {{ wd:{q} wdt:P106 ?occupation . }}",
            (q,),
        )

    forum: list[KGQuestion] = []

    def add_forum(cat: str, text: str, sparql: str, ents: tuple[str, ...]) -> None:
        n = sum(1 for f in forum if f.category == cat) + 1
        forum.append(KGQuestion(f"{cat.lower()}_{n}", "forum", cat, text, sparql, ents))

    # C1 — subclass, not instance
    musician = C["musician"]
    for cls, two_cols in (
        ("string instrument", True),
        ("wind instrument", True),
        ("percussion instrument", False),
        ("keyboard instrument", False),
        ("bowed string instrument", True),
        ("brass instrument", False),
    ):
        if two_cols:
            add_forum(
                "C1",
                f"Which musicians play a {cls}? For each, return the musician and the instrument.",
                f"SELECT DISTINCT ?musician ?instrument WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1303 ?instrument .\n  ?instrument wdt:P279* wd:{C[cls]} .\n}}",
                (C[cls],),
            )
        else:
            add_forum(
                "C1",
                f"Which musicians play a {cls}?",
                f"SELECT DISTINCT ?musician WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1303 ?instrument .\n  ?instrument wdt:P279* wd:{C[cls]} .\n}}",
                (C[cls],),
            )
    add_forum(
        "C1",
        "How many musicians play a string instrument?",
        f"SELECT (COUNT(DISTINCT ?musician) AS ?count) WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1303 ?instrument .\n  ?instrument wdt:P279* wd:{C['string instrument']} .\n}}",
        (C["string instrument"],),
    )

    # C2 — country of birth: through P131 to P17; not P27.  Pick (occupation, country) pairs
    # where the naive P17 misses someone.
    countries = {E[q].label: q for q in of_kind("country")}
    direct_p17 = {q for q in of_kind("city") if values(q, "P17")}
    pairs: list[tuple[str, str, int]] = []
    for occ in OCCUPATIONS:
        for cn, cq in countries.items():
            born_there = [p for p in with_occ(occ) if T.birth_country[p] == cq]
            missed = [p for p in born_there if values(p, "P19")[0] not in direct_p17]
            if len(born_there) >= 3 and missed:
                pairs.append((occ, cn, len(born_there)))
    rng.shuffle(pairs)
    chosen: list[tuple[str, str, int]] = []
    for occ, cn, n in pairs:
        if len(chosen) < 6 and sum(1 for o, _, _ in chosen if o == occ) < 2:
            chosen.append((occ, cn, n))
    plural = {
        "musician": "musicians",
        "physicist": "physicists",
        "mathematician": "mathematicians",
        "film director": "film directors",
        "actor": "actors",
        "entrepreneur": "entrepreneurs",
    }
    for occ, cn, _n in chosen:
        add_forum(
            "C2",
            f"Which {plural[occ]} were born in {cn}? For each, return the person and their place of birth.",
            f"SELECT DISTINCT ?person ?place WHERE {{\n  ?person wdt:P106 wd:{C[occ]} ;\n          wdt:P19 ?place .\n  ?place wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
            (C[occ], countries[cn]),
        )
    occ, cn, _n = chosen[0]
    add_forum(
        "C2",
        f"How many {plural[occ]} were born in {cn}?",
        f"SELECT (COUNT(DISTINCT ?person) AS ?count) WHERE {{\n  ?person wdt:P106 wd:{C[occ]} ;\n          wdt:P19 ?place .\n  ?place wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
        (C[occ], countries[cn]),
    )

    # C3 — superlatives over elevation (P2044, not P2048), mountains reached through P131*
    mountain = C["mountain"]
    provs = [q for q in of_kind("province")]

    def highest_in(prov: str) -> str:
        ms = [m for m, p in T.mountain_province.items() if p == prov]
        return max(ms, key=lambda m: float(values(m, "P2044")[0]))

    through_city = [p for p in provs if values(highest_in(p), "P131")[0] != p]
    direct = [p for p in provs if p not in through_city]
    picked = (rng.sample(through_city, min(2, len(through_city))) + rng.sample(direct, 4))[:4]
    for prov in picked:
        add_forum(
            "C3",
            f"What is the highest mountain in {lab(prov)}, and how high is it?",
            f"SELECT ?mountain ?elevation WHERE {{\n  ?mountain wdt:P31 wd:{mountain} ;\n            wdt:P131* wd:{prov} ;\n            wdt:P2044 ?elevation .\n}}\nORDER BY DESC(?elevation)\nLIMIT 1",
            (prov,),
        )
    lowest = [p for p in provs if p not in picked][0]
    add_forum(
        "C3",
        f"What is the lowest mountain in {lab(lowest)}, and what is its elevation?",
        f"SELECT ?mountain ?elevation WHERE {{\n  ?mountain wdt:P31 wd:{mountain} ;\n            wdt:P131* wd:{lowest} ;\n            wdt:P2044 ?elevation .\n}}\nORDER BY ASC(?elevation)\nLIMIT 1",
        (lowest,),
    )
    for cn in rng.sample(sorted(countries), 2):
        add_forum(
            "C3",
            f"What are the three highest mountains in {cn}? Return each mountain and its elevation.",
            f"SELECT DISTINCT ?mountain ?elevation WHERE {{\n  ?mountain wdt:P31 wd:{mountain} ;\n            wdt:P131*/wdt:P17 wd:{countries[cn]} ;\n            wdt:P2044 ?elevation .\n}}\nORDER BY DESC(?elevation)\nLIMIT 3",
            (countries[cn],),
        )

    # C4 — academic genealogy: students have P184; advisors rarely have P185
    students_of: dict[str, set[str]] = {}
    for s, a in T.advisor_pairs:
        students_of.setdefault(a, set()).add(s)
    recorded = {(c.value.value, c.subject) for c in world.claims if c.pid == "P185"}

    def descendants(a: str) -> set[str]:
        out: set[str] = set()
        todo = [a]
        while todo:
            for s in students_of.get(todo.pop(), ()):
                if s not in out:
                    out.add(s)
                    todo.append(s)
        return out

    advisors = sorted((a for a in students_of if a in unique), key=lambda a: (-len(students_of[a]), a))
    partial = [a for a in advisors if 0 < sum(1 for s in students_of[a] if (s, a) in recorded) < len(students_of[a])]
    none_recorded = [a for a in advisors if not any((s, a) in recorded for s in students_of[a])]
    deep = [a for a in advisors if len(descendants(a)) > len(students_of[a])]
    ask_students = (partial[:3] + none_recorded[:1] + [a for a in advisors if a not in partial])[:4]
    for a in ask_students:
        add_forum(
            "C4",
            f"Who were the doctoral students of {lab(a)}?",
            f"SELECT DISTINCT ?student WHERE {{\n  ?student wdt:P184 wd:{a} .\n}}",
            (a,),
        )
    for a in [d for d in deep if d not in ask_students][:3]:
        add_forum(
            "C4",
            f"Who are the academic descendants of {lab(a)} (their doctoral students, their students' students, and so on)? For each, return the descendant and their doctoral advisor.",
            f"SELECT DISTINCT ?descendant ?advisor WHERE {{\n  ?descendant wdt:P184+ wd:{a} ;\n              wdt:P184 ?advisor .\n}}",
            (a,),
        )

    # C5 — qualifiers: the date of an award is a P585 qualifier
    for aq in of_kind("award"):
        add_forum(
            "C5",
            f"Who received the {lab(aq)}, and when? Return each laureate and the point in time of the award.",
            f"SELECT ?laureate ?date WHERE {{\n  ?laureate p:P166 ?statement .\n  ?statement ps:P166 wd:{aq} ;\n             pq:P585 ?date .\n}}",
            (aq,),
        )
    for aq in rng.sample(of_kind("award"), 2):
        years = sorted(y for _p, y in T.awards[aq])
        cut = years[len(years) // 2]
        add_forum(
            "C5",
            f"Who received the {lab(aq)} in {cut} or later?",
            f"SELECT DISTINCT ?laureate WHERE {{\n  ?laureate p:P166 ?statement .\n  ?statement ps:P166 wd:{aq} ;\n             pq:P585 ?date .\n  FILTER(YEAR(?date) >= {cut})\n}}",
            (aq,),
        )

    # C6 — narrative location (P840) vs filming location (P915)
    set_in = {c.subject: c.value.value for c in world.claims if c.pid == "P840"}
    shot_in = {c.subject: c.value.value for c in world.claims if c.pid == "P915"}

    def films_count(where: Mapping[str, str], cq: str) -> int:
        return sum(1 for f, c in where.items() if T.city_country[c] == cq)

    cset = sorted(countries, key=lambda cn: (-films_count(set_in, countries[cn]), cn))
    for cn in cset[:2]:
        add_forum(
            "C6",
            f"Which films are set in cities of {cn}? Return each film and the city.",
            f"SELECT DISTINCT ?film ?city WHERE {{\n  ?film wdt:P31 wd:{C['film']} ;\n        wdt:P840 ?city .\n  ?city wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
            (countries[cn],),
        )
    cshot = sorted(countries, key=lambda cn: (-films_count(shot_in, countries[cn]), cn))
    for cn in cshot[:2]:
        add_forum(
            "C6",
            f"Which films were filmed in {cn}? Return each film and its filming location.",
            f"SELECT DISTINCT ?film ?location WHERE {{\n  ?film wdt:P31 wd:{C['film']} ;\n        wdt:P915 ?location .\n  ?location wdt:P131*/wdt:P17 wd:{countries[cn]} .\n}}",
            (countries[cn],),
        )
    settings = sorted(
        {c for c in set_in.values() if c in unique}, key=lambda c: (-sum(1 for v in set_in.values() if v == c), c)
    )
    for c in settings[:2]:
        add_forum(
            "C6",
            f"Which films are set in {lab(c)}?",
            f"SELECT DISTINCT ?film WHERE {{\n  ?film wdt:P840 wd:{c} .\n}}",
            (c,),
        )
    shots = sorted(
        {c for c in shot_in.values() if c in unique and c not in settings[:2]},
        key=lambda c: (-sum(1 for v in shot_in.values() if v == c), c),
    )
    add_forum(
        "C6",
        f"Which films were filmed in {lab(shots[0])}?",
        f"SELECT DISTINCT ?film WHERE {{\n  ?film wdt:P915 wd:{shots[0]} .\n}}",
        (shots[0],),
    )

    # C7 — affiliation through a school of music (P361)
    unis = of_kind("university")
    with_school = [u for u in unis if any(c.pid == "P361" and c.value.value == u for c in world.claims)]
    for u in with_school:
        add_forum(
            "C7",
            f"Which musicians are affiliated with {lab(u)}, including its school of music?",
            f"SELECT DISTINCT ?musician WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization .\n  ?organization wdt:P361* wd:{u} .\n}}",
            (u,),
        )
    for u in with_school[:2]:
        add_forum(
            "C7",
            f"Which musicians affiliated with {lab(u)} or its school of music play a string instrument? Return each musician and the instrument.",
            f"SELECT DISTINCT ?musician ?instrument WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization ;\n            wdt:P1303 ?instrument .\n  ?organization wdt:P361* wd:{u} .\n  ?instrument wdt:P279* wd:{C['string instrument']} .\n}}",
            (u, C["string instrument"]),
        )
    add_forum(
        "C7",
        "How many musicians are affiliated with each university, counting its school of music? Return each university and the number.",
        f"SELECT ?university (COUNT(DISTINCT ?musician) AS ?count) WHERE {{\n  ?university wdt:P31 wd:{C['university']} .\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization .\n  ?organization wdt:P361* ?university .\n}}\nGROUP BY ?university",
        (),
    )
    for u in [u for u in unis if u not in with_school][:1]:
        add_forum(
            "C7",
            f"Which musicians are affiliated with {lab(u)}?",
            f"SELECT DISTINCT ?musician WHERE {{\n  ?musician wdt:P106 wd:{musician} ;\n            wdt:P1416 ?organization .\n  ?organization wdt:P361* wd:{u} .\n}}",
            (u,),
        )

    # C8 — ambiguous labels: only the description tells them apart
    def the(label: str, country_name: str) -> str:
        return next(
            q for q in E if E[q].label == label and E[q].kind == "city" and T.city_country[q] == countries[country_name]
        )

    ash_k, ash_t = the("Ashford", "Kestavia"), the("Ashford", "Tirenne")
    mill_o, mill_v = the("Millbrook", "Orundi"), the("Millbrook", "Valmora")
    add_forum(
        "C8",
        "Which people were born in Ashford, the city in Tirenne?",
        f"SELECT DISTINCT ?person WHERE {{\n  ?person wdt:P19 wd:{ash_t} .\n}}",
        (ash_t,),
    )
    add_forum(
        "C8",
        "Which people were born in Ashford, the city in Kestavia? Return each person and their occupation.",
        f"SELECT DISTINCT ?person ?occupation WHERE {{\n  ?person wdt:P19 wd:{ash_k} ;\n          wdt:P106 ?occupation .\n}}",
        (ash_k,),
    )
    add_forum(
        "C8",
        "How many people were born in Millbrook, the city in Valmora?",
        f"SELECT (COUNT(DISTINCT ?person) AS ?count) WHERE {{\n  ?person wdt:P19 wd:{mill_v} .\n}}",
        (mill_v,),
    )
    add_forum(
        "C8",
        "Which people were born in Millbrook, the city in Orundi?",
        f"SELECT DISTINCT ?person WHERE {{\n  ?person wdt:P19 wd:{mill_o} .\n}}",
        (mill_o,),
    )
    nl = sorted((q for q in E if E[q].label == "Northern Lights"), key=lambda q: E[q].description)
    nl_1998 = next(q for q in nl if E[q].description.startswith("1998"))
    nl_2011 = next(q for q in nl if E[q].description.startswith("2011"))
    add_forum(
        "C8",
        "Who directed Northern Lights, the 2011 film?",
        f"SELECT ?director WHERE {{\n  wd:{nl_2011} wdt:P57 ?director .\n}}",
        (nl_2011,),
    )
    add_forum(
        "C8",
        "Who are the cast members of Northern Lights, the 1998 film?",
        f"SELECT DISTINCT ?actor WHERE {{\n  wd:{nl_1998} wdt:P161 ?actor .\n}}",
        (nl_1998,),
    )
    ev = next(q for q in E if E[q].label == "Elena Varga" and occ_of[q] == C["physicist"])
    add_forum(
        "C8",
        "Where was Elena Varga, the physicist, born?",
        f"SELECT ?place WHERE {{\n  wd:{ev} wdt:P19 ?place .\n}}",
        (ev,),
    )

    return QuestionSets(tuple(simple), tuple(forum))
