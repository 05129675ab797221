"""The properties every fuzz example must keep, shared by the test modules."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, Phase, settings

from tests.fuzz.harness import CANARY_TOKEN, GENERATE_ONLY, examples


def fuzz_settings(n: int) -> settings:
    """Deterministic, bounded by example count (scaled by CS224V_FUZZ_SCALE), no deadline (the
    harness bounds wall time per example), no example database in the repository."""
    return settings(
        max_examples=examples(n),
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        report_multiple_bugs=False,
        phases=[p for p in Phase if p is not Phase.explain and not (GENERATE_ONLY and p is Phase.explicit)],
    )


def assert_engine_outcome(out: dict[str, Any], given: str) -> None:
    """Either a result or a documented EngineError (the harness already failed anything else)."""
    if out.get("outcome") == "error":
        assert out["error_type"], out
    assert not out.get("changed"), f"data changed by {given!r}:\n{json.dumps(out['changed'], default=str)[:3000]}"
    assert CANARY_TOKEN not in out.get("text", ""), f"{given!r} read the canary file or the recording server"


def assert_offline(recorder: Any, before: int, given: str) -> None:
    now = recorder.count()
    assert now == before, (
        f"{given!r} reached the network: {now - before} connection(s) to 127.0.0.1; "
        f"first request: {recorder.peers[before : before + 1]!r}"
    )


def assert_cli(out: dict[str, Any], argv: list[str], *, as_json: bool = False) -> Any:
    """Exit 0, 1 or 2, no traceback, and with --json on 0/2 a JSON document on stdout."""
    code, stdout, stderr = out["code"], out["stdout"], out["stderr"]
    assert code in (0, 1, 2), f"exit code {code} for {argv!r}; stderr:\n{stderr[-3000:]}"
    assert "Traceback" not in stderr and "Traceback" not in stdout, f"traceback for {argv!r}:\n{stderr[-5000:]}"
    assert CANARY_TOKEN not in stdout, f"{argv!r} printed the canary"
    if code == 1 or not stdout.strip():
        assert stderr.strip() or code == 0 or stdout.strip(), f"exit {code} with no message for {argv!r}"
        return None
    if as_json:
        try:
            return json.loads(stdout)
        except json.JSONDecodeError as e:
            raise AssertionError(f"--json printed no JSON ({e}) for {argv!r}:\n{stdout[:2000]}") from None
    return None
