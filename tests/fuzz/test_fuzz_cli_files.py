"""Fuzz the files and file names the command line is given (issue 25): ``spinach --replay`` on hostile logs
(deep nesting, odd shapes, escape sequences and bidi overrides, lone surrogates, non-UTF-8, ``/dev/zero``) and
``--out`` names (past the 255 bytes a name may have, odd characters).  Exit 0/1/2, never a traceback, no hang,
within the memory bound; and what a command prints as text holds no control character of the data."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S
from tests.fuzz.properties import assert_cli, fuzz_settings
from tests.fuzz.strategies import out_name, replay_log_bytes

REPLAY_LIMIT_S = 20  # reading 64 MiB of /dev/zero (the default cap) and refusing it takes well under a second
RAW_CONTROL = ("\x1b", "\x07", "\x9b", "\u202e", "\x7f")


def _write(files: Path, content: bytes) -> Path:
    path = files / f"{hashlib.sha1(content).hexdigest()}.log"
    path.write_bytes(content)
    return path


@fuzz_settings(20)
@given(content=replay_log_bytes(), kind=st.sampled_from(("file",) * 9 + ("dev-zero",)), as_json=st.booleans())
@example(content=b"[" * 100_000 + b"]" * 100_000, kind="file", as_json=False)  # issue 25: deep JSON (exit 70)
@example(
    content=b'[{"question": "q", "actions": [], "x": ' + b"[" * 600 + b"]" * 600 + b"}]", kind="file", as_json=True
)  # issue 25: nested deep enough to load, then to break what walks it (exit 70)
@example(content=b"", kind="dev-zero", as_json=False)  # issue 25: --replay /dev/zero grew without bound (exit 70)
@example(
    content=b'[{"question": "\\u001b]0;PWNED\\u0007 \\u202e \\udcff", "actions": []}]', kind="file", as_json=False
)  # issue 25: an escape sequence, a bidi override and a lone surrogate reached the terminal raw
def test_cli_replay(worker, files, content, kind, as_json):
    path = "/dev/zero" if kind == "dev-zero" else str(_write(files, content))
    argv = ["spinach", "--replay", path, *(["--json"] if as_json else [])]
    out = worker.call("cli", argv, limit_s=REPLAY_LIMIT_S).result
    assert_cli(out, argv, as_json=as_json)
    printed = out["stderr"] + ("" if as_json else out["stdout"])
    assert not any(ch in printed for ch in RAW_CONTROL), f"a control character reached the terminal: {argv!r}"


@fuzz_settings(10)
@given(
    name=out_name(),
    command=st.sampled_from((["sql", "SELECT 1 AS one"], ["sparql", "SELECT ?s WHERE { ?s ?p ?o } LIMIT 2"])),
)
@example(name="r" * 296 + ".csv", command=["sql", "SELECT 1 AS one"])  # issue 25: a 300-character --out (exit 70)
@example(name="r" * 251 + ".csv", command=["sql", "SELECT 1 AS one"])  # 255 bytes: valid, and written
def test_cli_out_names(worker, files, name, command):
    target = files / name
    argv = [*command, "--out", str(target)]
    out = worker.call("cli", argv, limit_s=QUERY_TIMEOUT_S + 20).result
    assert_cli(out, argv)
    if out["code"] == 0:
        assert target.is_file(), f"exit 0 but {name!r} was not written"
    elif len(name.encode()) > 255:
        assert out["code"] == 2 and "the file name is too long" in out["stderr"], out["stderr"][-2000:]
