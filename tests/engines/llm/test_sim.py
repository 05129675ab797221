"""The simulated LLM: reads only what a model is shown, recognises phrasings, errs at seeded rates."""

from __future__ import annotations

import inspect

import pytest

from engines.llm.protocol import Answer, Backend, Results
from engines.llm.sim import SimBackend
from engines.sql import sim as sim_module
from engines.sql.tasks import CLASSIFY, RESPOND, ClassifyInput, RespondInput
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput
from worlds import restaurants as W


@pytest.fixture(scope="module")
def sim() -> SimBackend:
    return SimBackend(seed=224)


def ans(sim: SimBackend, text: str, question: str) -> Answer:
    return sim.run(ANSWER, AnswerInput(text, question)).value


def test_is_a_backend(sim):
    assert isinstance(sim, Backend)
    assert sim.name == "sim" and "seed=224" in sim.model


def test_never_reads_hidden_truth():
    modules = ("engines.llm.sim", "engines.sql.sim", "engines.sql.sim_parser")  # the backend, the reader, the parser
    source = "".join(inspect.getsource(__import__(m, fromlist=["x"])) for m in modules)
    assert "truth" not in source.replace("hidden truth", "").replace("ground truth", "")
    assert "worlds" not in source


@pytest.mark.parametrize(
    "text",
    [
        "Very family-friendly.",
        "Our children loved it.",
        "They have a kids menu and crayons for the table.",
        "A great place to bring the little ones.",
    ],
)
def test_recognises_varied_phrasings(text):
    sim = SimBackend(seed=1, error_on_topic=0, error_off_topic=0)
    a = ans(sim, f"Came for lunch. {text} Service was quick.", "is it family-friendly?")
    assert a.value == "Yes" and a.evidence == (text,)


def test_says_no_when_the_text_says_the_opposite_and_unknown_when_silent():
    sim = SimBackend(seed=1, error_on_topic=0, error_off_topic=0)
    assert ans(sim, "Parking can be tricky. The pho was great.", "is parking easy?").value == "No"
    assert ans(sim, "Never had trouble finding a spot.", "is parking easy?").value == "Yes"
    silent = ans(sim, "The pho was great.", "is parking easy?")
    assert silent.unknown and silent.evidence == ()


def test_common_sense_about_dishes():
    sim = SimBackend(seed=1, error_on_topic=0, error_off_topic=0)
    a = ans(sim, "You have to try the cacio e pepe.", "does this restaurant serve pasta?")
    assert a.value == "Yes" and "cacio e pepe" in a.evidence[0]
    assert ans(sim, "Loved the pho.", "does it serve pasta?").unknown


def test_seeded_error_rates_and_repeatability():
    world = W.build().world
    sim = SimBackend(seed=7)
    on = off = on_err = off_err = 0
    for r in world.rows:
        text = "\n".join(r.reviews)
        for q in ("is it family-friendly?", "is parking easy?", "is it romantic?", "does it have a great view?"):
            truth = sim_module._read(text, q)  # the careful reading, before any seeded mistake
            got = ans(sim, text, q)
            assert got == ans(sim, text, q)  # the same input repeats exactly
            if truth.value is not None:
                on += 1
                on_err += got.value != truth.value
            else:
                off += 1
                off_err += got.value != truth.value
    assert 0.01 < on_err / on < 0.06  # 3% when the text touches the topic
    assert off_err / off < 0.01  # 0.3% when it does not
    assert ans(SimBackend(seed=8), "Our children loved it.", "is it family-friendly?") is not None


def test_summary_is_extractive_and_deterministic(sim):
    text = "Came in on a rainy Sunday. Our children loved it. The view is stunning. Will be back."
    s = sim.run(SUMMARY, SummaryInput(text)).value
    assert s == sim.run(SUMMARY, SummaryInput(text)).value
    assert "Our children loved it." in s and "The view is stunning." in s


def test_classify_common_sense_and_biases(sim):
    pick = lambda v: set(sim.run(CLASSIFY, ClassifyInput(v, "cuisines", tuple(W.CUISINES))).value)  # noqa: E731
    # no table of cuisine words: word forms and static word vectors (engines.llm.word_vectors)
    assert pick("coffee") == {"coffee & tea"}  # near in meaning; "cafe" is farther than the margin
    assert pick("sichuan") == {"szechuan"}
    assert pick("tea") == {"coffee & tea", "bubble tea"}
    assert pick("curry") == set()  # neither its form nor its vector names a cuisine: honestly missed
    assert pick("italian") == {"italian"}
    assert pick("zzz") == set()
    assert set(sim.run(CLASSIFY, ClassifyInput("coffee", "cuisines", ("cafe",))).value) == {
        "cafe"
    }  # only among candidates


def test_respond_builds_only_from_rows(sim):
    rows = (("Velvet Garden", 4.5, "1957 Ramona St, Palo Alto"),)
    reply = sim.run(
        RESPOND,
        RespondInput(
            "a cafe?", (), Results("I searched for restaurants in Palo Alto.", ("name", "rating", "address"), rows, 1)
        ),
    ).value
    assert "Velvet Garden" in reply and "1 result" in reply
    empty = sim.run(
        RESPOND,
        RespondInput("x", (), Results("I searched for restaurants in Sunnyvale priced luxury.", ("name",), (), 0)),
    ).value
    assert "no results" in empty and "relax" in empty


def test_reply_says_what_it_could_not_search(sim):
    reply = sim.run(
        RESPOND,
        RespondInput(
            "a spicy chinese place",
            (),
            Results("I searched for restaurants whose cuisines include chinese.", ("name",), (("A",),), 1),
        ),
    ).value
    assert "'spicy'" in reply


def test_direct_replies(sim):
    assert "Cantonese" in sim.run(RESPOND, RespondInput("What is dim sum?", (), None)).value
    assert "welcome" in sim.run(RESPOND, RespondInput("Thanks!", (), None)).value


def test_latency_is_a_setting():
    slept = []
    SimBackend(latency_s=0.5, sleep=slept.append).run(ANSWER, AnswerInput("x", "is it spicy?"))
    assert slept == [0.5]
    slept.clear()
    SimBackend(latency_s=0.0, sleep=slept.append).run(ANSWER, AnswerInput("x", "is it spicy?"))
    assert slept == []


UNKNOWN_YES_NO = (
    "is it cozy?",
    "is the service good?",
    "is it quiet?",
    "does it have wifi?",
    "Is it open on Sundays?",
    "can I bring my dog?",
    "are the portions generous?",
    "cozy?",
    "was the staff friendly?",
)
KNOWN_YES_NO = (
    "is it family-friendly?",
    "is it romantic?",
    "does it have a great view?",
    "is parking easy?",
    "does it serve pasta?",
    "is the food spicy?",
)


def test_answer_keeps_to_the_contract_on_yes_no_questions():
    """A yes/no question gets Yes, No or Unknown (never a review sentence), whatever the text; a question
    off the sim's lexicon is Unknown, even where the text has its very word ('Intimate and cozy, ...')."""
    world = W.build().world
    sim = SimBackend(seed=224)  # with its seeded mistakes on
    for r in world.rows:
        text = "\n".join(r.reviews)
        for q in UNKNOWN_YES_NO:
            assert ans(sim, text, q) == Answer(None), (r.name, q)
        for q in KNOWN_YES_NO:
            a = ans(sim, text, q)
            assert a.value in ("Yes", "No", None), (r.name, q, a)
            assert a.value is None or a.evidence  # a verdict cites its sentences
    cozy = "Intimate and cozy, great for couples. The service is slow but friendly."
    assert ans(sim, cozy, "is it cozy?").unknown and ans(sim, cozy, "is the service good?").unknown
    assert ans(sim, cozy, "is it romantic?").value == "Yes"  # the lexicon's word for it: 'couples', 'intimate'


def test_answer_gives_a_value_only_to_an_extraction_question():
    sim = SimBackend(seed=1, error_on_topic=0, error_off_topic=0)
    text = "Intimate and cozy, great for couples. The service is slow but friendly."
    assert ans(sim, text, "what do reviewers say about the service?").value == "The service is slow but friendly."
    assert ans(sim, "We had no pasta: they do not serve pasta.", "does it serve pasta?").unknown  # denied, not served
    assert sim_module.is_yes_no("Is it cozy?") and sim_module.is_yes_no("cozy?")
    assert not sim_module.is_yes_no("What is the signature dish?") and not sim_module.is_yes_no("the signature dish")


def test_reply_counts_a_wish_searched_in_other_words_and_takes_the_agents_empty_finding(sim):
    suql = "x\n-- answer(text, 'question')"
    searched = Results(
        "I searched for restaurants where the reviews say it is good for a date.", ("name",), (("A",),), 1
    )
    assert "not searched" not in sim.run(RESPOND, RespondInput("a romantic place", (), searched, suql)).value
    unsearched = Results("I searched for restaurants in Palo Alto.", ("name",), (("A",),), 1)
    assert (
        "the search has no condition for 'romantic'"
        in sim.run(RESPOND, RespondInput("a romantic place", (), unsearched, suql)).value
    )
    why = "No restaurant in Tokyo is in this database; without that condition the search finds 35 restaurants."
    empty = Results(
        "I searched for restaurants in Tokyo whose cuisines include sushi bars.", ("name",), (), 0, why_empty=why
    )
    reply = sim.run(RESPOND, RespondInput("sushi in Tokyo", (), empty)).value
    assert why in reply and "such as" not in reply
