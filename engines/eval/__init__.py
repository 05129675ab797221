"""Evaluation: row-wise EM/F1, set F1 and bootstrap (:mod:`metrics`), the baselines of lecture 8 §2.5
(:mod:`baselines`) and the knowledge-graph QA evaluation that runs them with SPINACH (:mod:`kgqa`)."""
