"""The dialect's rewrite skips work that cannot change its text (issue 16 part 5: the Oxigraph path within 2x of raw
pyoxigraph): the lexeme masking tries only where a lexeme can start, a text without a backslash has no escape to
expand, and the case-blind patterns for WITH / INCLUDE / SERVICE / a spaced path modifier run only where their word
is in the text.  Each shortcut gives exactly what the full work gave: the same text, form, notes and unsupported
message, or the same error, on every gold query, every example and on generated texts built from the tokens the
rewrites look for (their case-blind spellings with the non-ASCII letters Python's regex folds to ASCII included)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.kg import dialect
from engines.kg.examples import EXAMPLES
from worlds import kg as K

DEV = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "spinach" / "dev.json"


class _ReferenceMasked:
    """The masking as it was: _LEXEME.finditer over the whole text."""

    def __init__(self, text: str) -> None:
        self.slots: list[str] = []
        out: list[str] = []
        pos = 0
        for m in dialect._LEXEME.finditer(text):
            out.append(text[pos : m.start()])
            if m.lastgroup == "comment":
                out.append(" ")
            else:
                out.append(f"{dialect._OPEN}{len(self.slots)}{dialect._CLOSE}")
                self.slots.append(m.group())
            pos = m.end()
        out.append(text[pos:])
        self.code = "".join(out)

    slot = dialect._Masked.slot
    restore = dialect._Masked.restore


def _reference_expand(query: str) -> str:
    from rdflib.plugins.sparql.parser import expandUnicodeEscapes

    try:
        text = expandUnicodeEscapes(query)
        again = expandUnicodeEscapes(text)
    except ValueError as e:
        raise dialect.SparqlSyntaxError(f"Syntax error: {e}.") from None
    if again != text:
        raise dialect.SparqlSyntaxError(
            "Syntax error: a \\u escape expands to another escape; write the character itself."
        )
    return text


def _outcome(query: str):
    try:
        return ("ok", dialect.rewrite(query))
    except Exception as e:
        return (type(e).__name__, str(e))


def _reference_outcome(query: str, monkeypatch) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(dialect, "_Masked", _ReferenceMasked)
        m.setattr(dialect, "expand_escapes", _reference_expand)
        m.setattr(dialect, "_folded", lambda code: None)  # every case-blind pattern runs
        m.setattr(dialect, "_SPACED_PATH_MOD", re.compile(""))  # and the path-modifier one
        m.setattr(dialect, "_WORD_THEN_VAR", re.compile(""))  # and the adjacent-variables one
        return _outcome(query)


def _corpus() -> list[str]:
    built = K.build(K.DEFAULT_SEED)
    queries = [q.gold_sparql for q in K.questions(*built).all()] + [e.query for e in EXAMPLES]
    if DEV.exists():
        queries += [item["sparql"] for item in json.loads(DEV.read_text(encoding="utf-8"))]
    return queries


def test_the_gold_queries_and_examples_rewrite_as_before(monkeypatch):
    corpus = _corpus()
    assert len(corpus) > 100
    for q in corpus:
        assert _outcome(q) == _reference_outcome(q, monkeypatch), q


_TOKENS = [
    "SELECT",
    "ASK",
    "WHERE",
    "{",
    "}",
    " ",
    "\n",
    "\t",
    ".",
    ";",
    "?a",
    "?b",
    "$c",
    "?a?b",
    "?x$y",
    "?é?b",
    "?_1$_2",
    "?aLabel",
    "wdt:P31",
    "wd:Q5",
    "*",
    "+",
    " * ",
    " + ",
    "wdt:P279 *",
    "wdt:P279 + ",
    "<http://e/p>\t* ",
    "WITH {",
    "with{",
    "wıth {",
    "WİTH {",
    "} AS %x",
    "AS %y",
    "INCLUDE %x",
    "include %y",
    "ınclude %x",
    "SERVICE",
    "ſervice",
    "service silent",
    "SERVICE wikibase:label {",
    "SERVICE <https://query.wikidata.org/sparql> {",
    "SERVICE bd:sample {",
    "SERVICE wikibase:around {",
    'bd:serviceParam wikibase:language "en" .',
    'hint:Query hint:optimizer "None" .',
    "'",
    '"',
    "'''",
    '"""',
    "<",
    ">",
    "<http://e/x>",
    "#",
    "# a comment\n",
    '"with"',
    "'service'",
    "<urn:include>",
    "\\u0053",
    "\\u0057ITH",
    "\\U00000053",
    "\\u005Cu0053",
    "\\",
    "\u212a",
    "\u017f",
    "\u0130",
    "\u0131",
    "\ue000",
    "\ue0010\ue001",
    "é",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=24).map("".join))
def test_generated_texts_rewrite_as_before(monkeypatch, text):
    assert _outcome(text) == _reference_outcome(text, monkeypatch)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("'\"<>#\n\\ax {}\u00e9") + ["'''", '"""']), max_size=40).map("".join))
def test_the_masking_is_the_full_scan(text):
    fast, slow = dialect._Masked(text), _ReferenceMasked(text)
    assert (fast.code, fast.slots) == (slow.code, slow.slots)


def test_only_four_non_ascii_letters_fold_to_ascii_ones():
    """What _folded relies on: re.IGNORECASE matches an ASCII letter only to itself, its other case and
    _CASE_BLIND_EXTRAS (so where none of those occurs, the text's lower() holds every word the patterns match)."""
    every = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF)
    found = set()
    for letter in "abcdefghijklmnopqrstuvwxyz":
        found |= {c for c in re.findall(letter, every, re.I) if not c.isascii()}
    assert found == set(dialect._CASE_BLIND_EXTRAS)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?x WİTH { SELECT ?x WHERE { ?x ?p ?o } } AS %a WHERE { INCLUDE %a }",
        'SELECT ?x WHERE { ?x ?p ?o . ſERVICE wikibase:label { bd:serviceParam wikibase:language "en" . } }',
        "SELECT ?x WHERE { ?x wdt:P279 * ?o . ?x ?p ?o }",
        "SELECT ?x WHERE { ?x wdt:P279 + ?o . ?x <http://e/p>\n+\t?o }",
        "SELECT ?x \\u0057ITH { SELECT ?x WHERE { ?x ?p ?o } } AS %a WHERE { INCLUDE %a }",
    ],
)
def test_case_blind_spellings_still_take_the_rewrite(query, monkeypatch):
    assert _outcome(query) == _reference_outcome(query, monkeypatch)
    assert _outcome(query)[0] != "ok" or _outcome(query)[1][2]  # a note says what was rewritten (or it is an error)
