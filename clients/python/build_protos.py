"""Build step of the macondo-client distribution (shipped in its sdist, not installed).

Generates the protobuf/gRPC stubs of the `macondo.v1` API into macondo_client/pb/ with grpcio-tools (a
build requirement only) and ships the .proto files in macondo_client/proto/ (`macondo proto-path`).

In the repository checkout the sources are the repository's own: ../../proto/ for the .proto files and
../../macondo_server/__init__.py for the version (the project's one version), copied into
macondo_client/proto/ and macondo_client/_version.py. In an unpacked sdist those copies are the sources.

Run it directly to regenerate the stubs after editing proto/:  python clients/python/build_protos.py
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

CLIENT_ROOT = Path(__file__).resolve().parent
PACKAGE = CLIENT_ROOT / "macondo_client"
PROTO_COPY = PACKAGE / "proto"
PB_DIR = PACKAGE / "pb"
VERSION_FILE = PACKAGE / "_version.py"
REPO_ROOT = CLIENT_ROOT.parent.parent
REPO_PROTO = REPO_ROOT / "proto"
REPO_VERSION = REPO_ROOT / "macondo_server" / "__init__.py"
VERSION_RE = re.compile(r'^__version__\s*=\s*"([^"]+)"', re.M)


def _write_if_changed(path: Path, data: bytes) -> None:
    """Replace `path` atomically, and only when its content changes (a process importing it meanwhile sees
    the old or the new file, never half of one)."""
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def in_checkout() -> bool:
    return (REPO_PROTO / "macondo" / "v1").is_dir() and REPO_VERSION.is_file()


def sync_sources() -> None:
    """In the checkout, copy the .proto files and the version into the package (the sdist's sources)."""
    if not in_checkout():
        if not list(PROTO_COPY.glob("macondo/v1/*.proto")) or not VERSION_FILE.is_file():
            raise SystemExit("macondo-client build: neither the repository's proto/ nor a packaged copy found")
        return
    wanted = {p.relative_to(REPO_PROTO): p for p in REPO_PROTO.rglob("*.proto")}
    for rel, src in wanted.items():
        _write_if_changed(PROTO_COPY / rel, src.read_bytes())
    for old in PROTO_COPY.rglob("*.proto"):
        if old.relative_to(PROTO_COPY) not in wanted:
            old.unlink()
    match = VERSION_RE.search(REPO_VERSION.read_text(encoding="utf-8"))
    if not match:
        raise SystemExit(f"macondo-client build: no __version__ = \"...\" line in {REPO_VERSION}")
    text = (f'"""The project\'s version (copied from macondo_server/__init__.py by build_protos.py)."""\n\n'
            f'__version__ = "{match.group(1)}"\n')
    _write_if_changed(VERSION_FILE, text.encode())


def generate() -> None:
    """Run protoc (from grpcio-tools) over macondo_client/proto into macondo_client/pb (never hand-edited)."""
    sync_sources()
    import grpc_tools
    from grpc_tools import protoc

    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    files = sorted(str(p) for p in PROTO_COPY.glob("macondo/v1/*.proto"))
    with tempfile.TemporaryDirectory() as out:
        for f in files:
            args = ["protoc", f"-I{PROTO_COPY}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
                    f"--grpc_python_out={out}", f]
            if protoc.main(args) != 0:
                raise SystemExit(f"protoc failed on {f}")
        gen = Path(out) / "macondo" / "v1"
        made = set()
        for path in sorted(gen.iterdir()):
            # protoc writes `from macondo.v1 import x_pb2`; make the imports package-absolute.
            text = path.read_text(encoding="utf-8").replace("from macondo.v1 import",
                                                           "from macondo_client.pb.macondo.v1 import")
            _write_if_changed(PB_DIR / "macondo" / "v1" / path.name, text.encode())
            made.add(path.name)
    v1 = PB_DIR / "macondo" / "v1"
    for old in v1.iterdir():
        if old.suffix in (".py", ".pyi") and old.name != "__init__.py" and old.name not in made:
            old.unlink()
    for pkg in (PB_DIR / "macondo", v1):
        _write_if_changed(pkg / "__init__.py", b"")


def runtime_requirements() -> list[str]:
    """The stubs refuse older runtimes than the ones they were generated for: require at least those."""
    pb2 = (PB_DIR / "macondo" / "v1" / "engine_pb2.py").read_text(encoding="utf-8")
    grpc_ = (PB_DIR / "macondo" / "v1" / "engine_pb2_grpc.py").read_text(encoding="utf-8")
    pv = re.search(r"^# Protobuf Python Version: (\d+\.\d+\.\d+)", pb2, re.M)
    gv = re.search(r"^GRPC_GENERATED_VERSION = '(\d+\.\d+\.\d+)'", grpc_, re.M)
    reqs = []
    reqs.append(f"protobuf>={pv.group(1)}" if pv else "protobuf>=4.25")
    reqs.append(f"grpcio>={gv.group(1)}" if gv else "grpcio>=1.60")
    return reqs


if __name__ == "__main__":
    generate()
    print(f"stubs in {PB_DIR}; requires {', '.join(runtime_requirements())}", file=sys.stderr)
