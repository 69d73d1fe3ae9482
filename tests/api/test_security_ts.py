"""The TypeScript client under Node against servers with TLS and bearer tokens (clients/ts/test/secure.test.mjs):
every transport with the right token and the test CA; no token, a wrong one and one in the wrong header refused
with the server's words; TLS mistakes, a Host the server does not answer to, gRPC over HTTP/1.1, client
certificates and the refusal of an address after failed tokens. Certificates come from the `pki` fixture of
test_security_auth.py (openssl, a temporary directory). Skipped where node/npm or openssl are absent."""

from __future__ import annotations

import os
import subprocess

import pytest
from test_connect_node import TS, build_ts_client
from test_security_auth import ALICE, pki  # noqa: F401  (the fixture)

from macondo_server.api.auth import Security, TlsFiles, Tokens
from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings
from macondo_server.runtime.limits import Limits


def _server(certs, failures: int, client_ca: bool):
    tls = TlsFiles(certs / "server.pem", certs / "server.key", certs / "ca.pem" if client_ca else None)
    limits = Limits.load(environ={}).with_changes(max_jobs=2, auth_failures_per_minute=failures)
    return create_server(Settings.load(), "127.0.0.1", 0, limits=limits, http=HttpOptions(port=0),
                         security=Security(tokens=Tokens({"alice": ALICE}), tls=tls))


def test_typescript_client_over_tls_with_a_token(pki):  # noqa: F811
    reason = build_ts_client()
    if reason:
        pytest.skip(reason)
    open_server = _server(pki, failures=1_000_000, client_ca=False)
    strict = _server(pki, failures=3, client_ca=True)
    try:
        assert open_server.http is not None and strict.http is not None
        env = {**os.environ,
               "MACONDO_TLS_HTTP_URL": f"https://127.0.0.1:{open_server.http.port}",
               "MACONDO_TLS_GRPC_URL": f"https://127.0.0.1:{open_server.port}",
               "MACONDO_TLS_STRICT_HTTP_URL": f"https://127.0.0.1:{strict.http.port}",
               "MACONDO_TLS_STRICT_GRPC_URL": f"https://127.0.0.1:{strict.port}",
               "MACONDO_TLS_CA_FILE": str(pki / "ca.pem"), "MACONDO_TLS_TOKEN": ALICE,
               "MACONDO_TLS_CLIENT_CERT": str(pki / "client.pem"), "MACONDO_TLS_CLIENT_KEY": str(pki / "client.key")}
        proc = subprocess.run(["node", "--test", "test/secure.test.mjs"], cwd=TS, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-3000:]
        assert "# fail 0" in proc.stdout and "# pass 6" in proc.stdout and "# skipped 0" in proc.stdout, \
            proc.stdout[-3000:]
    finally:
        strict.stop(1)
        open_server.stop(1)
