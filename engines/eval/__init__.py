"""Evaluation metrics: row-wise EM/F1 (Hungarian matching), set F1 and bootstrap intervals (:mod:`metrics`).

Pure functions over rows, below every agent: the agents' own scoring uses them.  What runs an agent to
evaluate it lives with the agent (``engines.spinach.evaluate`` with the KGQA baselines in
``engines.spinach.baselines``, ``engines.hybridqa.evaluate``).
"""
