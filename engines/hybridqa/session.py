"""A HybridQA session: a world (generated or real tables), its sandbox, an LLM and the pipeline.

The hidden truth of a generated world is held apart, for the evaluators only (:meth:`HybridSession.grade`,
:func:`engines.hybridqa.evaluate.evaluate`): the world, the sandbox, the LLM and the pipeline an engine
is handed hold no path to it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engines.errors import ConfigurationError, EngineError
from engines.hybridqa.pipeline import HybridAnswer, HybridQA
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sql.sandbox import Limits, Sandbox
from worlds import hybridqa as W

if TYPE_CHECKING:
    from engines.hybridqa.scoring import Score

SIM_KNOWS_GENERATED_ONLY = (
    "The simulated LLM knows only the generated worlds: its parser's grammar and its reader's cues are those of "
    "the flag-bearer tables, so on real HybridQA tables it cannot answer. Real tables are for the claude backend "
    "(--backend claude with ANTHROPIC_API_KEY); loading and browsing them works offline."
)


class HybridDataError(EngineError, W.HybridDataError):
    """Real HybridQA data that cannot be loaded (the world's error, raised again as an engine error)."""


def real_tables_dir(settings: Settings) -> Path:
    """``hybridqa/`` of the ``data_dir`` setting; HybridDataError when there is none."""
    from worlds.data import FETCH_HINT, user_data_folder

    folder = settings.shared_data("hybridqa")
    if folder is None or not folder.is_dir():
        where = " or ".join(str(root / "hybridqa") for _, root in settings.data_roots())
        how = FETCH_HINT.format(user=user_data_folder())
        raise HybridDataError(f"No HybridQA data found: expected {where}. To get it: {how}.")
    return folder


@dataclass
class HybridSession:
    settings: Settings
    source: str  # "generated" | "real"
    world: W.HybridWorld  # the visible tables and questions (a GeneratedWorld for "generated"): no hidden truth
    sandbox: Sandbox
    llm: LLM
    pipeline: HybridQA
    # the hidden truth of a generated world, apart from it, for evaluators only; None for real tables
    truth: W.HiddenTruth | None = field(default=None, repr=False)

    def grade(self, question: W.HybridQuestion, answer: HybridAnswer) -> Score:
        """EM and F1 of ``answer`` against ``question``'s gold; with hidden truth (generated tables),
        the judgement and the error class too (engines.hybridqa.scoring.Score)."""
        from engines.hybridqa.scoring import score

        truth = self.truth.of(question.question_id) if self.truth is not None else None
        return score(answer, question.gold, truth, self.sandbox)

    @property
    def simulated_on_real(self) -> bool:
        return self.source == "real" and self.llm.backend.name == "sim"

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> HybridSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_hybridqa(
    settings: Settings,
    *,
    source: str = "generated",
    directory: Path | str | None = None,
    seed: int | None = None,
    n_tables: int | None = None,
    llm: LLM | None = None,
    clock: Callable[[], float] | None = None,
) -> HybridSession:
    """Load a HybridQA world into a sandbox and wire the pipeline.

    ``source="generated"`` builds the 50 flag-bearer tables (``seed``, ``n_tables``);
    ``source="real"`` loads the HybridQA tables of ``directory`` (default ``hybridqa/`` of the ``data_dir`` setting).
    ``llm`` overrides the one the settings choose (tests and ablations pass their own).
    """
    truth: W.HiddenTruth | None = None  # real tables have none
    world: W.HybridWorld
    if source == "generated":
        world, truth = W.build(seed if seed is not None else W.DEFAULT_SEED, n_tables or W.N_TABLES)
    elif source == "real":
        try:
            world = W.load_real(directory if directory is not None else real_tables_dir(settings))
        except HybridDataError:
            raise
        except W.HybridDataError as e:
            raise HybridDataError(str(e)) from e
    else:
        raise ConfigurationError(f"Unknown HybridQA source {source!r}: choose generated or real.")
    if llm is None:
        llm = llm_from_settings(settings, clock=clock or time.perf_counter)
    rows = max((len(t.rows) for t in world.tables), default=0)
    sandbox = Sandbox.create(
        world.load,
        row_cap=max(settings.row_cap, rows),
        timeout_s=settings.query_timeout_s,
        limits=Limits.from_settings(settings),
    )
    pipeline = HybridQA(sandbox, llm, pool=settings.effective_suql_pool)
    session = HybridSession(settings, source, world, sandbox, llm, pipeline, truth)
    if session.simulated_on_real:  # the engine refuses, not just the CLI and the tab
        pipeline.refusal = SIM_KNOWS_GENERATED_ONLY
    return session
