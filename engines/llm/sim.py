"""The simulated LLM of the lecture notes (backend ``sim``, the offline default).

It is shown exactly what a real model is shown — the text, the question, the
schema, the candidate values — and never a world's hidden truth.  It answers any
task by calling the task's simulated implementation, kept beside the agent whose
task it is: engines/sql (the restaurant parser ``sim_parser``, the reader of a user's
own tables ``sim_tables``, the reader of texts and the reply writer ``sim``, the
reader of passages ``sim_reader``), engines/hybridqa (``sim_hybrid``), engines/courses
(``sim_courses``), engines/spinach (``sim_policy``).  This module holds what they
share: the seed and the error rates, the simulated latency, and the model identity
that enters every cache key.  It errs at seeded rates keyed on (seed, input): 3% when
the text touches the question's topic, 0.3% when it does not, so every run repeats
exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engines.llm.protocol import Output
from engines.llm.task import I, O, Task
from engines.llm.waiting import pause

PROMPT_VERSION = "sim-3"  # sim-2: passages are read for dates, places and events (sim_reader); sim-3: a yes/no question off the lexicon is Unknown
MISREAD_RATE = 0.06  # §6.5: a value read from a passage is another of its kind (another date) 6% of the time


class SimBackend:
    """The seeded, offline LLM.  Deterministic in (seed, input).

    It answers any :class:`~engines.llm.task.Task` by calling the task's simulated implementation
    (``Task.simulate``, registered with the task, in the agent's package) with itself and the input.  Every parameter
    is set at construction (:meth:`configured` makes a changed copy); the ones that change an
    answer are part of :attr:`model`, hence of every cache key.
    """

    name = "sim"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        *,
        seed: int = 224,
        latency_s: float = 0.0,
        error_on_topic: float = 0.03,
        error_off_topic: float = 0.003,
        parse_drop_rate: float = 0.04,
        misread_rate: float = MISREAD_RATE,  # a value read from a passage is another of its kind
        hybrid_params: Any = None,  # HybridQA's parser and short answer (engines.hybridqa.sim_hybrid.HybridRates); None = its defaults
        policy_params: Any = None,  # SPINACH's simulated policy (engines.spinach.sim_policy.PolicyParams); None = its defaults
        sleep: Callable[[float], None] = pause,
    ) -> None:
        self.seed = seed
        self.latency_s = latency_s
        self.error_on_topic = error_on_topic
        self.error_off_topic = error_off_topic
        self.parse_drop_rate = parse_drop_rate
        self.misread_rate = misread_rate
        self.hybrid_params = hybrid_params
        self.policy_params = policy_params
        self._sleep = sleep

    @property
    def model(self) -> str:
        # Everything that changes an output is part of the model's identity (cache keys use it);
        # a parameter at its default adds nothing, so the keys of a default run stay as they were.
        misread = "" if self.misread_rate == MISREAD_RATE else f",misread={self.misread_rate}"
        hybrid = "" if self.hybrid_params is None else f",hybrid={self.hybrid_params!r}"
        policy = "" if self.policy_params is None else f",policy={self.policy_params!r}"
        return (
            f"sim(seed={self.seed},err={self.error_on_topic}/{self.error_off_topic},drop={self.parse_drop_rate}"
            f"{misread}{hybrid}{policy})"
        )

    def configured(self, **changes: Any) -> SimBackend:
        """A copy of this backend with some parameters changed (``seed=…``, ``hybrid_params=…``)."""
        params = {
            "seed": self.seed,
            "latency_s": self.latency_s,
            "error_on_topic": self.error_on_topic,
            "error_off_topic": self.error_off_topic,
            "parse_drop_rate": self.parse_drop_rate,
            "misread_rate": self.misread_rate,
            "hybrid_params": self.hybrid_params,
            "policy_params": self.policy_params,
            "sleep": self._sleep,
        }
        unknown = set(changes) - set(params)
        if unknown:
            raise TypeError(f"SimBackend has no parameter {', '.join(sorted(unknown))}")
        params.update(changes)
        return SimBackend(**params)

    def run(self, task: Task[I, O], input: I) -> Output[O]:
        """The task's simulated answer, after the simulated latency of the task."""
        if self.latency_s > 0 and task.sim_latency > 0:
            self._sleep(self.latency_s * task.sim_latency)
        return Output(task.simulate(self, input))
