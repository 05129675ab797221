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

One module an idea: :mod:`~worlds.kg.model` (values, claims, entities, properties, the world),
:mod:`~worlds.kg.properties` (the Wikidata properties), :mod:`~worlds.kg.names` (what the world is drawn
from), :mod:`~worlds.kg.generate` (:func:`build`, :func:`scaled`), :mod:`~worlds.kg.truth`,
:mod:`~worlds.kg.rdf` (:func:`rdf_triples`) and :mod:`~worlds.kg.questions`.  This package re-exports
what callers use.
"""

from __future__ import annotations

from worlds.kg.generate import DEFAULT_SEED, build, scaled
from worlds.kg.model import KGWorld
from worlds.kg.questions import CATEGORIES, KGQuestion, QuestionSets, questions
from worlds.kg.rdf import WD, rdf_triples
from worlds.kg.truth import Built, HiddenTruth

__all__ = [
    "CATEGORIES",
    "DEFAULT_SEED",
    "WD",
    "Built",
    "HiddenTruth",
    "KGQuestion",
    "KGWorld",
    "QuestionSets",
    "build",
    "questions",
    "rdf_triples",
    "scaled",
]
