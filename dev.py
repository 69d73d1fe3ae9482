#!/usr/bin/env python3
"""One-command set-up for a fresh machine (Python 3.11 and a C compiler).

    python3 dev.py start    # create .venv, install everything, start the engine's main job
    python3 dev.py test     # same install, then lint (ruff), type checks (mypy) and the tests (pytest)

Extra arguments after `start` go to the main job; after `test`, to pytest (e.g. `-m slow`).
The install is skipped when nothing it depends on changed since the last one (build files, .pyx/.pxd,
.proto, the build mode); `python3 dev.py install` or MACONDO_FORCE_INSTALL=1 redoes it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"

# The engine's main job: the gRPC server on the bundled lexicon (127.0.0.1:50051; Ctrl-C stops it).
MAIN_JOB = ["-m", "macondo_server", "serve"]


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kw)


STAMP = VENV / ".macondo-install-stamp"
# what an install depends on: build files, compiled sources, the wire contract (Python sources are editable)
STAMP_GLOBS = ["pyproject.toml", "setup.py", "engine_cy/*.pyx", "engine_cy/*.pxd", "engine_cy/*.h",
               "proto/**/*.proto", "build/cython-mode", "macondo_server/__init__.py",
               "clients/python/pyproject.toml", "clients/python/setup.py", "clients/python/build_protos.py"]


def install_stamp() -> str:
    """A digest of everything the last install depends on, the interpreter and the build mode included."""
    h = hashlib.sha256()
    h.update(f"{sys.version}|{os.environ.get('MACONDO_CYTHON_DEBUG', '')}".encode())
    for pattern in STAMP_GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            if path.is_file():
                h.update(str(path.relative_to(ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def install(force: bool = False) -> None:
    """Create .venv and install the project (editable, with its dev tools) unless nothing it depends on
    changed since the last install; MACONDO_FORCE_INSTALL=1 or `dev.py install` installs anyway."""
    force = force or os.environ.get("MACONDO_FORCE_INSTALL", "") not in ("", "0")
    if not force and PY.exists() and STAMP.is_file() and STAMP.read_text().strip() == install_stamp():
        print("+ install is up to date (MACONDO_FORCE_INSTALL=1 to redo it)", flush=True)
        return
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
        run([PY, "-m", "pip", "install", "-q", "--upgrade", "pip"])
    STAMP.unlink(missing_ok=True)
    # two distributions, both editable: the client (stubs generated from proto/) and the engine (Cython)
    run([PY, "-m", "pip", "install", "-q", "-e", "clients/python", "-e", ".[dev,cluster,chart]"])
    STAMP.write_text(install_stamp())


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("start", "test", "install"):
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    try:
        install(force=cmd == "install")
        run([PY, ROOT / "web" / "build.py"])   # web board + TS client (skipped when unchanged)
        if cmd == "start":
            args = [str(PY), *(["-m", "macondo_server", *rest] if rest else MAIN_JOB)]
            print("+", " ".join(args), flush=True)
            if os.name == "posix":
                os.chdir(ROOT)
                os.execv(args[0], args)   # the server takes this process's place: signals reach it directly
            run(args)
        elif cmd == "test":
            run([PY, "-m", "ruff", "check", "."])
            run([PY, "-m", "mypy", "macondo_server", "clients/python/macondo_client"])
            run([PY, "-m", "pytest", *rest])
    except subprocess.CalledProcessError as exc:
        return exc.returncode or 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
