"""The entity and property steps: the QID a search showed for a name (told apart from namesakes by their
descriptions), the PID a relation is (remembered, looked up, or guessed with search off)."""

from __future__ import annotations

import re

from engines.spinach.expert.memory import CONFUSED_WITH, RELATIONS
from engines.spinach.expert.question import Mention
from engines.spinach.expert.state import Mind


def resolve(mind: Mind, mention: Mention) -> str | None:
    """The QID the policy picked for a mention from its search, or None before searching."""
    hits = mind.searches.get(mention.text.casefold())
    if hits is None:
        return None
    items = [h for h in hits if h[0].startswith("Q")]
    if not items:
        return ""
    exact = [h for h in items if h[1].casefold() == mention.text.casefold()] or items
    if (
        len(exact) > 1
        and mention.hint
        and mind.draw("disambiguate", mention.text, mention.hint) < mind.params.p_disambiguate
    ):
        words = [
            w for w in re.findall(r"\w+", mention.hint.casefold()) if w not in ("the", "city", "in", "film")
        ] or re.findall(r"\w+", mention.hint.casefold())
        for h in exact:
            if all(w in h[2].casefold() for w in words):
                return h[0]
    return exact[0][0]


def mention_of(mind: Mind, ref: str) -> Mention:
    return next(m for m in mind.goal.mentions if m.key == ref.lstrip("@"))


def region_kind(mind: Mind, mention: Mention) -> str:
    """country | province | city, from the description the search showed."""
    hits = mind.searches.get(mention.text.casefold()) or []
    qid = resolve(mind, mention)
    desc = next((h[2] for h in hits if h[0] == qid), "").casefold()
    if "country" in desc and "city" not in desc and "province" not in desc:
        return "country"
    if "province" in desc:
        return "province"
    return "city"


def pid_for(mind: Mind, rel: str) -> tuple[str | None, str | None]:
    """(PID to use, or None; the search to run first, or None)."""
    true_pid, words = RELATIONS[rel]
    seen = mind.page_pids.get(words.casefold())
    if seen:  # a page read showed the property under this very name: no need to remember or search it
        return seen, None
    memory = mind.params.memory.get(true_pid, 0.3)
    if mind.draw("recall", rel) < memory:
        if rel in ("set_in", "filmed_in") and mind.draw("confuse", rel) < mind.params.p_confuse:
            return CONFUSED_WITH[true_pid], None
        return true_pid, None
    if mind.search_off:
        return (true_pid if mind.draw("guess", rel) < memory else CONFUSED_WITH.get(true_pid, true_pid)), None
    hits = mind.searches.get(words.casefold())
    if hits is None:
        return None, words
    props = [h[0] for h in hits if h[0].startswith("P")]
    return (props[0] if props else true_pid), None


def entity_term(mind: Mind, key: str, bind: list[str]) -> str:
    mention = next(m for m in mind.goal.mentions if m.key == key)
    if mind.invent_ids:  # a model without tools writes the QID it "remembers"
        return f"wd:Q{100_000 + int(mind.draw('invent', mention.text) * 9_000_000)}"
    qid = resolve(mind, mention)
    if qid:
        return f"wd:{qid}"
    slug = re.sub(r"\W+", "_", mention.text.casefold()).strip("_") or key
    var = f"?{slug}_item"
    bind.append(f'{var} rdfs:label "{mention.text}"@en .')
    return var
