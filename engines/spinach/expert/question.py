"""Reading the question: what it asks, as an expert reads it, with no knowledge of the graph."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    key: str
    text: str  # what to search for
    hint: str = ""  # words that tell namesakes apart ("2011 film", "city in Tirenne")


@dataclass(frozen=True)
class Clause:
    kind: str  # isa | rel | in_country | in_place | height | inst_class | students | descendants | award | location | affiliation | affiliation_any
    args: tuple[str, ...]  # variables (?x), mentions (@key) and relation names

    @property
    def key(self) -> str:
        return f"{self.kind}({','.join(self.args)})"


@dataclass(frozen=True)
class Goal:
    mentions: tuple[Mention, ...] = ()
    clauses: tuple[Clause, ...] = ()
    select: tuple[str, ...] = ()
    count: str | None = None
    group_by: tuple[str, ...] = ()
    order: tuple[str, str] | None = None
    limit: int | None = None
    year_from: tuple[str, int] | None = None
    understood: bool = True


_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}
_PLURAL = {
    "musicians": "musician",
    "physicists": "physicist",
    "mathematicians": "mathematician",
    "film directors": "film director",
    "directors": "film director",
    "actors": "actor",
    "actresses": "actor",
    "entrepreneurs": "entrepreneur",
    "people": None,
}


def _split_hint(text: str) -> tuple[str, str]:
    """ "Northern Lights, the 2011 film" -> ("Northern Lights", "2011 film")."""
    text = text.strip().rstrip("?.,").strip()
    m = re.match(r"^(.*?),\s*(?:the\s+)?(.+?)\s*,?$", text)
    if m and m.group(1):
        return m.group(1).strip(), m.group(2).strip()
    return text, ""


def read_question(question: str) -> Goal:
    """What the question asks, as an expert reads it (no knowledge of the graph)."""
    q = " ".join(question.split())
    two = bool(re.search(r"\breturn (?:each|the)\b.*\band\b", q, re.I))

    def M(key: str, text: str) -> Mention:
        name, hint = _split_hint(text)
        return Mention(key, name, hint)

    # C1: musicians and instrument classes
    m = re.match(r"^(Which|How many) musicians play an? (.+? instrument)\?", q, re.I)
    cl: tuple[Clause, ...]
    ments: tuple[Mention, ...]
    if m:
        cl = (
            Clause("isa", ("?musician", "@musician", "occupation")),
            Clause("rel", ("?musician", "instrument", "?instrument")),
            Clause("inst_class", ("?instrument", "@cls")),
        )
        ments = (Mention("musician", "musician"), Mention("cls", m.group(2)))
        if m.group(1).lower() == "how many":
            return Goal(ments, cl, count="?musician")
        return Goal(ments, cl, ("?musician", "?instrument") if two else ("?musician",))
    # C7 (with instruments)
    m = re.match(r"^Which musicians affiliated with (.+?) or its school of music play an? (.+? instrument)\?", q, re.I)
    if m:
        cl = (
            Clause("isa", ("?musician", "@musician", "occupation")),
            Clause("affiliation", ("?musician", "@org")),
            Clause("rel", ("?musician", "instrument", "?instrument")),
            Clause("inst_class", ("?instrument", "@cls")),
        )
        return Goal(
            (Mention("musician", "musician"), M("org", m.group(1)), Mention("cls", m.group(2))),
            cl,
            ("?musician", "?instrument") if two else ("?musician",),
        )
    m = re.match(r"^Which musicians are affiliated with (.+?)(?:, including its school of music)?\?", q, re.I)
    if m:
        cl = (Clause("isa", ("?musician", "@musician", "occupation")), Clause("affiliation", ("?musician", "@org")))
        return Goal((Mention("musician", "musician"), M("org", m.group(1))), cl, ("?musician",))
    if re.match(r"^How many musicians are affiliated with each university", q, re.I):
        cl = (
            Clause("isa", ("?university", "@university", "instance")),
            Clause("isa", ("?musician", "@musician", "occupation")),
            Clause("affiliation_any", ("?musician", "?university")),
        )
        return Goal(
            (Mention("musician", "musician"), Mention("university", "university")),
            cl,
            ("?university",),
            count="?musician",
            group_by=("?university",),
        )
    # C2: people of an occupation born in a country
    m = re.match(
        r"^(Which|How many) (musicians|physicists|mathematicians|film directors|directors|actors|actresses|entrepreneurs) were born in (.+?)\?",
        q,
        re.I,
    )
    if m:
        occ = _PLURAL[m.group(2).lower()]
        cl = (
            Clause("isa", ("?person", "@occ", "occupation")),
            Clause("rel", ("?person", "birthplace", "?place")),
            Clause("in_country", ("?place", "@country")),
        )
        ments = (Mention("occ", occ or ""), M("country", m.group(3)))
        if m.group(1).lower() == "how many":
            return Goal(ments, cl, count="?person")
        return Goal(ments, cl, ("?person", "?place") if two else ("?person",))
    # C8: people born in a (named) place
    m = re.match(r"^(Which|How many) people were born in (.+?)\?", q, re.I)
    if m:
        cl = (Clause("rel", ("?person", "birthplace", "@place")),)
        ments = (M("place", m.group(2)),)
        if m.group(1).lower() == "how many":
            return Goal(ments, cl, count="?person")
        if re.search(r"\boccupation\b", q, re.I):
            return Goal(
                ments, cl + (Clause("rel", ("?person", "occupation", "?occupation")),), ("?person", "?occupation")
            )
        return Goal(ments, cl, ("?person",))
    # C3: superlatives over mountains
    m = re.match(
        r"^What is the (highest|lowest|tallest) mountain in (.+?), and (?:how high is it|what is its (elevation|height))\?",
        q,
        re.I,
    )
    if m:
        rel = "elevation" if (m.group(3) or "").lower() == "elevation" else "height"
        cl = (
            Clause("isa", ("?mountain", "@mountain", "instance")),
            Clause("in_place", ("?mountain", "@region")),
            Clause("height", ("?mountain", "?elevation", rel)),
        )
        return Goal(
            (Mention("mountain", "mountain"), M("region", m.group(2))),
            cl,
            ("?mountain", "?elevation"),
            order=("?elevation", "ASC" if m.group(1).lower() == "lowest" else "DESC"),
            limit=1,
        )
    m = re.match(r"^What are the (\w+) (highest|lowest|tallest) mountains in (.+?)\?", q, re.I)
    if m:
        n = _NUM.get(m.group(1).lower()) or (int(m.group(1)) if m.group(1).isdigit() else 3)
        cl = (
            Clause("isa", ("?mountain", "@mountain", "instance")),
            Clause("in_place", ("?mountain", "@region")),
            Clause("height", ("?mountain", "?elevation", "height")),
        )
        return Goal(
            (Mention("mountain", "mountain"), M("region", m.group(3))),
            cl,
            ("?mountain", "?elevation"),
            order=("?elevation", "ASC" if m.group(2).lower() == "lowest" else "DESC"),
            limit=n,
        )
    # C4: academic genealogy
    m = re.match(r"^Who (?:were|are) the (?:doctoral|PhD) students of (.+?)\?", q, re.I)
    if m:
        return Goal((M("advisor", m.group(1)),), (Clause("students", ("?student", "@advisor")),), ("?student",))
    m = re.match(r"^Who are the academic descendants of (.+?)(?: \(|\?)", q, re.I)
    if m:
        return Goal(
            (M("advisor", m.group(1)),),
            (Clause("descendants", ("?descendant", "?advisor", "@advisor")),),
            ("?descendant", "?advisor") if two or "advisor" in q.lower() else ("?descendant",),
        )
    # C5: awards and their dates
    m = re.match(r"^Who received the (.+?), and when\?", q, re.I)
    if m:
        return Goal(
            (M("award", m.group(1)),), (Clause("award", ("?laureate", "@award", "?date")),), ("?laureate", "?date")
        )
    m = re.match(r"^Who received the (.+?) in (\d{4}) or later\?", q, re.I)
    if m:
        return Goal(
            (M("award", m.group(1)),),
            (Clause("award", ("?laureate", "@award", "?date")),),
            ("?laureate",),
            year_from=("?date", int(m.group(2))),
        )
    # C6: films and their locations
    m = re.match(r"^Which films (?:are|were) (set|filmed|shot) in (cities of )?(.+?)\?", q, re.I)
    if m:
        which = "set_in" if m.group(1).lower() == "set" else "filmed_in"
        out = "?city" if which == "set_in" else "?location"
        cl = (
            Clause("isa", ("?film", "@film", "instance")),
            Clause("location", ("?film", out, which)),
            Clause("in_place", (out, "@place")),
        )
        return Goal((Mention("film", "film"), M("place", m.group(3))), cl, ("?film", out) if two else ("?film",))
    # simple facts
    facts = (
        (r"^Where was (.+?) born\?", "birthplace", "?place"),
        (r"^Which instruments? does (.+?) play\?", "instrument", "?instrument"),
        (r"^Who directed (.+?)\?", "director", "?director"),
        (r"^Who founded (.+?)\?", "founder", "?founder"),
        (r"^In which city is the headquarters of (.+?)\?", "headquarters", "?city"),
        (r"^Where is (.+?) headquartered\?", "headquarters", "?city"),
        (r"^What is the elevation(?: above sea level)? of (.+?)\?", "elevation", "?elevation"),
        (r"^How high is (.+?)\?", "height", "?elevation"),
        (r"^When was (.+?) released\?", "released", "?date"),
        (r"^Where (?:was|did) (.+?) (?:educated|study)\?", "educated", "?school"),
        (r"^What is the occupation of (.+?)\?", "occupation", "?occupation"),
        (r"^Who (?:are|were) the cast members of (.+?)\?", "cast", "?actor"),
        (r"^Who (?:acted|starred) in (.+?)\?", "cast", "?actor"),
        (r"^Who was the doctoral advisor of (.+?)\?", "advisor", "?advisor"),
    )
    for pattern, rel, var in facts:
        m = re.match(pattern, q, re.I)
        if m:
            if rel == "height":
                return Goal((M("e", m.group(1)),), (Clause("height", ("@e", var, "height")),), (var,))
            return Goal((M("e", m.group(1)),), (Clause("rel", ("@e", rel, var)),), (var,))
    # not understood: look the named things up and read their pages
    names = re.findall(r"\b[A-Z][\w'-]*(?:\s+(?:of|the|in|de|van|von|[A-Z][\w'-]*))*[A-Z]?[\w'-]*", q)
    names = [
        n
        for n in names
        if n.split()[0]
        not in (
            "Which",
            "Who",
            "What",
            "Where",
            "When",
            "How",
            "Return",
            "For",
            "In",
            "The",
            "Is",
            "Are",
            "Did",
            "Does",
            "List",
        )
    ]
    return Goal(tuple(Mention(f"n{i}", n) for i, n in enumerate(names[:3])), (), (), understood=False)
