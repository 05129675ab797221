"""Hermetic tests: no API key, no user cache, no settings from the developer's environment."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in list(os.environ):
        if name.startswith("CS224V_") or name == "ANTHROPIC_API_KEY":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("CS224V_HISTORY_DIR", str(tmp_path_factory.mktemp("history")))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
