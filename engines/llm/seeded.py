"""Seeded randomness keyed on (seed, input): the same input always draws the same number."""

from __future__ import annotations

import hashlib


def unit(seed: int, *parts: str) -> float:
    """A number in [0, 1) determined by ``seed`` and ``parts`` alone."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(seed).encode())
    for p in parts:
        h.update(b"\x00")
        h.update(p.encode("utf-8", "surrogatepass"))
    return int.from_bytes(h.digest(), "big") / 2**64
