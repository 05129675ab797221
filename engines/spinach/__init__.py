"""SPINACH (lecture 8 §3): the ReAct agent over the knowledge graph, its tools, policies and trajectories.

* :class:`~engines.spinach.agent.SpinachAgent` — ``run(question, emit=…, cancel=…) -> Trajectory``;
  events in :mod:`engines.spinach.events` (``AgentStarted``, ``StepTaken``, ``RolledBack``,
  ``AgentFinished``);
* :mod:`engines.spinach.tools` — the five actions and their observations;
* :mod:`engines.spinach.sim_policy` — the simulated expert (the ``sim`` backend's ``policy``), its parts in
  :mod:`engines.spinach.expert`;
* :mod:`engines.spinach.trajectory` — trajectories as JSON, SPINACH's logs imported;
* :func:`engines.spinach.session.open_spinach` — world, endpoint, LLM and agent wired together.
"""
