"""The command-line clients (`macondo shell --server`, `macondo bots --server`) against a TLS server that
requires a token: the token from --token-file or MACONDO_TOKEN, the CA from --ca-file; a wrong token is a
one-line error and exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_security_auth import ALICE, _limits, _tokens, pki  # noqa: F401  (pki: the module's fixture)

from macondo_server.api.auth import Security, TlsFiles
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings


def _macondo(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "macondo_server", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_shell_and_bots_reach_a_tls_server_with_a_token(pki, tmp_path: Path):  # noqa: F811
    security = Security(tokens=_tokens(), tls=TlsFiles(pki / "server.pem", pki / "server.key"))
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(), security=security)
    try:
        address = f"127.0.0.1:{running.port}"
        token = tmp_path / "token"
        token.write_text(f"# the shell's token\n{ALICE}\n")
        ca = str(pki / "ca.pem")
        shell = _macondo("shell", "--server", address, "--token-file", str(token), "--ca-file", ca,
                         stdin="info\nquit\n")
        assert shell.returncode == 0 and "API macondo.v1" in shell.stdout, shell.stderr
        env_shell = _macondo("shell", "--server", address, "--ca-file", ca, stdin="info\nquit\n",
                             env={"MACONDO_TOKEN": ALICE})
        assert env_shell.returncode == 0 and "API macondo.v1" in env_shell.stdout, env_shell.stderr
        bots = _macondo("bots", "--server", address, "--token-file", str(token), "--ca-file", ca, "--games", "2",
                        "--json")
        assert bots.returncode == 0 and '"games"' in bots.stdout, bots.stderr
        (tmp_path / "wrong").write_text("wrong-token-0123456789abcdef\n")
        wrong = _macondo("bots", "--server", address, "--token-file", str(tmp_path / "wrong"), "--ca-file", ca,
                         "--games", "1")
        assert wrong.returncode == 1 and "Traceback" not in wrong.stderr
        assert len(wrong.stderr.strip().splitlines()) == 1 and "bearer token" in wrong.stderr
        missing = _macondo("shell", "--server", address, "--token-file", str(tmp_path / "nope"), "--ca-file", ca)
        assert missing.returncode == 1 and "--token-file" in missing.stderr and "Traceback" not in missing.stderr
        local = _macondo("shell", "--token-file", str(token))
        assert local.returncode == 1 and "--server" in local.stderr
    finally:
        running.stop(1)
