"""The simulated SPINACH policy: the lecture's "expert procedure" (§3.4, §3.6, exercises 2–3).

It plays the part of the LLM at temperature 1: given the question and the state (every earlier
thought, action and observation), it writes the next thought and action.  It reads nothing else —
not the world, not its hidden truth, not the gold queries.  Like an expert it

1. searches for the entities and classes the question names (and for properties it does not
   remember — ``memory`` holds how sure it is of each PID by heart, the seed's ``P_MEMORY``);
2. writes the whole query from what it believes, and executes it;
3. on a syntax error fixes its typo; on no rows debugs: runs a simpler fragment, looks at
   property examples and entity pages, and changes the clause the evidence points at; with the
   clause's probes used up and nothing learnt it tries another variant only on a guess
   (``p_guess``), else it stops (and the agent's rollback may give it another try);
4. on rows, with probability ``p_verify`` checks the assumptions it is not sure of (properties
   remembered with confidence below 0.8) with a probe query or an entity page — the silent
   errors of §1.4 are only found this way;
5. stops, naming the whole query it means as the answer (``stop(query)``: a probe run after it to
   check an assumption is not the answer).

What it learns comes from the observations themselves: a page that shows ``P279 (subclass of)``
and no ``P31`` tells it instruments are classes; examples of ``P2048`` whose subjects are people
tell it height is not for mountains (it then looks the property "elevation" up); a page showing ``P166 … [P585 …]`` tells it the date is a
qualifier.  Whether it notices is a seeded draw (``p_notice`` when the tool suits the quirk —
entity pages for structure, property examples for qualifiers and wrong properties — else
``p_notice_other``).  Its slips are seeded too: repeating the previous action (``p_repeat``,
likelier right after a repeat), stopping although the last query returned nothing
(``p_stop_early``), typos (``p_typo``), wrong answer formats (``p_format``), an extra condition
(``p_extra``), a remembered sibling property (``p_confuse``: filming vs narrative location).

Every draw is :func:`engines.llm.seeded.unit` keyed on (seed, question, what is decided, where in
the state, ``sample``); the agent raises ``sample`` after each rollback, so a retry differs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from engines.llm.seeded import unit
from engines.spinach.tasks import PolicyAction, PolicyStep

P_MEMORY: Mapping[str, float] = {
    "P31": 0.95,
    "P279": 0.9,
    "P17": 0.85,
    "P106": 0.85,
    "P19": 0.85,
    "P27": 0.8,
    "P57": 0.8,
    "P569": 0.8,
    "P577": 0.75,
    "P161": 0.75,
    "P166": 0.75,
    "P131": 0.7,
    "P69": 0.7,
    "P112": 0.7,
    "P159": 0.7,
    "P361": 0.7,
    "P585": 0.6,
    "P184": 0.6,
    "P185": 0.6,
    "P2048": 0.6,
    "P1303": 0.5,
    "P840": 0.5,
    "P915": 0.5,
    "P2044": 0.5,
    "P1416": 0.4,
}


@dataclass(frozen=True)
class PolicyParams:
    p_verify: float = 0.6
    p_repeat: float = 0.12
    p_stop_early: float = 0.1
    p_typo: float = 0.08
    p_format: float = 0.06
    p_extra: float = 0.05
    p_confuse: float = 0.25
    p_notice: float = 0.85
    p_notice_other: float = 0.45
    p_disambiguate: float = 0.8
    p_guess: float = 0.25  # with the failed clause's probes used up and nothing learnt, guess its next variant
    memory: Mapping[str, float] = field(default_factory=lambda: dict(P_MEMORY))
    verify_below: float = 0.8  # properties remembered at least this well are never checked

    def with_memory(self, **pids: float) -> PolicyParams:
        return replace(self, memory={**self.memory, **pids})


DEFAULT = PolicyParams()

# relation -> (the PID it really is, the words an expert searches for it)
RELATIONS: Mapping[str, tuple[str, str]] = {
    "instance": ("P31", "instance of"),
    "occupation": ("P106", "occupation"),
    "birthplace": ("P19", "place of birth"),
    "instrument": ("P1303", "instrument"),
    "director": ("P57", "director"),
    "founder": ("P112", "founded by"),
    "headquarters": ("P159", "headquarters"),
    "elevation": ("P2044", "elevation"),
    "height": ("P2048", "height"),
    "released": ("P577", "publication date"),
    "educated": ("P69", "educated at"),
    "cast": ("P161", "cast member"),
    "country": ("P17", "country"),
    "located": ("P131", "located in"),
    "subclass": ("P279", "subclass of"),
    "student": ("P185", "doctoral student"),
    "advisor": ("P184", "doctoral advisor"),
    "award": ("P166", "award received"),
    "time": ("P585", "point in time"),
    "set_in": ("P840", "set in"),
    "filmed_in": ("P915", "filmed in"),
    "affiliation": ("P1416", "affiliation"),
    "part_of": ("P361", "part of"),
}
# what a model misremembers a PID as
CONFUSED_WITH: Mapping[str, str] = {
    "P840": "P915",
    "P915": "P840",
    "P2044": "P2048",
    "P184": "P185",
    "P185": "P184",
    "P1303": "P1416",
    "P1416": "P69",
    "P19": "P20",
    "P159": "P131",
    "P112": "P170",
    "P577": "P571",
    "P69": "P108",
    "P57": "P58",
    "P161": "P175",
    "P166": "P1411",
}

# --- reading the question -------------------------------------------------------------------


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
        cl: tuple[Clause, ...] = (Clause("rel", ("?person", "birthplace", "@place")),)
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


# --- reading the state -----------------------------------------------------------------------

_HIT = re.compile(r"^(?P<label>.+?) \((?P<id>[QP]\d+)\): ?(?P<desc>[^\t]*)(?:\tData Type: (?P<dt>\S+))?$")
_ROW_ID = re.compile(r"\bQ\d+\b")
_MOUNTAINISH = re.compile(r"\b(mount|peak|ridge|spire|dome|crag|horn|tor|needle|fell|pike|summit|ben|hill)\b", re.I)
_SUITED = {  # which tool reveals which quirk best (§3.7)
    "subclass_not_instance": "get_wikidata_entry",
    "place_without_country": "get_wikidata_entry",
    "advisor_on_student": "get_wikidata_entry",
    "two_locations": "get_wikidata_entry",
    "school_part_of": "get_wikidata_entry",
    "has_P2044": "get_wikidata_entry",
    "nested_location": "execute_sparql",
    "award_qualifier": "get_property_examples",
    "height_is_for_people": "get_property_examples",
}


@dataclass
class Mind:
    """What the policy believes after reading the state."""

    question: str
    goal: Goal
    params: PolicyParams
    seed: int
    history: Sequence[PolicyStep]
    searches: dict[str, list[tuple[str, str, str, str | None]]] = field(default_factory=dict)
    facts: set[str] = field(default_factory=set)
    done: set[tuple[str, str]] = field(default_factory=set)
    results: dict[str, tuple[str, str]] = field(default_factory=dict)  # query -> (feedback, observation)
    search_off: bool = False
    invent_ids: bool = False  # writing from memory alone (the one-shot baseline): QIDs are made up

    def draw(self, *parts: object) -> float:
        return unit(self.seed, "spinach", self.question, *map(str, parts))

    def notice(self, fact: str, tool: str, position: int, arg: str) -> None:
        if fact in self.facts:
            return
        p = self.params.p_notice if _SUITED.get(fact) == tool else self.params.p_notice_other
        if self.draw("notice", fact, position, tool, arg) < p:
            self.facts.add(fact)


def _feedback(observation: str) -> str:
    if observation.startswith("Query returned empty result"):
        return "empty"
    if observation.startswith("Query execution timed out"):
        return "timeout"
    if observation.startswith("Query refused"):
        return "refused"
    if re.search(
        r"^\[\d+ rows? x \d+ columns?\]", observation.splitlines()[-1] if observation else ""
    ) or observation in ("True", "False"):
        return "rows"
    return "syntax_error"


def read_state(question: str, history: Sequence[PolicyStep], seed: int, params: PolicyParams) -> Mind:
    mind = Mind(question, read_question(question), params, seed, history)
    for pos, step in enumerate(history):
        name, arg, obs = step.action_name, step.action_argument.strip(), step.observation or ""
        mind.done.add((name, arg))
        if name == "search_wikidata":
            if "is not available" in obs:
                mind.search_off = True
                continue
            hits = []
            for line in obs.splitlines():
                h = _HIT.match(line.strip())
                if h:
                    hits.append((h.group("id"), h.group("label"), h.group("desc"), h.group("dt")))
            mind.searches[arg.casefold()] = hits
        elif name == "get_wikidata_entry":
            if "P279 (subclass of)" in obs and "P31 (instance of)" not in obs:
                mind.notice("subclass_not_instance", name, pos, arg)
            if "(elevation above sea level)" in obs:
                mind.notice("has_P2044", name, pos, arg)
            if "P184 (doctoral advisor)" in obs:
                mind.notice("advisor_on_student", name, pos, arg)
            if re.search(r"P166 \(award received\).*\[P585", obs):
                mind.notice("award_qualifier", name, pos, arg)
            if "P131 (located in" in obs and "P17 (country)" not in obs:
                mind.notice("place_without_country", name, pos, arg)
            if "P840 (narrative location)" in obs and "P915 (filming location)" in obs:
                mind.notice("two_locations", name, pos, arg)
            if "P361 (part of)" in obs and "school of music" in obs:
                mind.notice("school_part_of", name, pos, arg)
        elif name == "get_property_examples":
            if "[point in time (P585)" in obs:
                mind.notice("award_qualifier", name, pos, arg)
            if arg.endswith("P2048"):
                subjects = [line.split(" -- ")[0] for line in obs.splitlines() if " -- " in line]
                if subjects and not any(_MOUNTAINISH.search(s) for s in subjects):
                    mind.notice("height_is_for_people", name, pos, arg)
            if arg.endswith("P184") and " -- " in obs:
                mind.notice("advisor_on_student", name, pos, arg)
            if arg.endswith("P1416") and "School of Music" in obs:
                mind.notice("school_part_of", name, pos, arg)
        elif name == "execute_sparql":
            fb = _feedback(obs)
            mind.results[arg] = (fb, obs)
            if fb == "rows" and re.search(r"FILTER NOT EXISTS \{ \?\w+ wdt:P17 ", arg):
                mind.notice("place_without_country", name, pos, arg)
            if fb == "rows" and "# nested places" in arg:
                mind.notice("nested_location", name, pos, arg)
    return mind


# --- resolving names and properties --------------------------------------------------------------


def _resolve(mind: Mind, mention: Mention) -> str | None:
    """The QID the policy picked for a mention from its search, or None before searching."""
    hits = mind.searches.get(mention.text.casefold())
    if hits is None:
        return None
    items = [h for h in hits if h[0].startswith("Q")]
    if not items:
        return ""
    exact = [h for h in items if h[1].casefold() == mention.text.casefold()] or items
    if (
        len(exact) > 1
        and mention.hint
        and mind.draw("disambiguate", mention.text, mention.hint) < mind.params.p_disambiguate
    ):
        words = [
            w for w in re.findall(r"\w+", mention.hint.casefold()) if w not in ("the", "city", "in", "film")
        ] or re.findall(r"\w+", mention.hint.casefold())
        for h in exact:
            if all(w in h[2].casefold() for w in words):
                return h[0]
    return exact[0][0]


def _mention(mind: Mind, ref: str) -> Mention:
    return next(m for m in mind.goal.mentions if m.key == ref.lstrip("@"))


def _region_kind(mind: Mind, mention: Mention) -> str:
    """country | province | city, from the description the search showed."""
    hits = mind.searches.get(mention.text.casefold()) or []
    qid = _resolve(mind, mention)
    desc = next((h[2] for h in hits if h[0] == qid), "").casefold()
    if "country" in desc and "city" not in desc and "province" not in desc:
        return "country"
    if "province" in desc:
        return "province"
    return "city"


def _pid(mind: Mind, rel: str) -> tuple[str | None, str | None]:
    """(PID to use, or None; the search to run first, or None)."""
    true_pid, words = RELATIONS[rel]
    memory = mind.params.memory.get(true_pid, 0.3)
    if mind.draw("recall", rel) < memory:
        if rel in ("set_in", "filmed_in") and mind.draw("confuse", rel) < mind.params.p_confuse:
            return CONFUSED_WITH[true_pid], None
        return true_pid, None
    if mind.search_off:
        return (true_pid if mind.draw("guess", rel) < memory else CONFUSED_WITH.get(true_pid, true_pid)), None
    hits = mind.searches.get(words.casefold())
    if hits is None:
        return None, words
    props = [h[0] for h in hits if h[0].startswith("P")]
    return (props[0] if props else true_pid), None


def _entity(mind: Mind, key: str, bind: list[str]) -> str:
    mention = next(m for m in mind.goal.mentions if m.key == key)
    if mind.invent_ids:  # a model without tools writes the QID it "remembers"
        return f"wd:Q{100_000 + int(mind.draw('invent', mention.text) * 9_000_000)}"
    qid = _resolve(mind, mention)
    if qid:
        return f"wd:{qid}"
    slug = re.sub(r"\W+", "_", mention.text.casefold()).strip("_") or key
    var = f"?{slug}_item"
    bind.append(f'{var} rdfs:label "{mention.text}"@en .')
    return var


# --- clauses: their variants, and what fixes them --------------------------------------------------


def _variant(mind: Mind, clause: Clause, failed: set[str]) -> int:
    k = clause.kind
    facts = mind.facts
    if k == "inst_class":
        if "subclass_not_instance" in facts:
            return 2
        start = 0 if mind.draw("init", k) < 0.5 else 1 if mind.draw("init2", k) < 0.6 else 2
        return min(2, start + _blind(mind, clause, failed, start))
    if k == "in_country":
        return 1 if "place_without_country" in facts else 0
    if k == "in_place":
        return 1 if ("nested_location" in facts or "place_without_country" in facts) else 0
    if k in ("students", "descendants"):
        if "advisor_on_student" in facts:
            return 1
        start = 0 if mind.draw("init", k) < 0.7 else 1
        return min(1, start + _blind(mind, clause, failed, start))
    if k == "award":
        if "award_qualifier" in facts:
            return 1
        start = 0 if mind.draw("init", k) < 0.75 else 1
        return min(1, start + _blind(mind, clause, failed, start))
    if k in ("affiliation", "affiliation_any"):
        return 1 if "school_part_of" in facts else 0
    if k == "height":
        return 1 if "has_P2044" in facts or _height_wrong_and_no_page(mind, clause) else 0
    if k == "location":
        return 1 if "two_locations" in facts else 0
    return 0


def _height_wrong_and_no_page(mind: Mind, clause: Clause) -> bool:
    """P2048's examples showed it is a person's height, and no probe is left to show a mountain's own property (the
    page, as in §3.6, when it can be read): the policy looks the property "elevation" up instead."""
    return "height_is_for_people" in mind.facts and _next_probe(mind, clause, loud=True) is None


def _blind(mind: Mind, clause: Clause, failed: set[str], start: int) -> int:
    """How many variants (from ``start``) to move on without evidence: a variant that was tried and failed, its
    debugging probes used up and nothing learnt, is left for the next only on a guess (``p_guess``, a seeded draw
    per clause, variant and state); otherwise the policy keeps it and ends up stopping."""
    n = 0
    for v in range(start, 3):
        frag = _fragment(mind, clause, v, [])
        if (
            frag
            and any(frag in q for q in failed)
            and not _next_probe(mind, clause, loud=True)
            and mind.draw("guess-variant", clause.key, v, len(mind.history)) < mind.params.p_guess
        ):
            n += 1
        else:
            break
    return n


def _fragment(mind: Mind, c: Clause, variant: int, bind: list[str]) -> str | None:
    """The SPARQL of one clause in one variant (None when an ID is still missing)."""

    def ent(a: str) -> str:
        return _entity(mind, a[1:], bind) if a.startswith("@") else a

    def pid(rel: str) -> str | None:
        return _pid(mind, rel)[0]

    k, a = c.kind, c.args
    if k == "isa":
        p = pid(a[2])
        return p and f"{a[0]} wdt:{p} {ent(a[1])} ."
    if k == "rel":
        p = pid(a[1])
        return p and f"{ent(a[0])} wdt:{p} {ent(a[2])} ."
    if k == "in_country":
        return f"{a[0]} wdt:P131*/wdt:P17 {ent(a[1])} ." if variant else f"{a[0]} wdt:P17 {ent(a[1])} ."
    if k == "in_place":
        mention = next(m for m in mind.goal.mentions if m.key == a[1][1:])
        kind = _region_kind(mind, mention)
        if kind == "country":
            return f"{a[0]} wdt:P131*/wdt:P17 {ent(a[1])} ." if variant else f"{a[0]} wdt:P17 {ent(a[1])} ."
        if kind == "city" and a[0] in ("?city", "?location"):
            return f"FILTER({a[0]} = {ent(a[1])})"
        return f"{a[0]} wdt:P131* {ent(a[1])} ." if variant else f"{a[0]} wdt:P131 {ent(a[1])} ."
    if k == "height":
        if variant:  # not P2048: P2044 as the page showed it, else the property found for "elevation"
            p = "P2044" if "has_P2044" in mind.facts else pid("elevation")
        else:
            p = pid(a[2])
        return p and f"{ent(a[0])} wdt:{p} {a[1]} ."
    if k == "inst_class":
        path = ("wdt:P31", "wdt:P279", "wdt:P279*")[variant]
        return f"{a[0]} {path} {ent(a[1])} ."
    if k == "students":
        adv = ent(a[1])
        if variant:
            return f"{{ {a[0]} wdt:P184 {adv} . }} UNION {{ {adv} wdt:P185 {a[0]} . }}"
        return f"{adv} wdt:P185 {a[0]} ."
    if k == "descendants":
        adv = ent(a[2])
        if variant:
            return f"{a[0]} wdt:P184+ {adv} ; wdt:P184 {a[1]} ."
        return f"{adv} wdt:P185+ {a[0]} . {a[1]} wdt:P185 {a[0]} ."
    if k == "award":
        aw = ent(a[1])
        if variant:
            return f"{a[0]} p:P166 ?statement . ?statement ps:P166 {aw} ; pq:P585 {a[2]} ."
        return f"{a[0]} wdt:P166 {aw} . {a[0]} wdt:P585 {a[2]} ."
    if k == "location":
        right = "P840" if a[2] == "set_in" else "P915"
        p = right if variant else pid(a[2])
        return p and f"{a[0]} wdt:{p} {a[1]} ."
    if k == "affiliation":
        org = ent(a[1])
        return (
            f"{a[0]} wdt:P1416 ?organization . ?organization wdt:P361* {org} ."
            if variant
            else f"{a[0]} wdt:P1416 {org} ."
        )
    if k == "affiliation_any":
        return (
            f"{a[0]} wdt:P1416 ?organization . ?organization wdt:P361* {a[1]} ."
            if variant
            else f"{a[0]} wdt:P1416 {a[1]} ."
        )
    return None


def _clause_pid(mind: Mind, c: Clause) -> str:
    """The property whose remembered confidence decides how much the clause is trusted."""
    k, a = c.kind, c.args
    if k == "isa":
        return RELATIONS[a[2]][0]
    if k == "rel":
        return RELATIONS[a[1]][0]
    if k in ("height", "location"):
        return RELATIONS[a[2]][0]
    return {
        "in_country": "P17",
        "in_place": "P131",
        "inst_class": "P279",
        "students": "P185",
        "descendants": "P185",
        "award": "P585",
        "affiliation": "P1416",
        "affiliation_any": "P1416",
    }.get(k, "P31")


FIX_FACTS: Mapping[str, tuple[str, ...]] = {
    "inst_class": ("subclass_not_instance",),
    "in_country": ("place_without_country",),
    "in_place": ("nested_location", "place_without_country"),
    "students": ("advisor_on_student",),
    "descendants": ("advisor_on_student",),
    "award": ("award_qualifier",),
    "affiliation": ("school_part_of",),
    "affiliation_any": ("school_part_of",),
    "height": ("has_P2044",),
    "location": ("two_locations",),
}


def _settled(mind: Mind, c: Clause) -> bool:
    """The evidence that fixes this clause has been seen: nothing more to check about it."""
    return any(f in mind.facts for f in FIX_FACTS.get(c.kind, ()))


# --- probes: debugging (no rows) and verification (rows) -----------------------------------------------


def _first_ids(observation: str, column: int = 0) -> list[str]:
    ids = []
    for line in observation.splitlines()[1:]:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > column and re.fullmatch(r"Q\d+", cells[column]):
            ids.append(cells[column])
    return ids


def _var_ids(mind: Mind, var: str) -> list[str]:
    """IDs in the column ``var`` of the latest query result that returned rows and has that column."""
    for step in reversed(mind.history):
        if step.action_name == "execute_sparql" and _feedback(step.observation) == "rows":
            header = [c.strip() for c in step.observation.splitlines()[0].split("|")]
            if var.lstrip("?") in header:
                ids = _first_ids(step.observation, header.index(var.lstrip("?")))
                if ids:
                    return ids
    return []


def _probe_list(mind: Mind, c: Clause, loud: bool) -> list[tuple[str, str, str]]:
    """(action, argument, thought) probes for clause ``c``, in order; arguments may be ''."""
    k, a = c.kind, c.args
    bind: list[str] = []
    out: list[tuple[str, str, str]] = []
    isa = next((x for x in mind.goal.clauses if x.kind == "isa" and x.args[0] == a[0]), None)
    if k == "height":
        subject_var = a[0]
        frag = _fragment(mind, isa, 0, bind) if isa else None
        p = _pid(mind, a[2])[0] or "P2048"
        if frag:
            out.append(
                (
                    "execute_sparql",
                    f"SELECT {subject_var} WHERE {{ {frag} }} LIMIT 5",
                    "The result looks wrong (empty). Debug by running a simpler fragment.",
                )
            )
        out.append(("get_property_examples", p, f"Check how {p} is really used."))
        ids = _var_ids(mind, subject_var) if frag else []
        if not ids and a[0].startswith("@"):
            mention = next(m for m in mind.goal.mentions if m.key == a[0][1:])
            ids = [i for i in [_resolve(mind, mention)] if i]
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"Look at {ids[0]} to see which properties it actually has."))
    elif k == "inst_class":
        out.append(
            (
                "execute_sparql",
                f"SELECT ?instrument WHERE {{ ?musician wdt:{_pid(mind, 'instrument')[0] or 'P1303'} ?instrument . }} LIMIT 5",
                "Check what the instrument values look like.",
            )
        )
        ids = _var_ids(mind, "?instrument")
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"How is the instrument {ids[0]} linked to its class?"))
    elif k == "award":
        aw = _fragment(mind, Clause("rel", (a[0], "award", a[1])), 0, bind)
        if aw and loud:
            out.append(
                (
                    "execute_sparql",
                    f"SELECT {a[0]} WHERE {{ {aw} }} LIMIT 5",
                    "Debug: does the award part alone return anything?",
                )
            )
        out.append(("get_property_examples", "P166", "How are awards and their dates recorded?"))
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"Look at the laureate {ids[0]}."))
    elif k in ("students", "descendants"):
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"Check how the student {ids[0]} records the relation."))
        out.append(("get_property_examples", "P184", "Are advisors recorded on the students' side (P184)?"))
    elif k == "in_country" or (k == "in_place" and _region_kind(mind, _mention(mind, a[1])) == "country"):
        others = [
            f
            for x in mind.goal.clauses
            if x is not c and a[0] in x.args
            for f in [_fragment(mind, x, _variant(mind, x, set()), bind)]
            if f
        ]
        out.append(
            (
                "execute_sparql",
                f"SELECT {a[0]} WHERE {{ {' '.join(bind + others)} FILTER NOT EXISTS {{ {a[0]} wdt:P17 ?country }} }} LIMIT 5",
                "Do all of these places have a country (P17)? Check for some without one.",
            )
        )
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(("get_wikidata_entry", ids[0], f"How is {ids[0]} linked to its country?"))
    elif k == "in_place":
        mention = _mention(mind, a[1])
        if _region_kind(mind, mention) == "province":
            region = _entity(mind, a[1][1:], bind)
            frag = _fragment(mind, isa, 0, bind) if isa else ""
            out.append(
                (
                    "execute_sparql",
                    f"SELECT {a[0]} ?place WHERE {{ {frag or ''} {a[0]} wdt:P131 ?place . ?place wdt:P131 {region} . }} LIMIT 5 # nested places",
                    f"Are some of them located in a place inside {mention.text} rather than directly in it?",
                )
            )
    elif k == "location":
        ids = _var_ids(mind, a[0])
        if ids:
            out.append(
                ("get_wikidata_entry", ids[0], f"Check the film {ids[0]}: which location property fits the question?")
            )
    elif k in ("affiliation", "affiliation_any"):
        out.append(("get_property_examples", "P1416", "What kind of organizations are affiliations?"))
        mention = next((m for m in mind.goal.mentions if m.key == "org"), None)
        hits = mind.searches.get(mention.text.casefold(), []) if mention else []
        school = next((h[0] for h in hits if "school of music" in h[2].casefold()), None)
        if school:
            out.append(("get_wikidata_entry", school, f"The search also showed {school}; how is it related?"))
    elif k in ("isa", "rel") and loud:
        frag = _fragment(mind, c, 0, bind)
        if frag:
            var = next((x for x in a if x.startswith("?")), None)
            if var:
                out.append(
                    (
                        "execute_sparql",
                        f"SELECT {var} WHERE {{ {' '.join(bind)} {frag} }} LIMIT 5",
                        "Check this part alone.",
                    )
                )
    return out


def _next_probe(mind: Mind, c: Clause, loud: bool) -> tuple[str, str, str] | None:
    for action, arg, thought in _probe_list(mind, c, loud):
        if (action, arg) not in mind.done and not (action != "execute_sparql" and action in _disabled(mind)):
            return action, arg, thought
    return None


def _disabled(mind: Mind) -> set[str]:
    return {s.action_name for s in mind.history if "is not available" in (s.observation or "")}


# --- writing the query ---------------------------------------------------------------------------------


def compose(mind: Mind, failed: set[str] | None = None) -> tuple[str | None, list[str]]:
    """The whole query as the policy would write it now, or (None, searches still needed)."""
    failed = failed or set()
    goal = mind.goal
    needs: list[str] = []
    for m in goal.mentions:
        if m.text and m.text.casefold() not in mind.searches and not mind.search_off:
            needs.append(m.text)
    for c in goal.clauses:
        rels = (
            [c.args[2]]
            if c.kind == "isa"
            else [c.args[1]]
            if c.kind == "rel"
            else [c.args[2]]
            if c.kind in ("height", "location")
            else []
        )
        if c.kind == "height" and "has_P2044" not in mind.facts and _height_wrong_and_no_page(mind, c):
            rels = [*rels, "elevation"]  # P2048 is for people and no page to read: find the property for a mountain
        for rel in rels:
            if rel in RELATIONS:
                _p, search = _pid(mind, rel)
                if search and search not in needs:
                    needs.append(search)
    if needs:
        return None, needs
    bind: list[str] = []
    parts: list[str] = []
    for c in goal.clauses:
        frag = _fragment(mind, c, _variant(mind, c, failed), bind)
        if frag is None:
            return None, []
        parts.append(frag)
    if goal.clauses and goal.clauses[0].args and mind.draw("extra") < mind.params.p_extra:
        country = next((m for m in goal.mentions if m.key == "country"), None)
        if country is not None and any(c.kind == "in_country" for c in goal.clauses):
            parts.append(f"?person wdt:P27 {_entity(mind, 'country', bind)} .")
    select = list(goal.select)
    fmt = mind.draw("format") < mind.params.p_format
    labels = [v for v in select if v not in ("?elevation", "?date", "?count")]
    if fmt and len(select) >= 2:
        select = select[:1]
    if goal.count:
        proj = " ".join(goal.group_by) + f" (COUNT(DISTINCT {goal.count}) AS ?count)"
        proj = proj.strip()
        labels = []
    else:
        if fmt and len(goal.select) == 1 and labels:
            proj = f"{labels[0]}Label"
        else:
            proj = "DISTINCT " + " ".join(select + [f"{v}Label" for v in labels])
    body = "\n  ".join(bind + parts)
    if goal.year_from:
        body += f"\n  FILTER(YEAR({goal.year_from[0]}) >= {goal.year_from[1]})"
    if labels:
        body += '\n  SERVICE wikibase:label { bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". }'
    query = f"SELECT {proj} WHERE {{\n  {body}\n}}"
    if goal.group_by:
        query += "\nGROUP BY " + " ".join(goal.group_by)
    if goal.order:
        query += f"\nORDER BY {goal.order[1]}({goal.order[0]})"
    if goal.limit and not (fmt and goal.order):
        query += f"\nLIMIT {goal.limit}"
    return query, []


def one_shot_query(question: str, *, seed: int = 224, params: PolicyParams | None = None) -> str | None:
    """The query a model writes in one go from the question and its memory (no tools, no feedback)."""
    mind = Mind(question, read_question(question), params or DEFAULT, seed, (), search_off=True, invent_ids=True)
    if not mind.goal.understood:
        return None
    return compose(mind)[0]


def _typo(query: str) -> str:
    """The query with a slip: the closing brace of the WHERE clause forgotten."""
    i = query.rfind("}")
    return query[:i] + query[i + 1 :]


# --- the decision ----------------------------------------------------------------------------------


def decide(
    question: str,
    history: Sequence[PolicyStep],
    *,
    seed: int = 224,
    sample: int = 0,
    params: PolicyParams | None = None,
) -> PolicyAction:
    """The next thought and action, from the question and the state alone."""
    params = params or DEFAULT
    mind = read_state(question, history, seed, params)
    n = len(history)

    # slips: repeating the previous action (likelier right after a repeat)
    if history:
        last = history[-1]
        p = params.p_repeat
        if n >= 2 and (history[-2].action_name, history[-2].action_argument) == (
            last.action_name,
            last.action_argument,
        ):
            p = p + (1 - p) * 0.75  # a repeat left in the context makes the next one likelier
        if mind.draw("repeat", n, sample) < p:
            return PolicyAction(last.thought, last.action_name, last.action_argument)

    goal = mind.goal
    if not goal.understood:
        return _explore(mind)

    failed = {q for q, (fb, _o) in mind.results.items() if fb != "rows"}
    query, needs = compose(mind, failed)
    if needs:
        text = needs[0]
        return PolicyAction(f"I need the ID of {text!r}.", "search_wikidata", text)
    if query is None:
        return PolicyAction("I cannot write the query.", "stop", "")

    last_q = next((s for s in reversed(history) if s.action_name == "execute_sparql"), None)
    status = mind.results.get(query)
    if status is None:
        typo = _typo(query)
        if last_q is not None and last_q.action_argument.strip() == typo.strip():
            return PolicyAction("I forgot a closing brace; fix the syntax.", "execute_sparql", query)
        if mind.draw("typo", query, sample) < params.p_typo and (("execute_sparql", typo.strip()) not in mind.done):
            return PolicyAction("Now I can write the whole query.", "execute_sparql", typo)
        thought = "Now I can write the whole query." if last_q is None else "Run the corrected query."
        return PolicyAction(thought, "execute_sparql", query)

    feedback, _obs = status
    clauses = sorted(goal.clauses, key=lambda c: params.memory.get(_clause_pid(mind, c), 0.5))
    if feedback != "rows":
        just_failed = (
            history[-1].action_name == "execute_sparql" and history[-1].action_argument.strip() == query.strip()
        )
        if just_failed and mind.draw("stop-early", n, sample) < params.p_stop_early:
            return PolicyAction("I could not find more; stop.", "stop", query)
        for c in clauses:
            probe = None if _settled(mind, c) else _next_probe(mind, c, loud=True)
            if probe:
                return PolicyAction(probe[2], probe[0], probe[1])
        return PolicyAction("I have tried what I could think of.", "stop", query)

    # rows: check the assumptions I am not sure of, then stop
    for c in clauses:
        pid = _clause_pid(mind, c)
        if params.memory.get(pid, 0.5) >= params.verify_below or _settled(mind, c):
            continue
        started = any((a, g) in mind.done for a, g, _t in _probe_list(mind, c, loud=False))
        if not started and mind.draw("verify", c.key, sample) >= params.p_verify:
            continue
        probe = _next_probe(mind, c, loud=False)
        if probe:
            return PolicyAction(probe[2] if started else f"Verify my assumption: {probe[2]}", probe[0], probe[1])
    # the answer is the whole query, not the probe that may have run after it
    return PolicyAction("My query answers the question.", "stop", query)


def _explore(mind: Mind) -> PolicyAction:
    """A question the policy cannot read: look the named things up, read a page, list its facts."""
    for m in mind.goal.mentions:
        if m.text.casefold() not in mind.searches and not mind.search_off:
            return PolicyAction(f"Find {m.text!r} first.", "search_wikidata", m.text)
    ids = [q for m in mind.goal.mentions if (q := _resolve(mind, m))]
    if ids:
        query = f'SELECT ?property ?value ?valueLabel WHERE {{\n  wd:{ids[0]} ?property ?value .\n  SERVICE wikibase:label {{ bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". }}\n}}'
        if ("get_wikidata_entry", ids[0]) not in mind.done:
            return PolicyAction(f"Read the page of {ids[0]}.", "get_wikidata_entry", ids[0])
        if query not in mind.results:
            return PolicyAction("List what the graph says about it.", "execute_sparql", query)
        return PolicyAction("This is as far as I can get.", "stop", query)
    return PolicyAction("This is as far as I can get.", "stop", "")
