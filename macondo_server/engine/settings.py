"""Settings and data-directory resolution (stdlib only).

Precedence: built-in defaults < MACONDO_* environment < command-line flags.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ENV_DATA_DIR = "MACONDO_DATA_DIR"
PACKAGE_DATA = Path(__file__).resolve().parent.parent / "data"
DEFAULT_LEXICON = "SCOWL70"
# Game analysis: safety caps in seconds per turn or solve, set well above what the default work budgets need
# (the budgets, not the clock, decide an analysis, so that a seed gives the same one on any machine).
DEFAULT_SIM_CAP = 120.0
DEFAULT_PEG_CAP = 300.0
DEFAULT_ENDGAME_CAP = 120.0


def default_data_dirs() -> list[Path]:
    """The package's own lexica only: other word lists come from --data-dir or MACONDO_DATA_DIR (an
    installed package knows no development paths)."""
    return [PACKAGE_DATA / "lexica"]


def cache_dir() -> Path:
    """Where compiled word lists (NAME.kwg) are cached."""
    base = os.environ.get("MACONDO_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "macondo-py"
    return path


@dataclass
class Settings:
    data_dirs: list[Path] = field(default_factory=default_data_dirs)
    default_lexicon: str = DEFAULT_LEXICON

    @classmethod
    def load(cls, data_dir: str | None = None) -> Settings:
        """Explicit --data-dir first, then MACONDO_DATA_DIR (os.pathsep-separated), then the defaults.

        The package's bundled lexicon stays reachable in every case."""
        dirs: list[Path] = []
        chosen = data_dir or os.environ.get(ENV_DATA_DIR)
        if chosen:
            for part in chosen.split(os.pathsep):
                if part:
                    dirs.append(Path(part).expanduser())
            dirs.append(PACKAGE_DATA / "lexica")
        else:
            dirs = default_data_dirs()
        return cls(data_dirs=dirs)
