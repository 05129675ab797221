"""The linearisation baseline's query writer (lecture 7 §5.2; the SUQL paper's UniK-QA baseline).

The paper's baseline does not hand the retriever the user's words: a few-shot LLM first writes a short
search query from the conversation, and the retriever returns the passages most like that query.
``search_query`` is that call: it is shown only the utterance (no schema, no rows) and returns a few
words — what the user wants, without the words that only make the request.

The simulated writer keeps the utterance's content words in order and drops the words that name the
request rather than its content: asking ("find me", "can you", "where can I get", "I'm looking for"),
the generic name of what is asked for ("a place", "a restaurant", "somewhere"), degree and comparison
words ("really", "enough", "at least") and function words.  Numbers, names, cuisines, features and
dishes are content and stay.  It is a rule over English request phrasing, written from no test
question; a real model (the template) writes its own query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, field_validator

from engines.llm.replies import validated
from engines.llm.task import Task

PACKAGE = "engines.lab"  # its prompts/ folder holds search_query.j2

#: Longest query the writer returns, in words (the paper's "short search query").
MAX_WORDS = 12

# Words that make a request without saying what is wanted.  Grouped by why they carry no content.
_ASKING = (
    "find show give recommend suggest get want wanted need needs like love looking look search searching help tell "
    "know try trying eat go going grab take recommendation recommendations suggestion suggestions options option "
    "please thanks hi hello hey"
)
_PEOPLE = "i me my mine we us our you your i'm i'd i'll we're we'd let's"
_QUESTION = "where what which who whom how is are was were there any anything some somewhere something one ones"
_AUXILIARY = "can could would will should shall may might must do does did be been being have has had"
_THING = (
    "place places restaurant restaurants spot spots eatery eateries joint joints food"  # what every request asks for
)
_DEGREE = "really very quite so super pretty just enough too also least most more than much many"
_FUNCTION = (
    "a an the in on at to of for from with and or but that this these those it its as by into about around then if"
)
REQUEST_WORDS: frozenset[str] = frozenset(
    " ".join((_ASKING, _PEOPLE, _QUESTION, _AUXILIARY, _THING, _DEGREE, _FUNCTION)).split()
)

_WORD = re.compile(r"[0-9]+(?:\.[0-9]+)?|[^\W\d_](?:[\w&'-]*\w)?")


@dataclass(frozen=True)
class SearchQueryInput:
    utterance: str


class SearchQueryReply(BaseModel):
    """``search_query``: the short search query."""

    query: str

    @field_validator("query", mode="before")
    @classmethod
    def _text(cls, v: object) -> object:
        if isinstance(v, (list, tuple)):
            return " ".join(str(x) for x in v)
        return v


def read_search_query(text: str, input: SearchQueryInput) -> str:
    """``{"query": str}`` -> the query; an empty one falls back to the utterance itself."""
    query = " ".join(validated(SearchQueryReply, text, "search_query").query.split())
    return query or input.utterance


def write_query(utterance: str) -> str:
    """The simulated writer: the utterance's content words, in order (see the module docstring)."""
    kept = [w for w in _WORD.findall(utterance) if w.casefold() not in REQUEST_WORDS]
    if not kept:  # nothing but request words ("find me a place"): search with the whole utterance
        return " ".join(utterance.split())
    return " ".join(kept[:MAX_WORDS])


SEARCH_QUERY: Task[SearchQueryInput, str] = Task(
    name="search_query",
    input=SearchQueryInput,
    output=str,
    template="search_query",
    package=PACKAGE,
    max_tokens=128,
    context=lambda i: {"utterance": i.utterance},
    read=read_search_query,
    reply_model=SearchQueryReply,
    simulate=lambda _b, i: write_query(i.utterance),
    sim_latency=0.3,
    describe=lambda i: i.utterance,
    show=lambda _i, v: v,
)
