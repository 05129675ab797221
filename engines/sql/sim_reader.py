"""The simulated LLM reading a passage for a value: dates, places, events (lecture 7 §2.3, §6).

``answer(text, question)`` for questions that ask for something a passage *states* — when a
person was born, where an event was held, which event someone competed in — and for the
yes/no checks built on them ("were the games held in Rio de Janeiro?", "did this person
compete in judo?").  Like a careful reader it finds the sentence that states the relation
(a cue such as "born", "held in", "competed in") and takes the value from it; when no
sentence states the relation it says Unknown, even if the passage is about something else.

It is shown only the text and the question.  What it knows is general: how dates are
written, the verbs that state where something took place or what someone competed in, and
a little common sense about sports ("a judoka competes in judo").  It also answers the literal
"does the text mention X?" (the question the generic parser of a user's tables writes): Yes only
from a sentence that holds X's words.

Its readers are SUQL's simulated ``answer()`` (engines/sql/sim.py) and HybridQA's simulated parser and
scorer (engines/hybridqa), so it lives in the lowest package both import.  How often a value is misread is
the backend's parameter (:data:`engines.llm.sim.MISREAD_RATE`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from engines.llm.protocol import Answer

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}} {_MONTH},? \d{{4}}\b|\b{_MONTH} \d{{1,2}}, \d{{4}}\b",
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])|\n+")
_ABBREVIATION = re.compile(r"\b(?:St|Mt|Ft|Dr|Mr|Mrs|Ms|Jr|Sr|No|vs|Lt|Gen|Col|Prof)\.$")

# Common sense about sports: a word in a question -> words in a passage that mean it.
SPORT_SENSE: dict[str, tuple[str, ...]] = {
    "judo": ("judo", "judoka"),
    "swimming": ("swimming", "swimmer", "freestyle", "backstroke", "butterfly", "breaststroke", "medley"),
    "athletics": (
        "athletics",
        "hurdler",
        "hurdles",
        "sprinter",
        "sprint",
        "marathon",
        "high jump",
        "long jump",
        "javelin",
        "runner",
        "decathlon",
        "heptathlon",
    ),
    "rowing": ("rowing", "rower", "sculls"),
    "fencing": ("fencing", "fencer", "sabre", "épée", "foil"),
    "wrestling": ("wrestling", "wrestler", "greco-roman"),
    "cycling": ("cycling", "cyclist", "road race", "time trial"),
    "weightlifting": ("weightlifting", "weightlifter"),
    "sailing": ("sailing", "sailor", "laser", "finn"),
    "boxing": ("boxing", "boxer", "middleweight", "flyweight", "heavyweight"),
    "shooting": ("shooting", "shooter", "air rifle", "trap", "skeet"),
}


def sentences(text: str) -> list[str]:
    """Sentences of a passage ("St. Louis" does not end one)."""
    out: list[str] = []
    for piece in _SENTENCE.split(text or ""):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def parse_date(text: str) -> date | None:
    """A date written as 1994-08-09, 9 August 1994 or August 9, 1994."""
    t = text.strip().rstrip(".")
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", t)
    try:
        if m:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        m = re.fullmatch(r"(\d{1,2}) ([A-Za-z]+),? (\d{4})", t)
        if m and m.group(2).lower() in MONTHS:
            return date(int(m.group(3)), MONTHS.index(m.group(2).lower()) + 1, int(m.group(1)))
        m = re.fullmatch(r"([A-Za-z]+) (\d{1,2}),? (\d{4})", t)
        if m and m.group(1).lower() in MONTHS:
            return date(int(m.group(3)), MONTHS.index(m.group(1).lower()) + 1, int(m.group(2)))
    except ValueError:
        return None
    return None


# --- relations a passage states -------------------------------------------------------------------

_PLACE_CUES = (
    re.compile(
        r"\b(?:were|was|is|are) held in (?P<v>(?:\b(?:St|Mt|Ft)\.\s|[^.;()])+?)(?:,? (?:in|from|on|between) \d|\.|;|\(|$)",
        re.I,
    ),
    re.compile(
        r"\btook place in (?P<v>(?:\b(?:St|Mt|Ft)\.\s|[^.;()])+?)(?:,? (?:in|from|on|between) \d|\.|;|\(|$)", re.I
    ),
    re.compile(r"^(?P<v>(?:\b(?:St|Mt|Ft)\.\s|[^.;()])+?) hosted\b"),
    re.compile(r"\bhosted by (?P<v>(?:\b(?:St|Mt|Ft)\.\s|[^.;()])+?)(?:,? (?:in|from|on|between) \d|\.|;|\(|$)", re.I),
)
_EVENT_CUES = (
    re.compile(r"\b(?:competed|took part|participated|was entered|raced|swam) in the (?P<v>.+?) event\b", re.I),
    re.compile(r"\b(?:competed|took part|participated) in (?:the )?(?P<v>[^.,;]+?) at the\b", re.I),
)
_BIRTH_CUE = re.compile(r"\bborn\b", re.I)


@dataclass(frozen=True)
class Found:
    value: str
    sentence: str
    alternatives: tuple[str, ...] = ()  # other values of the same kind in the text (for a misreading)


def _birth(text: str) -> Found | None:
    sents = sentences(text)
    every = [d.group(0) for s in sents for d in DATE.finditer(s)]
    for s in sents:
        cue = _BIRTH_CUE.search(s)
        if cue is None:
            continue
        # the date right after "born" when there is one, else the sentence's first date
        after = DATE.search(s, cue.end())
        first = after or DATE.search(s)
        if first:
            return Found(first.group(0), s, tuple(d for d in every if d != first.group(0)))
    return None


def _place(text: str) -> Found | None:
    for s in sentences(text):
        for cue in _PLACE_CUES:
            m = cue.search(s)
            if m:
                value = m.group("v").strip().strip(",").strip()
                value = re.sub(r"^the city of ", "", value, flags=re.I)
                if value and len(value) <= 80:
                    return Found(value, s)
    return None


def _event(text: str) -> Found | None:
    sents = sentences(text)
    found: list[tuple[str, str]] = []
    for s in sents:
        for cue in _EVENT_CUES:
            for m in cue.finditer(s):
                found.append((m.group("v").strip(), s))
    if not found:
        return None
    value, sentence = found[0]
    return Found(value, sentence, tuple(v for v, _ in found[1:] if v != value))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s+-]", " ", text.lower()).split())


def _same_place(asked: str, stated: str) -> bool:
    a, s = _norm(asked), _norm(stated)
    return bool(a) and (s == a or s.startswith(a + " ") or a.startswith(s + " ") or a == s.split(" ")[0])


def _competed(text: str, asked: str) -> tuple[Answer, tuple[str, ...]]:
    """Did the person the passage is about compete in ``asked`` (an event, or a sport)?

    Unknown unless the passage states what the person competed in; then Yes when the event, or
    a word for the sport ("judoka" for judo), stands in the passage."""
    stated = _event(text)
    if stated is None:
        return Answer(None), ()
    thing = _norm(re.sub(r"^the |\s+event$", "", asked.strip(), flags=re.I))
    words = [_norm(w) for w in SPORT_SENSE.get(thing, (thing,)) if _norm(w)]
    for s in sentences(text):
        hay = _norm(s)
        if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", hay) for w in words):
            return Answer("Yes", (s,)), ()
    return Answer("No", (stated.sentence,)), ()


_STOPWORDS = frozenset("a an the of to in on at for and or any some that this it its".split())


def _mentions(text: str, thing: str) -> tuple[Answer, tuple[str, ...]]:
    """Does the text mention ``thing``?  A literal check: Yes with the first sentence that holds every
    content word of it (as a word, a plural allowed); No when no sentence does; Unknown for an empty
    text or a thing without a content word (nothing to look for)."""
    words = [w for w in re.findall(r"[\w'-]+", thing.lower()) if w not in _STOPWORDS]
    sents = sentences(text)
    if not words or not sents:
        return Answer(None), ()
    for s in sents:
        low = s.lower()
        if all(re.search(rf"(?<![\w-]){re.escape(w)}(?:s|es)?(?![\w-])", low) for w in words):
            return Answer("Yes", (s,)), ()
    return Answer("No"), ()


# --- questions this reader claims ------------------------------------------------------------------


@dataclass(frozen=True)
class _Reading:
    pattern: re.Pattern[str]
    read: Callable[[str, re.Match[str]], tuple[Answer, tuple[str, ...]]]  # -> answer, alternatives


def _rx(p: str) -> re.Pattern[str]:
    return re.compile(p, re.I)


def _value(found: Found | None) -> tuple[Answer, tuple[str, ...]]:
    if found is None:
        return Answer(None), ()
    return Answer(found.value, (found.sentence,)), found.alternatives


def _yes_no(found: Found | None, holds: Callable[[Found], bool]) -> tuple[Answer, tuple[str, ...]]:
    if found is None:
        return Answer(None), ()
    return Answer("Yes" if holds(found) else "No", (found.sentence,)), ()


READINGS: tuple[_Reading, ...] = (
    _Reading(
        _rx(r"^does (?:the text|it|this|the \w+) (?:mention|talk about|refer to) (?P<x>.+?)\??$"),
        lambda t, m: _mentions(t, m.group("x")),
    ),
    _Reading(
        _rx(r"^(?:was|is) (?:this \w+|he|she|the \w+(?: \w+)?) born on (?P<x>.+?)\??$"),
        lambda t, m: _yes_no(
            _birth(t), lambda f: parse_date(f.value) is not None and parse_date(f.value) == parse_date(m.group("x"))
        ),
    ),
    _Reading(
        _rx(r"\b(?:when was .*\bborn|on what date was .*\bborn|(?:birth ?date|date of birth)\b)"),
        lambda t, m: _value(_birth(t)),
    ),
    _Reading(
        _rx(r"^(?:were|was) (?:the games|the olympics|it|this|the event) (?:held|hosted) in (?P<x>.+?)\??$"),
        lambda t, m: _yes_no(_place(t), lambda f: _same_place(m.group("x"), f.value)),
    ),
    _Reading(
        _rx(
            r"^(?:did (?P<x>.+?) host the (?:games|olympics)|was (?P<y>.+?) the host city(?: of the (?:games|olympics))?)\??$"
        ),
        lambda t, m: _yes_no(_place(t), lambda f: _same_place(m.group("x") or m.group("y"), f.value)),
    ),
    _Reading(
        _rx(
            r"^(?:where (?:were|was|are|is) .*\b(?:held|hosted|played)|(?:in )?which city (?:hosted|were|was)|what (?:was|is) the host city)"
        ),
        lambda t, m: _value(_place(t)),
    ),
    _Reading(
        _rx(r"^did (?:this person|he|she|the \w+(?: \w+)?) (?:compete|take part|participate) in (?P<x>.+?)\??$"),
        lambda t, m: _competed(t, m.group("x")),
    ),
    _Reading(
        _rx(r"^(?:which|what) event did .* (?:compete|take part|participate) in\??$|^in (?:which|what) event did"),
        lambda t, m: _value(_event(t)),
    ),
)


def claims(question: str) -> bool:
    """Does this reader handle the question?"""
    q = question.strip()
    return any(r.pattern.search(q) for r in READINGS)


def read(text: str, question: str) -> tuple[Answer, tuple[str, ...]] | None:
    """The careful reader's answer and the other values of the same kind it could mistake for it;
    None when the question is not one this reader handles."""
    q = question.strip()
    for r in READINGS:
        m = r.pattern.search(q)
        if m:
            return r.read(text, m)
    return None
