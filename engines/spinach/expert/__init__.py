"""The simulated SPINACH policy's parts (lecture 8 §3.4, §3.6), one idea a module; the decision itself, its slips
and when it stops are :mod:`engines.spinach.sim_policy`.

* :mod:`.memory` — what the model knows by heart (``P_MEMORY``, the relations and their PIDs, the properties it
  confuses) and the dials of its behaviour (:class:`~.memory.PolicyParams`);
* :mod:`.question` — reading the question into a goal of clauses (no knowledge of the graph);
* :mod:`.state` — reading the state: searches seen, queries run, the quirks an observation shows and whether the
  policy notices them (:class:`~.state.Mind`);
* :mod:`.search` — the entity and property steps: which QID a search showed for a name, which PID a relation is;
* :mod:`.clauses` — each clause's SPARQL in each of its variants, and the evidence that settles it;
* :mod:`.debugging` — which variant to write from the evidence (or a guess), and the probes that find the
  evidence: debugging fragments, property examples, entity pages;
* :mod:`.compose` — writing the query from what the policy believes now, a piece at a time or whole, with its slips (and the
  one-shot baseline's query);
* :mod:`.prune` — the simulated ``prune_entry`` call: an entity page cut to the question before the policy sees it.

Nothing here reads the world, its hidden truth or the gold queries: only the question and the observations.
"""
