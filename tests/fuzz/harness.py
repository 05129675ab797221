"""The fuzz suite's harness: every example runs in a worker process the test can kill.

A hostile input may hang (a catastrophic regex holds the GIL, so no thread can stop it), eat
memory, or abort the interpreter (a Rust panic in a store).  None of that may take pytest down
with it or leave the machine short of memory, so examples run in a long-lived *worker process*
(one per test module, holding that module's sessions and worlds):

* the worker is spawned with a hermetic environment (no ``CS224V_*`` of the developer, no API key,
  a temporary answer cache, a short query timeout) and an address-space limit, so a memory bomb
  fails inside it instead of swapping the machine;
* :meth:`Worker.call` sends one job and waits at most ``limit_s``; a job that outlasts it is a
  **hang**, a worker that dies is a **crash** (its exit code or signal is reported), an exception
  that is not an ``EngineError`` is a **traceback** (its text is reported), a peak RSS over
  ``RSS_LIMIT_BYTES`` is a **memory** failure.  After a hang, crash or memory failure the worker
  is killed (by its own pid) and a fresh one is started for the next example.

The jobs themselves live in :mod:`tests.fuzz.jobs`; they return plain data (dicts of str/int/…).
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUERY_TIMEOUT_S = 1.0  # CS224V_QUERY_TIMEOUT_S inside the worker
SLACK_S = 5.0  # an example may take the timeout plus this before it counts as a hang
ADDRESS_SPACE_BYTES = 6 << 30  # the worker's RLIMIT_AS: a bomb fails inside it, the machine stays fine
RSS_LIMIT_BYTES = 2 << 30  # issue 10 item 3: a refused bomb stays under 2 GB of RSS
STARTUP_S = 120.0
CANARY_TOKEN = "canary-4f1c9e-do-not-read"  # in a file, and in every reply of the recording server  # spawning and importing (generous: two cores are shared)


def fuzz_scale() -> float:
    """``CS224V_FUZZ_SCALE`` (read at import, before the hermetic fixture strips ``CS224V_*``):
    multiplies every fuzz test's number of examples; 10 runs the suite ten times longer."""
    try:
        return max(0.01, float(os.environ.get("CS224V_FUZZ_SCALE", "1")))
    except ValueError:
        return 1.0


SCALE = fuzz_scale()
# CS224V_FUZZ_GENERATE_ONLY=1 skips the pinned @example inputs, to hunt for new bugs while known
# ones are still open (a failing explicit example stops hypothesis before it generates anything).
GENERATE_ONLY = os.environ.get("CS224V_FUZZ_GENERATE_ONLY", "") not in ("", "0")


def examples(n: int) -> int:
    return max(1, round(n * SCALE))


class FuzzFailure(AssertionError):
    """An example broke a property: hang, crash, traceback, memory or a violated invariant."""


# --- the worker's side -------------------------------------------------------------------------


def _serve(conn: Any, address_space: int) -> None:  # pragma: no cover - runs in the worker
    try:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    except (ValueError, OSError):
        pass
    from tests.fuzz import jobs

    conn.send(("ready", None, 0))
    while True:
        try:
            name, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = getattr(jobs, name)(*args)
            reply: tuple[str, Any] = ("ok", result)
        except BaseException as e:
            reply = ("raised", f"{type(e).__module__}.{type(e).__qualname__}\n{traceback.format_exc()}")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
        try:
            conn.send((*reply, rss))
        except BaseException as e:
            conn.send(("raised", f"cannot send the job's result: {e!r}", rss))


# --- the test's side ---------------------------------------------------------------------------


@dataclass
class Outcome:
    result: Any
    elapsed_s: float
    rss: int


class Worker:
    """A killable worker process for one test module; ``env`` is its whole environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None
        self.restarts = 0

    def start(self) -> None:
        parent, child = self._ctx.Pipe()
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)  # spawn hands the child this environment
        try:
            proc = self._ctx.Process(target=_serve, args=(child, ADDRESS_SPACE_BYTES), daemon=True)
            proc.start()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        child.close()
        try:
            if not parent.poll(STARTUP_S):
                raise EOFError
            parent.recv()
        except (EOFError, OSError):
            self._kill(proc)
            raise RuntimeError(f"the fuzz worker did not start (exit code {proc.exitcode})") from None
        self._proc, self._conn = proc, parent

    def _kill(self, proc: Any) -> None:
        if proc is not None and proc.is_alive():
            proc.kill()  # this worker's own pid only
        if proc is not None:
            proc.join(10)

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._kill(self._proc)
        self._proc = self._conn = None

    def _restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    def call(self, job: str, *args: Any, limit_s: float = QUERY_TIMEOUT_S + SLACK_S) -> Outcome:
        """Run ``job(*args)`` in the worker; raise :class:`FuzzFailure` on a hang, crash,
        traceback or too much memory."""
        if self._proc is None:
            self.start()
        what = f"{job}{_short(args)}"
        started = time.monotonic()
        try:
            self._conn.send((job, args))
            ready = self._conn.poll(limit_s)
        except (BrokenPipeError, EOFError, OSError):
            ready = True  # the recv below reports the dead worker
        elapsed = time.monotonic() - started
        if not ready:
            self._restart()
            raise FuzzFailure(f"hang: {what} ran longer than {limit_s:g} s (worker killed)")
        try:
            status, payload, rss = self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._restart()
            raise FuzzFailure(f"crash: the process died (exit code {code}) running {what}") from None
        elapsed = time.monotonic() - started
        if rss > RSS_LIMIT_BYTES:
            self._restart()
            raise FuzzFailure(f"memory: peak RSS {rss / 2**30:.1f} GB after {what}")
        if status == "raised":
            raise FuzzFailure(f"traceback from {what}:\n{payload}")
        return Outcome(payload, elapsed, rss)


def _short(args: tuple[Any, ...], width: int = 600) -> str:
    text = repr(args)
    return text if len(text) <= width else text[: width - 1] + "…"


def hermetic_env(cache_dir: Path, **extra: str) -> dict[str, str]:
    """The process environment minus the developer's ``CS224V_*`` and API key, plus the fuzz
    settings (as a user would set them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CS224V_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        {
            "CS224V_CACHE_DIR": str(cache_dir),
            "CS224V_QUERY_TIMEOUT_S": str(QUERY_TIMEOUT_S),
            "TEXTUAL_ANIMATIONS": "none",
            "PYTHONHASHSEED": "0",
        }
    )
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env.update(extra)
    return env


__all__ = ["Worker", "Outcome", "FuzzFailure", "hermetic_env", "examples", "SCALE", "QUERY_TIMEOUT_S", "SLACK_S"]
