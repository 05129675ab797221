"""User settings: one validated model, overridable from the environment.

Every field can be set with an environment variable ``CS224V_<FIELD>`` (for
example ``CS224V_BACKEND=claude``).  The Anthropic key is read from
``ANTHROPIC_API_KEY`` as the SDK does.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_cache_dir
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

APP_NAME = "cs224v-tui"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CS224V_", extra="ignore", validate_default=True)

    backend: Literal["sim", "claude"] = "sim"
    # simulated LLM
    seed: int = 224
    sim_latency_s: float = Field(0.0, ge=0.0, le=10.0, description="simulated seconds per LLM call")
    sim_error_on_topic: float = Field(0.03, ge=0.0, le=1.0)
    sim_error_off_topic: float = Field(0.003, ge=0.0, le=1.0)
    # Claude
    # Two roles (issue 13): the planner (parser, agents, SPINACH's policy) and the per-row calls
    # (answer(), summary(), HybridQA's short answer), which are many and small.
    claude_model: str = Field("claude-sonnet-5-5", min_length=1, description="Claude model of the planner role (CS224V_CLAUDE_MODEL)")
    claude_row_model: str = Field("claude-haiku-4-5", min_length=1, description="Claude model of the per-row role (CS224V_CLAUDE_ROW_MODEL)")
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    claude_max_retries: int = Field(4, ge=0, le=10)
    claude_timeout_s: float = Field(60.0, gt=0)
    # the answer cache
    cache_dir: Path = Field(default_factory=lambda: Path(user_cache_dir(APP_NAME)))
    cache_enabled: bool = True
    # the SQL sandbox
    row_cap: int = Field(10_000, ge=1)
    query_timeout_s: float = Field(5.0, gt=0)
    duckdb_memory_limit: str = Field("1GB", description="DuckDB memory_limit for every query (e.g. 512MB, 2GB)")
    duckdb_threads: int = Field(2, ge=1, le=64, description="DuckDB worker threads")
    duckdb_temp_limit: str = Field("1GB", description="DuckDB max_temp_directory_size (spill to disk)")
    # SPARQL: the memory a query's worker process may use
    sparql_memory_limit_mb: int = Field(2048, ge=64, description="address-space cap of the SPARQL worker process")
    # SUQL: parallel answer() checks when calls take time (sim latency > 0, or claude)
    suql_pool: int = Field(4, ge=1, le=32)
    suql_cap: int = Field(20, ge=1, description="retrieval cap of execution mode F")
    suql_call_budget: int = Field(2000, ge=1, description="most LLM calls one SUQL query may make")
    suql_confirm_calls: int = Field(200, ge=0, description="with a paid backend, ask before a run expected to exceed this many calls (0: never ask)")
    # classify() method for enum values: exact | similarity | llm_all | retrieve_llm
    classify_method: Literal["exact", "similarity", "llm_all", "retrieve_llm"] = "llm_all"

    @property
    def effective_suql_pool(self) -> int:
        """``suql_pool`` when LLM calls take time (claude, or sim latency), else 1: with instant calls a
        pool gains nothing and only makes call counts depend on thread timing."""
        return self.suql_pool if self.backend == "claude" or self.sim_latency_s > 0 else 1

    @field_validator("anthropic_api_key", mode="before")
    @classmethod
    def _blank_is_none(cls, v: object) -> object:
        return None if v in ("", None) else v
