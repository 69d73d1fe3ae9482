"""The HTTP port over Connect (and gRPC-Web) against a live server: the same RPCs, validation, job limits,
stop and deadlines as the gRPC port; errors as Connect codes; size limit, token, CORS and health."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2

from macondo_server.api.connect import HttpOptions, build_endpoints, method_info
from macondo_server.api.grpc_server import ServerStartError, create_server
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from macondo_server.runtime.limits import Limits

EMPTY = "/".join(["15"] * 15)
SERVICE = pb.DESCRIPTOR.services_by_name["Engine"]
HEALTH = health_pb2.DESCRIPTOR.services_by_name["Health"]
ORIGIN = "http://board.example"


@pytest.fixture(scope="module")
def server():
    limits = Limits.load(max_jobs=2).with_changes(max_request_bytes=65536)
    running = create_server(Settings.load(), "127.0.0.1", 0, limits=limits,
                            http=HttpOptions(port=0, cors_origins=(ORIGIN,)))
    yield running
    running.stop(1)


@pytest.fixture(scope="module")
def url(server) -> str:
    return f"http://127.0.0.1:{http_port(server)}"


def http_port(running) -> int:
    assert running.http is not None
    return running.http.port


def call(url: str, name: str, request, protocol=ProtocolType.CONNECT, json_codec=False, timeout_ms=None,
         headers=None):
    codec = google_protobuf_json_codec() if json_codec else google_protobuf_binary_codec()
    client = ConnectClientSync(url, codec=codec, protocol=protocol)
    info = method_info(SERVICE, name)
    if SERVICE.methods_by_name[name].server_streaming:
        return client.execute_server_stream(request=request, method=info, timeout_ms=timeout_ms, headers=headers)
    return client.execute_unary(request=request, method=info, timeout_ms=timeout_ms, headers=headers)


def raw(url: str, path: str, body: bytes = b"", method: str = "POST", headers: dict | None = None):
    req = urllib.request.Request(url + path, data=body if method == "POST" else None, method=method,
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_every_rpc_is_routed(server):
    endpoints = build_endpoints(SERVICE, server.servicer, None)  # type: ignore[arg-type]
    assert sorted(endpoints) == sorted(f"/macondo.v1.Engine/{m.name}" for m in SERVICE.methods)


@pytest.mark.parametrize("json_codec", [False, True])
def test_unary_same_as_grpc(server, url, json_codec):
    req = pb.GenerateMovesRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0"), num_plays=8)
    over_connect = call(url, "GenerateMoves", req, json_codec=json_codec)
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        over_grpc = pb_grpc.EngineStub(ch).GenerateMoves(req, timeout=10)
    assert over_connect == over_grpc
    assert over_connect.moves[0].display == " 8G QI"
    info = call(url, "GetServerInfo", pb.GetServerInfoRequest())
    assert info.api_version == "macondo.v1" and info.limits.max_jobs == 2


def test_grpc_web(url):
    req = pb.GenerateMovesRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0"), num_plays=3)
    resp = call(url, "GenerateMoves", req, protocol=ProtocolType.GRPC_WEB)
    assert [m.display for m in resp.moves][0] == " 8G QI"
    with pytest.raises(ConnectError) as exc:
        call(url, "GenerateMoves", pb.GenerateMovesRequest(position=pb.Position(cgp="nonsense")),
             protocol=ProtocolType.GRPC_WEB)
    assert exc.value.code == Code.INVALID_ARGUMENT and "CGP has 1 fields" in exc.value.message


@pytest.mark.parametrize(
    "request_kwargs,code,needle,reason",
    [
        ({"position": pb.Position(cgp="")}, Code.INVALID_ARGUMENT, "cgp is empty", "INVALID_ARGUMENT"),
        ({"position": pb.Position(cgp="nonsense")}, Code.INVALID_ARGUMENT, "CGP has 1 fields", "INVALID_ARGUMENT"),
        ({"position": pb.Position(cgp=f"{EMPTY} A/ 0/0 0", lexicon="NOPE")}, Code.NOT_FOUND, "unknown lexicon",
         "UNKNOWN_LEXICON"),
        ({"position": pb.Position(cgp="x" * 5000)}, Code.INVALID_ARGUMENT, "longer than", "MAX_CGP_CHARS"),
    ],
)
def test_errors_are_connect_codes(url, request_kwargs, code, needle, reason):
    with pytest.raises(ConnectError) as exc:
        call(url, "GenerateMoves", pb.GenerateMovesRequest(**request_kwargs))
    assert exc.value.code == code and needle in exc.value.message
    infos = [error_details_pb2.ErrorInfo.FromString(d.message_bytes) for d in exc.value.details
             if d.type_name == "google.rpc.ErrorInfo"]
    assert infos and infos[0].reason == reason and infos[0].domain == "macondo.v1"


def test_error_body_is_worded(url):
    status, _, body = raw(url, "/macondo.v1.Engine/GenerateMoves", json.dumps({"position": {"cgp": "bad"}}).encode())
    assert status == 400
    err = json.loads(body)
    assert err["code"] == "invalid_argument" and "CGP has 1 fields" in err["message"]


def test_stream_stop_and_best_so_far(server, url):
    stream = call(url, "Autoplay", pb.AutoplayRequest(games=100000, seed=3, threads=1), timeout_ms=60_000)
    first = next(stream)
    assert not first.final and first.job_id
    t0 = time.monotonic()
    assert call(url, "StopJob", pb.StopJobRequest(job_id=first.job_id)).found
    rest = list(stream)
    assert rest[-1].final and rest[-1].stopped and 0 < rest[-1].games_done < 100000
    assert time.monotonic() - t0 < 1.5
    assert not call(url, "StopJob", pb.StopJobRequest(job_id=first.job_id)).found


def test_stream_deadline_and_disconnect(server, url):
    t0 = time.monotonic()
    msgs = list(call(url, "Autoplay", pb.AutoplayRequest(games=100000, seed=1, threads=1), timeout_ms=1500))
    assert msgs and msgs[-1].final and msgs[-1].stopped   # the best so far, before the deadline
    assert time.monotonic() - t0 < 2.0
    stream = call(url, "Autoplay", pb.AutoplayRequest(games=100000, seed=2, threads=1), timeout_ms=30_000)
    next(stream)
    assert server.servicer.jobs.running() == 1
    stream.close()   # the client goes away: the job stops as on a gRPC cancel
    deadline = time.monotonic() + 3
    while server.servicer.jobs.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.servicer.jobs.running() == 0


def test_job_limit_shared_with_grpc(server, url):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        stub = pb_grpc.EngineStub(ch)
        grpc_stream = stub.Autoplay(pb.AutoplayRequest(games=100000, threads=1), timeout=30)
        connect_stream = call(url, "Autoplay", pb.AutoplayRequest(games=100000, threads=1), timeout_ms=30_000)
        firsts = [next(grpc_stream), next(connect_stream)]
        with pytest.raises(ConnectError) as exc:
            next(call(url, "Autoplay", pb.AutoplayRequest(games=10), timeout_ms=10_000))
        assert exc.value.code == Code.RESOURCE_EXHAUSTED and "max_jobs" in exc.value.message
        for f in firsts:
            assert stub.StopJob(pb.StopJobRequest(job_id=f.job_id)).found
        assert list(grpc_stream)[-1].final and list(connect_stream)[-1].final


def test_sim_stream_matches_grpc_final(server, url):
    cgp = f"{EMPTY} AEINQST/ 0/0 0"
    req = pb.SimulateRequest(position=pb.Position(cgp=cgp), num_plays=3, iterations=30, plies=2, seed=7, threads=1)
    msgs = list(call(url, "Simulate", req, timeout_ms=60_000))
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        ref = list(pb_grpc.EngineStub(ch).Simulate(req, timeout=60))
    last, ref_last = msgs[-1], ref[-1]
    assert last.final and not last.stopped
    assert [(p.move, p.iterations) for p in last.plays] == [(p.move, p.iterations) for p in ref_last.plays]


def test_size_limit(url):
    big = pb.GenerateMovesRequest(position=pb.Position(cgp="x" * 70_000)).SerializeToString()
    status, _, body = raw(url, "/macondo.v1.Engine/GenerateMoves", big, headers={"content-type": "application/proto"})
    assert status == 413
    err = json.loads(body)
    assert err["code"] == "resource_exhausted" and "max_request_bytes" in err["message"]
    with pytest.raises(ConnectError) as exc:
        call(url, "GenerateMoves", pb.GenerateMovesRequest(position=pb.Position(cgp="x" * 70_000)))
    assert exc.value.code == Code.RESOURCE_EXHAUSTED


def test_health(server, url):
    status, _, body = raw(url, "/healthz", method="GET")
    assert status == 200 and json.loads(body) == {"status": "SERVING"}
    client = ConnectClientSync(url, codec=google_protobuf_binary_codec())
    resp = client.execute_unary(request=health_pb2.HealthCheckRequest(service="macondo.v1.Engine"),
                                method=method_info(HEALTH, "Check"))
    assert resp.status == health_pb2.HealthCheckResponse.SERVING
    status, _, body = raw(url, "/nowhere", method="GET")
    assert status == 404 and json.loads(body)["code"] == "unimplemented"


def test_cors(url):
    pre = {"origin": ORIGIN, "access-control-request-method": "POST",
           "access-control-request-headers": "content-type,connect-protocol-version"}
    status, headers, _ = raw(url, "/macondo.v1.Engine/GetServerInfo", method="OPTIONS", headers=pre)
    headers = {k.lower(): v for k, v in headers.items()}
    assert status == 204 and headers["access-control-allow-origin"] == ORIGIN
    assert "connect-protocol-version" in headers["access-control-allow-headers"]
    status, headers, _ = raw(url, "/macondo.v1.Engine/GetServerInfo", method="OPTIONS",
                             headers={**pre, "origin": "http://evil.example"})
    assert status == 403 and "access-control-allow-origin" not in {k.lower() for k in headers}
    status, headers, _ = raw(url, "/macondo.v1.Engine/GetServerInfo", b"{}", headers={"origin": ORIGIN})
    assert status == 200 and {k.lower(): v for k, v in headers.items()}["access-control-allow-origin"] == ORIGIN
    status, headers, _ = raw(url, "/macondo.v1.Engine/GetServerInfo", b"{}", headers={"origin": "http://evil.example"})
    assert status == 200 and "access-control-allow-origin" not in {k.lower() for k in headers}


def test_no_cors_by_default():
    running = create_server(Settings.load(), "127.0.0.1", 0, http=HttpOptions(port=0))
    try:
        url = f"http://127.0.0.1:{http_port(running)}"
        status, headers, _ = raw(url, "/macondo.v1.Engine/GetServerInfo", b"{}", headers={"origin": ORIGIN})
        assert status == 200 and "access-control-allow-origin" not in {k.lower() for k in headers}
        status, _, _ = raw(url, "/macondo.v1.Engine/GetServerInfo", method="OPTIONS", headers={"origin": ORIGIN})
        assert status == 403
    finally:
        running.stop(1)


def test_token():
    with pytest.raises(ServerStartError, match="not a loopback address"):
        create_server(Settings.load(), "127.0.0.1", 0, http=HttpOptions(host="0.0.0.0", port=0))
    running = create_server(Settings.load(), "127.0.0.1", 0, http=HttpOptions(port=0, token="s3cret"))
    try:
        url = f"http://127.0.0.1:{http_port(running)}"
        for headers in (None, {"authorization": "Bearer wrong"}, {"authorization": "s3cret"}):
            with pytest.raises(ConnectError) as exc:
                call(url, "GetServerInfo", pb.GetServerInfoRequest(), headers=headers)
            assert exc.value.code == Code.UNAUTHENTICATED
        with pytest.raises(ConnectError) as exc:
            next(call(url, "Autoplay", pb.AutoplayRequest(games=1)))
        assert exc.value.code == Code.UNAUTHENTICATED
        info = call(url, "GetServerInfo", pb.GetServerInfoRequest(), headers={"authorization": "Bearer s3cret"})
        assert info.api_version == "macondo.v1"
        assert raw(url, "/healthz", method="GET")[0] == 401
        assert raw(url, "/healthz", method="GET", headers={"authorization": "Bearer s3cret"})[0] == 200
    finally:
        running.stop(1)


def test_port_in_use(server):
    with pytest.raises(ServerStartError, match="in use"):
        create_server(Settings.load(), "127.0.0.1", 0, http=HttpOptions(port=http_port(server)))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_command_runs_both_ports_and_stops_on_sigterm():
    import signal
    import subprocess
    import sys

    grpc_port, http_port = _free_port(), _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "macondo_server", "serve", "--port", str(grpc_port),
                             "--http-port", str(http_port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        status = 0
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status = raw(f"http://127.0.0.1:{http_port}", "/healthz", method="GET")[0]
            except OSError:
                status = 0
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200
        info = call(f"http://127.0.0.1:{http_port}", "GetServerInfo", pb.GetServerInfoRequest())
        assert info.api_version == "macondo.v1"
        stream = call(f"http://127.0.0.1:{http_port}", "Autoplay", pb.AutoplayRequest(games=100000, threads=1),
                      timeout_ms=60_000)
        assert not next(stream).final
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert list(stream)[-1].final          # the running stream still gets its final result
        assert proc.wait(10) == 0 and time.monotonic() - t0 < 6
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = proc.stdout.read() if proc.stdout else ""
    assert f"http host=127.0.0.1 port={http_port}" in out


def test_serve_command_refuses_an_open_port_without_token(capsys):
    from macondo_server.cli import main

    assert main(["serve", "--port", "0", "--http-host", "0.0.0.0", "--http-port", "0"]) == 1
    err = capsys.readouterr().err
    assert "not a loopback address" in err and "--http-token" in err


def test_servicer_context_adapter():
    from macondo_server.api.connect import ConnectServicerContext

    ctx = ConnectServicerContext("127.0.0.1:5555", [("X-Trace", "a"), ("x-trace", "b")], 2000)
    assert ctx.peer() == "http:127.0.0.1:5555" and ctx.is_active()
    assert [(m.key, m.value) for m in ctx.invocation_metadata()] == [("x-trace", "a"), ("x-trace", "b")]
    remaining = ctx.time_remaining()
    assert remaining is not None and 1.5 < remaining <= 2.0
    assert ConnectServicerContext(None, [], None).time_remaining() is None
    fired: list[int] = []
    assert ctx.add_callback(lambda: fired.append(1))
    with pytest.raises(grpc.RpcError) as exc:
        ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, "no")
    assert exc.value.status_code == grpc.StatusCode.FAILED_PRECONDITION  # type: ignore[attr-defined]
    ctx.finish()
    ctx.finish()
    assert fired == [1] and not ctx.is_active() and not ctx.add_callback(lambda: None)
