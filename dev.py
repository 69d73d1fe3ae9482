#!/usr/bin/env python3
"""One-command set-up for a fresh machine (Python 3.11 and a C compiler).

    python3 dev.py start    # create .venv, install everything, start the engine's main job
    python3 dev.py test     # same install, then lint (ruff), type checks (mypy) and the tests (pytest)

Extra arguments after `start` go to the main job; after `test`, to pytest (e.g. `-m slow`).
"""

from __future__ import annotations

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


def install() -> None:
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
        run([PY, "-m", "pip", "install", "-q", "--upgrade", "pip"])
    run([PY, "-m", "pip", "install", "-q", "-e", ".[dev]"])


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("start", "test", "install"):
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    try:
        install()
        if cmd == "start":
            run([PY, *(["-m", "macondo_server", *rest] if rest else MAIN_JOB)])
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
