"""The static embeddings of the SUQL ranker (engines/suql/compiler/semantic.py) come from WordLlama's wheel alone:
loading them opens no connection, and they know what a question is about beyond its words."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from engines.suql.compiler import semantic


def test_loading_and_embedding_never_touch_the_network(monkeypatch):
    if semantic.package_dir() is None:
        pytest.skip("wordllama is not installed")

    def refuse(*_a, **_k):
        raise AssertionError("the embedder tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(semantic, "_embedder", None)
    monkeypatch.setattr(semantic, "_tried", False)
    model = semantic.embedder()
    assert model is not None
    v = model.vectors(["is the food spicy?", "the chili oil will make you sweat.", "service was friendly and quick."])
    assert v.shape == (3, model.dim)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-3)
    # no word in common, yet the chili sentence is nearer the question than the service one
    assert v[1] @ v[0] > v[2] @ v[0]


def test_without_the_package_the_ranker_has_no_embedder(monkeypatch):
    monkeypatch.setattr(semantic, "package_dir", lambda: None)
    monkeypatch.setattr(semantic, "_embedder", None)
    monkeypatch.setattr(semantic, "_tried", False)
    assert semantic.embedder() is None


def test_the_question_vector_weighs_its_content_words_over_its_function_words():
    model = semantic.embedder()
    if model is None:
        pytest.skip("wordllama is not installed")
    question = "is it romantic?"
    couples, laksa = model.vectors(["intimate and cozy, great for couples.", "loved the laksa."])
    written = model.vectors([question])[0]
    q = semantic.question_vector(model, question)
    assert np.isclose(np.linalg.norm(q), 1.0, atol=1e-3)
    # as written, "is it" pulls the question toward a dish sentence; its content word puts the couples first
    assert couples @ written < laksa @ written
    assert couples @ q > laksa @ q
    # hyphenated words stay whole; a question of stopwords alone is embedded as written
    both = model.vectors(["is it family-friendly?", "family-friendly"]).sum(axis=0)
    assert np.allclose(
        semantic.question_vector(model, "Is it family-friendly?"), both / np.linalg.norm(both), atol=1e-5
    )
    assert np.allclose(semantic.question_vector(model, "is it?"), model.vectors(["is it?"])[0])
