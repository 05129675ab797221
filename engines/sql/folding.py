"""How the Restaurants agent compares a value a person typed with the data's values: case-folded, accents dropped
(Unicode NFKD, combining marks removed), on both sides. Only ever used to compare; the values themselves travel
into SQL as literals on parsed trees, never pasted into its text."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Case-folded, without accents: 'Café' -> 'cafe', 'Pälo Àlto' -> 'palo alto', 'Straße' -> 'strasse'."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).strip()
