"""Reading the state: what the policy believes after every earlier action and observation, and which quirks an
observation shows it (noticed on a seeded draw: ``p_notice`` when the tool suits the quirk, else ``p_notice_other``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engines.llm.seeded import unit
from engines.spinach.expert.memory import PolicyParams
from engines.spinach.expert.question import Goal, read_question
from engines.spinach.steps import PolicyStep

# --- reading the state -----------------------------------------------------------------------

_HIT = re.compile(r"^(?P<label>.+?) \((?P<id>[QP]\d+)\): ?(?P<desc>[^\t]*)(?:\tData Type: (?P<dt>\S+))?$")
# a hit whose ID is not a QID or PID: an entity of a graph with a vocabulary of its own (``ex:ada``, ``<http://…>``)
_OTHER_HIT = re.compile(r"^(?P<label>.+?) \((?P<id>[^\s()]+)\): ?(?P<desc>[^\t]*)(?:\tData Type: (?P<dt>\S+))?$")
_CLAIM = re.compile(r"^(P\d+) \(([^)]*)\): ")
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
    # what each search found that is not a Wikidata entity: (ID, label) — a graph whose vocabulary is not Wikidata's
    foreign: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    facts: set[str] = field(default_factory=set)
    done: set[tuple[str, str]] = field(default_factory=set)
    results: dict[str, tuple[str, str]] = field(default_factory=dict)  # query -> (feedback, observation)
    page_pids: dict[str, str] = field(default_factory=dict)  # property label a page read showed -> its PID
    search_off: bool = False
    invent_ids: bool = False  # writing from memory alone (the one-shot baseline): QIDs are made up
    sample: int = 0  # how many rollbacks came before: a retry after one draws its guesses anew (temperature 1)

    def draw(self, *parts: object) -> float:
        return unit(self.seed, "spinach", self.question, *map(str, parts))

    def notice(self, fact: str, tool: str, position: int, arg: str) -> None:
        if fact in self.facts:
            return
        p = self.params.p_notice if _SUITED.get(fact) == tool else self.params.p_notice_other
        if self.draw("notice", fact, position, tool, arg) < p:
            self.facts.add(fact)


def feedback_of(observation: str) -> str:
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


def read_state(question: str, history: Sequence[PolicyStep], seed: int, params: PolicyParams, sample: int = 0) -> Mind:
    mind = Mind(question, read_question(question), params, seed, history, sample=sample)
    for pos, step in enumerate(history):
        name, arg, obs = step.action_name, step.action_argument.strip(), step.observation or ""
        mind.done.add((name, arg))
        if name == "search_wikidata":
            if "is not available" in obs:
                mind.search_off = True
                continue
            hits, foreign = [], []
            for line in obs.splitlines():
                h = _HIT.match(line.strip())
                if h:
                    hits.append((h.group("id"), h.group("label"), h.group("desc"), h.group("dt")))
                elif o := _OTHER_HIT.match(line.strip()):
                    foreign.append((o.group("id"), o.group("label")))
            mind.searches[arg.casefold()] = hits
            mind.foreign[arg.casefold()] = foreign
        elif name == "get_wikidata_entry":
            for line in obs.splitlines():
                claim = _CLAIM.match(line)
                if claim:
                    mind.page_pids.setdefault(claim.group(2).casefold(), claim.group(1))
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
            fb = feedback_of(obs)
            mind.results[arg] = (fb, obs)
            if fb == "rows" and re.search(r"FILTER NOT EXISTS \{ \?\w+ wdt:P17 ", arg):
                mind.notice("place_without_country", name, pos, arg)
            if fb == "rows" and "# nested places" in arg:
                mind.notice("nested_location", name, pos, arg)
    return mind
