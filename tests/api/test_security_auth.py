"""Identity and encryption on both ports: named bearer tokens from a file or the environment, checked on every
gRPC call and HTTP request (health included) before any work; failed attempts limited per address; TLS with
a certificate given at start, optionally requiring client certificates; the Python client over TLS with a
token; a port off loopback refused without tokens unless the server is declared open; what a server exposes
said at start and by --print-limits. Certificates are made here with openssl, in a temporary directory."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from macondo_client import Client, MacondoError

from macondo_server.api.auth import (
    AuthConfigError,
    FailureLimiter,
    Security,
    TlsFiles,
    Tokens,
    anonymous_principal,
    peer_address,
)
from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import ServerStartError, create_server
from macondo_server.cli import main as cli_main
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from macondo_server.runtime.limits import Limits

from conftest import ROOT

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"


def _limits(**changes: int) -> Limits:
    return Limits.load(environ={}).with_changes(max_jobs=2, **changes)


def _tokens() -> Tokens:
    return Tokens({"alice": ALICE, "bob": BOB})


def _http(port: int, path: str, body: bytes = b"{}", headers: dict[str, str] | None = None, method: str = "POST",
          context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    if context is None:
        conn: http.client.HTTPConnection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    try:
        conn.request(method, path, body=body if method == "POST" else None,
                     headers={"content-type": "application/json", "connection": "close", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _grpc_error(call, *args, **kw) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as exc:
        result = call(*args, **kw)
        if hasattr(result, "__iter__") and not hasattr(result, "ListFields"):
            list(result)
    return exc.value


# ------------------------------------------------------------------ tokens and principals


def test_tokens_from_a_file_and_the_environment(tmp_path):
    f = tmp_path / "tokens"
    f.write_text(f"# the server's tokens\nalice {ALICE}\n\nbob:{BOB}\n")
    f.chmod(0o600)
    tokens = Tokens.load(str(f), environ={"MACONDO_TOKENS": "carol:carol-token-0123456789ab, dave:dave-token-0123456789abc"})
    assert tokens.names == ["alice", "bob", "carol", "dave"]
    assert tokens.authenticate(ALICE) == "alice" and tokens.authenticate("carol-token-0123456789ab") == "carol"
    assert tokens.authenticate("alice") is None and tokens.authenticate(None) is None
    assert tokens.authenticate(ALICE[:-1]) is None and tokens.authenticate(ALICE + "x") is None
    env = Tokens.load(environ={"MACONDO_TOKEN_FILE": str(f), "MACONDO_HTTP_TOKEN": "legacy-token-0123456789"})
    assert env.names == ["alice", "bob", "http"]
    for text, needle in ((f"alice {ALICE}\nalice {BOB}\n", "twice"), (f"alice {ALICE}\nbob {ALICE}\n", "same as"),
                         ("1abc tok-0123456789abcdef\n", "token name"), ("alice\n", "NAME TOKEN"),
                         ("alice tok en\n", "without spaces")):
        f.write_text(text)
        with pytest.raises(AuthConfigError, match=needle):
            Tokens.load(str(f), environ={})
    with pytest.raises(AuthConfigError, match="cannot read"):
        Tokens.load(str(tmp_path / "missing"), environ={})
    with pytest.raises(AuthConfigError, match="entry 2 is not NAME:TOKEN") as exc:
        Tokens.load(environ={"MACONDO_TOKENS": f"alice:{ALICE},just-a-secret-0123456789"})
    assert "just-a-secret" not in str(exc.value)


def test_principals_name_addresses_never_connections():
    assert peer_address("ipv4:127.0.0.1:5555") == "127.0.0.1"
    assert peer_address("ipv6:[::1]:5555") == "::1"
    assert peer_address("http:10.0.0.2:80") == "10.0.0.2"
    assert peer_address("127.0.0.1") == "127.0.0.1"
    assert anonymous_principal("ipv4:127.0.0.1:1") == anonymous_principal("127.0.0.1") == "peer:127.0.0.1"


def test_failure_limiter_blocks_an_address_for_the_rest_of_the_minute():
    lim = FailureLimiter(3, window=60)
    for t in (0.0, 1.0):
        lim.failed("a", now=t)
    assert lim.blocked("a", now=2.0) == 0
    lim.failed("a", now=2.0)
    assert lim.blocked("a", now=3.0) == pytest.approx(57.0) and lim.blocked("b", now=3.0) == 0
    assert lim.blocked("a", now=60.5) == 0          # the first failure is a minute old


@pytest.fixture(scope="module")
def secured():
    """A server with two tokens (its failure limit out of the way: these tests fail on purpose)."""
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(auth_failures_per_minute=1_000_000),
                            http=HttpOptions(port=0), security=Security(tokens=_tokens()))
    yield running
    running.stop(1)


def test_wrong_missing_and_misplaced_tokens_are_refused_on_both_ports(secured):
    port, hport = secured.port, secured.http.port
    bad_metadata = [None, [("authorization", "Bearer wrong-token-0123456789")], [("authorization", ALICE)],
                    [("x-token", ALICE)], [("authorization", f"Basic {ALICE}")], [("authorization", f"bearer{ALICE}")],
                    [("authorization", f"Bearer {ALICE}"), ("authorization", "Bearer x")]]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = pb_grpc.EngineStub(ch)
        health = health_pb2_grpc.HealthStub(ch)
        for md in bad_metadata:
            for call, req in ((stub.GetServerInfo, pb.GetServerInfoRequest()),
                              (stub.Autoplay, pb.AutoplayRequest(games=1)),
                              (health.Check, health_pb2.HealthCheckRequest())):
                e = _grpc_error(call, req, timeout=10, metadata=md)
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED, (md, call)
        assert secured.servicer.jobs.running() == 0
        info = stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10, metadata=[("authorization", f"Bearer {ALICE}")])
        assert info.api_version == "macondo.v1"
        ok = health.Check(health_pb2.HealthCheckRequest(), timeout=10, metadata=[("authorization", f"Bearer {BOB}")])
        assert ok.status == health_pb2.HealthCheckResponse.SERVING
    bad_headers = [{}, {"authorization": "Bearer wrong-token-0123456789"}, {"authorization": ALICE},
                   {"x-token": ALICE}, {"cookie": f"token={ALICE}"}, {"authorization": f"Basic {ALICE}"}]
    for headers in bad_headers:
        for path, method in (("/macondo.v1.Engine/GetServerInfo", "POST"), ("/healthz", "GET"),
                             ("/grpc.health.v1.Health/Check", "POST"), (f"/macondo.v1.Engine/GetServerInfo?token={ALICE}",
                                                                        "POST")):
            status, body = _http(hport, path, headers=headers, method=method)
            assert status == 401 and json.loads(body)["code"] == "unauthenticated", (headers, path)
    assert _http(hport, "/macondo.v1.Engine/GetServerInfo", headers={"authorization": f"Bearer {BOB}"})[0] == 200
    assert _http(hport, "/healthz", method="GET", headers={"authorization": f"bearer {ALICE}"})[0] == 200


def test_health_watch_and_reflection_go_through_the_token_check(secured):
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    md = [("authorization", f"Bearer {ALICE}")]
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    with grpc.insecure_channel(f"127.0.0.1:{secured.port}") as ch:
        watch = health_pb2_grpc.HealthStub(ch).Watch(health_pb2.HealthCheckRequest(), timeout=5, metadata=md)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()
        e = _grpc_error(health_pb2_grpc.HealthStub(ch).Watch, health_pb2.HealthCheckRequest(), timeout=5)
        assert e.code() == grpc.StatusCode.UNAUTHENTICATED
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        names = [x.name for r in stub.ServerReflectionInfo(iter([request]), timeout=5, metadata=md)
                 for x in r.list_services_response.service]
        assert "macondo.v1.Engine" in names
        e = _grpc_error(stub.ServerReflectionInfo, iter([request]), timeout=5)
        assert e.code() == grpc.StatusCode.UNAUTHENTICATED


def test_the_board_page_loads_without_a_token_and_its_calls_need_one():
    from macondo_server.api.connect import WEB_DIR

    if not (WEB_DIR / "index.html").is_file():
        pytest.skip("the web board is not built")
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(), security=Security(tokens=_tokens()),
                            http=HttpOptions(port=0, web=True))
    try:
        status, body = _http(running.http.port, "/", method="GET")
        assert status == 200 and b"<html" in body.lower()
        assert _http(running.http.port, "/healthz", method="GET")[0] == 401
        assert _http(running.http.port, "/macondo.v1.Engine/GetServerInfo")[0] == 401
        assert _http(running.http.port, "/macondo.v1.Engine/GetServerInfo", method="GET")[0] == 401
        assert _http(running.http.port, "/macondo.v1.Engine/GetServerInfo",
                     headers={"authorization": f"Bearer {ALICE}"})[0] == 200
    finally:
        running.stop(1)


def test_the_principal_is_the_token_name_on_both_ports(secured):
    store = secured.servicer.sessions
    with grpc.insecure_channel(f"127.0.0.1:{secured.port}") as ch:
        g1 = pb_grpc.EngineStub(ch).CreateGame(pb.CreateGameRequest(seed=1), timeout=10,
                                                metadata=[("authorization", f"Bearer {ALICE}")])
    status, body = _http(secured.http.port, "/macondo.v1.Engine/CreateGame", b'{"seed": 2}',
                         headers={"authorization": f"Bearer {ALICE}"})
    assert status == 200
    g2 = json.loads(body)["gameId"]
    assert store.get(g1.game_id).client == "alice" and store.get(g2).client == "alice"
    store.delete(g1.game_id)
    store.delete(g2)


def test_failed_authentication_is_rate_limited_per_address():
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(auth_failures_per_minute=5),
                            http=HttpOptions(port=0), security=Security(tokens=_tokens()))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            stub = pb_grpc.EngineStub(ch)
            for i in range(3):
                e = _grpc_error(stub.GetServerInfo, pb.GetServerInfoRequest(), timeout=10,
                                metadata=[("authorization", f"Bearer guess-{i:020d}")])
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED
            for i in range(2):
                assert _http(running.http.port, "/healthz", method="GET",
                             headers={"authorization": f"Bearer guess-{i}"})[0] == 401
            # five failures within the minute: the address is refused whatever it sends, on both ports
            e = _grpc_error(stub.GetServerInfo, pb.GetServerInfoRequest(), timeout=10,
                            metadata=[("authorization", f"Bearer {ALICE}")])
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "auth_failures_per_minute" in e.details()
        status, body = _http(running.http.port, "/macondo.v1.Engine/GetServerInfo",
                             headers={"authorization": f"Bearer {ALICE}"})
        assert status == 429 and "auth_failures_per_minute" in json.loads(body)["message"]
    finally:
        running.stop(1)


# ------------------------------------------------------------------ exposure


def test_a_port_off_loopback_needs_tokens_or_an_explicit_open_server(capsys):
    for options in (None, HttpOptions(host="0.0.0.0", port=0)):
        host = "0.0.0.0" if options is None else "127.0.0.1"
        with pytest.raises(ServerStartError, match="not a loopback address.*--allow-open"):
            create_server(Settings.load(), host, 0, limits=_limits(), http=options)
    running = create_server(Settings.load(), "0.0.0.0", 0, limits=_limits(), security=Security(tokens=_tokens()))
    try:
        lines = running.exposure()
        assert lines[0].startswith("gRPC on 0.0.0.0:") and "every interface" in lines[0] and "no TLS" in lines[0]
        assert lines[1] == "bearer tokens required on every request: 2 (alice, bob)"
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            e = _grpc_error(pb_grpc.EngineStub(ch).GetServerInfo, pb.GetServerInfoRequest(), timeout=10)
            assert e.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        running.stop(1)
    running = create_server(Settings.load(), "0.0.0.0", 0, limits=_limits(), security=Security(allow_open=True))
    try:
        assert "no authentication: anyone who reaches the ports" in running.exposure()[1]
    finally:
        running.stop(1)
    assert cli_main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "not a loopback address" in err and "--allow-open" in err and "Traceback" not in err


def test_print_limits_shows_the_limits_and_the_exposure(tmp_path, capsys):
    f = tmp_path / "tokens"
    f.write_text(f"alice {ALICE}\n")
    f.chmod(0o600)
    assert cli_main(["serve", "--print-limits", "--host", "0.0.0.0", "--token-file", str(f), "--http-port", "8081",
                     "--allow-host", "board.example", "--limit", "max_jobs_per_client=2"]) == 0
    out = capsys.readouterr().out
    assert "max_jobs_per_client = 2" in out and "http_header_seconds = 10" in out
    assert "gRPC on 0.0.0.0:50051 (every interface: reachable from other machines); no TLS" in out
    assert "HTTP on 127.0.0.1:8081 (loopback: this machine only)" in out
    assert "bearer tokens required on every request: 1 (alice)" in out and ALICE not in out
    assert "board.example" in out
    assert cli_main(["serve", "--print-limits", "--host", "0.0.0.0"]) == 0
    assert "refused at start" in capsys.readouterr().out


def test_serve_says_what_it_exposes_and_never_prints_a_token(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MACONDO_TOKENS": f"alice:{ALICE},bob:{BOB}"}
    proc = subprocess.Popen([sys.executable, "-m", "macondo_server", "serve", "--port", "0"], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if "serving host=" in line:
                break
    finally:
        proc.terminate()
        rest = proc.communicate(timeout=10)[1]
    text = "".join(seen) + rest
    assert re.search(r"macondo: gRPC on 127\.0\.0\.1:\d+ \(loopback: this machine only\); no TLS", text), text
    assert "macondo: bearer tokens required on every request: 2 (alice, bob)" in text
    assert ALICE not in text and BOB not in text


# ------------------------------------------------------------------ TLS


def _openssl(d: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """A throwaway CA, a server certificate for localhost / 127.0.0.1 and a client certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(d, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=macondo test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, usage, san in (("server", "serverAuth", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"),
                             ("client", "clientAuth", "")):
        _openssl(d, "req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        (d / f"{name}.ext").write_text(f"basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                                       f"extendedKeyUsage={usage}\n{san}")
        _openssl(d, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")
    return d


def test_tls_server_with_a_token_and_the_python_client(pki):
    security = Security(tokens=_tokens(), tls=TlsFiles(pki / "server.pem", pki / "server.key"))
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(http_header_seconds=2),
                            http=HttpOptions(port=0), security=security)
    try:
        address = f"127.0.0.1:{running.port}"
        with Client(address, token=ALICE, ca_file=str(pki / "ca.pem")) as client:
            assert client.server_info().api_version == "macondo.v1"
            state = client.create_game(seed=3)
            assert running.servicer.sessions.get(state.game_id).client == "alice"
            snaps = list(client.autoplay(games=2, seed=1, threads=1))
            assert snaps[-1].final and snaps[-1].games_done == 2
        with Client(address, ca_file=str(pki / "ca.pem")) as client, pytest.raises(MacondoError) as exc:
            client.server_info()
        assert exc.value.code == grpc.StatusCode.UNAUTHENTICATED
        with Client(address, token="Bearer-wrong-0123456789", ca_file=str(pki / "ca.pem")) as client, \
                pytest.raises(MacondoError) as exc:
            client.server_info()
        assert exc.value.code == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(MacondoError):          # plain text to a TLS port never connects
            Client(address, token=ALICE, connect_timeout=2)
        # the HTTP port: TLS with the same certificate; plain text is not answered
        ctx = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        hport = running.http.port
        status, body = _http(hport, "/macondo.v1.Engine/GetServerInfo", headers={"authorization": f"Bearer {BOB}"},
                             context=ctx)
        assert status == 200 and json.loads(body)["apiVersion"] == "macondo.v1"
        assert _http(hport, "/healthz", method="GET", context=ctx)[0] == 401
        with pytest.raises((OSError, http.client.HTTPException)):
            _http(hport, "/healthz", method="GET", headers={"authorization": f"Bearer {BOB}"})
        # a connection that never starts its handshake is closed within http_header_seconds
        sock = socket.create_connection(("127.0.0.1", hport))
        sock.settimeout(6)
        t0 = time.monotonic()
        try:
            assert sock.recv(100) == b""
        except OSError:
            pass
        assert time.monotonic() - t0 < 2 + 2.5
        sock.close()
    finally:
        running.stop(1)


def test_tls_with_client_certificates_required(pki):
    security = Security(tokens=_tokens(), tls=TlsFiles(pki / "server.pem", pki / "server.key", pki / "ca.pem"))
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(), http=HttpOptions(port=0),
                            security=security)
    try:
        ca = (pki / "ca.pem").read_bytes()
        md = [("authorization", f"Bearer {ALICE}")]
        with_cert = grpc.ssl_channel_credentials(ca, (pki / "client.key").read_bytes(), (pki / "client.pem").read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{running.port}", with_cert) as ch:
            assert pb_grpc.EngineStub(ch).GetServerInfo(pb.GetServerInfoRequest(), timeout=10, metadata=md).api_version
        with grpc.secure_channel(f"127.0.0.1:{running.port}", grpc.ssl_channel_credentials(ca)) as ch:
            e = _grpc_error(pb_grpc.EngineStub(ch).GetServerInfo, pb.GetServerInfoRequest(), timeout=5, metadata=md)
            assert e.code() == grpc.StatusCode.UNAVAILABLE
        ctx = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        with pytest.raises((OSError, http.client.HTTPException)):
            _http(running.http.port, "/healthz", method="GET", headers={"authorization": f"Bearer {ALICE}"},
                  context=ctx)
        ctx.load_cert_chain(str(pki / "client.pem"), str(pki / "client.key"))
        assert _http(running.http.port, "/healthz", method="GET", headers={"authorization": f"Bearer {ALICE}"},
                     context=ctx)[0] == 200
    finally:
        running.stop(1)


def test_unusable_tls_files_fail_the_start(pki, tmp_path):
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    for tls in (TlsFiles(bad, pki / "server.key"), TlsFiles(pki / "server.pem", pki / "client.key"),
                TlsFiles(pki / "server.pem", tmp_path / "missing.key")):
        with pytest.raises(ServerStartError, match="TLS"):
            create_server(Settings.load(), "127.0.0.1", 0, limits=_limits(), security=Security(tls=tls))


def test_tokens_are_checked_before_the_body_is_read(secured):
    """An unauthenticated request is answered at once, without waiting for a body it announced."""
    sock = socket.create_connection(("127.0.0.1", secured.http.port))
    sock.settimeout(5)
    try:
        sock.sendall(b"POST /macondo.v1.Engine/GetServerInfo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"content-type: application/json\r\ncontent-length: 1000000\r\n\r\n{")
        t0 = time.monotonic()
        answer = sock.recv(200)
        assert answer.startswith(b"HTTP/1.1 401") and time.monotonic() - t0 < 1
    finally:
        sock.close()


def test_many_failing_clients_do_not_hold_back_the_health_lane(secured):
    """Refusals run on the health lane: a burst of wrong tokens from other threads still leaves health fast."""
    stop = threading.Event()

    def guess() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{secured.port}") as ch:
            stub = pb_grpc.EngineStub(ch)
            while not stop.is_set():
                try:
                    stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=5, metadata=[("authorization", "Bearer x")])
                except grpc.RpcError:
                    pass

    threads = [threading.Thread(target=guess, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        with grpc.insecure_channel(f"127.0.0.1:{secured.port}") as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for _ in range(20):
                t0 = time.monotonic()
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=1,
                                     metadata=[("authorization", f"Bearer {ALICE}")])
                assert reply.status == health_pb2.HealthCheckResponse.SERVING and time.monotonic() - t0 < 0.5
    finally:
        stop.set()
        for t in threads:
            t.join(10)
