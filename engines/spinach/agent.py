"""The SPINACH agent (lecture 8 §3.4–§3.5): a ReAct loop over the five actions, with rollback.

At step *n* the policy (``LLM.policy``) is shown the question and the state — every thought,
action and observation still in it — and answers with a thought and one action, which the agent
runs with :class:`~engines.spinach.tools.Tools`.  Two failure modes of sampling at temperature 1
are caught before they cost the budget of the state:

* a **repeat**: the action equals one of the last four actions in the state;
* a **premature stop**: ``stop()`` while the query it answers with returned no rows (or never ran).

The answer is a query the policy *meant* as its answer, not whichever ran last: ``stop(SPARQL)``
names it (the simulated policy does, so a debugging fragment or a verification probe that
happens to return rows is never taken for the answer), and a bare ``stop()`` means the last
executed query, as SPINACH's prompt says ("marks the last executed SPARQL query as the final
answer").  A premature stop is judged on that query.

Either is rolled back: the step is kept in the trajectory (marked) but taken out of the state,
and the policy is asked again with a new ``sample`` number, so a real model (or the seeded
simulation) draws a different action.  A stop the policy marks ``no_answer`` (the graph holds nothing it
can use for the question: the simulated policy on a graph whose vocabulary is not Wikidata's, a real model's
``no_answer(reason)``, which its prompt offers on any graph that is not Wikidata) is not
premature: it stands, and the run ends ``declined``, with no answer.  The loop ends on a ``stop()`` that stands, after 15
actions in the state, or after 30 actions in all (rolled-back ones included).  The answer is the
query of the stop that stands; a run that ends without one (the budget) answers with the query
its last stop named, if it returned rows, and only when the policy never stopped, with the last
query in the state that returned rows.

Events (``emit``): ``AgentStarted``, a ``StepTaken`` per action, ``RolledBack`` for each
rollback, the LLM's ``CallStarted``/``CallFinished``, and ``AgentFinished``.  ``cancel`` is
checked before every policy call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engines.errors import Cancelled, EngineError
from engines.events import Emit, ignore
from engines.kg.endpoint import QueryResult
from engines.llm.client import LLM
from engines.spinach.events import AgentFinished, AgentStarted, RolledBack, StepTaken
from engines.spinach.graph import GraphInfo, describe_graph
from engines.spinach.tasks import PRUNE_ENTRY, PolicyInput, PruneInput, kept_page, policy_task
from engines.spinach.tools import Tools
from engines.spinach.trajectory import ACTIONS, Step, Trajectory

if TYPE_CHECKING:
    from engines.sources import GraphSource

BUDGET = 15
TOTAL_BUDGET = 30
REPEAT_WINDOW = 4
#: The observation of a stop with no answer (``PolicyAction.no_answer``); the thought before it says why.
NO_ANSWER = "(stopped without an answer: the policy found nothing in this graph it can use for the question)"


@dataclass(frozen=True)
class AgentOptions:
    budget: int = BUDGET  # actions in the state after rollbacks
    total_budget: int = TOTAL_BUDGET  # actions in all
    rollback: bool = True  # loop detection and rollback on
    disabled: tuple[str, ...] = ()  # actions switched off (the ablation of §3.7)


class SpinachAgent:
    def __init__(self, endpoint: GraphSource, llm: LLM, options: AgentOptions | None = None) -> None:
        self.endpoint = endpoint
        self.llm = llm
        self.options = options or AgentOptions()
        self.tools = Tools(endpoint, disabled=self.options.disabled)
        self._graph: tuple[GraphInfo | None] | None = None  # (what the policy is told the graph is,), once known

    @property
    def graph(self) -> GraphInfo | None:
        """What the policy is told the graph is: None for Wikidata (SPINACH's own prompt), else
        :func:`~engines.spinach.graph.describe_graph` (a remote endpoint may be asked once)."""
        if self._graph is None:
            self._graph = (describe_graph(self.endpoint),)
        return self._graph[0]

    @staticmethod
    def _pruned(llm: LLM, question: str, page: str, graph: GraphInfo | None = None) -> str:
        """The page cut to the question; the whole page when the pruning call fails.  ``graph``: the graph when it is
        not Wikidata, which the pruning prompt then names instead of claiming Wikidata."""
        try:
            what = graph.what if graph is not None else None
            kept = llm.run(PRUNE_ENTRY, PruneInput(question, page, what))
            return kept_page(page, kept) or page
        except Cancelled:
            raise
        except EngineError:
            return page

    def run(self, question: str, *, emit: Emit = ignore, cancel: threading.Event | None = None) -> Trajectory:
        """Answer ``question``; the whole run as a :class:`Trajectory` (also sent in AgentFinished)."""
        question = " ".join((question or "").split())
        if not question:
            raise EngineError("Ask a question: it is empty.")
        opts = self.options
        llm = self.llm.bind(emit=emit, cancel=cancel)
        # SPINACH prunes every entity page to the question (a separate LLM call) before the policy sees it
        graph = self.graph
        prune = lambda page: self._pruned(llm, question, page, graph)  # noqa: E731
        policy = policy_task(graph)
        emit(AgentStarted(question, self.llm.backend.name, opts.budget, opts.total_budget))
        steps: list[Step] = []
        state: list[Step] = []
        results: dict[int, QueryResult] = {}
        rollbacks = 0
        finish, error = "", None
        meant: str | None = None  # the query the policy last named as its answer (a stop, standing or not)
        while True:
            if cancel is not None and cancel.is_set():
                finish = "cancelled"
                break
            if len(state) >= opts.budget or len(steps) >= opts.total_budget:
                finish = "budget"
                break
            try:
                action = llm.run(
                    policy, PolicyInput(question, tuple(s.as_policy_step() for s in state), rollbacks, graph)
                )
            except Cancelled:
                finish = "cancelled"
                break
            except EngineError as e:
                finish, error = "error", str(e)
                break
            index = len(steps) + 1
            name, arg = action.action_name.strip(), (action.action_argument or "").strip()
            declined = name == "stop" and action.no_answer
            if declined:  # the policy says the graph holds nothing it can use: no answer, and no retry
                step = Step(index, action.thought, name, arg, NO_ANSWER, in_state=len(state) + 1, total=index)
                steps.append(step)
                state.append(step)
                emit(StepTaken(step))
                finish, meant = "declined", None
                break
            if name == "stop":
                meant = self.answer_query(arg, state)
            reason = self._rollback_reason(name, arg, state) if opts.rollback else None
            if reason is not None:
                repeated = next((s.index for s in reversed(state) if (s.action, s.argument) == (name, arg)), None)
                note = (
                    f"(not run: the same action as step {repeated}; rolled back)"
                    if reason == "repeat"
                    else "(stop while the query it answers with returned no rows; rolled back)"
                )
                step = Step(
                    index,
                    action.thought,
                    name,
                    arg,
                    note,
                    in_state=len(state),
                    total=index,
                    rolled_back=True,
                    rollback_reason=reason,
                )
                steps.append(step)
                emit(StepTaken(step))
                rollbacks += 1
                emit(RolledBack(state[-1].index if state else 0, (index,), reason))
                continue
            if name not in ACTIONS:
                finish, error = "error", f"The policy chose an unknown action {name!r}."
                break
            try:
                outcome = self.tools.run(name, arg, prune=prune)
            except Cancelled:
                finish = "cancelled"
                break
            row_count = len(outcome.result) if outcome.result is not None else None
            step = Step(
                index,
                action.thought,
                name,
                arg,
                outcome.observation,
                outcome.feedback,
                row_count,
                in_state=len(state) + 1,
                total=index,
            )
            steps.append(step)
            state.append(step)
            if outcome.result is not None:
                results[index] = outcome.result
            emit(StepTaken(step))
            if name == "stop":
                finish = "stop"
                break
        final = None if finish == "declined" else self._final(state, results, meant, stopped=finish == "stop")
        trajectory = Trajectory(
            question,
            tuple(steps),
            final_sparql=final.query if final is not None else None,
            answer=final.bindings if final is not None else (),
            columns=final.columns if final is not None else (),
            finish=finish,
            policy=self.llm.backend.name,
            error=error,
            meta={
                "rollbacks": rollbacks,
                "budget": opts.budget,
                "total_budget": opts.total_budget,
                "rollback": opts.rollback,
            },
        )
        emit(AgentFinished(trajectory))
        return trajectory

    @staticmethod
    def answer_query(argument: str, state: Iterable[Step]) -> str | None:
        """The query a ``stop`` answers with: the one it names, else the last executed query in the state."""
        named = " ".join(argument.split())
        if named:
            return named
        last = next((s for s in reversed(list(state)) if s.action == "execute_sparql"), None)
        return " ".join(last.argument.split()) if last is not None else None

    @staticmethod
    def _answer_step(query: str | None, state: Iterable[Step]) -> Step | None:
        """The latest step in the state that executed ``query`` (compared with whitespace folded)."""
        if query is None:
            return None
        return next(
            (
                s
                for s in reversed(list(state))
                if s.action == "execute_sparql" and " ".join(s.argument.split()) == query
            ),
            None,
        )

    @classmethod
    def _rollback_reason(cls, name: str, arg: str, state: list[Step]) -> str | None:
        if any((s.action, s.argument) == (name, arg) for s in state[-REPEAT_WINDOW:]):
            return "repeat"
        if name == "stop":
            answer = cls._answer_step(cls.answer_query(arg, state), state)
            if answer is None or answer.feedback != "rows":
                return "premature stop"
        return None

    def _final(
        self, state: Iterable[Step], results: dict[int, QueryResult], meant: str | None, *, stopped: bool
    ) -> QueryResult | None:
        """The answer: the query the standing stop (or, after the budget, the last stop) named; with no stop
        at all, the last query in the state that returned rows.  SPINACH drops a final LIMIT 10."""
        state = list(state)
        if stopped or meant is not None:
            step = self._answer_step(meant, state)
            if step is None or step.feedback != "rows":
                return None
        else:
            step = next((s for s in reversed(state) if s.action == "execute_sparql" and s.feedback == "rows"), None)
            if step is None:
                return None
        result = results[step.index]
        text = step.argument.strip()
        if text.upper().endswith("LIMIT 10"):
            again = self.tools.execute_sparql(text[: -len("LIMIT 10")]).result
            if again is not None and again.has_rows:
                return again
        return result
