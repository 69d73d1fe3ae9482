"""The generated TypeScript client (clients/ts) under Node against a live server: every RPC over Connect,
gRPC-Web and gRPC, a stream stopped with StopJob, one cancelled, a deadline, typed errors
(clients/ts/test/engine.test.mjs); Catalan and Polish positions round-tripped and their moves generated
(clients/ts/test/languages.test.mjs). Skipped where node/npm are absent."""

from __future__ import annotations

import json
import os
import runpy
import subprocess

import pytest

from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings

from conftest import (
    CASES_DIR,
    LEXICA,
    ROOT,
    have_lexicon,
    load_cases,
    needs_cases,
    needs_nwl20,
    shared_settings,
)

TS = ROOT / "clients" / "ts"
EMPTY = "/".join(["15"] * 15)


def build_ts_client() -> str | None:
    """The client built (web/build.py: npm ci from the lock, buf generate from proto/, tsc;
    skipped when nothing changed); the reason when that cannot be done here."""
    try:
        return runpy.run_path(str(ROOT / "web" / "build.py"))["build"]()
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"building clients/ts failed: {exc}")


def _case(case_id: str) -> dict:
    for kind in ("peg", "endgame"):
        for case in load_cases(kind):
            if case["id"] == case_id:
                return case
    pytest.skip(f"case {case_id} absent")


@needs_cases
@needs_nwl20
def test_typescript_client_every_rpc():
    reason = build_ts_client()
    if reason:
        pytest.skip(reason)
    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=4, http=HttpOptions(port=0))
    assert running.http is not None
    try:
        env = {**os.environ,
               "MACONDO_HTTP_URL": f"http://127.0.0.1:{running.http.port}",
               "MACONDO_GRPC_URL": f"http://127.0.0.1:{running.port}",
               "MACONDO_START_CGP": f"{EMPTY} AEINQST/ 0/0 0",
               "MACONDO_ENDGAME_CGP": _case("eg-canik-nwl20")["cgp"],
               "MACONDO_PEG_CGP": _case("peg-onyx-nwl20")["cgp"]}
        proc = subprocess.run(["node", "--test", "test/engine.test.mjs"], cwd=TS, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "# fail 0" in proc.stdout and "# pass 5" in proc.stdout, proc.stdout[-3000:]
    finally:
        running.stop(1)


def language_case(case_id: str) -> dict:
    """A case of the shared languages.jsonl (MAGPIE's and Macondo's own test positions)."""
    path = CASES_DIR / "languages.jsonl"
    if path.is_file():
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                case = json.loads(line)
                if case["id"] == case_id:
                    return case
    pytest.skip(f"the language case {case_id} is absent")


# Polish words for a lexicon of the test's own (no Polish lexicon is shared): OSPS names the polish distribution
POLISH_WORDS = ("ŻÓŁW", "ŁĄKA", "WĄŻ", "ŁĄK", "WAŁ", "ŻAL", "KAŁ")


@pytest.mark.skipif(not have_lexicon("DISC2"), reason="shared DISC2 lexicon absent")
def test_typescript_client_catalan_and_polish(tmp_path):
    reason = build_ts_client()
    if reason:
        pytest.skip(reason)
    catalan = language_case("magpie_cgp_roundtrip_catalan_cgp")["expect"]["written_cgp_equals"]
    polish = language_case("magpie_cgp_roundtrip_polish_cgp")["expect"]["written_cgp_equals"]
    (tmp_path / "OSPSTINY.txt").write_text("\n".join(POLISH_WORDS) + "\n", encoding="utf-8")
    settings = Settings.load(os.pathsep.join([str(tmp_path), str(LEXICA)]))
    running = create_server(settings, "127.0.0.1", 0, max_jobs=2, http=HttpOptions(port=0))
    assert running.http is not None
    try:
        env = {**os.environ,
               "MACONDO_HTTP_URL": f"http://127.0.0.1:{running.http.port}",
               "MACONDO_GRPC_URL": f"http://127.0.0.1:{running.port}",
               "MACONDO_CATALAN_CGP": catalan, "MACONDO_CATALAN_LEXICON": "DISC2",
               "MACONDO_POLISH_CGP": polish, "MACONDO_POLISH_LEXICON": "OSPSTINY"}
        proc = subprocess.run(["node", "--test", "test/languages.test.mjs"], cwd=TS, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "# fail 0" in proc.stdout and "# pass 4" in proc.stdout and "# skipped 0" in proc.stdout, \
            proc.stdout[-3000:]
    finally:
        running.stop(1)
