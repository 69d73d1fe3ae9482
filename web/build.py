#!/usr/bin/env python3
"""Build the web board (into macondo_server/data/web, served by `macondo serve --web`) and the TypeScript client
it uses (clients/ts), reproducibly from the lock files:

    clients/ts:          npm install (from the lock); npm run build      (buf generate from proto/, then tsc)
    web:                 npm install (from the lock); npm run build      (tsc --noEmit, then vite build into
                         macondo_server/data/web, the package data the server serves)

Skipped when nothing it depends on changed since the last build (a stamp beside the build), or with a note when
node/npm are not installed (the gRPC and Connect ports work without it; only --web needs the build).
`python3 dev.py start|test` runs it; `python3 web/build.py --force` rebuilds.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

WEB = Path(__file__).resolve().parent
ROOT = WEB.parent
TS = ROOT / "clients" / "ts"
DIST = ROOT / "macondo_server" / "data" / "web"
STAMP = DIST / ".build-stamp"
INPUTS = [(ROOT / "proto", "**/*.proto"), (TS, "package-lock.json"), (TS, "buf.gen.yaml"), (TS, "proto/**/*.proto"),
          (TS, "src/*.ts"), (TS, "tsconfig.json"), (WEB, "package-lock.json"), (WEB, "index.html"),
          (WEB, "vite.config.ts"), (WEB, "tsconfig.json"), (WEB, "src/*")]


def stamp() -> str:
    h = hashlib.sha256()
    for base, pattern in INPUTS:
        for path in sorted(base.glob(pattern)):
            if path.is_file():
                h.update(str(path.relative_to(ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def _npm(args: list[str], cwd: Path) -> None:
    print("+ (cd", cwd.relative_to(ROOT), "&&", "npm", " ".join(args) + ")", flush=True)
    subprocess.run(["npm", *args], cwd=cwd, check=True)


def build(force: bool = False) -> str | None:
    """Build if needed; None when the build is there, else why it cannot be made here."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node/npm are not installed: the web board is not built (macondo serve --web needs it)"
    digest = stamp()
    built = (DIST / "index.html").is_file() and (TS / "dist" / "node.js").is_file()
    if not force and built and STAMP.is_file() and STAMP.read_text().strip() == digest:
        return None
    for project in (TS, WEB):
        # `npm install` with the committed lock (npm ci refuses a lock without the other platforms'
        # optional binary packages, which this registry mirror may not list)
        _npm(["install", "--no-audit", "--no-fund", "--loglevel=error"], project)
        _npm(["run", "build", "--silent"], project)
    STAMP.write_text(digest)
    return None


def main(argv: list[str]) -> int:
    try:
        reason = build(force="--force" in argv)
    except subprocess.CalledProcessError as exc:
        print(f"web build failed: {' '.join(map(str, exc.cmd))} exited with {exc.returncode}", file=sys.stderr)
        return 1
    if reason:
        print(f"+ {reason}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
