"""Lecture 7 §3.7: a function-calling agent with two tools, against SUQL's compiler.

The agent answers a SUQL workload query the way a tool-using LLM would, one tool at a time:

1. ``search_reviews(question, k)`` — BM25 over every restaurant's reviews (max over sentences, summed
   over the query's answer() questions), the top k restaurant ids;
2. ``run_sql(conditions, ids)`` — the query's structured conditions, on those ids only;
3. confirm each remaining restaurant, in retrieval order, with ``answer()`` — stopping once LIMIT
   restaurants are confirmed.

The retrieval runs over the whole database: the tools cannot know that only one location matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from engines.retrieval.bm25 import ChunkIndex, aggregate, as_text
from engines.suql.language import as_call, calls_in, parse
from engines.suql.plan import to_dnf
from engines.suql.tasks import ANSWER, AnswerInput

if TYPE_CHECKING:
    from engines.llm.client import LLM
    from engines.sql.sandbox import Sandbox
    from worlds.restaurants import RestaurantWorld


@dataclass(frozen=True)
class AgentRun:
    ids: tuple[int, ...]
    retrieved: int
    after_sql: int
    answer_calls: int


class ToolAgent:
    def __init__(self, world: RestaurantWorld, sandbox: Sandbox, llm: LLM) -> None:
        self.sandbox = sandbox
        self.llm = llm
        self.by_id = {r._id: r for r in world.rows}
        self.index = ChunkIndex.build((r._id, r.reviews) for r in world.rows)

    def search_reviews(self, questions: list[str], k: int) -> list[int]:
        scores = aggregate([self.index.scores(q) for q in questions])
        ranked = sorted((rid for rid, s in scores.items() if s > 0), key=lambda rid: (-scores[rid], rid))
        return ranked[:k]

    def run_sql(self, structured: exp.Expr, ids: list[int]) -> list[int]:
        if not ids:
            return []
        q = (
            exp.select("_id")
            .from_("restaurants")
            .where(
                exp.and_(
                    exp.In(this=exp.column("_id"), expressions=[exp.Literal.number(i) for i in ids]),
                    exp.paren(structured.copy()),
                )
            )
        )
        kept = {r[0] for r in self.sandbox.run_tree(q).rows}
        return [i for i in ids if i in kept]  # keep the retrieval order

    def run(self, suql: str, k: int) -> AgentRun:
        tree = parse(suql)
        conjuncts, _ = to_dnf(tree.args["where"].this)
        if len(conjuncts) != 1:
            raise ValueError("the tool agent handles one conjunction of conditions")
        conj = conjuncts[0]
        questions = [as_call(n).question for lit in conj.text for n in calls_in(lit)]
        limit_node = tree.args.get("limit")
        limit = int(limit_node.expression.name) if limit_node is not None else None
        before = self.llm.counter.counts.get("answer", 0)
        retrieved = self.search_reviews(questions, k)
        candidates = self.run_sql(conj.structured_sql(), retrieved)
        confirmed: list[int] = []
        for rid in candidates:
            text = as_text(self.by_id[rid].reviews)
            if all(self.llm.run(ANSWER, AnswerInput(text, q)).value == "Yes" for q in questions):
                confirmed.append(rid)
                if limit is not None and len(confirmed) >= limit:
                    break
        return AgentRun(
            tuple(confirmed), len(retrieved), len(candidates), self.llm.counter.counts.get("answer", 0) - before
        )
