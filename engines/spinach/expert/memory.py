"""What the simulated model knows by heart, and the dials of its behaviour (the seed's ``P_MEMORY``, exercises
2-3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

P_MEMORY: Mapping[str, float] = {
    "P31": 0.95,
    "P279": 0.9,
    "P17": 0.85,
    "P106": 0.85,
    "P19": 0.85,
    "P27": 0.8,
    "P57": 0.8,
    "P569": 0.8,
    "P577": 0.75,
    "P161": 0.75,
    "P166": 0.75,
    "P131": 0.7,
    "P69": 0.7,
    "P112": 0.7,
    "P159": 0.7,
    "P361": 0.7,
    "P585": 0.6,
    "P184": 0.6,
    "P185": 0.6,
    "P2048": 0.6,
    "P1303": 0.5,
    "P840": 0.5,
    "P915": 0.5,
    "P2044": 0.5,
    "P1416": 0.4,
}


@dataclass(frozen=True)
class PolicyParams:
    p_verify: float = 0.6
    p_repeat: float = 0.12
    p_stop_early: float = 0.1
    p_typo: float = 0.08
    p_format: float = 0.06
    p_extra: float = 0.05
    p_clause_slip: float = (
        0.06  # a complex clause written wrong: ORDER turned round, LIMIT left out, a path's * or + dropped
    )
    p_confuse: float = 0.25
    p_notice: float = 0.85
    p_notice_other: float = 0.45
    p_disambiguate: float = 0.8
    p_incremental: float = 0.8  # builds the query a clause at a time, running each fragment (else writes it whole)
    p_guess: float = 0.25  # with the failed clause's probes used up and nothing learnt, guess its next variant
    memory: Mapping[str, float] = field(default_factory=lambda: dict(P_MEMORY))
    verify_below: float = 0.8  # properties remembered at least this well are never checked
    prune_share: float = 0.25  # prune_entry keeps about this share of a page's claims (expert.prune; 1 = whole)

    def with_memory(self, **pids: float) -> PolicyParams:
        return replace(self, memory={**self.memory, **pids})


DEFAULT = PolicyParams()

# relation -> (the PID it really is, the words an expert searches for it)
RELATIONS: Mapping[str, tuple[str, str]] = {
    "instance": ("P31", "instance of"),
    "occupation": ("P106", "occupation"),
    "birthplace": ("P19", "place of birth"),
    "instrument": ("P1303", "instrument"),
    "director": ("P57", "director"),
    "founder": ("P112", "founded by"),
    "headquarters": ("P159", "headquarters"),
    "elevation": ("P2044", "elevation"),
    "height": ("P2048", "height"),
    "released": ("P577", "publication date"),
    "educated": ("P69", "educated at"),
    "cast": ("P161", "cast member"),
    "country": ("P17", "country"),
    "located": ("P131", "located in"),
    "subclass": ("P279", "subclass of"),
    "student": ("P185", "doctoral student"),
    "advisor": ("P184", "doctoral advisor"),
    "award": ("P166", "award received"),
    "time": ("P585", "point in time"),
    "set_in": ("P840", "set in"),
    "filmed_in": ("P915", "filmed in"),
    "affiliation": ("P1416", "affiliation"),
    "part_of": ("P361", "part of"),
}
# what a model misremembers a PID as
CONFUSED_WITH: Mapping[str, str] = {
    "P840": "P915",
    "P915": "P840",
    "P2044": "P2048",
    "P184": "P185",
    "P185": "P184",
    "P1303": "P1416",
    "P1416": "P69",
    "P19": "P20",
    "P159": "P131",
    "P112": "P170",
    "P577": "P571",
    "P69": "P108",
    "P57": "P58",
    "P161": "P175",
    "P166": "P1411",
}
