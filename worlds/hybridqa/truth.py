"""The hidden truth of the generated world (evaluators only): every correct answer in the forms a person accepts, the
passage columns each question needs, the query an expert would write, and whether the annotator's gold is wrong.
:func:`worlds.hybridqa.build` returns it apart from the visible world (:class:`Built`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from worlds.hybridqa.model import GeneratedWorld


@dataclass(frozen=True)
class CorrectAnswer:
    """One right answer and every form of it a person would accept (normalised by the judge)."""

    kind: str  # "date" | "place" | "games" | "person" | "event"
    forms: tuple[str, ...]


@dataclass(frozen=True)
class QuestionTruth:
    answers: tuple[CorrectAnswer, ...]  # every correct answer (several for some questions)
    columns: tuple[str, ...]  # the passage columns the question needs
    suql: str  # the query an expert would write
    gold_wrong: bool  # the annotator's gold is not a correct answer


@dataclass(frozen=True)
class HiddenTruth:
    questions: Mapping[str, QuestionTruth] = field(repr=False)

    def of(self, question_id: str) -> QuestionTruth:
        return self.questions[question_id]


class Built(NamedTuple):
    """What :func:`build` returns: the visible world and, apart from it, the hidden truth."""

    world: GeneratedWorld
    truth: HiddenTruth
