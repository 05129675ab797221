"""Errors that engines raise on purpose.  Each carries a message meant for a person."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error an engine raises deliberately; ``str(e)`` is shown as is."""


class Cancelled(EngineError):
    """The user cancelled the running operation."""

    def __init__(self, message: str = "Cancelled.") -> None:
        super().__init__(message)


class LLMError(EngineError):
    """An LLM backend failed: no key, the service refused, or the output was malformed."""


class ReplyError(LLMError):
    """One LLM call got no usable reply (malformed, empty, cut off, refused): that call fails, but
    the operation around it may go on (``LLM.answer`` makes it Unknown, so one SUQL row is lost)."""


class ConfigurationError(EngineError):
    """A setting is missing or invalid."""
