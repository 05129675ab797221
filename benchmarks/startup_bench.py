"""Time to the first screen: cs224v-tui against a minimal Textual app, in the same run.

    python benchmarks/startup_bench.py                 # 5 runs of each, 80x24
    python benchmarks/startup_bench.py --runs 9 --size 140x40

Method: each app is spawned as a fresh process (``python -c ...``) on a pseudo-terminal of the given
size, with ``TERM=xterm-256color``, and the clock runs from just before the spawn until the bytes the
app wrote to the terminal contain both its header title and its footer's last key label — i.e. the
first frame that draws the header and the footer really reached the terminal (Textual writes a frame
in one go, so this is the first paint, not a hook inside the app).  The process is then sent Ctrl+Q
and, if it lingers, killed.  The minimal app is ``App`` with a ``Header`` (title ``minimal-app``) and a
``Footer`` with one Ctrl+Q binding: the cost of Python + Textual + one frame on this machine.  The app
is started the way ``cs224v-tui`` starts it (``tui.cli.main``, sim backend, ``--no-cache``).

The report gives the median (and min) of each and their ratio; the targets (issue 15) are a first
screen within 1.0 s on an idle machine and within 1.5x the minimal app.  Not a test: the numbers
depend on the machine and its load (the load average is printed with them).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MINIMAL = """
from textual.app import App
from textual.binding import Binding
from textual.widgets import Footer, Header

class Minimal(App):
    TITLE = "minimal-app"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit")]
    def compose(self):
        yield Header()
        yield Footer()

Minimal().run()
"""

APP = """
import sys
from tui.cli import main

sys.exit(main(["--no-cache"]))
"""

# What the first frame must contain: (header title, a footer key label drawn from the bindings).
MARKERS = {
    "minimal": (b"minimal-app", b"Quit"),
    "cs224v-tui": (b"cs224v-tui", b"Help"),
}


def first_frame(code: str, markers: tuple[bytes, ...], size: tuple[int, int], timeout: float) -> float:
    """Seconds from spawn until every marker has been written to the terminal (inf on timeout)."""
    cols, rows = size
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLORTERM="", TEXTUAL="", PYTHONPATH=str(ROOT), CS224V_BACKEND="sim")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    elapsed = float("inf")
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
                if all(m in seen for m in markers):
                    elapsed = time.perf_counter() - start
                    break
            if proc.poll() is not None:
                break
    finally:
        try:
            os.write(master, b"\x11")  # Ctrl+Q
        except OSError:
            pass
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # drain so the child is never blocked writing
        try:
            while select.select([master], [], [], 0)[0] and os.read(master, 65536):
                pass
        except OSError:
            pass
        os.close(master)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5, help="runs of each app, interleaved (default 5)")
    p.add_argument("--size", default="80x24", help="terminal COLSxROWS (default 80x24)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a first frame (default 30)")
    args = p.parse_args(argv)
    cols, rows = (int(n) for n in args.size.lower().split("x"))

    times: dict[str, list[float]] = {"minimal": [], "cs224v-tui": []}
    codes = {"minimal": MINIMAL, "cs224v-tui": APP}
    first_frame(MINIMAL, MARKERS["minimal"], (cols, rows), args.timeout)  # warm the OS file cache
    first_frame(APP, MARKERS["cs224v-tui"], (cols, rows), args.timeout)
    for _ in range(args.runs):
        for name in times:
            times[name].append(first_frame(codes[name], MARKERS[name], (cols, rows), args.timeout))

    load = os.getloadavg()[0]
    print(
        f"first frame (header + footer on the terminal), {args.runs} runs each, {cols}x{rows}, "
        f"{os.cpu_count()} CPUs, load average {load:.2f}"
    )
    for name, values in times.items():
        print(
            f"  {name:<11} median {statistics.median(values):6.3f} s   min {min(values):6.3f} s   "
            f"all {' '.join(f'{v:.2f}' for v in values)}"
        )
    ratio = statistics.median(times["cs224v-tui"]) / statistics.median(times["minimal"])
    best = min(times["cs224v-tui"]) / min(times["minimal"])
    app_median = statistics.median(times["cs224v-tui"])
    print(f"  ratio cs224v-tui / minimal: median {ratio:.2f}x, min {best:.2f}x (target <= 1.5x)")
    print(f"  cs224v-tui median {app_median:.3f} s (target <= 1.0 s on an idle machine)")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
