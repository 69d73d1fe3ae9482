"""Where the benchmarks find the shared NWL20/CSW21 lexica: the package's defaults hold only its own
bundled lexicon, so the benchmarks pass the development data explicitly."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("MACONDO_SHARED_DIR", Path(__file__).resolve().parent.parent.parent / "shared"))


def shared_lexica() -> str | None:
    """MACONDO_DATA_DIR when set, else ../shared/lexica beside the checkout when it exists, else None."""
    if os.environ.get("MACONDO_DATA_DIR"):
        return os.environ["MACONDO_DATA_DIR"]
    path = SHARED / "lexica"
    return str(path) if path.is_dir() else None
