"""The properties of the graph: real Wikidata PIDs with their English labels, descriptions, datatypes and aliases
(so what one learns here carries over to Wikidata), including the similar ones that quirk 2 confuses."""

from __future__ import annotations

from collections.abc import Mapping

from worlds.kg.model import Property

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
