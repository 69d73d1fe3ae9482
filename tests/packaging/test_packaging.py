"""Packaging facts that hold in the checkout and in an installed package alike: one version,
the .proto files found through `macondo proto-path`, the historical stub names, no development paths in
the defaults, and the client distribution's own command line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import macondo_client
import pytest
from macondo_client.__main__ import main as client_main

import macondo_server
from macondo_server.cli import main
from macondo_server.engine.settings import PACKAGE_DATA, Settings, default_data_dirs


def test_one_version_everywhere(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"macondo {macondo_server.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", macondo_server.__version__)
    assert macondo_client.__version__ == macondo_server.__version__
    with pytest.raises(SystemExit):
        client_main(["--version"])
    assert capsys.readouterr().out.strip() == f"macondo-client {macondo_server.__version__}"


def test_proto_path_holds_the_api_the_stubs_were_made_from(capsys):
    assert main(["proto-path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    proto = path / "macondo" / "v1" / "engine.proto"
    assert proto.is_file()
    from macondo_client.pb.macondo.v1 import engine_pb2

    text = proto.read_text(encoding="utf-8")
    # every message and RPC of the generated stubs is declared in the shipped file
    for name in engine_pb2.DESCRIPTOR.message_types_by_name:
        assert re.search(rf"^message {name}\b", text, re.M), name
    for method in engine_pb2.DESCRIPTOR.services_by_name["Engine"].methods:
        assert re.search(rf"\brpc {method.name}\s*\(", text), method.name
    assert client_main(["proto-path"]) == 0
    assert capsys.readouterr().out.strip() == str(path)


def test_historical_stub_names_give_the_same_classes():
    from macondo_client.pb.macondo.v1 import engine_pb2 as client_pb
    from macondo_client.pb.macondo.v1 import engine_pb2_grpc as client_grpc

    from macondo_server.pb.macondo.v1 import engine_pb2 as server_pb
    from macondo_server.pb.macondo.v1 import engine_pb2_grpc as server_grpc

    assert server_pb.DESCRIPTOR is client_pb.DESCRIPTOR
    for name in client_pb.DESCRIPTOR.message_types_by_name:
        assert getattr(server_pb, name) is getattr(client_pb, name)
    assert server_grpc.EngineStub is client_grpc.EngineStub
    assert server_grpc.add_EngineServicer_to_server is client_grpc.add_EngineServicer_to_server


def test_defaults_know_no_development_paths(monkeypatch):
    assert default_data_dirs() == [PACKAGE_DATA / "lexica"]
    monkeypatch.delenv("MACONDO_DATA_DIR", raising=False)
    assert Settings.load().data_dirs == [PACKAGE_DATA / "lexica"]
    monkeypatch.setenv("MACONDO_DATA_DIR", "/nonexistent/a")
    assert Settings.load().data_dirs == [Path("/nonexistent/a"), PACKAGE_DATA / "lexica"]


def test_run_time_code_needs_no_build_tool():
    """grpcio-tools, Cython and setuptools are build requirements only: with them made unimportable, a fresh
    interpreter imports the server's and the client's modules and generates moves. (grpc itself imports
    grpc_tools when it happens to be installed, as in the development environment, so the test hides it
    rather than looking for it in sys.modules.)"""
    code = ("import sys\n"
            "for name in ('grpc_tools', 'Cython', 'setuptools'): sys.modules[name] = None\n"
            "import macondo_server.cli, macondo_server.api.grpc_server, macondo_server.api.service, macondo_client\n"
            "import macondo_client.shell, macondo_client.bots\n"
            "from macondo_server.engine.settings import Settings\n"
            "from macondo_server.engine.facade import Engine\n"
            "from macondo_server.model.cgp import parse_cgp\n"
            "res = Engine(Settings.load()).generate(parse_cgp('15/' * 14 + '15 AEINRST/ 0/0 0'))\n"
            "print(len(res.moves) > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_client_command_talks_to_a_server_and_refuses_bad_addresses(capsys):
    from macondo_server.api.grpc_server import create_server

    running = create_server(Settings.load(), "127.0.0.1", 0, max_jobs=1)
    try:
        assert client_main(["info", "--server", f"127.0.0.1:{running.port}"]) == 0
        out = capsys.readouterr().out
        assert f"server {macondo_server.__version__}" in out and "SCOWL70" in out
    finally:
        running.stop(1.0)
    assert client_main(["info", "--server", "127.0.0.1:1", "--timeout", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("macondo-client: error:") and len(err.strip().splitlines()) == 1
