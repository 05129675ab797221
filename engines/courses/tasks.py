"""The course assistant's LLM tasks: the Text-to-SQL agent's route, parse and respond (the same names, prompts in
engines/sql/prompts and readers of a real model's reply), simulated by the course world's reader
(:mod:`engines.courses.sim_courses`) instead of the restaurant parser.  The course assistant's agent runs them
(``TextToSQLAgent.tasks``), so the simulated backend answers it through the task it is handed, never by guessing
the world from the schema's text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engines.courses import sim_courses
from engines.llm.protocol import Routed
from engines.sql import sim, sim_parser
from engines.sql.tasks import SQL_TASKS, Dialogue, DialogueTasks, RespondInput

if TYPE_CHECKING:
    from engines.llm.sim import SimBackend


def _sim_route(b: SimBackend, i: Dialogue) -> Routed:
    return Routed(*sim_courses.route(i.utterance, i.history, i.schema))


def _sim_parse(b: SimBackend, i: Dialogue) -> str:
    return sim_courses.parse(i.utterance, i.history, i.schema)


def _sim_respond(b: SimBackend, i: RespondInput) -> str:
    if i.results is None:
        return sim_courses.direct(i.utterance)
    if sim_courses.is_course_result(i.results):
        return sim_courses.reply(i.utterance, i.results)
    return sim.results_reply(i.utterance, i.results, suql=sim_parser.suql_schema(i.schema))  # rows of no course


COURSE_TASKS: DialogueTasks = SQL_TASKS.simulated_by(_sim_route, _sim_parse, _sim_respond)
