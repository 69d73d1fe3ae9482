"""The web board in headless Chromium against servers with TLS and bearer tokens (web/test/secure.mjs): served
over https by the server itself; without a token the board says the server requires one (401) and stops
polling; a wrong token and one in the wrong form are refused with clear words; with the right token the RPCs
work; a proxy sending application/grpc over HTTP/1.1 gets a clear 415; a host name the server does not answer
to is refused (403); after too many failed tokens the board shows the 429 and when to retry. Chromium accepts
the test certificate by the hash of its key only. Skipped where chromium, node/npm or openssl are absent."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from test_security_auth import ALICE, pki  # noqa: F401  (the fixture)
from test_web import SHOTS, need_board, run_script

from macondo_server.api.auth import Security, TlsFiles, Tokens
from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings
from macondo_server.runtime.limits import Limits

from conftest import ROOT

EMPTY = "/".join(["15"] * 15)
CGP = f"{EMPTY.replace('15', '7QI6', 1)} AEINRST/ 0/0 0"


def _spki_hash(cert: Path) -> str:
    """The base64 SHA-256 of a certificate's public key (what --ignore-certificate-errors-spki-list takes)."""
    pub = subprocess.run(["openssl", "x509", "-in", str(cert), "-pubkey", "-noout"], check=True,
                         capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pub, check=True,
                         capture_output=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def _server(certs: Path, failures: int):
    limits = Limits.load(environ={}).with_changes(max_jobs=2, auth_failures_per_minute=failures)
    security = Security(tokens=Tokens({"board": ALICE}), tls=TlsFiles(certs / "server.pem", certs / "server.key"))
    return create_server(Settings.load(), "127.0.0.1", 0, limits=limits, http=HttpOptions(port=0, web=True),
                         security=security)


def test_board_over_tls_with_a_token(pki):  # noqa: F811
    need_board()
    board = _server(pki, failures=1_000_000)
    strict = _server(pki, failures=3)
    try:
        assert board.http is not None and strict.http is not None
        env = {"MACONDO_TOKEN": ALICE, "MACONDO_CGP": CGP,
               "MACONDO_BOARD_URL": f"https://127.0.0.1:{board.http.port}/",
               "MACONDO_STRICT_URL": f"https://127.0.0.1:{strict.http.port}/",
               "MACONDO_SPKI": _spki_hash(pki / "server.pem")}
        page = run_script("secure.mjs", [], env, timeout=300)
    finally:
        strict.stop(1)
        board.stop(1)

    assert page["steps"] == ["secure-01-no-token", "secure-02-token-in-use", "secure-03-rate-limited"]
    for name in page["steps"]:
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    if os.environ.get("MACONDO_WEB_DOCS_SHOTS") == "1":           # the shot docs/web-board.md shows
        shutil.copyfile(SHOTS / "secure-01-no-token.png", ROOT / "docs" / "board-token.png")
    # the board itself over https from the server, a secure context
    assert page["page"] == {"status": 200, "protocol": "https:", "secure": True}
    # no token: the server's words, the status, what to do, the token box opened; and no more polling
    no = page["noToken"]
    assert "a bearer token is required" in no["error"]["text"] and "HTTP 401" in no["error"]["text"]
    assert no["error"]["code"] == "unauthenticated" and no["error"]["status"] == "401"
    assert "enter it under Server token" in no["error"]["hint"] and no["tokenBoxOpen"]
    assert no["header"] == "the server requires a token (Server token, top right)"
    assert page["pollsWhileRefused"] == 0
    # a wrong token, a token in the wrong form
    assert "not one this server accepts" in page["wrongToken"]["error"]["text"]
    assert page["wrongToken"]["error"]["status"] == "401" and page["wrongToken"]["state"] == "the token was refused"
    assert "leave out 'Bearer '" in page["bearerForm"]["error"]["text"] and page["bearerForm"]["sent"] == 0
    # the right token: the server answers, the moves come, the poll runs again
    w = page["withToken"]
    assert w["header"].startswith("server ") and w["error"] == "" and w["state"] == "a token is in use"
    assert w["lexica"] >= 1 and page["moves"] > 0 and page["pollsWithToken"] == 1
    # application/grpc over HTTP/1.1 (a misconfigured proxy): 415, said clearly
    g = page["grpcOverHttp1"]
    assert "gRPC needs HTTP/2" in g["text"] and g["status"] == "415" and "gRPC port" in g["hint"]
    # another host name for the same server: refused before anything, page and calls alike
    assert page["rebound"]["status"] == 403 and "does not answer to the host 'rebound.test'" in page["rebound"]["body"]
    assert page["reboundCall"]["status"] == 403 and page["reboundCall"]["body"]["code"] == "permission_denied"
    # too many failed tokens from the address: even the right one is refused for now, and the board says when
    lim = page["limited"]
    assert "too many failed authentications" in lim["error"]["text"] and lim["error"]["status"] == "429"
    assert "retry after" in lim["error"]["hint"] and lim["header"].startswith("the server refuses this address")
    assert "after too many failed tokens" in lim["error"]["hint"]
    # nothing went wrong in the page beyond the refused requests themselves
    assert [e for e in page["consoleErrors"] if not any(f" {c} " in e or f"({c})" in e or f" {c}" in e
                                                        for c in ("401", "403", "415", "429"))] == []
