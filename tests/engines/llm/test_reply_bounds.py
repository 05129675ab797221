"""Issue 25, model replies: the claude and openai backends read a reply through a byte cap and
within an overall deadline per attempt, against a hostile server on 127.0.0.1
(tests/engines/llm/hostile_llm.py) speaking each backend's wire format.

Covered, for both backends: a reply just past the cap (honest content-length, chunked without one,
a small gzip body that decompresses past it, an error body) fails the call at once with an error
naming the backend and the setting, and is not asked again; a reply of exactly the cap is read; a
reply trickled a byte at a time ends at the deadline (and Esc still cancels it at once); the
setting's range; end to end, ``cs224v-tui ask`` past the cap says so and its peak RSS, taken from
the child process, stays small; and the Message Batches results download (a line past the cap,
more lines than requests, a trickle) stops with what it read kept.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

from engines.errors import Cancelled, LLMError, ReplyError
from engines.llm.batch import BatchRun, BatchStore
from engines.llm.bounded import ReplyTooLarge
from engines.llm.claude import ClaudeBackend
from engines.llm.client import llm_from_settings
from engines.llm.openai_compat import OpenAICompatBackend
from engines.llm.waiting import cancellable
from engines.settings import Settings
from engines.suql.tasks import SUMMARY, SummaryInput
from tests.engines.llm.hostile_llm import Answer, HostileServer, completion_of_size, message, message_of_size

REPO = Path(__file__).resolve().parents[3]
CAP = 64 * 1024  # the in-process tests' cap (set through the settings): payloads just past it stay small
PAST = CAP + 1024


@pytest.fixture
def server() -> Iterator[HostileServer]:
    s = HostileServer()
    yield s
    s.close()


def _no_sleep(_seconds: float) -> None:  # the retry backoff: nothing to wait for on 127.0.0.1
    pass


def openai_at(server: HostileServer, **overrides: Any) -> OpenAICompatBackend:
    values: dict[str, Any] = {
        "backend": "openai",
        "openai_base_url": server.url + "/v1",
        "openai_model": "M",
        "openai_max_retries": 2,
        "llm_reply_max_bytes": CAP,
        "cache_enabled": False,
    }
    values.update(overrides)
    return OpenAICompatBackend(Settings(**values), sleep=_no_sleep)


def claude_at(server: HostileServer, monkeypatch: pytest.MonkeyPatch, **overrides: Any) -> ClaudeBackend:
    """The claude backend as the app builds it (its own client, hooks and all), sent to the stub."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    values: dict[str, Any] = {
        "backend": "claude",
        "ANTHROPIC_API_KEY": "sk-test",
        "claude_max_retries": 2,
        "llm_reply_max_bytes": CAP,
        "cache_enabled": False,
    }
    values.update(overrides)
    return ClaudeBackend(Settings(**values), sleep=_no_sleep)


BACKENDS = ("openai", "claude")


def backend_at(kind: str, server: HostileServer, monkeypatch: pytest.MonkeyPatch, **overrides: Any) -> Any:
    if kind == "openai":
        return openai_at(server, **{f"openai_{k}": v for k, v in overrides.items()})
    return claude_at(server, monkeypatch, **{f"claude_{k}": v for k, v in overrides.items()})


def reply_of_size(kind: str, size: int) -> bytes:
    return completion_of_size(size) if kind == "openai" else message_of_size(size)


def named(kind: str, server: HostileServer) -> str:
    """How the errors name the backend used."""
    if kind == "openai":
        return f"The OpenAI-compatible server at {server.url}/v1"
    return f"Claude (the Anthropic API at {server.url})"


def summarise(backend: Any) -> str:
    try:
        return backend.run(SUMMARY, SummaryInput("A quiet room with candles.")).value
    finally:
        backend.close()


# --- the byte cap ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize(
    "shape",
    [
        pytest.param({}, id="content-length"),
        pytest.param({"chunked": True}, id="chunked"),
        pytest.param({"gzip": True}, id="gzip-bomb"),
    ],
)
def test_a_reply_just_past_the_cap_fails_once_naming_the_backend(kind, shape, server, monkeypatch):
    server.answer = Answer(reply_of_size(kind, PAST), **shape)
    with pytest.raises(ReplyTooLarge) as caught:
        summarise(backend_at(kind, server, monkeypatch))
    message = str(caught.value)
    assert message.startswith(f"{named(kind, server)} sent a reply to summary() larger than the 64 KiB cap")
    assert "raise CS224V_LLM_REPLY_MAX_BYTES (now 65,536)" in message and "\n" not in message
    if kind == "openai":
        assert "Claude" not in message and "Anthropic" not in message
    if shape.get("gzip"):  # a few hundred bytes on the wire: the cap counts what they decompress to
        assert server.sent < 2048 and "reading stopped at" in message
    elif shape.get("chunked"):  # read up to the first chunk past the cap, not to the end
        assert "reading stopped at" in message and CAP < caught.value.seen <= CAP + 64 * 1024
    else:
        assert f"declared as {PAST:,} bytes, so it was not read" in message
    assert not isinstance(caught.value, ReplyError)  # not one row's bad reply: the run stops and says why
    assert server.requests == 1  # not retried: the same request would get the same reply


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_reply_of_exactly_the_cap_is_read_and_one_byte_more_is_not(kind, server, monkeypatch):
    server.answer = Answer(reply_of_size(kind, CAP), chunked=True)
    text = summarise(backend_at(kind, server, monkeypatch))
    assert set(text) == {"x"} and CAP - 1024 < len(text) < CAP
    server.answer = Answer(reply_of_size(kind, CAP + 1), chunked=True)
    with pytest.raises(ReplyTooLarge, match="larger than the 64 KiB cap"):
        summarise(backend_at(kind, server, monkeypatch))


@pytest.mark.parametrize("kind", BACKENDS)
def test_an_error_body_past_the_cap_is_not_read_whole_nor_retried(kind, server, monkeypatch):
    """A 500 is retried, but not one whose body is past the cap: the SDK's own read of it is bounded too."""
    padded = json.dumps({"type": "error", "error": {"type": "api_error", "message": "x" * PAST}}).encode()
    server.answer = Answer(padded, status=500, chunked=True)
    with pytest.raises(ReplyTooLarge, match="^" + re.escape(f"{named(kind, server)} sent a reply to summary() larger")):
        summarise(backend_at(kind, server, monkeypatch))
    assert server.requests == 1


def test_the_cap_is_a_setting_with_a_range():
    assert Settings().llm_reply_max_bytes == 4 * 1024 * 1024
    for wrong in (1000, 2 * 1024**3):
        with pytest.raises(pydantic.ValidationError, match="llm_reply_max_bytes"):
            Settings(llm_reply_max_bytes=wrong)


# --- the deadline ----------------------------------------------------------------------------------


def in_thread(call: Callable[[], Any], seconds: float) -> tuple[bool, Any, float]:
    """(finished within ``seconds``, what ``call`` returned or raised, how long it took)."""
    out: list[Any] = []
    started = time.monotonic()

    def work() -> None:
        try:
            out.append(call())
        except BaseException as e:  # handed to the test
            out.append(e)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive(), out[0] if out else None, time.monotonic() - started


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_trickling_reply_ends_at_the_deadline_and_esc_still_cancels_it(kind, server, monkeypatch):
    server.answer = Answer(trickle_s=0.1)  # one byte every 0.1 s, for ever: every read is quick
    # Esc, in the middle of a trickle, with a long deadline: at once
    backend = backend_at(kind, server, monkeypatch, timeout_s=60.0)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()

    def cancelled() -> Any:
        with cancellable(cancel):
            return summarise(backend)

    done, outcome, took = in_thread(cancelled, 20)
    assert done and isinstance(outcome, Cancelled) and took < 5
    # no Esc: the 1 s deadline of each of the two attempts ends it
    requests = server.requests
    done, outcome, took = in_thread(
        lambda: summarise(backend_at(kind, server, monkeypatch, timeout_s=1.0, max_retries=1)), 20
    )
    assert done, "a trickling reply kept the call alive"
    assert isinstance(outcome, LLMError) and not isinstance(outcome, ReplyError), outcome
    assert "within 1s" in str(outcome) and "2 attempts" in str(outcome) and "summary()" in str(outcome)
    assert ("CS224V_OPENAI_TIMEOUT_S" if kind == "openai" else "CS224V_CLAUDE_TIMEOUT_S") in str(outcome)
    assert server.requests - requests == 2 and 1.8 < took < 10


# --- end to end: the command line, memory taken from the child process -----------------------------

#: Runs the command line in a grandchild and reports its exit code, output and peak RSS (kB): the
#: only child of this short-lived process, so RUSAGE_CHILDREN is that command's own peak.
MEASURE = (
    "import json, resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=90)\n"
    "print(json.dumps([p.returncode, p.stdout, p.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n"
)


@pytest.mark.parametrize("kind", BACKENDS)
def test_ask_past_the_default_cap_is_a_clear_error_in_little_memory(kind, server, tmp_path):
    default_cap = Settings().llm_reply_max_bytes
    server.answer = Answer(reply_of_size(kind, default_cap + 64 * 1024), chunked=True)  # just past 4 MiB
    env = {**os.environ, "PYTHONPATH": str(REPO), "CS224V_CACHE_DIR": str(tmp_path / "cache")}
    argv = ["ask", "any thai food?", "--no-cache", "--backend", kind]
    if kind == "openai":
        argv += ["--base-url", server.url + "/v1", "--model", "M"]
    else:
        env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=server.url)
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, sys.executable, "-m", "tui.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    code, _out, err, peak_kb = json.loads(proc.stdout)
    assert code == 1 and "Traceback" not in err, err[-2000:]
    assert f"{named(kind, server)} sent a reply to route() larger than the 4 MiB cap" in err, err[-2000:]
    assert "CS224V_LLM_REPLY_MAX_BYTES" in err
    if kind == "openai":
        assert "Claude" not in err
    assert server.requests == 1  # not retried (the default retries are 2 and 4)
    assert peak_kb < 300 * 1024, f"peak RSS {peak_kb / 1024:.0f} MB"


# --- the Message Batches results download ----------------------------------------------------------


def batch_object(url: str, batch_id: str, count: int) -> dict:
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": "ended",
        "request_counts": {"processing": 0, "succeeded": count, "errored": 0, "canceled": 0, "expired": 0},
        "created_at": "2026-12-01T12:00:00Z",
        "expires_at": "2026-12-02T12:00:00Z",
        "ended_at": "2026-12-01T12:05:00Z",
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"{url}/v1/messages/batches/{batch_id}/results",
    }


def result_line(custom_id: str, text: str) -> bytes:
    return json.dumps({"custom_id": custom_id, "result": {"type": "succeeded", "message": message(text)}}).encode()


def _past_the_cap(ids: list[str]) -> Answer:
    return Answer(result_line(ids[0], "A summary.") + b"\n" + result_line(ids[1], "x" * PAST) + b"\n")


def _more_than_asked(ids: list[str]) -> Answer:
    return Answer(b"".join(result_line(i, "A summary.") + b"\n" for i in [*ids, "f" * 64]))


def _trickle(_ids: list[str]) -> Answer:
    return Answer(trickle_s=0.1)


@pytest.mark.parametrize(
    "results, expected",
    [
        pytest.param(
            _past_the_cap,
            "sent a line of the results of message batch mb_1 larger than the 64 KiB cap",
            id="line-past-cap",
        ),
        pytest.param(
            _more_than_asked,
            "sent more result lines for the results of message batch mb_1 than its 2 requests",
            id="more-lines",
        ),
        pytest.param(_trickle, "did not finish sending the results of message batch mb_1 within 1s", id="trickle"),
    ],
)
def test_a_hostile_results_download_stops_and_keeps_what_it_read(results, expected, server, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    s = Settings(
        backend="claude",
        ANTHROPIC_API_KEY="sk-test",
        cache_dir=tmp_path / "cache",
        batch_poll_s=0.01,
        claude_max_retries=0,
        claude_timeout_s=1.0,
        llm_reply_max_bytes=CAP,
    )
    ids: list[str] = []

    def route(method: str, path: str, raw: bytes) -> Answer:
        if method == "POST":  # the batch is created
            ids.extend(r["custom_id"] for r in json.loads(raw)["requests"])
            return Answer(json.dumps(batch_object(server.url, "mb_1", len(ids))).encode())
        if path.endswith("/results"):
            return results(ids)
        return Answer(json.dumps(batch_object(server.url, "mb_1", len(ids))).encode())

    server.route = route
    run = BatchRun(s, progress=lambda _line: None, sleep=_no_sleep)  # its own client, as the app builds it

    def work() -> None:
        llm = llm_from_settings(s)
        for text in ("Review one.", "Review two."):
            llm.run(SUMMARY, SummaryInput(text))

    done, outcome, took = in_thread(lambda: run.run(work), 20)
    assert done, "the results download did not stop"
    assert isinstance(outcome, LLMError) and expected in str(outcome), outcome
    assert "\n" not in str(outcome) and took < 10
    store = BatchStore(s.cache_dir)
    assert store.pending() == [("mb_1", 2)]  # not collected: running the command again resumes it
    if results is not _trickle:  # the lines read before the bad one are kept
        assert store.result(ids[0]) is not None
    store.close()
    run.store.close()


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_long_error_explanation_is_quoted_in_one_short_line(kind, server, monkeypatch):
    """Under the cap, an error body's message is still the server's: quoted, but not 60 KB of it."""
    text = "Forbidden.\n" + "x" * (60 * 1024)
    server.answer = Answer(
        json.dumps({"type": "error", "error": {"type": "permission_error", "message": text}}).encode(), status=403
    )
    with pytest.raises(LLMError) as caught:
        summarise(backend_at(kind, server, monkeypatch))
    message = str(caught.value)
    assert "(403): Forbidden. xxx" in message and "x…" in message and len(message) < 600 and "\n" not in message
    assert server.requests == 1
