"""The generated TypeScript client (clients/ts) under Node against a live server: every RPC over Connect,
gRPC-Web and gRPC, a stream stopped with StopJob, one cancelled, a deadline, typed errors
(clients/ts/test/engine.test.mjs). Skipped where node/npm are absent."""

from __future__ import annotations

import os
import runpy
import subprocess

import pytest

from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server

from conftest import ROOT, load_cases, needs_cases, needs_nwl20, shared_settings

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
        proc = subprocess.run(["node", "--test", "test/"], cwd=TS, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "# fail 0" in proc.stdout and "# pass 5" in proc.stdout, proc.stdout[-3000:]
    finally:
        running.stop(1)
