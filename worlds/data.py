"""Where the shared data is by default: ``../shared/data`` beside a source checkout.

The data (HybridQA tables, the SPINACH dev set and metric cases, the SUQL paper's queries) is not part
of the package.  Which folder to read is the ``data_dir`` setting (``CS224V_DATA``); this is its
default, and worlds that read real data take the folder as an argument.
"""

from __future__ import annotations

from pathlib import Path


def checkout_data_dir() -> Path | None:
    """``shared/data`` in the checkout or beside it (or beside the working directory), if present."""
    here = Path(__file__).resolve()
    candidates = [p / "shared" / "data" for p in here.parents[1:3]]
    candidates.append(Path.cwd().parent / "shared" / "data")
    return next((c for c in candidates if c.is_dir()), None)
