"""The engines' one public surface for the app (``tui``) and the command line (``tui.cli``, ``tui.commands``).

The app and the CLI import nothing else of the engines (an import-linter contract in pyproject.toml says so); what
they need is re-exported here: the sessions and the sources they read (:mod:`engines.compose`,
:mod:`engines.sources`), the settings, errors and events, and the helpers of each area.  A name two modules both
define gets its area's prefix or suffix here (``SqlQueryResult`` and ``SparqlQueryResult``, ``evaluate_hybridqa``,
``evaluate_spinach``, ``evaluate_workload``, ...).

Nothing is imported until a name is asked for (``from engines.api import open_suql`` imports
:mod:`engines.compose` then, not before): the app draws its first frame before any engine loads, and ``--help``
loads none.  The type checker reads the same names from the imports under ``TYPE_CHECKING`` below;
``tests/engines/test_api.py`` checks that the two lists agree and that every name resolves.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines import events, lab
    from engines.completion import Suggestion
    from engines.compose import (
        COURSE_EXAMPLES,
        OWN_DATA_SIM,
        WORLDS,
        CourseSession,
        HybridSession,
        RestaurantSession,
        SpinachSession,
        SuqlSession,
        SuqlWorld,
        arguments_graph,
        open_courses_agent,
        open_graph,
        open_hybridqa,
        open_restaurants,
        open_source_agent,
        open_spinach,
        open_suql,
        open_tables,
        sparql_once,
        table_agent,
    )
    from engines.courses import plan as course_plan
    from engines.courses import top_k_trap
    from engines.data.describe import SchemaDescription, describe_world, outline
    from engines.data.source import DataSource, DataSourceError, open_source
    from engines.data.world_source import WorldSource
    from engines.datasets import Progress
    from engines.datasets import entry as dataset_entry
    from engines.datasets import fetch as fetch_datasets
    from engines.datasets import where as datasets_where
    from engines.errors import Cancelled, ConfigurationError, EngineError, LLMError
    from engines.eval.metrics import TooManyRows, check_size, em_of, row_f1, set_f1
    from engines.events import (
        CallFailed,
        CallFinished,
        CallStarted,
        Emit,
        Event,
        InputClassified,
        QueryExecuted,
        QueryFailed,
        QueryParsed,
        QueryRewritten,
        ReadBackWritten,
        TurnStarted,
        ValuesClassified,
        ignore,
    )
    from engines.export import Exported, ExportError, ExportExists, export_rows, format_for
    from engines.hybridqa import events as hybridqa_events
    from engines.hybridqa.cells import base_column, is_info, linked_column
    from engines.hybridqa.evaluate import ablation
    from engines.hybridqa.evaluate import evaluate as evaluate_hybridqa
    from engines.hybridqa.pipeline import HybridAnswer, Improvements
    from engines.hybridqa.scoring import EVALUATION_CLASSES, Score
    from engines.hybridqa.session import SIM_KNOWS_GENERATED_ONLY, real_tables_dir
    from engines.hybridqa.sim_hybrid import DEFAULT_RATES as HYBRID_SIM_RATES
    from engines.jsonable import JsonShape, fields_json
    from engines.kg import Endpoint, open_kg
    from engines.kg.check import CheckUnavailable, DialectReport, check_dialect
    from engines.kg.complete import LabelLookup
    from engines.kg.complete import id_at as sparql_id_at
    from engines.kg.complete import label_of as sparql_label_of
    from engines.kg.complete import lookup_labels as sparql_lookup_labels
    from engines.kg.complete import prefix_suggestions as sparql_prefix_suggestions
    from engines.kg.examples import SparqlExample
    from engines.kg.examples import examples_for as sparql_examples_for
    from engines.kg.pages import EntityPage, PropertyExample, SearchHit, UnknownEntity
    from engines.kg.prefixes import compact
    from engines.kg.rdf_files import RdfFileError, media_type
    from engines.kg.remote import RemoteEndpoint, RemoteError
    from engines.kg.results import Feedback, results_from_json
    from engines.kg.results import QueryResult as SparqlQueryResult
    from engines.kg.sources import read_files as read_rdf_files
    from engines.kg.sparql import WIKIDATA as WIKIDATA_DIALECT
    from engines.kg.sparql import Dialect, SparqlRefused, SparqlSyntaxError
    from engines.lab import Chart, Experiment, Table
    from engines.lab.core import Size as LabSize
    from engines.lab.resources import clear_memo
    from engines.llm.batch import BatchRun
    from engines.llm.client import LLM, backend_from_settings, llm_from_settings
    from engines.llm.usage import take_run_usage
    from engines.query_files import QUERY_SUFFIXES, QueryFileError, QueryFileExists, read_query, save_query
    from engines.reading import MAX_JSON_DEPTH, TooLarge, read_capped, too_deep
    from engines.settings import Settings
    from engines.sources import GraphSource, SqlGate, SuqlRunner, TableKind, TableSource
    from engines.spinach.agent import BUDGET, TOTAL_BUDGET, AgentOptions, SpinachAgent
    from engines.spinach.evaluate import evaluate as evaluate_spinach
    from engines.spinach.events import AgentStarted, RolledBack, StepTaken
    from engines.spinach.replay import matching, pick, replay_json, replay_lines, rows_lines, summary
    from engines.spinach.scoring import Scored, answer_step, answered_by, budgets, score_loaded, score_run
    from engines.spinach.session import graph_name
    from engines.spinach.trajectory import (
        Step,
        Trajectory,
        TrajectoryError,
        result_bindings,
    )
    from engines.spinach.trajectory import (
        load as load_trajectories,
    )
    from engines.spinach.trajectory import (
        save as save_trajectory,
    )
    from engines.sql.agent import TextToSQLAgent, TurnResult, run_sql
    from engines.sql.complete import sql_suggestions
    from engines.sql.dialogue import COURSE_DIALOGUE, SAMPLE_DIALOGUE
    from engines.sql.readback import unknown_phrase
    from engines.sql.sandbox import Limits, Sandbox, SqlError, SqlRefused, to_jsonable
    from engines.sql.sandbox import QueryResult as SqlQueryResult
    from engines.suql.agent import SuqlAgent
    from engines.suql.compare import (
        Comparison,
        ModeCompared,
        ModeOutcome,
        ModeProgress,
        ModeProgressed,
        ModeStarted,
        compare_modes,
    )
    from engines.suql.examples import LECTURE, Example, paper_queries, read_query_file
    from engines.suql.execute import PlanBuilt, QueryFinished, RowDecided, SuqlResult
    from engines.suql.plan import MODES, Plan
    from engines.suql.unknowns import unknown_question
    from engines.suql.workload import evaluate as evaluate_workload
    from engines.suql.workload import generate as generate_workload

_EXPORTS: dict[str, tuple[str, str]] = {
    "COURSE_EXAMPLES": ("engines.compose", "COURSE_EXAMPLES"),
    "OWN_DATA_SIM": ("engines.compose", "OWN_DATA_SIM"),
    "WORLDS": ("engines.compose", "WORLDS"),
    "CourseSession": ("engines.compose", "CourseSession"),
    "HybridSession": ("engines.compose", "HybridSession"),
    "RestaurantSession": ("engines.compose", "RestaurantSession"),
    "SpinachSession": ("engines.compose", "SpinachSession"),
    "SuqlSession": ("engines.compose", "SuqlSession"),
    "SuqlWorld": ("engines.compose", "SuqlWorld"),
    "arguments_graph": ("engines.compose", "arguments_graph"),
    "open_courses_agent": ("engines.compose", "open_courses_agent"),
    "open_graph": ("engines.compose", "open_graph"),
    "open_hybridqa": ("engines.compose", "open_hybridqa"),
    "open_restaurants": ("engines.compose", "open_restaurants"),
    "open_source_agent": ("engines.compose", "open_source_agent"),
    "open_spinach": ("engines.compose", "open_spinach"),
    "open_suql": ("engines.compose", "open_suql"),
    "open_tables": ("engines.compose", "open_tables"),
    "sparql_once": ("engines.compose", "sparql_once"),
    "table_agent": ("engines.compose", "table_agent"),
    "GraphSource": ("engines.sources", "GraphSource"),
    "SqlGate": ("engines.sources", "SqlGate"),
    "SuqlRunner": ("engines.sources", "SuqlRunner"),
    "TableKind": ("engines.sources", "TableKind"),
    "TableSource": ("engines.sources", "TableSource"),
    "DataSource": ("engines.data.source", "DataSource"),
    "DataSourceError": ("engines.data.source", "DataSourceError"),
    "open_source": ("engines.data.source", "open_source"),
    "WorldSource": ("engines.data.world_source", "WorldSource"),
    "SchemaDescription": ("engines.data.describe", "SchemaDescription"),
    "describe_world": ("engines.data.describe", "describe_world"),
    "outline": ("engines.data.describe", "outline"),
    "Settings": ("engines.settings", "Settings"),
    "Cancelled": ("engines.errors", "Cancelled"),
    "ConfigurationError": ("engines.errors", "ConfigurationError"),
    "EngineError": ("engines.errors", "EngineError"),
    "LLMError": ("engines.errors", "LLMError"),
    "events": ("engines.events", ""),
    "CallFailed": ("engines.events", "CallFailed"),
    "CallFinished": ("engines.events", "CallFinished"),
    "CallStarted": ("engines.events", "CallStarted"),
    "Emit": ("engines.events", "Emit"),
    "Event": ("engines.events", "Event"),
    "InputClassified": ("engines.events", "InputClassified"),
    "QueryExecuted": ("engines.events", "QueryExecuted"),
    "QueryFailed": ("engines.events", "QueryFailed"),
    "QueryParsed": ("engines.events", "QueryParsed"),
    "QueryRewritten": ("engines.events", "QueryRewritten"),
    "ReadBackWritten": ("engines.events", "ReadBackWritten"),
    "TurnStarted": ("engines.events", "TurnStarted"),
    "ValuesClassified": ("engines.events", "ValuesClassified"),
    "ignore": ("engines.events", "ignore"),
    "LLM": ("engines.llm.client", "LLM"),
    "backend_from_settings": ("engines.llm.client", "backend_from_settings"),
    "llm_from_settings": ("engines.llm.client", "llm_from_settings"),
    "BatchRun": ("engines.llm.batch", "BatchRun"),
    "take_run_usage": ("engines.llm.usage", "take_run_usage"),
    "HYBRID_SIM_RATES": ("engines.hybridqa.sim_hybrid", "DEFAULT_RATES"),
    "Limits": ("engines.sql.sandbox", "Limits"),
    "SqlQueryResult": ("engines.sql.sandbox", "QueryResult"),
    "Sandbox": ("engines.sql.sandbox", "Sandbox"),
    "SqlError": ("engines.sql.sandbox", "SqlError"),
    "SqlRefused": ("engines.sql.sandbox", "SqlRefused"),
    "to_jsonable": ("engines.sql.sandbox", "to_jsonable"),
    "TextToSQLAgent": ("engines.sql.agent", "TextToSQLAgent"),
    "TurnResult": ("engines.sql.agent", "TurnResult"),
    "run_sql": ("engines.sql.agent", "run_sql"),
    "COURSE_DIALOGUE": ("engines.sql.dialogue", "COURSE_DIALOGUE"),
    "SAMPLE_DIALOGUE": ("engines.sql.dialogue", "SAMPLE_DIALOGUE"),
    "unknown_phrase": ("engines.sql.readback", "unknown_phrase"),
    "SuqlAgent": ("engines.suql.agent", "SuqlAgent"),
    "Comparison": ("engines.suql.compare", "Comparison"),
    "ModeCompared": ("engines.suql.compare", "ModeCompared"),
    "ModeOutcome": ("engines.suql.compare", "ModeOutcome"),
    "ModeProgress": ("engines.suql.compare", "ModeProgress"),
    "ModeProgressed": ("engines.suql.compare", "ModeProgressed"),
    "ModeStarted": ("engines.suql.compare", "ModeStarted"),
    "compare_modes": ("engines.suql.compare", "compare_modes"),
    "LECTURE": ("engines.suql.examples", "LECTURE"),
    "Example": ("engines.suql.examples", "Example"),
    "paper_queries": ("engines.suql.examples", "paper_queries"),
    "read_query_file": ("engines.suql.examples", "read_query_file"),
    "PlanBuilt": ("engines.suql.execute", "PlanBuilt"),
    "QueryFinished": ("engines.suql.execute", "QueryFinished"),
    "RowDecided": ("engines.suql.execute", "RowDecided"),
    "SuqlResult": ("engines.suql.execute", "SuqlResult"),
    "MODES": ("engines.suql.plan", "MODES"),
    "Plan": ("engines.suql.plan", "Plan"),
    "unknown_question": ("engines.suql.unknowns", "unknown_question"),
    "evaluate_workload": ("engines.suql.workload", "evaluate"),
    "generate_workload": ("engines.suql.workload", "generate"),
    "course_plan": ("engines.courses", "plan"),
    "top_k_trap": ("engines.courses", "top_k_trap"),
    "hybridqa_events": ("engines.hybridqa.events", ""),
    "base_column": ("engines.hybridqa.cells", "base_column"),
    "is_info": ("engines.hybridqa.cells", "is_info"),
    "linked_column": ("engines.hybridqa.cells", "linked_column"),
    "ablation": ("engines.hybridqa.evaluate", "ablation"),
    "evaluate_hybridqa": ("engines.hybridqa.evaluate", "evaluate"),
    "HybridAnswer": ("engines.hybridqa.pipeline", "HybridAnswer"),
    "Improvements": ("engines.hybridqa.pipeline", "Improvements"),
    "EVALUATION_CLASSES": ("engines.hybridqa.scoring", "EVALUATION_CLASSES"),
    "Score": ("engines.hybridqa.scoring", "Score"),
    "SIM_KNOWS_GENERATED_ONLY": ("engines.hybridqa.session", "SIM_KNOWS_GENERATED_ONLY"),
    "real_tables_dir": ("engines.hybridqa.session", "real_tables_dir"),
    "Endpoint": ("engines.kg", "Endpoint"),
    "open_kg": ("engines.kg", "open_kg"),
    "Feedback": ("engines.kg.results", "Feedback"),
    "SparqlQueryResult": ("engines.kg.results", "QueryResult"),
    "results_from_json": ("engines.kg.results", "results_from_json"),
    "Dialect": ("engines.kg.sparql", "Dialect"),
    "SparqlRefused": ("engines.kg.sparql", "SparqlRefused"),
    "SparqlSyntaxError": ("engines.kg.sparql", "SparqlSyntaxError"),
    "CheckUnavailable": ("engines.kg.check", "CheckUnavailable"),
    "DialectReport": ("engines.kg.check", "DialectReport"),
    "check_dialect": ("engines.kg.check", "check_dialect"),
    "SparqlExample": ("engines.kg.examples", "SparqlExample"),
    "sparql_examples_for": ("engines.kg.examples", "examples_for"),
    "EntityPage": ("engines.kg.pages", "EntityPage"),
    "PropertyExample": ("engines.kg.pages", "PropertyExample"),
    "SearchHit": ("engines.kg.pages", "SearchHit"),
    "UnknownEntity": ("engines.kg.pages", "UnknownEntity"),
    "compact": ("engines.kg.prefixes", "compact"),
    "RdfFileError": ("engines.kg.rdf_files", "RdfFileError"),
    "media_type": ("engines.kg.rdf_files", "media_type"),
    "RemoteEndpoint": ("engines.kg.remote", "RemoteEndpoint"),
    "RemoteError": ("engines.kg.remote", "RemoteError"),
    "read_rdf_files": ("engines.kg.sources", "read_files"),
    "Suggestion": ("engines.completion", "Suggestion"),
    "LabelLookup": ("engines.kg.complete", "LabelLookup"),
    "sparql_id_at": ("engines.kg.complete", "id_at"),
    "sparql_label_of": ("engines.kg.complete", "label_of"),
    "sparql_lookup_labels": ("engines.kg.complete", "lookup_labels"),
    "sparql_prefix_suggestions": ("engines.kg.complete", "prefix_suggestions"),
    "WIKIDATA_DIALECT": ("engines.kg.sparql", "WIKIDATA"),
    "QUERY_SUFFIXES": ("engines.query_files", "QUERY_SUFFIXES"),
    "QueryFileError": ("engines.query_files", "QueryFileError"),
    "QueryFileExists": ("engines.query_files", "QueryFileExists"),
    "read_query": ("engines.query_files", "read_query"),
    "save_query": ("engines.query_files", "save_query"),
    "sql_suggestions": ("engines.sql.complete", "sql_suggestions"),
    "TooManyRows": ("engines.eval.metrics", "TooManyRows"),
    "check_size": ("engines.eval.metrics", "check_size"),
    "em_of": ("engines.eval.metrics", "em_of"),
    "row_f1": ("engines.eval.metrics", "row_f1"),
    "set_f1": ("engines.eval.metrics", "set_f1"),
    "BUDGET": ("engines.spinach.agent", "BUDGET"),
    "TOTAL_BUDGET": ("engines.spinach.agent", "TOTAL_BUDGET"),
    "AgentOptions": ("engines.spinach.agent", "AgentOptions"),
    "SpinachAgent": ("engines.spinach.agent", "SpinachAgent"),
    "evaluate_spinach": ("engines.spinach.evaluate", "evaluate"),
    "AgentStarted": ("engines.spinach.events", "AgentStarted"),
    "RolledBack": ("engines.spinach.events", "RolledBack"),
    "StepTaken": ("engines.spinach.events", "StepTaken"),
    "matching": ("engines.spinach.replay", "matching"),
    "pick": ("engines.spinach.replay", "pick"),
    "replay_json": ("engines.spinach.replay", "replay_json"),
    "replay_lines": ("engines.spinach.replay", "replay_lines"),
    "rows_lines": ("engines.spinach.replay", "rows_lines"),
    "summary": ("engines.spinach.replay", "summary"),
    "Scored": ("engines.spinach.scoring", "Scored"),
    "answer_step": ("engines.spinach.scoring", "answer_step"),
    "answered_by": ("engines.spinach.scoring", "answered_by"),
    "budgets": ("engines.spinach.scoring", "budgets"),
    "score_loaded": ("engines.spinach.scoring", "score_loaded"),
    "score_run": ("engines.spinach.scoring", "score_run"),
    "graph_name": ("engines.spinach.session", "graph_name"),
    "Step": ("engines.spinach.trajectory", "Step"),
    "Trajectory": ("engines.spinach.trajectory", "Trajectory"),
    "TrajectoryError": ("engines.spinach.trajectory", "TrajectoryError"),
    "load_trajectories": ("engines.spinach.trajectory", "load"),
    "result_bindings": ("engines.spinach.trajectory", "result_bindings"),
    "save_trajectory": ("engines.spinach.trajectory", "save"),
    "lab": ("engines.lab", ""),
    "Chart": ("engines.lab", "Chart"),
    "Experiment": ("engines.lab", "Experiment"),
    "Table": ("engines.lab", "Table"),
    "LabSize": ("engines.lab.core", "Size"),
    "clear_memo": ("engines.lab.resources", "clear_memo"),
    "Progress": ("engines.datasets", "Progress"),
    "dataset_entry": ("engines.datasets", "entry"),
    "fetch_datasets": ("engines.datasets", "fetch"),
    "datasets_where": ("engines.datasets", "where"),
    "ExportError": ("engines.export", "ExportError"),
    "ExportExists": ("engines.export", "ExportExists"),
    "Exported": ("engines.export", "Exported"),
    "export_rows": ("engines.export", "export_rows"),
    "format_for": ("engines.export", "format_for"),
    "JsonShape": ("engines.jsonable", "JsonShape"),
    "fields_json": ("engines.jsonable", "fields_json"),
    "MAX_JSON_DEPTH": ("engines.reading", "MAX_JSON_DEPTH"),
    "TooLarge": ("engines.reading", "TooLarge"),
    "read_capped": ("engines.reading", "read_capped"),
    "too_deep": ("engines.reading", "too_deep"),
}
"""Each public name: the module that defines it and its name there ("": the module itself)."""

__all__ = [
    "ablation",
    "AgentOptions",
    "AgentStarted",
    "answer_step",
    "answered_by",
    "arguments_graph",
    "backend_from_settings",
    "base_column",
    "BatchRun",
    "BUDGET",
    "budgets",
    "CallFailed",
    "CallFinished",
    "CallStarted",
    "Cancelled",
    "Chart",
    "check_dialect",
    "CheckUnavailable",
    "check_size",
    "clear_memo",
    "compact",
    "compare_modes",
    "Comparison",
    "ConfigurationError",
    "COURSE_DIALOGUE",
    "COURSE_EXAMPLES",
    "course_plan",
    "CourseSession",
    "dataset_entry",
    "datasets_where",
    "DataSource",
    "DataSourceError",
    "describe_world",
    "Dialect",
    "DialectReport",
    "em_of",
    "Emit",
    "Endpoint",
    "EngineError",
    "EntityPage",
    "evaluate_hybridqa",
    "evaluate_spinach",
    "evaluate_workload",
    "EVALUATION_CLASSES",
    "Event",
    "events",
    "Example",
    "Experiment",
    "export_rows",
    "Exported",
    "ExportError",
    "ExportExists",
    "Feedback",
    "fetch_datasets",
    "fields_json",
    "format_for",
    "generate_workload",
    "graph_name",
    "GraphSource",
    "HYBRID_SIM_RATES",
    "HybridAnswer",
    "hybridqa_events",
    "HybridSession",
    "ignore",
    "Improvements",
    "InputClassified",
    "is_info",
    "JsonShape",
    "lab",
    "LabSize",
    "LECTURE",
    "Limits",
    "linked_column",
    "LLM",
    "llm_from_settings",
    "LLMError",
    "load_trajectories",
    "matching",
    "MAX_JSON_DEPTH",
    "media_type",
    "ModeCompared",
    "ModeOutcome",
    "ModeProgress",
    "ModeProgressed",
    "MODES",
    "ModeStarted",
    "open_courses_agent",
    "open_graph",
    "open_hybridqa",
    "open_kg",
    "open_restaurants",
    "open_source",
    "open_source_agent",
    "open_spinach",
    "open_suql",
    "open_tables",
    "outline",
    "OWN_DATA_SIM",
    "paper_queries",
    "pick",
    "Plan",
    "PlanBuilt",
    "Progress",
    "PropertyExample",
    "QueryExecuted",
    "QueryFailed",
    "QueryFinished",
    "QueryParsed",
    "QueryRewritten",
    "RdfFileError",
    "read_capped",
    "read_query_file",
    "read_rdf_files",
    "ReadBackWritten",
    "real_tables_dir",
    "RemoteEndpoint",
    "RemoteError",
    "replay_json",
    "replay_lines",
    "RestaurantSession",
    "result_bindings",
    "results_from_json",
    "RolledBack",
    "row_f1",
    "RowDecided",
    "rows_lines",
    "run_sql",
    "SAMPLE_DIALOGUE",
    "Sandbox",
    "save_trajectory",
    "SchemaDescription",
    "Score",
    "score_loaded",
    "score_run",
    "Scored",
    "SearchHit",
    "set_f1",
    "Settings",
    "SIM_KNOWS_GENERATED_ONLY",
    "sparql_examples_for",
    "sparql_once",
    "SparqlExample",
    "SparqlQueryResult",
    "SparqlRefused",
    "SparqlSyntaxError",
    "SpinachAgent",
    "SpinachSession",
    "SqlError",
    "SqlGate",
    "SqlQueryResult",
    "SqlRefused",
    "Step",
    "StepTaken",
    "summary",
    "SuqlAgent",
    "SuqlResult",
    "SuqlRunner",
    "SuqlSession",
    "SuqlWorld",
    "Table",
    "table_agent",
    "TableKind",
    "TableSource",
    "take_run_usage",
    "TextToSQLAgent",
    "to_jsonable",
    "too_deep",
    "TooLarge",
    "TooManyRows",
    "top_k_trap",
    "TOTAL_BUDGET",
    "Trajectory",
    "TrajectoryError",
    "TurnResult",
    "TurnStarted",
    "unknown_phrase",
    "unknown_question",
    "UnknownEntity",
    "ValuesClassified",
    "WORLDS",
    "WorldSource",
    # the query editors (issue 28): completion, the label lookups, query files
    "Suggestion",
    "LabelLookup",
    "sparql_id_at",
    "sparql_label_of",
    "sparql_lookup_labels",
    "sparql_prefix_suggestions",
    "WIKIDATA_DIALECT",
    "QUERY_SUFFIXES",
    "QueryFileError",
    "QueryFileExists",
    "read_query",
    "save_query",
    "sql_suggestions",
]


def __getattr__(name: str) -> Any:
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = where
    value = importlib.import_module(module)
    # looked up at each import, never kept here: the defining module's attribute is the one truth (a test that
    # replaces it for a while, with monkeypatch, is seen by the next import and not after)
    return getattr(value, attribute) if attribute else value


def __dir__() -> list[str]:
    return sorted(__all__)
