"""A *task*: one kind of LLM call, described once, in the package of the agent that makes it.

The LLM layer knows no agent.  An agent package (engines/sql, engines/suql, engines/hybridqa,
engines/spinach) defines its tasks as :class:`Task` values; the client
(:meth:`engines.llm.client.LLM.run`) runs any task with the call events, the answer cache,
cancellation, usage and the fallback for an unusable reply kept in that one place, and a backend
(:class:`engines.llm.protocol.Backend`) answers any task:

* the simulated backend calls the task's ``simulate`` with itself (its seed and rates) and the
  input -- the simulator is registered with the task, in the agent package;
* a real backend renders ``template`` (a jinja2 file in the ``prompts/`` folder of the task's
  ``package``, read through the package's loader, so an installed wheel's copy is the one read) with
  ``context(input)``, sends it to the model of the task's ``role``,
  and turns the reply's text into the value with ``read(text, input)``.  A task whose reply is a
  JSON object names its pydantic ``reply_model``: a real backend sends that model's JSON schema as
  the structured-output format of the request (the Messages API's ``output_config.format``, an
  OpenAI-compatible server's ``response_format``), and ``read`` validates the reply with the same
  model (:func:`engines.llm.replies.validated`), leniently: a fenced or wrapped object is still read.
  A task whose reply is plain text (``summary``, ``respond``) has no reply model.  A template may
  end its shared prefix (instructions, schema, rules, examples) with ``{{ cache_break }}``: a real
  backend marks that prefix for prompt caching when it is long enough to count.

Adding an LLM task is therefore one ``Task`` (and its template, in the package's ``prompts/`` folder, listed in
pyproject's package-data) in the agent's package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

I = TypeVar("I")  # the input: a frozen dataclass of what the model is shown
O = TypeVar("O")  # the value the task returns

Role = Literal["planner", "row"]

_SCHEMAS: dict[type, dict[str, Any]] = {}


def _no_evidence(_value: Any) -> tuple[str, ...]:
    return ()


def _as_text(_input: Any, value: Any) -> str:
    return str(value)


@dataclass(frozen=True, eq=False)
class Task(Generic[I, O]):
    """One kind of LLM call.  See the module docstring."""

    name: str  # the function name shown in events and counted ("answer"); part of cache keys
    input: type[I]  # the input's type (a frozen dataclass)
    output: type  # the value's type (a class: the value may be a union, ``str | None``, of which it names one)
    template: str  # the prompt template, without ``.j2``
    context: Callable[[I], dict[str, Any]]  # input -> the template's variables
    read: Callable[[str, I], O]  # (reply text, input) -> value; raises ReplyError when unusable
    # (the simulated backend, input) -> value; the backend is engines.llm.sim.SimBackend, which imports this module
    simulate: Callable[[Any, I], O]
    describe: Callable[[I], str]  # input -> the one line a CallStarted shows
    show: Callable[[I, O], str] = _as_text  # (input, value) -> the one line a CallFinished shows
    evidence: Callable[[O], tuple[str, ...]] = _no_evidence  # value -> the sentences it relied on
    role: Role = "planner"  # which model answers it: the planner's, or the per-row one
    max_tokens: int = 1024
    sim_latency: float = 1.0  # the simulated backend waits latency_s times this
    # the package whose ``prompts/`` folder holds ``template`` ("engines.sql"); the shared partials (``_system.j2``)
    # are engines.llm's.  None: engines.llm's own folder
    package: str | None = None
    # the answer cache: input -> (text, question) key parts; encode/decode the value as JSON
    cache_key: Callable[[I], tuple[str, str]] | None = None
    encode: Callable[[O], dict[str, Any]] | None = None
    decode: Callable[[dict[str, Any]], O] | None = None
    # the value when the backend's reply cannot be used (a ReplyError): the call is reported failed and
    # nothing is cached; without it the ReplyError reaches the caller
    fallback: Callable[[I], O] | None = None
    # the pydantic model of the reply's JSON object (None: the reply is plain text); its JSON schema is
    # the structured-output format a real backend asks for, and ``read`` validates with it
    reply_model: type[BaseModel] | None = None

    def reply_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the reply (pydantic's), or ``None`` for a plain-text reply."""
        if self.reply_model is None:
            return None
        schema = _SCHEMAS.get(self.reply_model)
        if schema is None:
            schema = self.reply_model.model_json_schema()
            schema.pop("description", None)  # the model's docstring is for developers, not the model
            _SCHEMAS[self.reply_model] = schema
        return schema

    @property
    def cached(self) -> bool:
        return self.cache_key is not None and self.encode is not None and self.decode is not None

    def __repr__(self) -> str:
        return f"Task({self.name!r})"
