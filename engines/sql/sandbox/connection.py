"""DuckDB connections for the gate: external access off, limits on memory, threads and spill space.

:func:`connect` opens a hardened in-memory connection; :func:`lock` freezes its configuration once the
world's data is loaded, so even SQL that slipped past the gate can neither reach the file system nor
turn access back on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import duckdb

from engines.errors import ConfigurationError
from engines.sql.sandbox.errors import _strip_ansi

if TYPE_CHECKING:
    from engines.settings import Settings

_HARDENED_CONFIG: dict[str, Any] = {
    "enable_external_access": False,  # no files, no network, no ATTACH, no extensions
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,  # FROM <python variable> must not see the caller's frame
}

DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_THREADS = 2
DEFAULT_TEMP_LIMIT = "1GB"


@dataclass(frozen=True)
class Limits:
    """What a DuckDB connection may use: ``memory_limit`` and ``temp_limit`` are DuckDB sizes
    (``512MB``, ``2GB``), ``threads`` its worker threads.  The defaults are the settings' defaults."""

    memory_limit: str = DEFAULT_MEMORY_LIMIT
    threads: int = DEFAULT_THREADS
    temp_limit: str = DEFAULT_TEMP_LIMIT

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The limits an ``engines.settings.Settings`` asks for."""
        return cls(settings.duckdb_memory_limit, settings.duckdb_threads, settings.duckdb_temp_limit)

    def config(self, temp_directory: str | None = None) -> dict[str, Any]:
        config: dict[str, Any] = {
            "memory_limit": self.memory_limit,
            "threads": self.threads,
            "max_temp_directory_size": self.temp_limit,
        }
        if temp_directory is not None:
            config["temp_directory"] = temp_directory
        return config


def duckdb_limits(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for :meth:`Sandbox.create` from the settings: ``Sandbox.create(loader,
    row_cap=..., timeout_s=..., **duckdb_limits(settings))``."""
    return {"limits": Limits.from_settings(settings)}


def _open(database: str, config: Mapping[str, Any]) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(database, config=dict(config))
    except (duckdb.InvalidInputException, duckdb.ParserException, duckdb.NotImplementedException) as e:
        # a limit DuckDB cannot read ("lots", "-1GB")
        raise ConfigurationError(f"DuckDB refused a setting: {_strip_ansi(str(e))}") from e


def connect(
    *, memory_limit: str | None = None, limits: Limits | None = None, temp_directory: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with external access disabled.

    Load the world's tables through it, then call :func:`lock`.  ``limits`` caps memory,
    threads and spill space (the defaults of :class:`Limits` when not given); ``memory_limit``
    overrides its memory limit.  Loaders cannot read files through this connection: they insert
    from Python.  :meth:`Sandbox.create` is the stronger path: there the world is read-only.
    """
    limits = limits or Limits()
    if memory_limit is not None:
        limits = replace(limits, memory_limit=memory_limit)
    return _open(":memory:", {**_HARDENED_CONFIG, **limits.config(temp_directory)})


def lock(con: duckdb.DuckDBPyConnection) -> None:
    """Freeze the configuration: no ``SET`` can change a setting afterwards."""
    con.execute("SET lock_configuration = true").fetchall()  # no pending result left on the connection
