"""``cs224v-tui suql`` and lazy verification (issue 29.0): the rows to verify are listed unsettled by default,
``--verify`` settles them (their calls counted apart), and ``--json`` carries the distinction."""

from __future__ import annotations

import json

from tui.cli import main

QUERY = (
    "SELECT _id, name FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is it good for groups?') = "
    "'Yes' AND answer(reviews, 'does it have outdoor seating?') = 'Yes'"
)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, out


def test_lazy_by_default_and_verify_settles(capsys, monkeypatch):
    monkeypatch.setenv("CS224V_CACHE_ENABLED", "false")
    code, out = run(capsys, "suql", QUERY, "--json")
    lazy = json.loads(out)
    assert code == 0 and lazy["verify"] == "lazy" and lazy["settled"] is False and lazy["unsettled"] > 0
    unsettled = [r for r in lazy["to_verify"] if r.get("settled") is False]
    assert len(unsettled) == lazy["unsettled"] and all(r["not_asked"] for r in unsettled)

    code, out = run(capsys, "suql", QUERY, "--verify", "--json")
    settled = json.loads(out)
    assert code == 0 and settled["verify"] == "eager" and settled["settled"] is True
    assert settled["settled_from"]["stats"]["answer_calls"] == lazy["stats"]["answer_calls"]
    assert settled["stats"]["verification_calls"] == settled["stats"]["answer_calls"] > 0
    assert settled["rows"] == lazy["rows"]  # no LIMIT: the matches were all there; only the rows to verify shrink
    assert len(settled["to_verify"]) <= len(lazy["to_verify"])
    assert not any("settled" in r or "not_asked" in r for r in settled["to_verify"])

    code, out = run(capsys, "suql", QUERY)
    assert code == 0 and "not yet settled (lazy): may shrink when verified" in out and "not asked" in out
    code, out = run(capsys, "suql", QUERY, "--verify")
    assert code == 0 and "settling" in out and "(verification)" in out
    assert "not yet settled" not in out

    monkeypatch.setenv("CS224V_SUQL_VERIFY", "eager")
    code, out = run(capsys, "suql", QUERY, "--json")
    eager = json.loads(out)
    assert eager["verify"] == "eager" and eager["settled"] is True
    assert eager["rows"] == settled["rows"] and eager["to_verify"] == settled["to_verify"]
