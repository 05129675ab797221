"""Scoring: SQuAD EM/F1, the judge that reads hidden truth, the error classes, and the evaluation."""

from __future__ import annotations

import pytest

from engines.hybridqa.evaluate import ABLATION, evaluate
from engines.hybridqa.pipeline import Attempt, HybridAnswer, Improvements
from engines.hybridqa.scoring import ERROR_CLASSES, error_class, exact_match, f1, judge, normalize_answer, same_meaning
from engines.hybridqa.session import open_hybridqa
from engines.settings import Settings
from worlds.hybridqa import CorrectAnswer, QuestionTruth


def test_squad_normalisation_em_and_f1():
    assert normalize_answer("The  Rio de Janeiro, Brazil!") == "rio de janeiro brazil"
    assert exact_match("the XXXI", "XXXI") == 1.0 and exact_match("1994-08-09", "August 9, 1994") == 0.0
    assert f1("Rio de Janeiro, Brazil", "Rio de Janeiro") == pytest.approx(2 * 0.75 * 1 / 1.75)
    assert f1("", "x") == 0.0 and f1("", "") == 1.0


TRUTH = QuestionTruth(
    answers=(
        CorrectAnswer("date", ("1994-08-09", "August 9, 1994", "9 August 1994")),
        CorrectAnswer("date", ("1990-01-02",)),
    ),
    columns=("Flag Bearer_Info",),
    suql="SELECT answer(\"Flag Bearer_Info\", 'when was this person born?') FROM veloria_flag_bearers WHERE \"Name\" = 'V'",
    gold_wrong=False,
)


def test_the_judge_accepts_any_correct_answer_in_any_form():
    assert judge("Aug 9, 1994".replace("Aug", "August"), TRUTH) and judge("9 August 1994", TRUTH)
    assert judge("1990-01-02", TRUTH) and not judge("1994-08-10", TRUTH) and not judge("", TRUTH)


def answer(short: str, suql: str = TRUTH.suql, rows=(("x",),), fallback_calls: int = 0) -> HybridAnswer:
    return HybridAnswer(
        "veloria_flag_bearers",
        "q",
        (Attempt(1, suql, ("c0",), rows),),
        short,
        short or None,
        1,
        fallback_calls,
        Improvements(),
    )


def test_error_classes(sandbox):
    assert error_class(answer("August 9, 1994"), "1994-08-09", TRUTH, sandbox, judged=True) == "format variant"
    assert error_class(answer("1990-01-02"), "1994-08-09", TRUTH, sandbox, judged=True) == "gold incomplete"
    assert error_class(answer("1990-01-02"), "2000-01-01", TRUTH, sandbox, judged=True) == "gold wrong"
    assert error_class(answer("", rows=()), "1994-08-09", TRUTH, sandbox, judged=False) == "no result"
    other_row = TRUTH.suql.replace("'V'", "'VII'")
    assert error_class(answer("1899-01-27", other_row), "1994-08-09", TRUTH, sandbox, judged=False) == "wrong query"
    column = TRUTH.suql.replace('"Flag Bearer_Info"', '"Event year_Info"')
    assert error_class(answer("1899-01-27", column), "1994-08-09", TRUTH, sandbox, judged=False) == "wrong column"
    assert (
        error_class(answer("1899-01-27", column, fallback_calls=1), "1994-08-09", TRUTH, sandbox, judged=False)
        == "reader error"
    )
    assert error_class(answer("1899-01-27"), "1994-08-09", TRUTH, sandbox, judged=False) == "reader error"


def test_same_meaning_compares_rows_selected_and_order(sandbox):
    t = "veloria_flag_bearers"
    a = f'SELECT "Flag Bearer" FROM {t} WHERE "Gender" = \'Male\' ORDER BY answer("Flag Bearer_Info", \'b\')::date DESC LIMIT 1'
    assert same_meaning(a, a.replace("answer(\"Flag Bearer_Info\", 'b')", "answer(\"Flag Bearer_Info\", 'c')"), sandbox)
    assert not same_meaning(a, a.replace("DESC", "ASC"), sandbox)
    assert not same_meaning(a, a.replace("'Male'", "'Female'"), sandbox)
    assert not same_meaning("SELEC nothing", a, sandbox)


@pytest.fixture(scope="module")
def session():
    s = open_hybridqa(Settings(cache_enabled=False), n_tables=5)
    yield s
    s.close()


def test_evaluation_of_five_tables_is_deterministic_and_complete(session):
    report = evaluate(session)
    j = report.to_json()
    assert j["questions"] == 30 and set(j["by_type"]) == {"I", "II", "III", "IV", "V", "VI"}
    assert all(v["questions"] == 5 for v in j["by_type"].values())
    assert set(j["errors"]) == set(ERROR_CLASSES)
    assert sum(j["errors"].values()) == sum(1 for s in report.scores if s.em == 0)
    assert 0 <= j["em"] <= j["f1"] <= 1 and j["judged"] >= j["em"] - 0.05
    assert j["answer_calls"] == sum(g.answer.answer_calls for g in report.graded) > 30
    assert evaluate(session).to_json() == j


def test_the_ablation_has_the_shape_of_the_notes(session):
    reports = {imp.label: evaluate(session, improvements=imp).to_json() for imp in ABLATION}
    neither, both = reports["neither"], reports["fallback + retry"]
    assert both["judged"] >= neither["judged"] and both["em"] >= neither["em"]
    assert both["errors"]["no result"] <= reports["retry"]["errors"]["no result"] <= neither["errors"]["no result"]
    assert reports["fallback"]["fallback_calls"] > 0 == neither["fallback_calls"]
    assert reports["retry"]["retried"] > 0 == reports["fallback"]["retried"]
