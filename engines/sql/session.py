"""Moved: the restaurant session composes the sql and suql packages, so it lives in :mod:`engines.compose`.

This module only re-exports it for the importers not yet updated (tui/restaurants.py, tests); the one
import-linter exception for it is named in pyproject.toml.  Import from ``engines.compose``.
"""

from engines.compose import RestaurantSession, open_restaurants

__all__ = ["RestaurantSession", "open_restaurants"]
