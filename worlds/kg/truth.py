"""The hidden truth: the complete facts before the quirks removed or moved some of them.  Evaluators only.

:func:`worlds.kg.build` returns it apart from the visible world (:class:`Built`): engines and the simulated policy
are handed the world alone, which holds no reference to the truth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from worlds.kg.model import KGWorld


@dataclass(frozen=True)
class HiddenTruth:
    """The complete facts, before the quirks removed or moved some of them.  Evaluators only."""

    city_country: Mapping[str, str]  # every city's country, including those without P17
    place_country: Mapping[str, str]  # every place (city, province, mountain, university) -> country
    birth_country: Mapping[str, str]  # person -> country of their place of birth
    advisor_pairs: frozenset[tuple[str, str]]  # (student, advisor)
    instrument_class: Mapping[str, str]  # instrument -> top class (string / wind / percussion / keyboard)
    mountain_province: Mapping[str, str]
    awards: Mapping[str, tuple[tuple[str, int], ...]]  # award -> ((person, year), ...)
    affiliation_university: Mapping[str, str]  # musician -> the university they are affiliated with (school or not)


class Built(NamedTuple):
    """What :func:`build` returns: the visible world and, apart from it, the hidden truth."""

    world: KGWorld
    truth: HiddenTruth
