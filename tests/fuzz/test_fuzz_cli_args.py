"""Fuzz the command line itself: every command with odd arguments and options, including invalid
UTF-8 (which Python hands over as lone surrogates, ``\\udcff``).  Exit 0/1/2, never a traceback."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S
from tests.fuzz.properties import assert_cli, fuzz_settings
from tests.fuzz.strategies import nasty_text

# what Python makes of bytes that are not UTF-8 (surrogateescape: only \udc80-\udcff occur; b"\xc3\x28" is "\udcc3(")
INVALID_UTF8 = st.sampled_from(("\udcff", "caf\udce9", "\udcc3(", "x\udc80y", "\udced\udca0\udc80"))
ARG = st.one_of(
    nasty_text(3),
    INVALID_UTF8,
    st.builds(lambda a, b: a + b, nasty_text(2), INVALID_UTF8),
    st.sampled_from(("-", "--", "-1", "--json", "1e9", "nan", "-0", "A", "B-duckdb", "memory", "")),
)
COMMANDS = st.sampled_from(
    (
        ["sql"],
        ["ask"],
        ["ask", "--suql"],
        ["suql"],
        ["suql", "--mode", "B-duckdb"],
        ["suql", "--world"],
        ["suql", "--file"],
        ["sparql"],
        ["sparql", "--store", "oxigraph"],
        ["spinach", "--save"],
        ["score"],
        ["score", "x.json"],
        ["suql", "--workload", "--queries"],
        ["sql", "SELECT 1", "--seed"],
        ["sql", "SELECT 1", "--latency"],
        ["sql", "SELECT 1", "--classify"],
    )
)


@fuzz_settings(15)
@given(command=COMMANDS, args=st.lists(ARG, min_size=1, max_size=3))
@example(command=["ask"], args=["\udcff"])  # issue 10 item 5: invalid UTF-8 in an argument (print() raised)
@example(command=["sql"], args=["SELECT '\udcff'"])
@example(command=["sparql"], args=["SELECT * WHERE { ?s ?p '\udcff' }"])
@example(command=["suql"], args=["SELECT name FROM restaurants WHERE name = '\udcff'"])
@example(command=["suql", "--workload", "--queries"], args=["-5"])
@example(command=["sql", "SELECT 1", "--latency"], args=["nan"])
def test_cli_arguments(worker, files, command, args):
    argv = [*command, *args]
    if command == ["suql", "--file"] or command == ["score", "x.json"]:
        argv = [*command[:-1], str(files / args[0].replace("/", "_").replace("\x00", "_")), *args[1:]]
    assert_cli(worker.call("cli", argv, limit_s=QUERY_TIMEOUT_S + 30).result, argv)
