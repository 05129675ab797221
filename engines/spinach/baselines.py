"""The earlier approaches of lecture 8 §2, run on the same questions (§2.5).

Each baseline answers with rows (SPARQL JSON bindings) that are scored like SPINACH's:

* :func:`direct_answer` — the model answers from memory.  The world is fictional, so a model's
  memory holds none of it: the simulated model names a plausible value of the kind asked for
  (a place, a person, a number, a date) — a hallucination, as GPT-3 did for *A Bronx Tale*.
* :func:`one_shot` — the model writes SPARQL in one go (no search, no execution feedback): PIDs
  from memory, QIDs as it remembers them, i.e. made up; the query runs once.
* :class:`TemplateParser` — a parser "fine-tuned" on a training set of phrasings: it replaces the
  entity by X, copies the property of the most similar training question, and writes
  ``wd:E wdt:P ?x``.  Like WikiSP in the paper it is given the gold entities.  The §2.5 baseline
  is trained on :data:`FINE_TUNED` (the default): 3 phrasings for each of the properties a
  WebQuestions-style simple question asks about (birthplace, instrument, director, founder,
  headquarters, elevation, release date, education, occupation), written from what each property
  means, never from the test questions (``tests/engines/spinach/test_baselines.py`` checks no
  training phrasing is a test question).  Lecture 8 §5.1's trap is
  :meth:`TemplateParser.five_templates` (5 templates × 2–3 phrasings, :data:`TEMPLATES`), whose
  synthetic test set (:meth:`TemplateParser.synthetic_accuracy`) comes from its own templates.
* :func:`think_on_graph` — a Think-on-Graph edge walker: from the gold entities it follows, two
  hops deep, the relations whose labels best match the question's words (kept to the best two
  per hop), and answers with the entities it reaches: one column, no counting, no sorting.

The simulated model's "memory" is the same as the SPINACH policy's (``sim_policy.P_MEMORY``); no
baseline reads the gold query or the world's hidden truth — only the gold *entities* are handed to
the two baselines the paper handed them to.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines.kg.endpoint import Endpoint, Feedback
from engines.kg.prefixes import PREFIXES
from engines.llm.seeded import unit
from engines.spinach import sim_policy

Binding = Mapping[str, Mapping[str, str]]
WD, WDT = PREFIXES["wd"], PREFIXES["wdt"]

BASELINES = ("direct", "one_shot", "template", "tog")

_PLACES = ("Springfield", "Vienna", "Lyon", "Porto", "Oslo", "Kyoto", "Toronto", "Seville", "Bergen", "Madrid")
_PEOPLE = ("John Smith", "Maria Garcia", "Anna Müller", "James Brown", "Li Wei", "Sofia Rossi", "David Cohen")


def _lit(value: str) -> dict[str, str]:
    return {"type": "literal", "value": value}


def direct_answer(question: str, *, seed: int = 224) -> list[Binding]:
    """What a model answers from memory about a world it has never seen (a plausible guess)."""
    q = question.lower()

    def pick(options: Sequence[str], k: int = 1) -> list[str]:
        rng = random.Random(int(unit(seed, "direct", question) * 2**32))
        return rng.sample(list(options), k)

    if q.startswith("how many"):
        return [
            {
                "count": {
                    "type": "literal",
                    "value": str(1 + int(unit(seed, "direct-n", question) * 12)),
                    "datatype": "http://www.w3.org/2001/XMLSchema#integer",
                }
            }
        ]
    if re.search(r"\bwhen\b|released", q):
        year = 1950 + int(unit(seed, "direct-y", question) * 70)
        return [
            {
                "date": {
                    "type": "literal",
                    "value": f"{year}-01-01T00:00:00Z",
                    "datatype": "http://www.w3.org/2001/XMLSchema#dateTime",
                }
            }
        ]
    if re.search(r"elevation|high|tall", q):
        return [
            {
                "elevation": {
                    "type": "literal",
                    "value": str(1000 + int(unit(seed, "direct-h", question) * 5000)),
                    "datatype": "http://www.w3.org/2001/XMLSchema#decimal",
                }
            }
        ]
    if re.search(r"\bwhere\b|city|place", q):
        return [{"answer": _lit(v)} for v in pick(_PLACES)]
    return [{"answer": _lit(v)} for v in pick(_PEOPLE, 2 if q.startswith("which") or q.startswith("who are") else 1)]


def one_shot(question: str, endpoint: Endpoint, *, seed: int = 224) -> tuple[str | None, list[Binding]]:
    """The query written in one go from memory, and what it returned (run once, never fixed)."""
    query = sim_policy.one_shot_query(question, seed=seed)
    if query is None:
        return None, []
    result = endpoint.execute(query)
    return query, list(result.bindings) if result.feedback is Feedback.ROWS else []


# --- the template-memorising parser --------------------------------------------------------------

TEMPLATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("P19", ("Where was X born?", "What is the birthplace of X?", "In which city was X born?")),
    ("P57", ("Who directed X?", "Who is the director of X?")),
    ("P106", ("What is the occupation of X?", "What does X do for a living?", "What is X's profession?")),
    ("P112", ("Who founded X?", "Who are the founders of X?")),
    ("P577", ("When was X released?", "What is the release date of X?", "When did X come out?")),
)
_TEMPLATE_KINDS = {"P19": "person", "P57": "film", "P106": "person", "P112": "company", "P577": "film"}

# The §2.5 parser's training set: each property a simple question asks about, in phrasings of what the property
# means.  None is a question of the test sets (checked by a test); X stands for the entity.
FINE_TUNED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("P19", ("In which city was X born?", "What is the birthplace of X?", "X was born in which town?")),
    (
        "P1303",
        (
            "What musical instrument is X known for?",
            "X performs on which instruments?",
            "What does X play in concerts?",
        ),
    ),
    ("P57", ("Who is the director of X?", "Which filmmaker made X?", "X was directed by whom?")),
    ("P112", ("Who are the founders of X?", "Who started the company X?", "By whom was X established?")),
    ("P159", ("Where is X headquartered?", "What city is X based in?", "Where are the head offices of X located?")),
    ("P2044", ("How high is X?", "What is the height of X in metres?", "How far above sea level does X rise?")),
    ("P577", ("What is the release date of X?", "When did X come out?", "In what year was X first shown?")),
    ("P69", ("Which university did X attend?", "Where did X study?", "Where did X get an education?")),
    ("P106", ("What does X do for a living?", "What is X's profession?", "Which occupation does X have?")),
)


@dataclass(frozen=True)
class ParsedQuery:
    sparql: str
    pid: str
    nearest: str


def _pairs(templates: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, str]]:
    return [(t, pid) for pid, ts in templates for t in ts]


def _pieces(text: str) -> list[str]:
    """Word pieces: each word's first five letters ("educated" and "education" share "educa"); X is the entity."""
    return [w[:5] for w in re.findall(r"[a-z]+", text.lower()) if w != "x"]


class TemplateParser:
    """Nearest-neighbour over a training set: X-for-entity, copy the property of the most similar training
    question.  Similarity is the cosine of TF-IDF vectors of word pieces (:func:`_pieces`; IDF over the
    training set, so the words every phrasing shares, "what", "is", "the", weigh little): what a fine-tuned
    model takes from its training data is which words point to which property, not the exact sentences.
    By default the §2.5 parser (:data:`FINE_TUNED`); :meth:`five_templates` is §5.1's."""

    def __init__(self, train: Sequence[tuple[str, str]] | None = None) -> None:
        self.train = list(train) if train is not None else _pairs(FINE_TUNED)
        df: dict[str, int] = {}
        for text, _pid in self.train:
            for piece in set(_pieces(text)):
                df[piece] = df.get(piece, 0) + 1
        n = len(self.train)
        self._idf = {piece: math.log((n + 1) / (count + 0.5)) for piece, count in df.items()}
        self._vectors = [self._vector(text) for text, _pid in self.train]

    def _vector(self, text: str) -> dict[str, float]:
        counts: dict[str, int] = {}
        for piece in _pieces(text):
            counts[piece] = counts.get(piece, 0) + 1
        return {p: c * self._idf.get(p, 0.0) for p, c in counts.items()}

    @staticmethod
    def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
        dot = sum(v * b.get(k, 0.0) for k, v in a.items())
        na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
        return dot / (na * nb) if na and nb else 0.0

    @classmethod
    def five_templates(cls) -> TemplateParser:
        """Lecture 8 §5.1's template-memorising parser: trained on :data:`TEMPLATES` only."""
        return cls(_pairs(TEMPLATES))

    def parse(self, question: str, entities: Sequence[str], labels: Mapping[str, str]) -> ParsedQuery | None:
        if not entities:
            return None
        masked = question
        for e in entities:
            name = labels.get(e)
            if name:
                masked = re.sub(re.escape(name), "X", masked, flags=re.I)
        asked = self._vector(masked)
        i = max(range(len(self.train)), key=lambda j: self._cosine(asked, self._vectors[j]))
        text, pid = self.train[i]
        return ParsedQuery(f"SELECT ?x WHERE {{ wd:{entities[0]} wdt:{pid} ?x . }}", pid, text)

    def synthetic_accuracy(self, world: Any, *, per_template: int = 9, seed: int = 0) -> tuple[int, int]:
        """(right, total): property choices on a test set drawn from :data:`TEMPLATES` (the
        same-template test set of §5.1, for :meth:`five_templates`)."""
        rng = random.Random(seed)
        right = total = 0
        for pid, phrasings in TEMPLATES:
            kind = _TEMPLATE_KINDS[pid]
            pool = [e for e in world.entities.values() if e.kind == kind]
            for _ in range(per_template):
                e = rng.choice(pool)
                q = rng.choice(phrasings).replace("X", e.label)
                parsed = self.parse(q, [e.qid], {e.qid: e.label})
                total += 1
                right += int(parsed is not None and parsed.pid == pid)
        return right, total


def template_answer(
    parser: TemplateParser, question: str, entities: Sequence[str], endpoint: Endpoint
) -> list[Binding]:
    labels = {e: endpoint.label(e) or e for e in entities}
    parsed = parser.parse(question, entities, labels)
    if parsed is None:
        return []
    result = endpoint.execute(parsed.sparql)
    return list(result.bindings) if result.feedback is Feedback.ROWS else []


# --- Think-on-Graph ---------------------------------------------------------------------------------


def _stem(word: str) -> str:
    return word[:5]


_STOP = {
    "which",
    "what",
    "who",
    "the",
    "and",
    "for",
    "each",
    "return",
    "with",
    "are",
    "were",
    "was",
    "is",
    "a",
    "an",
    "of",
    "in",
    "its",
    "their",
    "how",
    "many",
    "did",
    "does",
    "that",
    "this",
    "it",
    "or",
    "on",
    "to",
}


def think_on_graph(
    question: str,
    entities: Sequence[str],
    endpoint: Endpoint,
    *,
    depth: int = 2,
    width: int = 2,
    frontier_cap: int = 20,
) -> list[Binding]:
    """Walk from the gold entities along the best-matching relations; answer with where it ends."""
    if not entities:
        return []
    qwords = {_stem(w) for w in re.findall(r"[a-z]+", question.lower()) if w not in _STOP and len(w) > 2}
    frontier = list(dict.fromkeys(entities))[:frontier_cap]
    seen = set(frontier)
    for _hop in range(depth):
        values = " ".join(f"wd:{e}" for e in frontier)
        res = endpoint.execute(
            "SELECT ?p ?dir ?o WHERE { VALUES ?e { " + values + " } "
            '{ ?e ?p ?o . BIND("out" AS ?dir) } UNION { ?o ?p ?e . BIND("in" AS ?dir) } '
            f'FILTER(STRSTARTS(STR(?p), "{WDT}") && isIRI(?o)) }}'
        )
        edges: dict[tuple[str, str], list[str]] = {}
        for b in res.bindings:
            pid = b["p"]["value"][len(WDT) :]
            o = b["o"]["value"]
            if o.startswith(WD):
                edges.setdefault((pid, b["dir"]["value"]), []).append(o[len(WD) :])
        if not edges:
            break

        def matched(key: tuple[str, str]) -> set[str]:
            page = endpoint.page(key[0])
            return {_stem(w) for w in re.findall(r"[a-z]+", " ".join((page.label, *page.aliases)).lower())} & qwords  # noqa: B023 -- used in this iteration

        ranked = sorted(edges, key=lambda k: (-len(matched(k)), -len(edges[k]), k))
        best = [k for k in ranked[:width] if matched(k)]
        if not best:  # no relation speaks to the question any more: the exploration ends here
            break
        for key in best:
            qwords -= matched(key)
        nxt: list[str] = []
        for key in best:
            for o in edges[key]:
                if o not in seen:
                    seen.add(o)
                    nxt.append(o)
        if not nxt:
            break
        frontier = nxt[:frontier_cap]
    return [{"x": {"type": "uri", "value": WD + e}} for e in frontier if e not in entities]
