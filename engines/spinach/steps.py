"""A SPINACH policy's step: what the policy writes (:class:`PolicyAction`) and what it is shown of a step taken
(:class:`PolicyStep`).  The agent, its tasks (:mod:`engines.spinach.tasks`) and the simulated policy
(:mod:`engines.spinach.sim_policy`, :mod:`engines.spinach.expert`) all read them; this module imports none of them."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PolicyAction", "PolicyStep"]


@dataclass(frozen=True)
class PolicyAction:
    """One SPINACH step as the policy writes it: a thought and an action with its one argument.

    ``action_name`` is one of ``search_wikidata``, ``get_wikidata_entry``,
    ``get_property_examples``, ``execute_sparql``, ``stop``.
    """

    thought: str
    action_name: str
    action_argument: str = ""
    # a ``stop`` with no answer: the policy says the graph holds nothing it can use for the question (the
    # thought says why).  The agent lets it stand — it is not a premature stop to roll back and retry — and the
    # run ends ``declined``.  The simulated policy sets it; a real model's reply sets it with ``no_answer(reason)``,
    # the action its prompt offers on a graph that is not Wikidata.  (Not in the repr: the sim's estimate of a
    # reply's tokens is counted on it, and a real model's reply has no such field.)
    no_answer: bool = field(default=False, repr=False)


@dataclass(frozen=True)
class PolicyStep:
    """A step of the history the policy is shown: what it did and what it observed."""

    thought: str
    action_name: str
    action_argument: str
    observation: str
