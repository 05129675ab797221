"""The simulated SPINACH policy: the lecture's "expert procedure" (§3.4, §3.6, exercises 2–3).

It plays the part of the LLM at temperature 1: given the question and the state (every earlier
thought, action and observation), it writes the next thought and action.  It reads nothing else —
not the world, not its hidden truth, not the gold queries.  Like an expert it

1. searches for the entities and classes the question names (and for properties it does not
   remember — ``memory`` holds how sure it is of each PID by heart, the seed's ``P_MEMORY``);
2. confirms before it relies (the prompt's "confirm all your assumptions about the structure"): it reads the page
   of a named entity whose properties the query reads (which property to use depends on what the node actually
   has, §1.4; a property the page shows under its name needs no search), and it builds the query a triple
   pattern at a time, running each fragment before adding the next piece (``p_incremental``; the whole pattern
   too before a COUNT, GROUP BY or FILTER, which could hide an empty match), then writes the whole query;
3. on a syntax error fixes its typo; on no rows debugs: runs a simpler fragment, looks at
   property examples and entity pages, and changes the clause the evidence points at; with the
   clause's probes used up and nothing learnt it tries another variant only on a guess
   (``p_guess``), else it stops (and the agent's rollback may give it another try);
4. on rows, with probability ``p_verify`` checks the assumptions it is not sure of (properties
   remembered with confidence below 0.8) with a probe query or an entity page — the silent
   errors of §1.4 are only found this way;
5. stops, naming the whole query it means as the answer (``stop(query)``: a probe run after it to
   check an assumption is not the answer);
6. on a graph it cannot use, says so at once and stops without an answer (``no_answer``, a stop the agent lets
   stand): when its searches find only entities that are not Wikidata's (a graph with a vocabulary of its own:
   it knows Wikidata's properties by PID and nothing else), when a search for a thing the question names finds
   nothing, or when the question names nothing to look up and it cannot read what is asked.

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
the state, ``sample``); the agent raises ``sample`` after each rollback, so a retry differs (§3.5: at
temperature 1 a rerun does not repeat the same actions) — a guess at another variant too, so a stop rolled
back for want of ideas is not drawn again and again the same way.

This module is the decision — the slips, the verification and when to stop; the parts it reads live in
:mod:`engines.spinach.expert` (the question, the state, the searches, the clauses, debugging, writing the query).
"""

from __future__ import annotations

from collections.abc import Sequence

from engines.spinach.expert.clauses import clause_pid, settled
from engines.spinach.expert.compose import compose, one_shot_query, partial_queries, typo_of
from engines.spinach.expert.debugging import next_probe, page_to_confirm, probe_list
from engines.spinach.expert.memory import CONFUSED_WITH, DEFAULT, P_MEMORY, RELATIONS, PolicyParams
from engines.spinach.expert.question import Clause, Goal, Mention, read_question
from engines.spinach.expert.search import resolve
from engines.spinach.expert.state import Mind, read_state
from engines.spinach.steps import PolicyAction, PolicyStep

__all__ = [
    "CONFUSED_WITH",
    "DEFAULT",
    "P_MEMORY",
    "RELATIONS",
    "Clause",
    "Goal",
    "Mention",
    "Mind",
    "PolicyParams",
    "compose",
    "decide",
    "one_shot_query",
    "read_question",
    "read_state",
]


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
    mind = read_state(question, history, seed, params, sample)
    n = len(history)

    # nothing here it can use: said at once, as a stop with no answer (before any slip: it is not a guess)
    why = _nothing_to_use(mind)
    if why:
        return PolicyAction(why, "stop", "", no_answer=True)

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

    page = page_to_confirm(mind)
    if page:
        return PolicyAction(
            f"Before relying on it, read the page of {page}: which properties does it actually have?",
            "get_wikidata_entry",
            page,
        )
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
        typo = typo_of(query)
        if last_q is not None and last_q.action_argument.strip() == typo.strip():
            return PolicyAction("I forgot a closing brace; fix the syntax.", "execute_sparql", query)
        if mind.draw("incremental", sample) < params.p_incremental:
            for k, (partial, added, _whole) in enumerate(partial_queries(mind, failed)):
                done = mind.results.get(partial)
                if done is None:
                    thought = (
                        "Start simple: run the first part of the query."
                        if k == 0
                        else "That part returned rows; add one more piece and run it."
                    )
                    return PolicyAction(thought, "execute_sparql", partial)
                if done[0] != "rows":  # the piece just added returned nothing: debug that clause
                    c = goal.clauses[added]
                    probe = None if settled(mind, c) else next_probe(mind, c, loud=True)
                    if probe:
                        return PolicyAction(probe[2], probe[0], probe[1])
                    break  # nothing more to learn about it here: write the whole query
        if mind.draw("typo", query, sample) < params.p_typo and (("execute_sparql", typo.strip()) not in mind.done):
            return PolicyAction("Now I can write the whole query.", "execute_sparql", typo)
        thought = "Now I can write the whole query." if last_q is None else "Run the corrected query."
        return PolicyAction(thought, "execute_sparql", query)

    feedback, _obs = status
    # the clauses a fragment that returned rows has confirmed are suspected last (incremental building localises
    # the fault); otherwise the least surely remembered first
    confirmed = {
        i
        for partial, _added, whole in partial_queries(mind, failed)
        if mind.results.get(partial, ("",))[0] == "rows"
        for i in range(whole)
    }
    clauses = [
        c
        for _i, c in sorted(
            enumerate(goal.clauses),
            key=lambda ic: (ic[0] in confirmed, params.memory.get(clause_pid(mind, ic[1]), 0.5)),
        )
    ]
    if feedback != "rows":
        just_failed = (
            history[-1].action_name == "execute_sparql" and history[-1].action_argument.strip() == query.strip()
        )
        if just_failed and mind.draw("stop-early", n, sample) < params.p_stop_early:
            return PolicyAction("I could not find more; stop.", "stop", query)
        for c in clauses:
            probe = None if settled(mind, c) else next_probe(mind, c, loud=True)
            if probe:
                return PolicyAction(probe[2], probe[0], probe[1])
        return PolicyAction("I have tried what I could think of.", "stop", query)

    # rows: check the assumptions I am not sure of, then stop
    for c in clauses:
        pid = clause_pid(mind, c)
        if params.memory.get(pid, 0.5) >= params.verify_below or settled(mind, c):
            continue
        started = any((a, g) in mind.done for a, g, _t in probe_list(mind, c, loud=False))
        if not started and mind.draw("verify", c.key, sample) >= params.p_verify:
            continue
        probe = next_probe(mind, c, loud=False)
        if probe:
            return PolicyAction(probe[2] if started else f"Verify my assumption: {probe[2]}", probe[0], probe[1])
    # the answer is the whole query, not the probe that may have run after it
    return PolicyAction("My query answers the question.", "stop", query)


def _nothing_to_use(mind: Mind) -> str | None:
    """Why the graph holds nothing the policy can use for the question, read from the question and the
    observations alone (a real policy sees the same); None while it may still find something.

    * its searches found entities, none of them a Wikidata entity (``ex:ada``, ``<http://…>``): the graph has a
      vocabulary of its own, and the policy knows only Wikidata's — its properties by PID, its QIDs;
    * a search for a thing the question names found nothing at all;
    * the question names nothing it could look up, and it cannot read what the question asks.
    """
    goal = mind.goal
    seen_wikidata = any(mind.searches.values())
    foreign = [hit for hits in mind.foreign.values() for hit in hits]
    if foreign and not seen_wikidata:
        ident, label = foreign[0]
        return (
            f"The search found {label!r} as {ident}, which is not a Wikidata ID: this graph has a vocabulary of its "
            "own, and I only know Wikidata's (its properties by PID, its entities by QID). It holds nothing I can "
            "use to write a query for this question, so I stop without an answer."
        )
    if not mind.search_off:
        for m in goal.mentions:
            key = m.text.casefold()
            if key in mind.searches and not mind.searches[key] and not mind.foreign.get(key):
                return (
                    f"The search for {m.text!r} found nothing: this graph holds no entity of that name, so it has "
                    "nothing I can use to answer this question. I stop without an answer."
                )
    if not goal.understood and not goal.mentions:
        return (
            "I cannot read what this question asks, and it names nothing I could look up in the graph, so there "
            "is nothing I can use to answer it. I stop without an answer."
        )
    return None


def _explore(mind: Mind) -> PolicyAction:
    """A question the policy cannot read: look the named things up, read a page, list its facts."""
    for m in mind.goal.mentions:
        if m.text.casefold() not in mind.searches and not mind.search_off:
            return PolicyAction(f"Find {m.text!r} first.", "search_wikidata", m.text)
    ids = [q for m in mind.goal.mentions if (q := resolve(mind, m))]
    if ids:
        query = f'SELECT ?property ?value ?valueLabel WHERE {{\n  wd:{ids[0]} ?property ?value .\n  SERVICE wikibase:label {{ bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". }}\n}}'
        if ("get_wikidata_entry", ids[0]) not in mind.done:
            return PolicyAction(f"Read the page of {ids[0]}.", "get_wikidata_entry", ids[0])
        if query not in mind.results:
            return PolicyAction("List what the graph says about it.", "execute_sparql", query)
        return PolicyAction("This is as far as I can get.", "stop", query)
    return PolicyAction("This is as far as I can get.", "stop", "")
