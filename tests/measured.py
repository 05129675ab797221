"""The CLI run in a child process of its own, with its peak RSS: what a bound on memory is measured by.

:func:`run_measured` starts a small Python process that runs ``cs224v-tui ARGV`` as its one child and
reports ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``: the peak RSS of the largest process of that
tree (the CLI, or a SPARQL worker it waited for), untouched by whatever else the test process ran before.
The CLI gets a soft address-space cap, a safety net for the machine should a bound ever break.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_MEASURE = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    argv, soft = json.loads(sys.argv[1]), int(sys.argv[2])
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (soft, resource.getrlimit(resource.RLIMIT_AS)[1]))
    began = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "tui.cli", *argv], capture_output=True, text=True,
                           preexec_fn=cap, timeout=120)
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        code, out, err = "timeout", "", ""
    print(json.dumps({"code": code, "stdout": out, "stderr": err, "elapsed": time.monotonic() - began,
                      "rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
    """
)


def run_measured(*argv: str, soft_address_space: int = 3 << 30, **env: str) -> dict:
    """``cs224v-tui ARGV`` in a child process: exit code, output, seconds and the peak RSS of the
    largest process of its tree (the CLI or a SPARQL worker)."""
    environment = {**os.environ, **env}
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, json.dumps(list(argv)), str(soft_address_space)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=180,
    )
    return json.loads(done.stdout)


def one_line_error(err: str) -> str:
    """The one line of a clear error message (no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]
