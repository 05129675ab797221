"""The six questions of each generated table, one per HybridQA type I–VI of §2.3: the question, every correct answer
(the hidden truth), the passage columns it needs, the expert's query, and the annotator's single gold (4% wrong)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from worlds.hybridqa.olympics import MONTHS, _Bearer
from worlds.hybridqa.truth import CorrectAnswer

GAMES_INFO, BEARER_INFO = "Event year_Info", "Flag Bearer_Info"
GOLD_WRONG_RATE = 0.04


@dataclass(frozen=True)
class _Spec:
    question: str
    answers: tuple[CorrectAnswer, ...]
    gold_kind: str  # which value of an answer the annotator writes
    gold_values: tuple[str, ...]  # the annotator's form of each correct answer (same order as answers)
    wrong_pool: tuple[str, ...]  # values of the same kind that are wrong (for the 4% wrong golds)
    columns: tuple[str, ...]
    suql: str


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def long_date(iso: str) -> str:
    y, m, d = (int(p) for p in iso.split("-"))
    return f"{MONTHS[m - 1]} {d}, {y}"


def _date_answer(iso: str) -> CorrectAnswer:
    y, m, d = (int(p) for p in iso.split("-"))
    return CorrectAnswer("date", (iso, long_date(iso), f"{d} {MONTHS[m - 1]} {y}"))


def _place_answer(b: _Bearer) -> CorrectAnswer:
    return CorrectAnswer("place", (b.city, f"{b.city}, {b.country}"))


def _games_answer(b: _Bearer) -> CorrectAnswer:
    return CorrectAnswer(
        "games",
        (
            b.roman,
            str(b.year),
            f"{b.year} Summer Olympics",
            f"{b.year} Olympics",
            f"{b.roman} Olympics",
            f"Games of the {b.roman} Olympiad",
            f"{b.roman} Olympiad",
        ),
    )


def _person_answer(b: _Bearer) -> CorrectAnswer:
    return CorrectAnswer("person", (b.name,))


def _event_answer(b: _Bearer) -> CorrectAnswer:
    bare = b.event.split(" ", 1)[1]
    return CorrectAnswer("event", (b.event, f"{b.event} event", bare, f"{bare} event"))


def _games_ref(rng: random.Random, b: _Bearer) -> tuple[str, str]:
    """How a question names a Games, and the structured condition that finds its row."""
    if rng.random() < 0.5:
        return f"the {b.year} Olympics", f'"Event year" = {_q(str(b.year))}'
    return f"the {b.roman} Olympics", f'"Name" = {_q(b.roman)}'


def _attribute(
    rng: random.Random, b: _Bearer, bearers: Sequence[_Bearer]
) -> tuple[str, str, CorrectAnswer, str, tuple[str, ...], str]:
    """A passage attribute of a row: (kind, phrase, answer, gold form, wrong pool, answer() call)."""
    kind = rng.choice(("birth", "birth", "event"))
    if kind == "birth":
        return (
            "date",
            "born",
            _date_answer(b.birth),
            b.birth,
            tuple(x.birth for x in bearers if x is not b),
            f"answer(\"{BEARER_INFO}\", 'when was this person born?')",
        )
    return (
        "event",
        "event",
        _event_answer(b),
        b.event,
        tuple(x.event for x in bearers if x.event != b.event),
        f"answer(\"{BEARER_INFO}\", 'which event did this person compete in?')",
    )


def _type_i(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    b = rng.choice(bearers)
    r = rng.random()
    if r < 0.3:  # the host city, located by the flag bearer's name
        question = f"Where were the Games held at which {b.name} carried the flag?"
        suql = f'SELECT answer("{GAMES_INFO}", \'where were the games held?\') FROM {table} WHERE "Flag Bearer" = {_q(b.name)}'
        return _Spec(
            question,
            (_place_answer(b),),
            "place",
            (b.city,),
            tuple(sorted({x.city for x in bearers if x.city != b.city})),
            (GAMES_INFO,),
            suql,
        )
    ref, cond = _games_ref(rng, b)
    kind, _, answer, gold, pool, call = _attribute(rng, b, bearers)
    question = (
        f"When was the flag bearer of {ref} born?"
        if kind == "date"
        else f"Which event did the flag bearer of {ref} compete in?"
    )
    return _Spec(question, (answer,), kind, (gold,), pool, (BEARER_INFO,), f"SELECT {call} FROM {table} WHERE {cond}")


def _by_city(bearers: Sequence[_Bearer], city: str) -> list[_Bearer]:
    return [x for x in bearers if x.city == city]


def _type_ii(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    city = rng.choice(bearers).city
    rows = _by_city(bearers, city)
    cond = f"answer(\"{GAMES_INFO}\", {_q(f'were the games held in {city}?')}) = 'Yes'"
    r = rng.random()
    if r < 0.4:
        question = f"Who carried the flag at the Olympics held in {city}?"
        return _Spec(
            question,
            tuple(_person_answer(x) for x in rows),
            "person",
            tuple(x.name for x in rows),
            tuple(x.name for x in bearers if x.city != city),
            (GAMES_INFO,),
            f'SELECT "Flag Bearer" FROM {table} WHERE {cond}',
        )
    if r < 0.7:
        question = f"In which year were the Olympics held in {city}?"
        gold = tuple(str(x.year) for x in rows)
        column = '"Event year"'
    else:
        question = f"Which Olympiad was held in {city}?"
        gold = tuple(x.roman for x in rows)
        column = '"Name"'
    wrong = tuple(str(x.year) if column == '"Event year"' else x.roman for x in bearers if x.city != city)
    return _Spec(
        question,
        tuple(_games_answer(x) for x in rows),
        "games",
        gold,
        wrong,
        (GAMES_INFO,),
        f"SELECT {column} FROM {table} WHERE {cond}",
    )


def _type_iii(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    if rng.random() < 0.3:  # from the bearer's passage to the Games' passage
        b = rng.choice(bearers)
        question = f"In which city were the Games held whose flag bearer was born on {b.birth}?"
        cond = f"answer(\"{BEARER_INFO}\", {_q(f'was this person born on {b.birth}?')}) = 'Yes'"
        return _Spec(
            question,
            (_place_answer(b),),
            "place",
            (b.city,),
            tuple(sorted({x.city for x in bearers if x.city != b.city})),
            (BEARER_INFO, GAMES_INFO),
            f"SELECT answer(\"{GAMES_INFO}\", 'where were the games held?') FROM {table} WHERE {cond}",
        )
    city = rng.choice(bearers).city
    rows = _by_city(bearers, city)
    kind, _, _, _, _, call = _attribute(rng, rows[0], bearers)
    cond = f"answer(\"{GAMES_INFO}\", {_q(f'were the games held in {city}?')}) = 'Yes'"
    if kind == "date":
        question = f"When was the flag bearer of the Olympics held in {city} born?"
        answers = tuple(_date_answer(x.birth) for x in rows)
        gold = tuple(x.birth for x in rows)
        pool = tuple(x.birth for x in bearers if x.city != city)
    else:
        question = f"Which event did the flag bearer of the Olympics held in {city} compete in?"
        answers = tuple(_event_answer(x) for x in rows)
        gold = tuple(x.event for x in rows)
        pool = tuple(x.event for x in bearers if x.event not in gold)
    return _Spec(
        question, answers, kind, gold, pool, (GAMES_INFO, BEARER_INFO), f"SELECT {call} FROM {table} WHERE {cond}"
    )


def _type_iv(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    # Prefer a (gender, sport) with several bearers: the question then has several right answers.
    groups: dict[tuple[str, str], list[_Bearer]] = {}
    for x in bearers:
        groups.setdefault((x.gender, x.sport.sport), []).append(x)
    shared = [k for k, v in groups.items() if len(v) > 1]
    b = rng.choice(groups[rng.choice(shared)]) if shared and rng.random() < 0.6 else rng.choice(bearers)
    gender_word = b.gender.lower()
    test: Callable[[_Bearer], bool]
    if rng.random() < 0.5:
        thing, test = b.sport.sport, lambda x: x.sport.sport == b.sport.sport
        question = f"Which {gender_word} flag bearer competed in {thing}?"
    else:
        thing, test = f"the {b.event} event", lambda x: x.event == b.event
        question = f"Which {gender_word} flag bearer competed in {thing}?"
    rows = [x for x in bearers if x.gender == b.gender and test(x)]
    cond = (
        f'"Gender" = {_q(b.gender)} AND answer("{BEARER_INFO}", {_q(f"did this person compete in {thing}?")}) = \'Yes\''
    )
    return _Spec(
        question,
        tuple(_person_answer(x) for x in rows),
        "person",
        tuple(x.name for x in rows),
        tuple(x.name for x in bearers if x not in rows),
        (BEARER_INFO,),
        f'SELECT "Flag Bearer" FROM {table} WHERE {cond}',
    )


def _type_v(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    a, b = rng.sample(list(bearers), 2)
    older = rng.random() < 0.5
    use_year = rng.random() < 0.5
    ref: Callable[[_Bearer], str] = (
        (lambda x: f"the {x.year} Olympics") if use_year else (lambda x: f"the {x.roman} Olympics")
    )
    column = '"Event year"' if use_year else '"Name"'
    values = (str(a.year), str(b.year)) if use_year else (a.roman, b.roman)
    word = "older" if older else "younger"
    question = f"Who is {word}, the flag bearer of {ref(a)} or the flag bearer of {ref(b)}?"
    winner = min((a, b), key=lambda x: x.birth) if older else max((a, b), key=lambda x: x.birth)
    loser = b if winner is a else a
    direction = "ASC" if older else "DESC"
    suql = (
        f'SELECT "Flag Bearer" FROM {table} WHERE {column} IN ({_q(values[0])}, {_q(values[1])}) '
        f"ORDER BY answer(\"{BEARER_INFO}\", 'when was this person born?')::date {direction} LIMIT 1"
    )
    return _Spec(question, (_person_answer(winner),), "person", (winner.name,), (loser.name,), (BEARER_INFO,), suql)


def _type_vi(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    youngest = rng.random() < 0.5
    word = "youngest" if youngest else "oldest"
    pool = list(bearers)
    cond = ""
    if rng.random() < 0.35:
        gender = rng.choice(sorted({x.gender for x in bearers}))
        pool = [x for x in bearers if x.gender == gender]
        question = f"Who is the {word} {gender.lower()} flag bearer?"
        cond = f' WHERE "Gender" = {_q(gender)}'
    else:
        question = f"Who is the {word} flag bearer?"
    winner = (max if youngest else min)(pool, key=lambda x: x.birth)
    suql = (
        f'SELECT "Flag Bearer" FROM {table}{cond} ORDER BY answer("{BEARER_INFO}", \'when was this person born?\')::date '
        f"{'DESC' if youngest else 'ASC'} LIMIT 1"
    )
    return _Spec(
        question,
        (_person_answer(winner),),
        "person",
        (winner.name,),
        tuple(x.name for x in bearers if x is not winner),
        (BEARER_INFO,),
        suql,
    )


_QUESTION_MAKERS = {"I": _type_i, "II": _type_ii, "III": _type_iii, "IV": _type_iv, "V": _type_v, "VI": _type_vi}


def _gold(rng: random.Random, spec: _Spec, bearers: Sequence[_Bearer]) -> tuple[str, bool]:
    """The annotator's single gold: one of the right answers, or (4%) a wrong value of the same kind."""
    if spec.wrong_pool and rng.random() < GOLD_WRONG_RATE:
        return rng.choice(sorted(set(spec.wrong_pool))), True
    return rng.choice(spec.gold_values), False
