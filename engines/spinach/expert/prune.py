"""Pruning an entity page to the question, as the simulated model does it (SPINACH's ``get_wikidata_entry``
shows a page pruned by a separate few-shot prompt, ``prune_outgoing_edges``: only what could help write the query).

The simulated pruner reads what the real one is shown — the question and the numbered lines of the page — and
nothing else.  It keeps

* the lines that are not claims (label, description, aliases, data type);
* the claims that show how the entity is modelled (``P31`` instance of, ``P279`` subclass of), as SPINACH's own
  examples keep ``instance of``;
* the claims whose property or value the question names in words ("… affiliated with Ravella University" keeps
  ``P361 (part of): Ravella University``);
* then, up to a ``share`` of the page's claims (at least :data:`MIN_KEEP`), the other claims closest in meaning
  to the question (static word embeddings, WordLlama's, from :mod:`engines.suql.compiler.semantic`; word overlap
  when they are missing), ties in page order.  SPINACH's own two examples keep 3 of 12 and 5 of 25 claims, so the
  share is a quarter (``PolicyParams.prune_share``).

A line the question does not seem to be about is dropped even when it is the one that would have shown a quirk:
the pruner cannot know which line will matter, and the policy cannot tell a pruned line from a missing one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

SHARE = 0.25  # of the page's claims kept (SPINACH's examples: 3 of 12, 5 of 25)
MIN_KEEP = 2
MODELLING = ("P31", "P279")

_CLAIM = re.compile(r"^(?P<pid>P\d+) \((?P<prop>[^)]*)\): (?P<value>.*?)(?: \[(?P<qualifiers>.*)\])?$")
_ID = re.compile(r"\s*\((?:[QP]\d+)\)")
_WORD = re.compile(r"[^\W_]+")


def _value_text(value: str) -> str:
    return _ID.sub("", value).strip()


def _names_it(question: str, prop: str, value: str) -> bool:
    """The question names the claim's value (an entity's label, at least a word long) or its property."""
    q = " ".join(_WORD.findall(question.casefold()))
    for text in (_value_text(value), prop):
        words = " ".join(_WORD.findall(text.casefold()))
        if words and len(words) > 2 and re.search(rf"\b{re.escape(words)}\b", q):
            return True
    return False


def _closeness(question: str, texts: Sequence[str]) -> list[float]:
    if not texts:
        return []
    from engines.suql.compiler.semantic import embedder

    e = embedder()
    if e is not None:
        v = e.vectors([question, *texts])
        return [float(x) for x in v[1:] @ v[0]]
    q = set(_WORD.findall(question.casefold()))
    out = []
    for t in texts:
        w = set(_WORD.findall(t.casefold()))
        out.append(len(q & w) / len(q | w) if q | w else 0.0)
    return out


def kept_lines(question: str, entry: str, share: float = SHARE) -> tuple[int, ...]:
    """The numbers of the page's lines the simulated pruner keeps, in page order."""
    lines = entry.splitlines()
    kept: set[int] = set()
    candidates: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        m = _CLAIM.match(line)
        if m is None:
            kept.add(i)
        elif m.group("pid") in MODELLING or _names_it(question, m.group("prop"), m.group("value")):
            kept.add(i)
        else:
            candidates.append((i, f"{m.group('prop')}: {_value_text(m.group('value'))}"))
    claims = sum(1 for line in lines if _CLAIM.match(line))
    room = max(MIN_KEEP, math.ceil(share * claims)) - (claims - len(candidates))
    scores = _closeness(question, [t for _i, t in candidates])
    ranked = sorted(zip(scores, candidates), key=lambda sc: (-sc[0], sc[1][0]))
    kept |= {i for _s, (i, _t) in ranked[: max(0, room)]}
    return tuple(sorted(kept))
