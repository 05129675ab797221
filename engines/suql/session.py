"""Moved: the SUQL session and its worlds compose several packages (suql, hybridqa's examples, the worlds),
so they live in :mod:`engines.compose`.

This module only re-exports them for the importers not yet updated (tui/suql.py, tests); the one
import-linter exception for it is named in pyproject.toml.  Import from ``engines.compose``.
"""

from engines.compose import COURSE_EXAMPLES, WORLDS, SuqlSession, SuqlWorld, open_suql

__all__ = ["COURSE_EXAMPLES", "WORLDS", "SuqlSession", "SuqlWorld", "open_suql"]
