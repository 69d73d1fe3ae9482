"""Shared fixtures. Tests that need the shared NWL20/CSW21 lexica skip cleanly when they are absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
# (an empty variable counts as unset, as in the shell's ${VAR:-default})
SHARED = Path(os.environ.get("MACONDO_SHARED_DIR") or ROOT.parent / "shared")
LEXICA = Path(os.environ.get("MACONDO_DATA_DIR") or SHARED / "lexica")
CASES_DIR = SHARED / "cases"
if LEXICA.is_dir():
    # The package's default data directory holds only its bundled lexicon: the shared lexica reach every
    # Settings.load() and every `python -m macondo_server` subprocess of the tests through the environment.
    os.environ["MACONDO_DATA_DIR"] = str(LEXICA)


# GCG records: the project's own (but the two in a language no lexicon here is for) and the shared
# cases' games
GCG_DATA = ROOT / "tests" / "data" / "gcg"
GCG_FOREIGN = {"polish_tiles.gcg", "polish_distribution.gcg"}
GCG_OWN = sorted(p for p in GCG_DATA.glob("*.gcg") if p.name not in GCG_FOREIGN)
GCG_SHARED = sorted((CASES_DIR / "gcg").glob("*.gcg")) if (CASES_DIR / "gcg").is_dir() else []
GCG_ALL = GCG_OWN + GCG_SHARED


def have_lexicon(name: str) -> bool:
    return (LEXICA / f"{name}.txt").is_file() or (LEXICA / f"{name}.kwg").is_file()


needs_nwl20 = pytest.mark.skipif(not have_lexicon("NWL20"), reason="shared NWL20 lexicon absent")
needs_csw21 = pytest.mark.skipif(not have_lexicon("CSW21"), reason="shared CSW21 lexicon absent")
needs_cases = pytest.mark.skipif(not (CASES_DIR / "cases.jsonl").is_file(), reason="shared cases absent")


def load_cases(kind: str) -> list[dict]:
    path = CASES_DIR / "cases.jsonl"
    if not path.is_file():
        return []
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            case = json.loads(line)
            if case["kind"] == kind:
                out.append(case)
    return out


def shared_settings() -> Settings:
    dirs = [LEXICA] if LEXICA.is_dir() else []
    return Settings.load(os.pathsep.join(str(d) for d in dirs) or None)


@pytest.fixture(scope="session")
def registry() -> LexiconRegistry:
    return LexiconRegistry(shared_settings())


@pytest.fixture(scope="session")
def engine():
    from macondo_server.engine.facade import Engine

    return Engine(shared_settings())


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compiled word lists go to a per-session cache, never the user's."""
    os.environ.setdefault("MACONDO_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


# a gRPC server for a test module (3 jobs at a time) and a client of it; modules needing other settings define
# their own
@pytest.fixture(scope="module")
def server():
    from macondo_server.api.grpc_server import create_server

    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=3)
    yield running
    running.stop(1)


@pytest.fixture
def client(server):
    from macondo_client import Client

    with Client(f"127.0.0.1:{server.port}") as c:
        yield c
