"""User settings: one validated model, overridable from the environment.

Every field can be set with an environment variable ``CS224V_<FIELD>`` (for
example ``CS224V_BACKEND=claude``).  The Anthropic key is read from
``ANTHROPIC_API_KEY`` as the SDK does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_cache_dir, user_data_dir
from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from worlds.data import default_data_dir

APP_NAME = "cs224v-tui"
OPENAI_DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama's


class ModelPrice(BaseModel):
    """List prices of one model, in US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0, description="a prompt-cache hit (default: the input price)")
    cache_write: float | None = Field(
        None, ge=0, description="a 5-minute prompt-cache write (default: the input price)"
    )


#: The date the default prices below were last checked.  They are estimates for the cost shown
#: after a run, not a bill: override them with CS224V_LLM_PRICES (JSON, merged over these) and say
#: when with CS224V_LLM_PRICES_AS_OF.
PRICES_AS_OF = "2026-12-01"
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    # Anthropic list prices, USD per million tokens (batch: half of these)
    "claude-sonnet-5-5": {"input": 2.00, "output": 10.00, "cache_read": 0.10, "cache_write": 2.50},
    "claude-haiku-4-5": {"input": 1.00, "output": 5.00, "cache_read": 0.10, "cache_write": 1.25},
}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CS224V_", extra="ignore", validate_default=True, populate_by_name=True
    )

    backend: Literal["sim", "claude", "openai"] = "sim"
    # simulated LLM
    seed: int = 224
    sim_latency_s: float = Field(0.0, ge=0.0, le=10.0, description="simulated seconds per LLM call")
    sim_error_on_topic: float = Field(0.03, ge=0.0, le=1.0)
    sim_error_off_topic: float = Field(0.003, ge=0.0, le=1.0)
    # Claude
    # Two roles (issue 13): the planner (parser, agents, SPINACH's policy) and the per-row calls
    # (answer(), summary(), HybridQA's short answer), which are many and small.
    claude_model: str = Field(
        "claude-sonnet-5-5", min_length=1, description="Claude model of the planner role (CS224V_CLAUDE_MODEL)"
    )
    claude_row_model: str = Field(
        "claude-haiku-4-5", min_length=1, description="Claude model of the per-row role (CS224V_CLAUDE_ROW_MODEL)"
    )
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    claude_max_retries: int = Field(4, ge=0, le=10)
    claude_timeout_s: float = Field(60.0, gt=0)
    # A local model through any OpenAI-compatible chat-completions server (Ollama, vLLM, llama.cpp's
    # server, LM Studio): engines/llm/openai_compat.py.  The default URL is Ollama's.
    openai_base_url: str = Field(
        OPENAI_DEFAULT_BASE_URL,
        min_length=1,
        description="base URL of the chat-completions server, up to /v1 (CS224V_OPENAI_BASE_URL)",
    )
    openai_model: str = Field("qwen2.5:7b", min_length=1, description="model of the planner role (CS224V_OPENAI_MODEL)")
    openai_row_model: str | None = Field(
        None, description="model of the per-row role (CS224V_OPENAI_ROW_MODEL; default: openai_model)"
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("CS224V_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    # json_schema: response_format with the reply's JSON schema (falls back to json_object, then to none,
    # when the server refuses it with a 400); json_object: JSON mode; none: the prompt alone asks for JSON
    openai_structured: Literal["json_schema", "json_object", "none"] = "json_schema"
    openai_timeout_s: float = Field(120.0, gt=0, description="seconds one request may take (a local model is slow)")
    openai_max_retries: int = Field(2, ge=0, le=10)
    openai_concurrency: int = Field(4, ge=1, le=64, description="requests in flight at once to the server")
    # Model replies (issue 25, engines/llm/bounded.py): every reply body of the claude and openai backends is
    # read through this cap (after decompression too) and never kept past it; the call then fails with an
    # error naming the backend and this setting, and is not retried.  The per-call deadline is the backend's
    # timeout (claude_timeout_s, openai_timeout_s): connect, send and every read of one attempt together.
    llm_reply_max_bytes: int = Field(
        4 * 1024 * 1024,
        ge=16 * 1024,
        le=1024 * 1024 * 1024,
        description="most bytes of one model reply body, and of one line of message-batch results "
        "(CS224V_LLM_REPLY_MAX_BYTES; default 4 MiB, 16 KiB to 1 GiB); past it the call fails, not retried",
    )
    # --batch (engines/llm/batch.py): Message Batches API polling
    batch_poll_s: float = Field(30.0, gt=0, le=3600, description="seconds between polls of a message batch")
    batch_rounds: int = Field(4, ge=1, le=20, description="most batch rounds of one --batch run")
    # LLM calls in flight at once: the per-row calls (answer(), summary(), short answers) that a run
    # makes concurrently; the Claude backend never has more requests in flight than this
    llm_concurrency: int = Field(4, ge=1, le=64, description="LLM requests in flight at once (CS224V_LLM_CONCURRENCY)")
    # the estimated cost of a run: prices per million tokens by model id (a dated id such as
    # claude-haiku-4-5-20251001 takes the price of its longest listed prefix); no price: cost unknown
    llm_prices: dict[str, ModelPrice] = Field(
        default_factory=lambda: {k: ModelPrice(**v) for k, v in DEFAULT_PRICES.items()},
        description="CS224V_LLM_PRICES: JSON {model: {input, output, cache_read, cache_write}}, merged over the defaults",
    )
    llm_prices_as_of: str = Field(
        PRICES_AS_OF, description="the date the prices were checked (CS224V_LLM_PRICES_AS_OF)"
    )
    # the answer cache
    cache_dir: Path = Field(default_factory=lambda: Path(user_cache_dir(APP_NAME)))
    cache_enabled: bool = True
    # the app's history of what was run, one JSON Lines file per tab (tui/history.py)
    history_dir: Path = Field(
        default_factory=lambda: Path(user_data_dir(APP_NAME, appauthor=False)) / "history",
        description="folder of the app's query and question history (CS224V_HISTORY_DIR)",
    )
    history_max_bytes: int = Field(
        8 * 1024 * 1024,
        ge=4096,
        description="most bytes of a tab's history file read (default 8 MiB; CS224V_HISTORY_MAX_BYTES): the store "
        "keeps its files under it, and a bigger file is set aside whole (<tab>.jsonl.bad) with its newest entries kept",
    )
    # the query editors (issue 28): a query file opened with Ctrl+O, the graph's label lookups as you type
    editor_max_file_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="most bytes of a query file an editor opens (default 1 MiB, at most 64 MiB; "
        "CS224V_EDITOR_MAX_FILE_BYTES): a bigger file is refused from its size, unread",
    )
    editor_lookup_timeout_s: float = Field(
        3.0,
        gt=0,
        le=30,
        description="seconds a label lookup of the SPARQL editor's completion may take (default 3, at most 30; "
        "CS224V_EDITOR_LOOKUP_TIMEOUT_S): its one query's time limit, on a remote endpoint the whole exchange",
    )
    # the shared data (HybridQA tables, the SPINACH dev set, the SUQL paper's queries): CS224V_DATA
    # (CS224V_SHARED_DATA, its older name, too) — then only there; by default each data set is looked for in
    # the user data folder (`cs224v-tui data fetch` fills it), then ../shared/data beside a source checkout
    data_dir: Path | None = Field(
        default_factory=default_data_dir,
        validation_alias=AliasChoices("CS224V_DATA", "CS224V_SHARED_DATA", "CS224V_DATA_DIR"),
        description="folder of the shared data (CS224V_DATA)",
    )
    data_url: str | None = Field(
        None, description="CS224V_DATA_URL: a mirror of the shared data folder that `data fetch` downloads from"
    )
    # `data fetch`: where the pinned upstream repositories are served, and the overall deadline of one file
    data_upstream_url: str = Field(
        "https://raw.githubusercontent.com",
        min_length=1,
        description="CS224V_DATA_UPSTREAM_URL: the server of the pinned upstream files `data fetch` downloads and "
        "builds from without a mirror, laid out as raw.githubusercontent.com (OWNER/REPO/COMMIT/PATH)",
    )
    data_fetch_deadline_s: float = Field(
        300.0,
        gt=0,
        description="CS224V_DATA_FETCH_DEADLINE_S: the most seconds one file's download may take in all (default "
        "300); past it the download stops with an error naming the URL, and the next fetch continues it",
    )
    # the SQL sandbox
    row_cap: int = Field(10_000, ge=1)
    query_timeout_s: float = Field(5.0, gt=0)
    duckdb_memory_limit: str = Field("1GB", description="DuckDB memory_limit for every query (e.g. 512MB, 2GB)")
    duckdb_threads: int = Field(2, ge=1, le=64, description="DuckDB worker threads")
    duckdb_temp_limit: str = Field("1GB", description="DuckDB max_temp_directory_size (spill to disk)")
    postgres_candidate_rows: int = Field(
        200_000,
        ge=1,
        description="most rows a SUQL query may load from one PostgreSQL table (CS224V_POSTGRES_CANDIDATE_ROWS)",
    )
    # loading your own table files (--db FILE|FOLDER|DuckDB file): bounds apart from the query row cap above
    load_timeout_s: float = Field(
        120.0,
        gt=0,
        description="seconds opening --db files may take in all (loading, then describing); past it the loader "
        "process is stopped and the error names the file (CS224V_LOAD_TIMEOUT_S, default 120)",
    )
    load_max_rows: int = Field(
        10_000_000,
        ge=1,
        description="most rows the files of one --db source may hold together; one more and loading stops with an "
        "error naming the file (CS224V_LOAD_MAX_ROWS, default 10,000,000)",
    )
    load_max_bytes: int = Field(
        2 * 1024**3,
        ge=1,
        description="most bytes the files of one --db source may hold together once decompressed (.gz and .zst "
        "counted as they expand, Parquet by its pages' uncompressed size); one more and loading stops with an "
        "error naming the file (CS224V_LOAD_MAX_BYTES, default 2 GiB)",
    )
    # how --db CSV and TSV files are read (issue 26): which fields are NULL, and types given to columns
    db_nulls: tuple[str, ...] | None = Field(
        None,
        description="the fields of a --db CSV or TSV file read as NULL besides empty ones (--null TOKEN, repeatable; "
        'CS224V_DB_NULLS, a JSON list: ["NA", "-"]); given, it replaces the default NA, N/A, NaN, null, NULL; at '
        "most 100 tokens of at most 100 characters, else opening the file is refused with a message",
    )
    db_types: tuple[str, ...] = Field(
        (),
        description="types given to columns of --db CSV and TSV files, COLUMN=TYPE or TABLE.COLUMN=TYPE with a DuckDB "
        'type (--type, repeatable; CS224V_DB_TYPES, a JSON list: ["zip=VARCHAR"]); at most 500 of at most 1,000 '
        "characters; a value the type cannot hold stops loading with a message naming the column, value and line",
    )
    # SPARQL: the memory a query's worker process may use
    sparql_memory_limit_mb: int = Field(2048, ge=64, description="address-space cap of the SPARQL worker process")
    # the graph the Knowledge-graph tab opens instead of the built-in world: an endpoint URL or RDF files
    kg_endpoint: str | None = Field(None, description="a SPARQL 1.1 endpoint URL for the KG tab (CS224V_KG_ENDPOINT)")
    kg_rdf: tuple[Path, ...] = Field(
        (), description='RDF files for the KG tab (CS224V_KG_RDF, a JSON list: ["my.ttl"])'
    )
    # a user's RDF files (--rdf, kg_rdf): the bounds of reading, checking and loading them (engines/kg/rdf_files.py)
    rdf_max_mb: int = Field(
        2048,
        ge=1,
        description="most MB of RDF files read for one graph, all files together (default 2048); a larger file is "
        "refused from its size before it is read (CS224V_RDF_MAX_MB)",
    )
    rdf_max_statements: int = Field(
        10_000_000,
        ge=1,
        description="most statements (triples) in the RDF files together (default 10,000,000); one more and the "
        "file is refused (CS224V_RDF_MAX_STATEMENTS)",
    )
    rdf_max_literal_bytes: int = Field(
        10 << 20,
        ge=256,
        le=16 << 20,
        description="longest literal in an RDF file, in bytes of UTF-8 (default 10 MB, at most 16 MB: pyoxigraph's "
        "own limit); a longer one is refused, naming the file and line (CS224V_RDF_MAX_LITERAL_BYTES)",
    )
    rdf_load_timeout_s: float = Field(
        300.0,
        gt=0,
        description="seconds checking the RDF files may take, and again loading them into the SPARQL worker "
        "(default 300); the worker is killed at the deadline and the files refused (CS224V_RDF_LOAD_TIMEOUT_S)",
    )
    # the tables the Restaurants (agent) and SUQL tabs open instead of the built-in worlds
    db: str | None = Field(
        None, description="your own data for the agent and SUQL tabs: a file, folder, DuckDB file or URL (CS224V_DB)"
    )
    # SUQL: parallel answer() checks when calls take time (sim latency > 0, or claude)
    suql_pool: int = Field(4, ge=1, le=32)
    suql_cap: int = Field(20, ge=1, description="retrieval cap of execution mode F")
    suql_call_budget: int = Field(2000, ge=1, description="most LLM calls one SUQL query may make")
    suql_confirm_calls: int = Field(
        200, ge=0, description="with a paid backend, ask before a run expected to exceed this many calls (0: never ask)"
    )
    # the adaptive ranker's sense of a question (modes E, F): WordLlama's static vectors, or the sentence model
    # all-MiniLM-L6-v2 (the optional extra: pip install 'cs224v-tui[sentence]'; an error naming it when missing)
    suql_ranker: Literal["static", "sentence"] = "static"
    # issue 29.0: how SUQL verifies rows whose WHERE is Unknown (every mode; A and B decide each row in full anyway)
    suql_verify: Literal["lazy", "eager"] = Field(
        "lazy",
        description="lazy (default): a row that can no longer match stops at its first Unknown condition and is "
        "listed to verify unsettled, its other conditions asked only when settled (a key in the SUQL tab, "
        "suql --verify); eager: every condition of such a row is asked at once (the exact rows to verify) "
        "(CS224V_SUQL_VERIFY)",
    )
    # SUQL mode G (issue 29): the cascade's targets against the LLM's own answers, its confidence and its sample
    suql_cascade_precision: float = Field(
        0.9, gt=0.0, le=1.0, description="mode G: precision target of the rows returned, in (0, 1] (default 0.9)"
    )
    suql_cascade_recall: float = Field(
        0.9, gt=0.0, le=1.0, description="mode G: recall target of the LLM's 'Yes' rows, in (0, 1] (default 0.9)"
    )
    suql_cascade_delta: float = Field(
        0.05, gt=0.0, lt=1.0, description="mode G: targets hold with probability 1 - delta, in (0, 1) (default 0.05)"
    )
    suql_cascade_sample: int = Field(
        400, ge=30, le=5000, description="mode G: rows drawn for the LLM to label, 30 to 5000 (default 400)"
    )
    # classify() method for enum values: exact | similarity | llm_all | retrieve_llm
    classify_method: Literal["exact", "similarity", "llm_all", "retrieve_llm"] = "llm_all"
    # files read whole (issue 25): trajectory files and SPINACH run logs (spinach --replay, the stepper's load
    # box), score's PRED/GOLD, sparql --check-dialect and suql --file
    input_file_max_mb: int = Field(
        64,
        ge=1,
        le=4096,
        description="largest file read whole, in MiB (default 64; SPINACH's own run logs are far smaller): a "
        "larger file, or a pipe or device that gives more (/dev/zero), is refused at the cap with a message naming "
        "it and CS224V_INPUT_FILE_MAX_MB; nothing past the cap is read",
    )

    def data_roots(self) -> list[tuple[str, Path]]:
        """The folders a data set is looked for in, in order (worlds.data.search_roots): ``data_dir`` alone
        when it was set, else the user data folder and then the checkout's ../shared/data."""
        from worlds.data import search_roots

        return search_roots(self.data_dir if "data_dir" in self.model_fields_set else None)

    def shared_data(self, *parts: str) -> Path | None:
        """The first data folder's ``parts`` that exists (see :meth:`data_roots`), else None."""
        from worlds.data import locate

        return locate(self.data_roots(), *parts)

    @property
    def effective_suql_pool(self) -> int:
        """``suql_pool`` when LLM calls take time (claude, or sim latency), else 1: with instant calls a
        pool gains nothing and only makes call counts depend on thread timing."""
        return self.suql_pool if self.backend != "sim" or self.sim_latency_s > 0 else 1

    @field_validator("openai_base_url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if v == OPENAI_DEFAULT_BASE_URL:  # valid and normalised as it is: no need to import httpx to parse it
            return v
        import httpx

        try:
            url = httpx.URL(v.strip())
        except (httpx.InvalidURL, TypeError) as e:
            raise ValueError(f"not a URL: {e}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError("expected an http:// or https:// URL with a host, such as http://localhost:11434/v1")
        return str(url).rstrip("/")

    @field_validator("llm_prices", mode="after")
    @classmethod
    def _over_the_defaults(cls, v: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        return {**{k: ModelPrice(**p) for k, p in DEFAULT_PRICES.items()}, **v}

    @field_validator("anthropic_api_key", "openai_api_key", mode="before")
    @classmethod
    def _blank_is_none(cls, v: object) -> object:
        return None if v in ("", None) else v
